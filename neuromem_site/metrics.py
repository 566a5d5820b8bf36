"""`/metrics` in the Prometheus text format, and the middleware that gives every request its
id, counts and times it and logs it (docs/operations.md, "Metrics" and "Logs").

Every process writes its series into the shared multiprocess directory (core/metrics.py);
the view sums them, and reads off the database and Redis what holds whatever process is
alive: the embedding backlog, each scheduled job's last runs, beat's heartbeat.

With METRICS_TOKEN set the view asks `Authorization: Bearer <token>`; without it, it answers
only requests from the loopback address (a reverse proxy on the same host makes every request
look local: set the token there).
"""

import hmac
import ipaddress
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator

import redis
from django.conf import settings
from django.core.signals import request_finished
from django.db import DatabaseError, connection
from django.db.models import Count, Max, Min, Q
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.functional import SimpleLazyObject, empty
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from core.admin_base import staff_caller
from core.logs import REQUEST_ID
from core.metrics import DB_QUERY_DURATION, HTTP_DURATION, HTTP_REQUESTS
from core.models import JobRun, JobStatus
from memories.models import EmbeddingStatus, Memory
from neuromem_site.api.envelope import error_body
from neuromem_site.beat import beat_heartbeat_age
from neuromem_site.tracing import request_id_on_span

METHODS = {"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}
REQUEST_ID_HEADER = "X-Request-ID"
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}")
request_log = logging.getLogger("neuromem.request")


def route_label(request: HttpRequest) -> str:
    """The route pattern that answered (`api/v1/memories/<uuid:memory_id>/`), never the path:
    a label per memory would grow without bound."""
    match = getattr(request, "resolver_match", None)
    return match.route if match is not None else "unmatched"


def request_id_of(request: HttpRequest) -> str:
    """The caller's X-Request-ID when it is one to keep (1–128 letters, digits, `.`, `_`, `:`,
    `-`), else a new one."""
    given = request.headers.get(REQUEST_ID_HEADER, "")
    return given if REQUEST_ID_PATTERN.fullmatch(given) else uuid.uuid4().hex


def client_of(request: HttpRequest) -> str:
    """Who asked: the API client's name, `staff:<username>` in the admin, "" when anonymous,
    or when nothing looked the user up (the admin's user is loaded lazily: a query, and the
    database may be why the request failed)."""
    user = getattr(request, "user", None)
    if isinstance(user, SimpleLazyObject) and user._wrapped is empty:
        return ""
    caller = getattr(user, "caller", None)
    if caller is not None:
        return caller.name
    if getattr(user, "is_authenticated", False):
        return staff_caller(request).name
    return ""


CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """`text` with its control characters escaped ("\\n", "\\x1b"): a path cannot start a log
    line of its own."""
    return CONTROL_CHARACTERS.sub(lambda m: m.group().encode("unicode_escape").decode(), text)


@receiver(request_finished)
def request_id_cleared(**_: object) -> None:
    """The request's lines are logged: what is logged next is no part of it."""
    REQUEST_ID.set("")


class RequestMiddleware:
    """First in the chain, so it sees every answer, errors included: gives the request its id
    (kept from X-Request-ID, or made) for every log line and task of it and answers it back;
    counts the answer by route, method and status and times it and each SQL statement it ran;
    logs one line for it (neuromem.request)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        request_id = request_id_of(request)
        REQUEST_ID.set(request_id)
        request_id_on_span(request_id)
        statements: list[float] = []

        def timed(execute, sql, params, many, context):
            began = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                statements.append(time.perf_counter() - began)

        with connection.execute_wrapper(timed):
            response = self.get_response(request)
        # The id stays set until the request is finished (request_finished), not reset here:
        # Django logs a 4xx or 5xx (django.request) after the middleware has answered.
        elapsed = time.perf_counter() - started
        route = route_label(request)
        method = request.method if request.method in METHODS else "other"
        HTTP_REQUESTS.labels(route, method, str(response.status_code)).inc()
        HTTP_DURATION.labels(route, method).observe(elapsed)
        for seconds in statements:
            DB_QUERY_DURATION.labels(route).observe(seconds)
        response[REQUEST_ID_HEADER] = request_id
        request_log.info(
            "%s %s %s %.1f ms",
            method,
            printable(request.path),
            response.status_code,
            elapsed * 1000,
            extra={
                "client": client_of(request),
                "route": route,
                "method": method,
                "status": response.status_code,
                "duration_ms": round(elapsed * 1000, 1),
            },
        )
        return response


class StateCollector(Collector):
    """What the database and Redis hold, read at each scrape."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield from self.embedding_backlog()
        yield from self.job_runs()
        age = beat_heartbeat_age_or_none()
        heartbeat = GaugeMetricFamily(
            "neuromem_beat_heartbeat_age_seconds",
            "Seconds since Celery beat's last heartbeat (absent: none, or Redis unavailable).",
        )
        if age is not None:
            heartbeat.add_metric([], age)
        yield heartbeat

    def embedding_backlog(self) -> Iterator[GaugeMetricFamily]:
        pending = Memory.objects.filter(embedding_status=EmbeddingStatus.PENDING).aggregate(
            count=Count("id"), oldest=Min("created_at")
        )
        yield GaugeMetricFamily(
            "neuromem_embedding_backlog",
            "Memories waiting for their embedding (found by text only meanwhile).",
            value=pending["count"],
        )
        oldest = pending["oldest"]
        yield GaugeMetricFamily(
            "neuromem_embedding_oldest_pending_age_seconds",
            "Age of the oldest memory waiting for its embedding (0: none waits).",
            value=0.0 if oldest is None else (timezone.now() - oldest).total_seconds(),
        )

    def job_runs(self) -> Iterator[GaugeMetricFamily]:
        last_success = GaugeMetricFamily(
            "neuromem_job_last_success_timestamp_seconds",
            "When each scheduled job last finished a run (Unix time).",
            labels=["job"],
        )
        failed = GaugeMetricFamily(
            "neuromem_job_failed_runs",
            "Failed runs of each scheduled job among those kept (JOB_RUNS_KEEP_DAYS).",
            labels=["job"],
        )
        runs = JobRun.objects.values("job").annotate(
            finished=Max("finished_at", filter=Q(status=JobStatus.DONE)),
            failures=Count("id", filter=Q(status=JobStatus.FAILED)),
        )
        for run in runs:
            if run["finished"] is not None:
                last_success.add_metric([run["job"]], run["finished"].timestamp())
            failed.add_metric([run["job"]], run["failures"])
        yield last_success
        yield failed


def beat_heartbeat_age_or_none() -> float | None:
    try:
        return beat_heartbeat_age()
    except redis.RedisError:
        return None


def refused(status: int, code: str, message: str) -> JsonResponse:
    response = JsonResponse(error_body(code, message), status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="neuromem-metrics"'
    return response


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:  # a Unix socket has no address
        return False


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if settings.METRICS_TOKEN:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {settings.METRICS_TOKEN}".encode()):
            return refused(401, "UNAUTHORIZED", "Give METRICS_TOKEN as a bearer token.")
    elif not is_loopback(request.META.get("REMOTE_ADDR", "")):
        return refused(403, "FORBIDDEN", "Without METRICS_TOKEN, /metrics answers loopback only.")
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    registry.register(StateCollector())
    try:
        body = generate_latest(registry)
    except DatabaseError:
        return refused(503, "UNAVAILABLE", "The database is unavailable.")
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
