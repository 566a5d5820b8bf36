"""Traces (issue #31), off by default: with an exporter (here the SDK's in-memory one), a
request yields Django's span with the request id on it, and spans for its SQL statements, its
Redis commands and the Celery task it publishes. Run in a process of its own: a process's
tracer provider is set once."""

import json
import os
import subprocess
import sys

import pytest
from django.db import connection

from neuromem_site.api.services import api_client_create
from neuromem_site.tracing import tracing_configure
from tests.memories.scratch import BASE_DIR, server_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TRACED = """
import json, os, django
django.setup()
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from neuromem_site.tracing import tracing_configure
exporter = InMemorySpanExporter()
assert tracing_configure(exporter=exporter)
from django.test import Client
body = {"user_id": "t:1", "content": "Traced from the request", "memory_type": "fact"}
response = Client().post(
    "/api/v1/memories/", body, content_type="application/json",
    HTTP_AUTHORIZATION="Bearer " + os.environ["TOKEN"], HTTP_X_REQUEST_ID="trace-me-1",
    HTTP_HOST="localhost",
)
assert response.status_code == 201, response.content
searched = Client().get(
    "/api/v1/search/", {"user_id": "t:1", "q": "Quokkaword"},
    HTTP_AUTHORIZATION="Bearer " + os.environ["TOKEN"], HTTP_HOST="localhost",
)
assert searched.status_code == 200, searched.content
print(json.dumps([
    {"name": span.name, "kind": span.kind.name, "attributes": dict(span.attributes or {}),
     "trace_id": span.context.trace_id}
    for span in exporter.get_finished_spans()
]))
"""


def test_without_an_endpoint_nothing_is_instrumented():
    assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in os.environ
    assert tracing_configure() is False


def test_a_request_is_traced_through_django_sql_redis_and_celery():
    _, token = api_client_create(name="tracer", user_prefixes=["t:"], is_staff=False)
    env = {
        **os.environ,
        "DATABASE_URL": server_url(connection.settings_dict["NAME"]),
        "TOKEN": token,
    }
    done = subprocess.run(
        [sys.executable, "-c", TRACED],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    spans = json.loads(done.stdout.strip().splitlines()[-1])
    request, search = [span for span in spans if span["kind"] == "SERVER"]
    # A search's words stay out of its span.
    assert "quokkaword" not in json.dumps(search).lower()
    assert "quokkaword" not in json.dumps(spans).lower()
    assert request["attributes"]["neuromem.request_id"] == "trace-me-1"
    attributes = request["attributes"]
    assert attributes.get("http.response.status_code", attributes.get("http.status_code")) == 201
    names = {span["name"] for span in spans}
    assert any(span["attributes"].get("db.system") == "postgresql" for span in spans), names
    assert any(span["attributes"].get("db.system") == "redis" for span in spans), names
    published = [span for span in spans if span["kind"] == "PRODUCER"]
    assert published and "embed_memories" in published[0]["name"], names
    traces = {request["trace_id"], search["trace_id"]}
    assert {span["trace_id"] for span in spans if span["kind"] != "SERVER"} <= traces
