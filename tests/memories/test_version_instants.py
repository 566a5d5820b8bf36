"""Versions in time: a supersede ends the old version at the instant its successor is
recorded (never both at once); an invalidate ends only a current memory, never in the
future; and the default list holds current memories only."""

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from core.access import SYSTEM
from memories.models import Memory
from memories.services import MemoryInput, memory_add
from tests.memories.test_forget import data

pytestmark = pytest.mark.django_db

USER = "agent:ana"


@pytest.fixture
def http(make_client):
    return make_client("agent", ["agent:"])[0]


def added(http, content: str, **extra) -> dict:
    body = {"user_id": USER, "content": content, "memory_type": "fact", **extra}
    return data(http.post("/api/v1/memories/", body, format="json"), 201)["memory"]


def test_a_supersede_ends_the_old_version_when_the_new_one_is_recorded(http):
    coffee = added(http, "The user drinks coffee daily")
    tea = data(
        http.post(
            f"/api/v1/memories/{coffee['id']}/supersede/",
            {"content": "The user drinks tea daily"},
            format="json",
        ),
        201,
    )
    old = Memory.objects.get(pk=coffee["id"])
    assert old.expired_at == Memory.objects.get(pk=tea["id"]).created_at
    listed = data(http.get("/api/v1/memories/", {"user_id": USER, "as_of": tea["created_at"]}))
    assert [m["content"] for m in listed] == ["The user drinks tea daily"]


def test_an_invalidate_ends_a_current_memory_once_and_not_in_the_future(http):
    memory = added(http, "The user rents a flat in Leeds", valid_at="2024-01-01T00:00:00Z")
    url = f"/api/v1/memories/{memory['id']}/invalidate/"
    ahead = (timezone.now() + timedelta(days=30)).isoformat()
    response = http.post(url, {"invalid_at": ahead}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["field"] == "invalid_at"
    ended = data(http.post(url, {"invalid_at": "2024-06-01T00:00:00Z"}, format="json"))
    assert ended["invalid_at"].startswith("2024-06-01")
    again = http.post(url, {}, format="json")
    assert again.status_code == 409
    assert Memory.objects.get(pk=memory["id"]).invalid_at.isoformat().startswith("2024-06-01")


def test_the_default_list_holds_current_memories_and_include_expired_the_rest(http):
    kept = added(http, "The user lives in Denver")
    ended = added(http, "The user lived in Austin")
    Memory.objects.filter(pk=ended["id"]).update(invalid_at=timezone.now())  # a past value
    listed = data(http.get("/api/v1/memories/", {"user_id": USER}))
    assert [m["id"] for m in listed] == [kept["id"]]
    everything = data(http.get("/api/v1/memories/", {"user_id": USER, "include_expired": "true"}))
    assert {m["id"] for m in everything} == {kept["id"], ended["id"]}


def test_a_version_is_never_expired_before_it_was_recorded():
    said = "I love hiking in the Alps every summer with my dog"
    item = MemoryInput(user_id=USER, content=said, memory_type="episodic")
    held = memory_add(item=item, caller=SYSTEM).memory
    earlier = timezone.now() - timedelta(days=100)
    restated = replace(item, content=f"{said}!", recorded_at=earlier)
    result = memory_add(item=restated, caller=SYSTEM)
    assert result.operation == "UPDATE"
    held.refresh_from_db()
    assert held.expired_at >= held.created_at


def test_invalidating_a_memory_that_already_ended_says_so(http):
    memory = added(http, "The user rents a flat in Leeds")
    Memory.objects.filter(pk=memory["id"]).update(invalid_at=timezone.now())  # a past value
    response = http.post(f"/api/v1/memories/{memory['id']}/invalidate/", {}, format="json")
    assert response.status_code == 409
    assert "already ended" in response.json()["error"]["message"]
