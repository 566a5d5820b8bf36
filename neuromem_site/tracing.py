"""Traces, off by default (docs/operations.md, "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set,
OpenTelemetry spans for Django's requests, psycopg's statements, Redis commands and Celery's
publishes and runs, exported over OTLP/HTTP (the SDK reads the OTEL_* variables: endpoint,
headers, OTEL_SERVICE_NAME…). A request's span carries its id (`neuromem.request_id`, set by
the request middleware), so a trace and the log lines of a request find each other.

The web application turns it on when it is built (neuromem_site/wsgi.py), the Celery worker in
each pool process (after the fork: the exporter's thread would not survive it).
"""

import os

from opentelemetry import trace
from opentelemetry.instrumentation.celery import CeleryInstrumentor
from opentelemetry.instrumentation.django import DjangoInstrumentor
from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
from opentelemetry.instrumentation.redis import RedisInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter

REQUEST_ID_ATTRIBUTE = "neuromem.request_id"


def tracing_configure(*, exporter: SpanExporter | None = None) -> bool:
    """Instrument this process when OTEL_EXPORTER_OTLP_ENDPOINT is set, or with `exporter`
    (the tests' in-memory one, each span exported as it ends); answers whether it did."""
    if exporter is None and not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return False
    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        processor = BatchSpanProcessor(OTLPSpanExporter())
    else:
        processor = SimpleSpanProcessor(exporter)
    service = os.environ.get("OTEL_SERVICE_NAME", "neuromem")
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument(request_hook=query_left_out)
    PsycopgInstrumentor().instrument(enable_commenter=False)
    RedisInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    return True


def query_left_out(span: trace.Span, request: object) -> None:
    """A request's span names its path, not its query string: a search's words stay out of
    traces as out of logs."""
    attributes = getattr(span, "attributes", None) or {}
    for name in ("http.url", "http.target", "url.full"):
        value = attributes.get(name)
        if isinstance(value, str) and "?" in value:
            span.set_attribute(name, value.split("?", 1)[0])
    if attributes.get("url.query"):
        span.set_attribute("url.query", "")


def request_id_on_span(request_id: str) -> None:
    """Name the request's span by the request's id (nothing without tracing)."""
    trace.get_current_span().set_attribute(REQUEST_ID_ATTRIBUTE, request_id)
