"""The traits and reflection-cycle endpoints of docs/api.md, through HTTP, against the real
database."""

import math
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.models import HistoryEvent, Memory, MemoryHistory
from reflection.models import ReflectionCycle, TraitDecayRate, TraitEvidence
from reflection.rules import lifecycle_rules

pytestmark = pytest.mark.django_db

DAY = timedelta(days=1)


@pytest.fixture
def agent(make_client):
    return make_client("a", ["a:"], staff=False)[0]


@pytest.fixture
def staff(make_client):
    return make_client("ops", [], staff=True)[0]


def refresh_view() -> None:
    """What the refresh job does: decay rates from the lifecycle rules, then the view."""
    rules = lifecycle_rules()
    for subtype, base in rules.decay_base.items():
        TraitDecayRate.objects.update_or_create(
            trait_subtype=subtype, defaults={"base_lambda": base, "spacing": rules.decay_spacing}
        )
    connection.cursor().execute("REFRESH MATERIALIZED VIEW mv_trait_decayed")


def trait(
    user_id: str,
    content: str,
    *,
    subtype: str | None = "behavior",
    stage: str = "emerging",
    confidence: float = 0.5,
    reinforcements: int = 0,
    last_reinforced=None,
    **fields,
) -> Memory:
    now = timezone.now()
    return Memory.objects.create(
        user_id=user_id,
        memory_type="trait",
        content=content,
        trait_subtype=subtype,
        trait_stage=stage,
        trait_confidence=confidence,
        trait_reinforcement_count=reinforcements,
        trait_contradiction_count=0,
        trait_first_observed=now - 200 * DAY,
        trait_last_reinforced=last_reinforced or now,
        **fields,
    )


def fact(user_id: str, content: str, importance: float = 0.5) -> Memory:
    return Memory.objects.create(
        user_id=user_id, memory_type="fact", content=content, importance=importance
    )


def decayed(confidence: float, *, base: float, reinforcements: int, days: float) -> float:
    return confidence * math.exp(-base / (1 + 0.1 * reinforcements) * days)


def assert_error(response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    if field is not None:
        assert error["field"] == field
    return error


# --- GET /users/{user_id}/traits/ -------------------------------------------------------------


def test_believed_traits_are_grouped_by_subtype_in_the_selectors_order(agent):
    core = trait("a:1", "Values honesty", subtype="core", stage="core", confidence=0.9)
    preference = trait(
        "a:1", "Prefers tea", subtype="preference", stage="established", confidence=0.7
    )
    weak = trait("a:1", "Runs on Sundays", confidence=0.5)
    strong = trait("a:1", "Writes in the morning", stage="established", confidence=0.8)
    untyped = trait("a:1", "A V1 trait", subtype=None, confidence=0.6)
    trait("a:1", "A trend", stage="trend", confidence=0.9)
    trait("a:1", "A candidate", stage="candidate", confidence=0.9)
    trait("a:1", "Dissolved", stage="dissolved", confidence=0.9)
    trait("a:1", "Barely believed", confidence=0.2)
    trait("a:2", "Someone else's", confidence=0.9)
    refresh_view()

    response = agent.get("/api/v1/users/a:1/traits/")

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    ids = {group: [item["id"] for item in items] for group, items in data.items()}
    assert ids == {
        "core": [str(core.id)],
        "preference": [str(preference.id)],
        "behavior": [str(strong.id), str(weak.id)],
        "other": [str(untyped.id)],
    }
    item = data["behavior"][0]
    assert set(item) == {
        "id",
        "content",
        "subtype",
        "stage",
        "context",
        "parent_id",
        "confidence",
        "decayed_confidence",
        "reinforcement_count",
        "contradiction_count",
        "first_observed",
        "last_reinforced",
        "computed_at",
    }
    assert (item["content"], item["subtype"], item["stage"]) == (
        "Writes in the morning",
        "behavior",
        "established",
    )
    assert item["confidence"] == pytest.approx(0.8)
    assert item["decayed_confidence"] == pytest.approx(0.8, rel=1e-4)  # reinforced just now
    assert (item["reinforcement_count"], item["contradiction_count"]) == (0, 0)


def test_decayed_confidence_follows_subtype_and_reinforcements(agent):
    long_ago = timezone.now() - 100 * DAY
    behavior = trait("a:1", "Behavior", confidence=0.8, reinforcements=2, last_reinforced=long_ago)
    preference = trait(
        "a:1", "Preference", subtype="preference", confidence=0.9, last_reinforced=long_ago
    )
    core = trait(
        "a:1",
        "Core",
        subtype="core",
        stage="core",
        confidence=0.9,
        reinforcements=5,
        last_reinforced=long_ago,
    )
    refresh_view()

    data = agent.get("/api/v1/users/a:1/traits/").json()["data"]

    by_id = {item["id"]: item for items in data.values() for item in items}
    # 0.8·e^(−0.005/1.2·100) ≈ 0.527, 0.9·e^(−0.002·100) ≈ 0.737, 0.9·e^(−0.001/1.5·100) ≈ 0.842
    expected = {
        behavior.id: decayed(0.8, base=0.005, reinforcements=2, days=100),
        preference.id: decayed(0.9, base=0.002, reinforcements=0, days=100),
        core.id: decayed(0.9, base=0.001, reinforcements=5, days=100),
    }
    for trait_id, value in expected.items():
        assert by_id[str(trait_id)]["decayed_confidence"] == pytest.approx(value, rel=1e-4)
    assert by_id[str(behavior.id)]["decayed_confidence"] == pytest.approx(0.527, abs=1e-3)


def test_a_trait_decayed_below_the_recall_minimum_is_not_believed(agent):
    # 0.4·e^(−0.005·100) ≈ 0.243 < 0.3
    trait("a:1", "Faded", confidence=0.4, last_reinforced=timezone.now() - 100 * DAY)
    refresh_view()
    data = agent.get("/api/v1/users/a:1/traits/").json()["data"]
    assert data == {"core": [], "preference": [], "behavior": [], "other": []}


def test_traits_come_from_the_view_as_of_its_last_refresh(agent):
    refresh_view()
    trait("a:1", "New since the refresh", confidence=0.9)
    assert agent.get("/api/v1/users/a:1/traits/").json()["data"]["behavior"] == []
    refresh_view()
    assert len(agent.get("/api/v1/users/a:1/traits/").json()["data"]["behavior"]) == 1


# --- GET /traits/{id}/ ------------------------------------------------------------------------


def test_trait_detail_has_evidence_parents_and_children(agent):
    core = trait("a:1", "Is curious", subtype="core", stage="core", confidence=0.9)
    preference = trait(
        "a:1",
        "Likes learning languages",
        subtype="preference",
        stage="established",
        confidence=0.7,
        trait_parent_id=core.id,
    )
    behavior = trait(
        "a:1",
        "Practises Spanish daily",
        stage="established",
        confidence=0.8,
        reinforcements=2,
        last_reinforced=timezone.now() - 100 * DAY,
        trait_parent_id=preference.id,
    )
    child = trait("a:1", "Uses flashcards", confidence=0.5, trait_parent_id=behavior.id)
    cited = fact("a:1", "The user practised Spanish today")
    supporting = TraitEvidence.objects.create(
        trait_id=behavior.id,
        memory_id=cited.id,
        evidence_type="supporting",
        quality="A",
        created_at=timezone.now() - 2 * DAY,
    )
    gone = TraitEvidence.objects.create(  # its memory was purged
        trait_id=behavior.id,
        memory_id=uuid.uuid4(),
        evidence_type="contradicting",
        quality="C",
        created_at=timezone.now() - DAY,
    )

    response = agent.get(f"/api/v1/traits/{behavior.id}/")

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert (data["id"], data["memory_type"], data["user_id"]) == (str(behavior.id), "trait", "a:1")
    assert data["trait"]["stage"] == "established"
    assert data["decayed_confidence"] == pytest.approx(
        decayed(0.8, base=0.005, reinforcements=2, days=100), rel=1e-4
    )
    assert data["evidence"] == [
        {
            "id": str(supporting.id),
            "memory_id": str(cited.id),
            "evidence_type": "supporting",
            "quality": "A",
            "created_at": data["evidence"][0]["created_at"],
            "memory": {
                "id": str(cited.id),
                "memory_type": "fact",
                "content": "The user practised Spanish today",
                "created_at": data["evidence"][0]["memory"]["created_at"],
            },
        },
        {
            "id": str(gone.id),
            "memory_id": str(gone.memory_id),
            "evidence_type": "contradicting",
            "quality": "C",
            "created_at": data["evidence"][1]["created_at"],
            "memory": None,
        },
    ]
    assert [(p["id"], p["subtype"], p["stage"]) for p in data["parents"]] == [
        (str(preference.id), "preference", "established"),
        (str(core.id), "core", "core"),
    ]
    assert data["parents"][0]["confidence"] == pytest.approx(0.7)
    assert data["children"] == [
        {
            "id": str(child.id),
            "content": "Uses flashcards",
            "subtype": "behavior",
            "stage": "emerging",
            "confidence": pytest.approx(0.5),
        }
    ]


def test_a_memory_that_is_not_a_trait_is_not_found(agent):
    assert_error(agent.get(f"/api/v1/traits/{fact('a:1', 'A fact').id}/"), 404, "NOT_FOUND")
    assert_error(agent.get(f"/api/v1/traits/{uuid.uuid4()}/"), 404, "NOT_FOUND")


# --- isolation --------------------------------------------------------------------------------


def test_another_clients_users_and_traits_are_not_found(agent):
    other = trait("b:x", "B's trait", stage="established", confidence=0.9)
    refresh_view()
    assert_error(agent.get("/api/v1/users/b:x/traits/"), 404, "NOT_FOUND")
    assert_error(agent.get("/api/v1/users/b:x/prompt-context/"), 404, "NOT_FOUND")
    assert_error(agent.get(f"/api/v1/traits/{other.id}/"), 404, "NOT_FOUND")


def test_a_user_id_in_the_query_string_must_agree_with_the_path(agent):
    assert_error(
        agent.get("/api/v1/users/a:1/traits/?user_id=b:x"), 400, "VALIDATION_ERROR", "user_id"
    )


# --- POST /traits/{id}/veto/ ------------------------------------------------------------------


def test_staff_veto_dissolves_the_trait_and_audits_it_as_the_user(staff, agent):
    vetoed = trait("a:1", "Dislikes cats", stage="established", confidence=0.8)
    refresh_view()

    response = staff.post(f"/api/v1/traits/{vetoed.id}/veto/", {"reason": "Wrong"}, format="json")

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["id"] == str(vetoed.id)
    assert data["trait"]["stage"] == "dissolved"
    assert data["expired_at"] is not None and data["invalid_at"] is None
    assert data["metadata"]["veto"]["reason"] == "Wrong"
    assert data["metadata"]["veto"]["by"] == "ops"
    assert data["version"] == vetoed.version + 1
    vetoed.refresh_from_db()
    assert vetoed.trait_stage == "dissolved"
    assert list(
        MemoryHistory.objects.filter(memory_id=vetoed.id, actor="user")
        .order_by("created_at", "id")
        .values_list("event", flat=True)
    ) == [HistoryEvent.STAGE_CHANGE, HistoryEvent.DELETE]
    refresh_view()
    assert agent.get("/api/v1/users/a:1/traits/").json()["data"]["behavior"] == []


def test_a_veto_reason_stores_no_secret(staff):
    vetoed = trait("a:1", "Dislikes cats", stage="established", confidence=0.8)
    reason = "Pasted by mistake with my key sk-proj-8fJ2kLm9QwErTyUiOpAsDfGhJkLzXcVb"
    response = staff.post(f"/api/v1/traits/{vetoed.id}/veto/", {"reason": reason}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["data"]["metadata"]["veto"]["reason"] == (
        "Pasted by mistake with my key [redacted: api_key]"
    )
    history = MemoryHistory.objects.filter(memory_id=vetoed.id).values_list("new_metadata")
    assert "8fJ2kLm9" not in str(list(history))


def test_veto_by_a_non_staff_client_is_forbidden(agent):
    own = trait("a:1", "Dislikes cats", stage="established", confidence=0.8)
    assert_error(
        agent.post(f"/api/v1/traits/{own.id}/veto/", {"reason": "Wrong"}, format="json"),
        403,
        "FORBIDDEN",
    )
    own.refresh_from_db()
    assert own.trait_stage == "established"


@pytest.mark.parametrize(
    "body",
    [{}, {"reason": ""}, {"reason": "   "}, {"reason": 7}, {"reason": "x" * 1001}],
)
def test_veto_needs_a_reason(staff, body):
    target = trait("a:1", "Dislikes cats", stage="established", confidence=0.8)
    assert_error(
        staff.post(f"/api/v1/traits/{target.id}/veto/", body, format="json"),
        400,
        "VALIDATION_ERROR",
        "reason",
    )
    target.refresh_from_db()
    assert target.trait_stage == "established"


def test_veto_rejects_unknown_fields(staff):
    target = trait("a:1", "Dislikes cats", stage="established", confidence=0.8)
    body = {"reason": "Wrong", "stage": "core"}
    assert_error(
        staff.post(f"/api/v1/traits/{target.id}/veto/", body, format="json"),
        400,
        "VALIDATION_ERROR",
        "stage",
    )


def test_vetoing_twice_is_a_conflict(staff):
    target = trait("a:1", "Dislikes cats", stage="established", confidence=0.8)
    url = f"/api/v1/traits/{target.id}/veto/"
    assert staff.post(url, {"reason": "Wrong"}, format="json").status_code == 200
    assert_error(staff.post(url, {"reason": "Still wrong"}, format="json"), 409, "CONFLICT")


def test_vetoing_a_missing_trait_is_not_found(staff):
    assert_error(
        staff.post(f"/api/v1/traits/{uuid.uuid4()}/veto/", {"reason": "Wrong"}, format="json"),
        404,
        "NOT_FOUND",
    )


# --- /reflection/cycles/ ----------------------------------------------------------------------


def test_requesting_a_cycle_queues_one_and_answers_it_again_while_queued(agent):
    first = agent.post("/api/v1/reflection/cycles/", {"user_id": "a:1"}, format="json")

    assert first.status_code == 202, first.content
    cycle = first.json()["data"]
    assert set(cycle) == {
        "id",
        "user_id",
        "trigger_type",
        "trigger_value",
        "status",
        "memories_scanned",
        "traits_created",
        "traits_updated",
        "traits_dissolved",
        "started_at",
        "completed_at",
        "error_message",
        "requested_by",
        "created",
    }
    assert (cycle["user_id"], cycle["status"], cycle["trigger_type"]) == ("a:1", "queued", "manual")
    assert (cycle["requested_by"], cycle["created"]) == ("a", True)

    second = agent.post(
        "/api/v1/reflection/cycles/", {"user_id": "a:1", "trigger_type": "manual"}, format="json"
    )

    assert second.status_code == 202, second.content
    assert (second.json()["data"]["id"], second.json()["data"]["created"]) == (cycle["id"], False)
    assert ReflectionCycle.objects.filter(user_id="a:1").count() == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user_id": "a:1", "trigger_type": "whenever"}, "trigger_type"),
        ({"user_id": "a:1", "extra": 1}, "extra"),
        ({"user_id": 7}, "user_id"),
        ({}, "user_id"),
    ],
)
def test_a_bad_cycle_request_is_a_validation_error(agent, body, field):
    assert_error(
        agent.post("/api/v1/reflection/cycles/", body, format="json"),
        400,
        "VALIDATION_ERROR",
        field,
    )
    assert not ReflectionCycle.objects.exists()


def test_a_cycle_for_another_clients_user_is_forbidden(agent):
    assert_error(
        agent.post("/api/v1/reflection/cycles/", {"user_id": "b:x"}, format="json"),
        403,
        "FORBIDDEN",
    )
    assert_error(
        agent.post("/api/v1/reflection/cycles/?user_id=b:x", {"user_id": "a:1"}, format="json"),
        400,
        "VALIDATION_ERROR",
        "user_id",
    )
    assert not ReflectionCycle.objects.exists()


def cycle(user_id: str, *, ago: timedelta, status: str = "completed") -> ReflectionCycle:
    started = timezone.now() - ago
    return ReflectionCycle.objects.create(
        user_id=user_id,
        trigger_type="scheduled",
        status=status,
        started_at=started,
        completed_at=started + timedelta(seconds=3),
        memories_scanned=12,
        traits_created=1,
    )


def test_cycles_are_listed_newest_first_in_pages(agent):
    old = cycle("a:1", ago=2 * DAY)
    new = cycle("a:1", ago=DAY)
    cycle("a:2", ago=DAY)

    first = agent.get("/api/v1/reflection/cycles/?user_id=a:1&limit=1")

    assert first.status_code == 200, first.content
    body = first.json()
    assert [c["id"] for c in body["data"]] == [str(new.id)]
    assert body["data"][0]["memories_scanned"] == 12
    second = agent.get(
        "/api/v1/reflection/cycles/",
        {"user_id": "a:1", "limit": 1, "cursor": body["page"]["next"]},
    )
    assert [c["id"] for c in second.json()["data"]] == [str(old.id)]
    assert second.json()["page"]["next"] is None


def test_cycles_of_another_clients_users_are_not_found(agent, staff):
    own = cycle("a:1", ago=DAY)
    theirs = cycle("b:x", ago=DAY)
    assert_error(agent.get("/api/v1/reflection/cycles/?user_id=b:x"), 404, "NOT_FOUND")
    assert_error(agent.get(f"/api/v1/reflection/cycles/{theirs.id}/"), 404, "NOT_FOUND")
    assert_error(agent.get(f"/api/v1/reflection/cycles/{uuid.uuid4()}/"), 404, "NOT_FOUND")
    detail = agent.get(f"/api/v1/reflection/cycles/{own.id}/")
    assert detail.status_code == 200
    assert (detail.json()["data"]["id"], detail.json()["data"]["status"]) == (
        str(own.id),
        "completed",
    )
    # Without user_id: every user's, which only staff may read.
    assert_error(agent.get("/api/v1/reflection/cycles/"), 403, "FORBIDDEN", "user_id")
    everyone = staff.get("/api/v1/reflection/cycles/").json()["data"]
    assert {c["id"] for c in everyone} == {str(own.id), str(theirs.id)}
    assert staff.get(f"/api/v1/reflection/cycles/{theirs.id}/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_requested_cycle_is_committed_whatever_the_broker_does(make_client):
    http, _ = make_client("t", ["t:"])
    response = http.post("/api/v1/reflection/cycles/", {"user_id": "t:1"}, format="json")
    assert response.status_code == 202, response.content
    stored = ReflectionCycle.objects.get(pk=response.json()["data"]["id"])
    assert (stored.status, stored.requested_by) == ("queued", "t")


# --- GET /users/{user_id}/prompt-context/ -----------------------------------------------------


def test_prompt_context_holds_established_traits_and_facts(agent):
    established = trait("a:1", "Prefers concise answers", stage="established", confidence=0.7)
    trait("a:1", "Maybe likes jazz", stage="emerging", confidence=0.5)  # not in prompts
    berlin = fact("a:1", "The user lives in Berlin", importance=0.9)
    refresh_view()

    response = agent.get("/api/v1/users/a:1/prompt-context/")

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["language"] == "en"
    assert data["markdown"].splitlines() == [
        "## About this user",
        "",
        "### Traits",
        "- Prefers concise answers",
        "",
        "### Key facts",
        "- The user lives in Berlin",
    ]
    assert (data["trait_ids"], data["fact_ids"]) == ([str(established.id)], [str(berlin.id)])
    assert 0 < data["tokens"] <= 600


def test_prompt_context_respects_max_tokens(agent):
    trait("a:1", "Prefers concise answers", stage="established", confidence=0.7)
    for n in range(5):
        fact("a:1", f"The user keeps a long note number {n} " + "about something " * 6)
    refresh_view()

    full = agent.get("/api/v1/users/a:1/prompt-context/?max_tokens=8000").json()["data"]
    tiny = agent.get("/api/v1/users/a:1/prompt-context/?max_tokens=80").json()["data"]

    assert len(full["fact_ids"]) == 5
    assert len(tiny["markdown"].splitlines()) < len(full["markdown"].splitlines())
    assert 0 < len(tiny["fact_ids"]) < 5
    assert tiny["tokens"] <= 80
    assert tiny["fact_ids"] == full["fact_ids"][: len(tiny["fact_ids"])]


def test_prompt_context_headings_follow_the_users_language(agent):
    trait("a:zh", "喜欢简洁的回答", stage="established", confidence=0.7)
    fact("a:zh", "用户住在杭州")
    fact("a:zh", "用户喜欢喝绿茶")
    refresh_view()

    data = agent.get("/api/v1/users/a:zh/prompt-context/").json()["data"]

    assert data["language"] == "zh"
    lines = data["markdown"].splitlines()
    assert lines[0] == "## 关于这位用户"
    assert {"### 特质", "### 关键事实", "- 用户住在杭州"} <= set(lines)


def test_prompt_context_of_a_user_with_nothing_is_empty(agent):
    data = agent.get("/api/v1/users/a:nobody/prompt-context/").json()["data"]
    assert data == {
        "markdown": "",
        "language": "en",
        "tokens": 0,
        "trait_ids": [],
        "fact_ids": [],
        "attributes": [],
    }


def test_prompt_context_holds_what_holds_now_of_the_user_and_those_around_them(agent):
    said = timezone.now() - timedelta(days=30)
    me = GraphNode.objects.create(user_id="a:1", kind=EntityKind.USER)
    mark = GraphNode.objects.create(
        user_id="a:1", kind=EntityKind.PERSON, name="Mark", role="brother"
    )
    austin = GraphEdge.objects.create(
        user_id="a:1",
        subject=me,
        relation="lives_in",
        object_value="Austin",
        single=True,
        valid_at=said - timedelta(days=30),
        created_at=said - timedelta(days=30),
    )
    GraphEdge.objects.filter(pk=austin.pk).update(invalid_at=said, expired_at=said)
    GraphEdge.objects.create(
        user_id="a:1",
        subject=me,
        relation="lives_in",
        object_value="Denver",
        single=True,
        valid_at=said,
        created_at=said,
    )
    GraphEdge.objects.create(
        user_id="a:1",
        subject=mark,
        relation="job",
        object_value="lawyer",
        single=True,
        valid_at=said - timedelta(days=1),
        created_at=said - timedelta(days=1),
    )
    fact("a:1", "The user likes green tea", importance=0.9)

    data = agent.get("/api/v1/users/a:1/prompt-context/").json()["data"]

    assert data["markdown"].splitlines() == [
        "## About this user",
        "",
        "### What holds now",
        "- the user, lives in: Denver",
        "- Mark (the user's brother), job: lawyer",
        "",
        "### Key facts",
        "- The user likes green tea",
    ]
    assert [(a["entity"], a["relation"], a["value"]) for a in data["attributes"]] == [
        ("the user", "lives_in", "Denver"),
        ("Mark (the user's brother)", "job", "lawyer"),
    ]
    tiny = agent.get("/api/v1/users/a:1/prompt-context/?max_tokens=50").json()["data"]
    assert tiny["tokens"] <= 50


@pytest.mark.parametrize("value", ["abc", "", "49", "8001", "1.5"])
def test_a_bad_max_tokens_is_a_validation_error(agent, value):
    assert_error(
        agent.get(f"/api/v1/users/a:1/prompt-context/?max_tokens={value}"),
        400,
        "VALIDATION_ERROR",
        "max_tokens",
    )
