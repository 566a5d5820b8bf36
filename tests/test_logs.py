"""Logs that follow a request (issue #31): every answer carries X-Request-ID (a valid one sent
is kept, otherwise one is made), every line logged while it is served names it, one line per
request says who asked what and how it went, and LOG_FORMAT=json writes one object a line.
Refusals and purges are security events, with no secret and no content."""

import io
import json
import logging
from collections.abc import Iterator

import pytest

from core.logs import JsonFormatter, RequestIdFilter

pytestmark = pytest.mark.django_db


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """Every record of the test, as LOG_FORMAT=json writes it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield stream
    root.removeHandler(handler)
    root.setLevel(level)


def lines_of(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_valid_request_id_is_kept_and_any_other_replaced(client):
    assert client.get("/api/v1/health/", HTTP_X_REQUEST_ID="abc-123:x.y")["X-Request-ID"] == (
        "abc-123:x.y"
    )
    for sent in ("", "has space", "x" * 129, "naïve"):
        made = client.get("/api/v1/health/", HTTP_X_REQUEST_ID=sent)["X-Request-ID"]
        assert made != sent and len(made) == 32, sent
    first, second = (client.get("/api/v1/health/")["X-Request-ID"] for _ in range(2))
    assert first != second
    # Errors too: an unknown route, a missing token.
    assert client.get("/nowhere/", HTTP_X_REQUEST_ID="r1")["X-Request-ID"] == "r1"
    assert client.get("/api/v1/memories/", HTTP_X_REQUEST_ID="r2")["X-Request-ID"] == "r2"


def test_one_json_line_per_request_names_the_client_route_status_and_time(make_client, json_lines):
    http, _ = make_client("a", ["a:"])
    response = http.get("/api/v1/memories/", {"user_id": "a:1"}, HTTP_X_REQUEST_ID="req-41")
    assert response.status_code == 200
    (line,) = [line for line in lines_of(json_lines) if line["logger"] == "neuromem.request"]
    assert line["request_id"] == "req-41"
    assert (line["client"], line["route"], line["method"], line["status"]) == (
        "a",
        "api/v1/memories/",
        "GET",
        200,
    )
    assert line["level"] == "INFO" and line["duration_ms"] >= 0
    assert line["time"].endswith("+00:00") and "/api/v1/memories/" in line["message"]


def test_refusals_and_purges_are_security_events_without_content(client, make_client, json_lines):
    http, _ = make_client("a", ["a:"])
    body = {"user_id": "b:1", "content": "Bob's secret diary", "memory_type": "fact"}
    refused = http.post("/api/v1/memories/", body, format="json", HTTP_X_REQUEST_ID="req-9")
    assert refused.status_code == 403
    unknown = client.get("/api/v1/memories/", HTTP_AUTHORIZATION="Bearer nope")
    assert unknown.status_code == 401
    http.post("/api/v1/memories/", {**body, "user_id": "a:1"}, format="json")
    assert http.delete("/api/v1/users/a:1/").status_code == 200
    security = [line for line in lines_of(json_lines) if line["logger"] == "neuromem.security"]
    assert [line["event"] for line in security] == ["refused", "auth_failed", "user_purged"]
    assert security[0]["request_id"] == "req-9" and security[0]["code"] == "FORBIDDEN"
    assert security[2]["user_id"] == "a:1" and security[2]["memories"] == 1
    everything = json_lines.getvalue()
    assert "secret diary" not in everything and "Bearer nope" not in everything


def test_djangos_own_4xx_lines_name_the_request(make_client, json_lines):
    http, _ = make_client("a", ["a:"])
    response = http.get("/api/v1/memories/", {"user_id": "b:1"}, HTTP_X_REQUEST_ID="rid-404")
    assert response.status_code == 404
    lines = [line for line in lines_of(json_lines) if line["logger"] == "django.request"]
    assert lines and all(line["request_id"] == "rid-404" for line in lines)
    # ... and what is logged after the request is finished is no part of it.
    logging.getLogger("neuromem.test").warning("after")
    assert lines_of(json_lines)[-1]["request_id"] == "-"


@pytest.mark.parametrize("status", [400, 404])
def test_a_searchs_words_are_never_logged(make_client, json_lines, status):
    http, _ = make_client("a", ["a:"])
    query = {"user_id": "a:1" if status == 400 else "b:1", "q": "DiaryWordsHunter2"}
    if status == 400:
        query["limit"] = "bogus"
    assert http.get("/api/v1/search/", query).status_code == status
    assert "DiaryWordsHunter2" not in json_lines.getvalue()


def test_a_path_cannot_start_a_log_line_of_its_own(anon):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logger = logging.getLogger("neuromem.request")
    logger.addHandler(handler)
    try:
        anon.get("/nowhere%0AWARNING%20neuromem.security%20forged%1B%5B31m%E2%80%A8x")
    finally:
        logger.removeHandler(handler)
    [line] = stream.getvalue().splitlines()
    assert "/nowhere\\nWARNING neuromem.security forged\\x1b[31m\\u2028x" in line
