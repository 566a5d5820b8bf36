"""GET /api/v1/health/ with real checks against real services."""

import time

import pytest
import redis

from neuromem_site import embedded
from neuromem_site.beat import BEAT_HEARTBEAT_KEY, beat_heartbeat_write
from neuromem_site.dev_services import EmbeddedRedis

pytestmark = pytest.mark.django_db


@pytest.fixture
def own_redis(tmp_path, settings):
    """A real Redis of the test's own, so stopping it leaves the suite's Redis alone."""
    server = EmbeddedRedis(tmp_path)
    server.start()
    settings.REDIS_URL = embedded.redis_url(tmp_path)
    yield server
    server.stop()


def test_database_and_redis_are_checked_for_real(anon):
    response = anon.get("/api/v1/health/")
    checks = response.json()["data"]["checks"]
    assert checks["database"]["ok"] is True
    assert checks["redis"]["ok"] is True
    assert set(checks) == {"database", "redis", "worker", "beat"}


def test_no_worker_and_no_beat_is_degraded_not_down(anon, settings):
    settings.HEALTH_WORKER_PING_TIMEOUT = 0.2
    redis.Redis.from_url(settings.REDIS_URL).delete(f"neuromem:1:{BEAT_HEARTBEAT_KEY}")
    response = anon.get("/api/v1/health/")
    body = response.json()
    assert response.status_code == 200
    assert body["data"]["status"] == "degraded"
    assert body["data"]["checks"]["worker"]["ok"] is False
    assert "no Celery worker answered" in body["data"]["checks"]["worker"]["detail"]
    assert body["data"]["checks"]["beat"]["ok"] is False


def test_beat_heartbeat_fresh_and_stale(anon, settings):
    settings.HEALTH_WORKER_PING_TIMEOUT = 0.2
    beat_heartbeat_write(now=time.time())
    assert anon.get("/api/v1/health/").json()["data"]["checks"]["beat"]["ok"] is True
    beat_heartbeat_write(now=time.time() - settings.BEAT_HEARTBEAT_MAX_AGE - 5)
    beat = anon.get("/api/v1/health/").json()["data"]["checks"]["beat"]
    assert beat["ok"] is False
    assert "ago (max" in beat["detail"]


def test_stopping_redis_makes_the_service_unhealthy(anon, own_redis):
    assert anon.get("/api/v1/health/").json()["data"]["checks"]["redis"]["ok"] is True
    own_redis.stop()
    response = anon.get("/api/v1/health/")
    body = response.json()
    assert response.status_code == 503
    assert body["ok"] is False
    assert body["error"]["code"] == "UNAVAILABLE"
    assert body["data"]["status"] == "unhealthy"
    assert body["data"]["checks"]["redis"]["ok"] is False
    assert body["data"]["checks"]["database"]["ok"] is True
