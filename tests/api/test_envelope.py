"""The envelope and error codes of API.md, for every status the API base can produce."""

import pytest

from core.redis_client import app_redis
from neuromem_site.api.throttling import ApiClientRateThrottle

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def test_success_is_wrapped_in_ok_and_data(make_client):
    http, _ = make_client("agent")
    response = http.get("/api/v1/auth/whoami/")
    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "data": {"name": "agent", "user_prefixes": ["agent:"], "is_staff": False},
    }


def test_400_names_the_unknown_field(make_client):
    http, _ = make_client("agent")
    response = http.post(
        "/api/v1/test/scoped/", {"user_id": "agent:1", "content": "x", "domain": "d"}, format="json"
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert response.json()["ok"] is False
    assert (error["code"], error["field"], error["message"]) == (
        "VALIDATION_ERROR",
        "domain",
        "Unknown field.",
    )


def test_400_for_a_missing_field_and_a_too_long_one(make_client):
    http, _ = make_client("agent")
    missing = http.post("/api/v1/test/scoped/", {"user_id": "agent:1"}, format="json").json()
    assert missing["error"]["field"] == "content"
    assert missing["error"]["message"] == "This field is required."
    too_long = http.post(
        "/api/v1/test/scoped/", {"user_id": "agent:1", "content": "x" * 21}, format="json"
    ).json()
    assert too_long["error"]["field"] == "content"


def test_400_points_into_the_bad_item_of_a_list(make_client):
    http, _ = make_client("agent")
    body = {"user_id": "agent:1", "content": "ok", "items": [{"content": "fine"}, {"type": "x"}]}
    error = http.post("/api/v1/test/scoped/", body, format="json").json()["error"]
    assert error["field"] == "items[1].type"
    assert error["code"] == "VALIDATION_ERROR"


def test_400_for_malformed_json(make_client):
    http, _ = make_client("agent")
    response = http.post("/api/v1/test/scoped/", data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_401_without_a_token_carries_a_bearer_challenge(anon):
    response = anon.get("/api/v1/auth/whoami/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", ["Bearer nm_wrong", "Bearer", "Bearer a b"])
def test_401_for_a_bad_or_malformed_token(anon, make_client, header):
    make_client("agent")
    response = anon.get("/api/v1/auth/whoami/", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_403_for_a_staff_only_endpoint(make_client):
    http, _ = make_client("agent")
    response = http.post("/api/v1/test/staff/", {}, format="json")
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "FORBIDDEN"
    staff, _ = make_client("ops", staff=True)
    assert staff.post("/api/v1/test/staff/", {}, format="json").status_code == 200


@pytest.mark.parametrize("debug", [False, True])
def test_404_for_an_unknown_api_route_is_json_even_in_debug(anon, settings, debug):
    settings.DEBUG = debug
    response = anon.get("/api/v1/no-such-route/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "ok": False,
        "error": {
            "code": "NOT_FOUND",
            "message": "No API route matches GET /api/v1/no-such-route/.",
        },
    }


def test_404_outside_the_api_stays_a_page(anon):
    response = anon.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_405_for_a_wrong_method(anon):
    response = anon.post("/api/v1/health/", {}, format="json")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_500_from_a_view_is_an_envelope_without_a_trace(make_client):
    http, _ = make_client("agent")
    response = http.get("/api/v1/test/crash/")
    assert response.status_code == 500
    assert response.json() == {
        "ok": False,
        "error": {"code": "INTERNAL", "message": "Internal server error."},
    }


@pytest.mark.parametrize("debug", [False, True])
def test_500_outside_drf_is_an_envelope_too(anon, settings, debug):
    settings.DEBUG = debug
    response = anon.get("/api/v1/test/plain-crash/")
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "INTERNAL"
    assert "boom" not in response.content.decode()


def test_an_html_error_page_under_api_becomes_an_envelope(anon):
    response = anon.get("/api/v1/test/html-error/")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "VALIDATION_ERROR"


def test_429_when_the_rate_limit_is_spent(make_client, monkeypatch):
    monkeypatch.setattr(ApiClientRateThrottle, "THROTTLE_RATES", {"api_client": "2/min"})
    # Windows are fixed minutes: 20 s into one, so the requests cannot straddle two.
    monkeypatch.setattr(ApiClientRateThrottle, "timer", lambda self: 60 * 29_000_000 + 20.0)
    http, _ = make_client("throttled")
    statuses = [http.get("/api/v1/auth/whoami/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    response = http.get("/api/v1/auth/whoami/")
    assert response.json()["error"]["code"] == "RATE_LIMITED"
    assert int(response["Retry-After"]) == 40  # the rest of the window


def test_the_api_answers_when_the_rate_limit_cannot_be_checked(make_client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    app_redis.cache_clear()
    try:
        http, _ = make_client("agent")
        assert http.get("/api/v1/auth/whoami/").status_code == 200
    finally:
        app_redis.cache_clear()


def test_list_pages_by_opaque_cursor(make_client):
    http, _ = make_client("agent")
    for n in range(4):
        make_client(f"other{n}")
    first = http.get("/api/v1/test/clients/?limit=2").json()
    assert first["ok"] is True and len(first["data"]) == 2
    cursor = first["page"]["next"]
    assert cursor and "http" not in cursor
    second = http.get(f"/api/v1/test/clients/?limit=2&cursor={cursor}").json()
    third = http.get(f"/api/v1/test/clients/?limit=2&cursor={second['page']['next']}").json()
    names = [c["name"] for page in (first, second, third) for c in page["data"]]
    assert sorted(names) == ["agent", "other0", "other1", "other2", "other3"]
    assert third["page"]["next"] is None


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        ("500", {"field": "limit", "maxAllowed": 200, "minAllowed": 1, "provided": 500}),
        ("0", {"field": "limit", "maxAllowed": 200, "minAllowed": 1, "provided": 0}),
    ],
)
def test_limit_out_of_range_reports_the_limits(make_client, limit, expected):
    http, _ = make_client("agent")
    response = http.get(f"/api/v1/test/clients/?limit={limit}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert {key: error[key] for key in expected} == expected


def test_limit_that_is_not_a_number(make_client):
    http, _ = make_client("agent")
    error = http.get("/api/v1/test/clients/?limit=ten").json()["error"]
    assert (error["code"], error["field"]) == ("VALIDATION_ERROR", "limit")
