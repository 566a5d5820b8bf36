"""`/metrics` (issue #31): protected by METRICS_TOKEN or the loopback address, summing every
process's series from the shared multiprocess directory (another process's, a real worker's),
and NeuroMem's own series move when work happens."""

import importlib
import math
import os
import re
import subprocess
import sys

import pytest
import yaml
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from core import metrics
from core.db.locks import LockNamespace
from core.job_runs import job_run
from neuromem_site.metrics import StateCollector
from tests.memories.scratch import BASE_DIR

pytestmark = pytest.mark.django_db

SERIES = re.compile(r"\bneuromem_[a-z_]+")
MEMORY = {"user_id": "a:alice", "content": "Alice keeps bees.", "memory_type": "fact"}


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted labels) → value, of one scrape."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_without_a_token_only_loopback_is_answered(client):
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    refused = client.get("/metrics", REMOTE_ADDR="10.1.2.3")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "FORBIDDEN"
    assert client.post("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 405


def test_with_a_token_the_bearer_must_match_from_anywhere(client, settings):
    settings.METRICS_TOKEN = "s3cret-scrape"
    for header in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong"}, {"HTTP_AUTHORIZATION": "s3cret"}):
        refused = client.get("/metrics", REMOTE_ADDR="127.0.0.1", **header)
        assert refused.status_code == 401, header
        assert refused.json()["error"]["code"] == "UNAUTHORIZED"
        assert refused["WWW-Authenticate"].startswith("Bearer")
    right = {"HTTP_AUTHORIZATION": "Bearer s3cret-scrape", "REMOTE_ADDR": "10.1.2.3"}
    assert client.get("/metrics", **right).status_code == 200


def test_requests_recall_stages_and_the_backlog_are_counted(client, make_client):
    http, _ = make_client("a", ["a:"])
    before = scrape(client)
    assert http.post("/api/v1/memories/", MEMORY, format="json").status_code == 201
    assert http.get("/api/v1/memories/", {"user_id": "a:alice"}).status_code == 200
    recall = {"user_id": "a:alice", "query": "Who keeps bees?"}
    assert http.post("/api/v1/recall/", recall, format="json").status_code == 200
    after = scrape(client)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    route = {"route": "api/v1/memories/", "method": "POST"}
    assert moved("neuromem_http_requests_total", status="201", **route) == 1
    assert moved("neuromem_http_request_duration_seconds_count", **route) == 1
    assert moved("neuromem_db_query_duration_seconds_count", route="api/v1/memories/") >= 2
    listed = {"route": "api/v1/memories/", "method": "GET", "status": "200"}
    assert moved("neuromem_http_requests_total", **listed) == 1
    for stage in ("query_embedding", "search", "question_rules"):
        assert moved("neuromem_recall_stage_duration_seconds_count", stage=stage) == 1, stage
    # The memory waits for the worker (none runs here): the backlog holds it.
    assert (
        value(after, "neuromem_embedding_backlog")
        == value(before, "neuromem_embedding_backlog") + 1
    )
    assert value(after, "neuromem_embedding_oldest_pending_age_seconds") >= 0


def test_job_runs_are_counted_and_their_last_success_read(client, transactional_db):
    with job_run("metrics-test-job", LockNamespace.CONSISTENCY_CHECK) as run:
        run.rows = 3
    samples = scrape(client)
    assert value(samples, "neuromem_job_runs_total", job="metrics-test-job", status="done") >= 1
    assert value(samples, "neuromem_job_last_success_timestamp_seconds", job="metrics-test-job") > 0
    assert value(samples, "neuromem_job_failed_runs", job="metrics-test-job") == 0


def test_another_process_s_series_are_summed(client):
    """The multiprocess directory: what a separate process counted is in this one's scrape."""
    label = {"outcome": "applied"}
    before = value(scrape(client), "neuromem_soul_proposals_total", **label)
    code = "from core.metrics import SOUL_PROPOSALS; SOUL_PROPOSALS.labels('applied').inc(5)"
    subprocess.run(
        [sys.executable, "-c", code], cwd=BASE_DIR, env=dict(os.environ), check=True, timeout=60
    )
    assert value(scrape(client), "neuromem_soul_proposals_total", **label) == before + 5


def test_the_alert_rules_and_dashboard_name_only_series_that_exist():
    """deploy/ stays true to the code: every neuromem_ series its expressions read is one this
    service exposes."""
    exposed = {
        metric._name for metric in vars(metrics).values() if isinstance(metric, MetricWrapperBase)
    } | {family.name for family in StateCollector().collect()}
    deploy = BASE_DIR / "deploy"
    text = (deploy / "prometheus" / "alerts.yml").read_text() + (
        deploy / "grafana" / "dashboards" / "neuromem.json"
    ).read_text()
    named = {re.sub(r"_(total|bucket|count|sum)$", "", name) for name in SERIES.findall(text)}
    assert named and named <= exposed, named - exposed


def test_the_compose_scrape_target_is_a_host_the_web_service_answers():
    compose = yaml.safe_load((BASE_DIR / "docker-compose.yml").read_text())
    scrape = yaml.safe_load((BASE_DIR / "deploy" / "prometheus" / "prometheus.yml").read_text())
    targets = [
        target.split(":")[0]
        for job in scrape["scrape_configs"]
        for static in job.get("static_configs", [])
        for target in static["targets"]
    ]
    allowed = compose["x-app"]["environment"]["ALLOWED_HOSTS"]
    assert targets and all(f",{target}" in allowed for target in targets)


def test_a_weekly_job_has_a_week_before_it_is_stale():
    seeded = importlib.import_module("reflection.migrations.0003_beat_schedules").SCHEDULES
    weekly = [
        name
        for name, (_, when) in seeded.items()
        if isinstance(when, dict) and "day_of_week" in when
    ]
    alerts = yaml.safe_load((BASE_DIR / "deploy" / "prometheus" / "alerts.yml").read_text())
    [stale] = [
        rule["expr"]
        for group in alerts["groups"]
        for rule in group["rules"]
        if rule.get("alert") == "NeuroMemBeatJobStale"
    ]
    assert weekly
    for name in weekly:
        threshold = re.search(rf'job="{name}"\}}\s*>\s*([\d\s*]+)', stale)
        assert threshold and math.prod(map(int, threshold[1].split("*"))) > 7 * 24 * 3600
        assert f'job!="{name}"' in stale
