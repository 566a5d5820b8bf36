"""The lifecycle's upkeep against the real schema, with hand-computed expectations: trends at
their window's end, traits decayed below the floor, the decay view and its rates, dangling
references, and which users are due a reflection cycle. Each service run twice changes
nothing more."""

import math
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.db import connection, transaction
from django.utils import timezone
from pgvector.django import CosineDistance

from memories.models import (
    ConversationMessage,
    ConversationSession,
    HistoryEvent,
    Memory,
    MemoryHistory,
    MemoryLink,
    MemorySource,
)
from reflection.models import (
    ConsistencyIssue,
    ReflectionCycle,
    ReflectionStatus,
    TraitDecayed,
    TraitDecayRate,
    TraitEvidence,
)
from reflection.rules import lifecycle_rules
from reflection.services.maintenance import (
    TrendExpiry,
    consistency_check,
    reflection_due_users,
    trait_decay_rates_sync,
    trait_view_refresh,
    traits_dissolve_weak,
    trends_expire,
)
from reflection.services.traits import traits_after_forget

pytestmark = pytest.mark.django_db
NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def trait_rules(settings):
    """`trait_rules({"decay_base": {...}})`: TRAIT_RULES overridden for the test."""

    def override(rules: dict) -> None:
        settings.TRAIT_RULES = rules
        lifecycle_rules.cache_clear()

    yield override
    lifecycle_rules.cache_clear()


def make_trait(user_id: str = "u1", **fields) -> Memory:
    values = {
        "content": f"trait {uuid.uuid4().hex[:8]}",
        "trait_subtype": "behavior",
        "trait_stage": "emerging",
        "trait_confidence": 0.4,
        "trait_reinforcement_count": 0,
        "trait_contradiction_count": 0,
        **fields,
    }
    return Memory.objects.create(user_id=user_id, memory_type="trait", **values)


def make_fact(user_id: str = "u1", **fields) -> Memory:
    values = {"content": f"fact {uuid.uuid4().hex[:8]}", **fields}
    return Memory.objects.create(user_id=user_id, memory_type="fact", **values)


def reload(memory: Memory) -> Memory:
    return Memory.objects.get(pk=memory.pk)


def stage_changes(memory: Memory) -> list[tuple[str, str]]:
    return list(
        MemoryHistory.objects.filter(memory_id=memory.id, event=HistoryEvent.STAGE_CHANGE)
        .order_by("created_at")
        .values_list("event", "actor")
    )


def changes(memory: Memory) -> list[tuple[str, str]]:
    """The history after the memory was added."""
    return list(
        MemoryHistory.objects.filter(memory_id=memory.id)
        .exclude(event=HistoryEvent.ADD)
        .order_by("created_at", "id")
        .values_list("event", "actor")
    )


# --- Trends ----------------------------------------------------------------------------------


def make_trend(reinforcements: int, window_end: datetime, user_id: str = "u1") -> Memory:
    return make_trait(
        user_id=user_id,
        trait_stage="trend",
        trait_confidence=0.2,
        trait_reinforcement_count=reinforcements,
        trait_window_start=window_end - 30 * DAY,
        trait_window_end=window_end,
        trait_derived_from="reflection",
    )


def test_a_reinforced_trend_at_its_window_end_becomes_a_candidate():
    trend = make_trend(2, NOW - timedelta(hours=1))
    assert trends_expire(now=NOW) == TrendExpiry(promoted=1, dissolved=0)
    trait = reload(trend)
    assert (trait.trait_stage, trait.trait_derived_from) == ("candidate", "trend_promotion")
    assert trait.trait_confidence == pytest.approx(0.3, abs=1e-6)
    assert (trait.trait_window_start, trait.trait_window_end) == (None, None)
    assert trait.trait_last_reinforced == NOW  # it had none
    assert (trait.version, trait.updated_at, trait.invalid_at) == (2, NOW, None)
    assert stage_changes(trait) == [("STAGE_CHANGE", "reflection")]


def test_a_promoted_trend_keeps_its_last_reinforcement():
    trend = make_trend(3, NOW)  # a window ending exactly now has ended
    Memory.objects.filter(pk=trend.pk).update(trait_last_reinforced=NOW - 5 * DAY)
    trends_expire(now=NOW)
    assert reload(trend).trait_last_reinforced == NOW - 5 * DAY


def test_an_unreinforced_trend_at_its_window_end_is_dissolved_and_expired():
    trend = make_trend(1, NOW - DAY)
    assert trends_expire(now=NOW) == TrendExpiry(promoted=0, dissolved=1)
    trait = reload(trend)
    # Seed 002 §5.2: trait_stage = 'dissolved', expired_at = NOW(); not invalidated.
    assert (trait.trait_stage, trait.expired_at, trait.invalid_at) == ("dissolved", NOW, None)
    assert trait.version == 2
    assert trait.metadata["dissolved"] == {
        "reason": "trend window ended without reinforcement",
        "at": NOW.isoformat(),
    }
    # The stage change and the expiry, each in the history.
    assert changes(trait) == [("STAGE_CHANGE", "reflection"), ("DELETE", "reflection")]
    assert not Memory.objects.current().filter(pk=trait.pk).exists()


def test_a_trait_dissolved_by_a_forget_is_expired_too():
    fact = make_fact(content="I run every morning")
    trait = make_trait(content="Runs every morning")
    TraitEvidence.objects.create(
        trait_id=trait.id, memory_id=fact.id, evidence_type="supporting", quality="B"
    )
    effect = traits_after_forget(user_id="u1", memory_ids=[fact.id])
    assert effect.dissolved == [trait.id]
    dissolved = reload(trait)
    assert dissolved.trait_stage == "dissolved"
    assert dissolved.expired_at is not None and dissolved.invalid_at is None
    assert [event for event, _ in changes(dissolved)] == ["STAGE_CHANGE", "DELETE"]


def test_a_trend_whose_window_has_not_ended_stays():
    trend = make_trend(0, NOW + DAY)
    assert trends_expire(now=NOW) == TrendExpiry(promoted=0, dissolved=0)
    trait = reload(trend)
    assert (trait.trait_stage, trait.version, trait.trait_window_end) == ("trend", 1, NOW + DAY)


def test_expiring_trends_twice_changes_nothing_more():
    promoted, dissolved, open_trend = (
        make_trend(2, NOW - DAY),
        make_trend(0, NOW - DAY),
        make_trend(0, NOW + DAY),
    )
    assert trends_expire(now=NOW) == TrendExpiry(promoted=1, dissolved=1)
    history = MemoryHistory.objects.count()
    versions = {m.pk: reload(m).version for m in (promoted, dissolved, open_trend)}
    assert trends_expire(now=NOW) == TrendExpiry(promoted=0, dissolved=0)
    assert MemoryHistory.objects.count() == history
    assert {m.pk: reload(m).version for m in (promoted, dissolved, open_trend)} == versions


def test_expiring_one_users_trends_inside_a_transaction_leaves_the_others():
    mine, theirs = make_trend(0, NOW - DAY, "u1"), make_trend(0, NOW - DAY, "u2")
    with transaction.atomic():  # as the engine calls it, inside its cycle's transaction
        assert trends_expire(now=NOW, user_id="u1") == TrendExpiry(promoted=0, dissolved=1)
    assert (reload(mine).trait_stage, reload(theirs).trait_stage) == ("dissolved", "trend")


def test_expired_or_invalidated_trends_are_left_alone():
    expired = make_trend(0, NOW - DAY)
    Memory.objects.filter(pk=expired.pk).update(expired_at=NOW - DAY)
    assert trends_expire(now=NOW) == TrendExpiry(promoted=0, dissolved=0)
    assert reload(expired).trait_stage == "trend"


# --- Weak traits -----------------------------------------------------------------------------


def weak_candidates() -> dict[str, Memory]:
    return {
        # λ = 0.005 / (1 + 0.1·0): 400 days → 0.4·e^(−2) = 0.0541, above 0.05.
        "behavior_400d": make_trait(trait_last_reinforced=NOW - 400 * DAY),
        # 500 days → 0.4·e^(−2.5) = 0.0328.
        "behavior_500d": make_trait(trait_last_reinforced=NOW - 500 * DAY),
        # core λ = 0.001: 1000 days → 0.1·e^(−1) = 0.0368.
        "core_1000d": make_trait(
            trait_subtype="core",
            trait_stage="core",
            trait_confidence=0.1,
            trait_last_reinforced=NOW - 1000 * DAY,
        ),
        # Spacing: λ = 0.005 / (1 + 0.1·10) = 0.0025; 800 days → 0.4·e^(−2) = 0.0541.
        "spaced_800d": make_trait(
            trait_reinforcement_count=10, trait_last_reinforced=NOW - 800 * DAY
        ),
        # No subtype: seed 002 §5.1's ELSE rate, 0.003; never reinforced: decays from its
        # creation. 500 days → 0.4·e^(−1.5) = 0.0893, above 0.05 (as a behavior: dissolved).
        "no_subtype_500d": make_trait(trait_subtype=None, created_at=NOW - 500 * DAY),
        # An unknown subtype, the same: 1000 days → 0.4·e^(−3) = 0.0199.
        "habit_1000d": make_trait(trait_subtype="habit", trait_last_reinforced=NOW - 1000 * DAY),
        # ... 700 days → 0.4·e^(−2.1) = 0.0490 (0.4·e^(−3.5) = 0.0121 as a behavior).
        "habit_700d": make_trait(trait_subtype="habit", trait_last_reinforced=NOW - 700 * DAY),
        # ... 600 days → 0.4·e^(−1.8) = 0.0661: kept.
        "habit_600d": make_trait(trait_subtype="habit", trait_last_reinforced=NOW - 600 * DAY),
        # Trends are left to their window, dissolved traits are done.
        "trend": make_trait(
            trait_stage="trend", trait_confidence=0.01, trait_last_reinforced=NOW - 1000 * DAY
        ),
        "dissolved": make_trait(
            trait_stage="dissolved", trait_confidence=0.01, trait_last_reinforced=NOW - 1000 * DAY
        ),
    }


def test_traits_decayed_below_the_floor_are_dissolved_and_expired():
    traits = weak_candidates()
    assert traits_dissolve_weak(now=NOW) == 4
    stages = {name: reload(trait).trait_stage for name, trait in traits.items()}
    assert stages == {
        "behavior_400d": "emerging",
        "behavior_500d": "dissolved",
        "core_1000d": "dissolved",
        "spaced_800d": "emerging",
        "no_subtype_500d": "emerging",
        "habit_1000d": "dissolved",
        "habit_700d": "dissolved",
        "habit_600d": "emerging",
        "trend": "trend",
        "dissolved": "dissolved",
    }
    core = reload(traits["core_1000d"])
    assert (core.expired_at, core.invalid_at, core.version) == (NOW, None, 2)
    dissolved = core.metadata["dissolved"]
    assert (dissolved["reason"], dissolved["at"]) == ("decayed below 0.05", NOW.isoformat())
    assert dissolved["decayed_confidence"] == pytest.approx(0.1 * math.exp(-1), abs=1e-6)
    assert changes(core) == [("STAGE_CHANGE", "reflection"), ("DELETE", "reflection")]
    assert reload(traits["habit_700d"]).metadata["dissolved"][
        "decayed_confidence"
    ] == pytest.approx(0.4 * math.exp(-0.003 * 700), abs=1e-6)
    assert changes(traits["behavior_400d"]) == []
    assert reload(traits["behavior_400d"]).expired_at is None


def test_dissolving_weak_traits_twice_changes_nothing_more():
    traits = weak_candidates()
    traits_dissolve_weak(now=NOW)
    history = MemoryHistory.objects.count()
    versions = {name: reload(trait).version for name, trait in traits.items()}
    assert traits_dissolve_weak(now=NOW) == 0
    assert MemoryHistory.objects.count() == history
    assert {name: reload(trait).version for name, trait in traits.items()} == versions


def test_weak_traits_follow_the_configured_rules(trait_rules):
    traits = weak_candidates()
    trait_rules({"dissolve_below": 0.06})  # 0.0541 is now below the floor
    assert traits_dissolve_weak(now=NOW, user_id="u1") == 6
    assert reload(traits["spaced_800d"]).metadata["dissolved"]["reason"] == "decayed below 0.06"
    trait_rules({"decay_base": {"behavior": 0.0001, "preference": 0.002, "core": 0.001}})
    slow = make_trait(trait_last_reinforced=NOW - 1000 * DAY)  # 0.4·e^(−0.1)
    assert traits_dissolve_weak(now=NOW) == 0
    assert reload(slow).trait_stage == "emerging"


def test_dissolving_one_users_weak_traits_leaves_the_others():
    mine = make_trait(trait_last_reinforced=NOW - 500 * DAY)
    theirs = make_trait(user_id="u2", trait_last_reinforced=NOW - 500 * DAY)
    assert traits_dissolve_weak(now=NOW, user_id="u1") == 1
    assert (reload(mine).trait_stage, reload(theirs).trait_stage) == ("dissolved", "emerging")


# --- The decay view --------------------------------------------------------------------------


def test_the_refreshed_view_decays_with_the_rules():
    reinforced = timezone.now() - 100 * DAY
    trait = make_trait(
        trait_subtype="preference",
        trait_stage="established",
        trait_confidence=0.8,
        trait_reinforcement_count=3,
        trait_last_reinforced=reinforced,
    )
    make_trait(trait_stage="trend")
    make_trait(trait_stage="dissolved")
    make_trait(trait_stage="emerging", expired_at=timezone.now())
    assert trait_view_refresh() == 1
    row = TraitDecayed.objects.get()
    assert row.id == trait.id
    days = (row.computed_at - reinforced).total_seconds() / 86400
    # λ = 0.002 / (1 + 0.1·3); the stored confidence is a real (float4).
    assert row.decayed_confidence == pytest.approx(
        row.raw_confidence * math.exp(-0.002 / 1.3 * days), rel=1e-6
    )
    assert row.raw_confidence == pytest.approx(0.8, abs=1e-6)


def test_the_view_decays_any_other_subtype_or_none_at_the_seeds_else_rate(trait_rules):
    reinforced = timezone.now() - 100 * DAY
    unknown = make_trait(
        trait_subtype="habit", trait_confidence=0.8, trait_last_reinforced=reinforced
    )
    untyped = make_trait(trait_subtype=None, trait_confidence=0.8, trait_last_reinforced=reinforced)
    assert trait_view_refresh() == 2
    for trait in (unknown, untyped):
        row = TraitDecayed.objects.get(pk=trait.pk)
        days = (row.computed_at - reinforced).total_seconds() / 86400
        # Seed 002 §5.1: CASE … ELSE 0.003.
        assert row.decayed_confidence == pytest.approx(
            row.raw_confidence * math.exp(-0.003 * days), rel=1e-6
        )
    trait_rules({"decay_default": 0.01})  # the rules' default reaches the view too
    trait_view_refresh()
    row = TraitDecayed.objects.get(pk=unknown.pk)
    days = (row.computed_at - reinforced).total_seconds() / 86400
    assert row.decayed_confidence == pytest.approx(
        row.raw_confidence * math.exp(-0.01 * days), rel=1e-6
    )


def test_the_view_carries_the_embedding_with_the_seeds_graph(settings):
    dimensions = settings.EMBEDDING_DIM
    near, far = np.zeros(dimensions, dtype=np.float32), np.zeros(dimensions, dtype=np.float32)
    near[0], far[1] = 1.0, 1.0
    runs = make_trait(content="Runs every morning", embedding=near, embedding_status="ready")
    reads = make_trait(content="Reads at night", embedding=far, embedding_status="ready")
    waiting = make_trait(content="Not embedded yet")
    assert trait_view_refresh() == 3
    rows = {row.id: row for row in TraitDecayed.objects.all()}
    assert np.allclose(rows[runs.pk].embedding, near)
    assert rows[waiting.pk].embedding is None
    # Traits by meaning, from the view.
    query = near * 0.9 + far * 0.1
    ranked = TraitDecayed.objects.exclude(embedding=None).order_by(
        CosineDistance("embedding", query)
    )
    assert list(ranked.values_list("id", flat=True)) == [runs.pk, reads.pk]
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'idx_mv_trait_embedding'")
        (definition,) = cursor.fetchone()
    assert definition == (
        "CREATE INDEX idx_mv_trait_embedding ON public.mv_trait_decayed USING hnsw "
        "(embedding halfvec_cosine_ops) WITH (m='24', ef_construction='128')"
    )


def test_changed_decay_rates_reach_the_view(trait_rules):
    reinforced = timezone.now() - 100 * DAY
    trait = make_trait(trait_confidence=0.8, trait_last_reinforced=reinforced)
    trait_view_refresh()
    before = TraitDecayed.objects.get(pk=trait.pk)
    trait_rules({"decay_base": {"behavior": 0.01}, "decay_spacing": 0.2})  # a partial table
    assert trait_view_refresh() == 1
    after = TraitDecayed.objects.get(pk=trait.pk)
    days = (after.computed_at - reinforced).total_seconds() / 86400
    expected = after.raw_confidence * math.exp(-0.01 * days)
    assert after.decayed_confidence == pytest.approx(expected, rel=1e-6)
    assert after.decayed_confidence < before.decayed_confidence
    rates = {r.trait_subtype: (r.base_lambda, r.spacing) for r in TraitDecayRate.objects.all()}
    assert rates == {
        "behavior": (0.01, 0.2),
        "preference": (0.002, 0.2),
        "core": (0.001, 0.2),
        "*": (0.003, 0.2),
    }


def test_the_rates_follow_the_rules_and_syncing_twice_writes_nothing(
    trait_rules, django_assert_num_queries
):
    def rates() -> dict[str, float]:
        return {r.trait_subtype: r.base_lambda for r in TraitDecayRate.objects.all()}

    trait_rules({"decay_base": {"behavior": 0.004, "habit": 1.0}, "decay_default": 0.01})
    trait_decay_rates_sync()
    assert rates() == {
        "behavior": 0.004,
        "preference": 0.002,
        "core": 0.001,
        "habit": 1.0,
        "*": 0.01,  # any other subtype, or none
    }
    with django_assert_num_queries(1):  # read, found as wanted, nothing written
        trait_decay_rates_sync()
    trait_rules({})  # a subtype the rules no longer name leaves the table
    trait_decay_rates_sync()
    assert rates() == {"behavior": 0.005, "preference": 0.002, "core": 0.001, "*": 0.003}


# --- Consistency -----------------------------------------------------------------------------


def open_issues() -> dict[str, list[tuple[str, str, str, str | None]]]:
    found: dict[str, list] = {}
    for issue in ConsistencyIssue.objects.filter(resolved_at__isnull=True):
        found.setdefault(issue.check_name, []).append(
            (issue.table_name, issue.row_id, issue.missing_id, issue.user_id)
        )
    return {check: sorted(issues) for check, issues in found.items()}


def test_dangling_references_are_reported_then_resolved_never_repaired():
    fact, trait = make_fact(), make_trait()
    gone = [uuid.uuid4() for _ in range(9)]
    to_missing_memory = TraitEvidence.objects.create(
        trait_id=trait.id, memory_id=gone[0], evidence_type="supporting", quality="B"
    )
    to_missing_trait = TraitEvidence.objects.create(
        trait_id=gone[1], memory_id=fact.id, evidence_type="supporting", quality="B"
    )
    fact_as_trait = TraitEvidence.objects.create(  # names a fact as its trait
        trait_id=fact.id, memory_id=fact.id, evidence_type="contradicting", quality="C"
    )
    history = MemoryHistory.objects.create(memory_id=gone[2], memory_type="fact", event="ADD")
    superseded = make_fact(superseded_by=gone[3], expired_at=NOW)
    orphan = make_trait(trait_parent_id=gone[4])
    fact_parent = make_trait(trait_parent_id=fact.id)  # a parent must be a trait
    session = ConversationSession.objects.create(user_id="u1")
    MemorySource.objects.create(memory_id=gone[5], session_id=session.id)
    MemorySource.objects.create(memory_id=fact.id, session_id=gone[6])
    MemorySource.objects.create(memory_id=fact.id, session_id=session.id)  # sound
    from_missing = MemoryLink.objects.create(
        user_id="u1", source_id=gone[7], target_id=fact.id, weight=0.5
    )
    to_missing = MemoryLink.objects.create(
        user_id="u1", source_id=fact.id, target_id=gone[8], weight=0.5
    )
    MemoryLink.objects.create(user_id="u1", source_id=fact.id, target_id=trait.id, weight=0.5)
    counts = {
        model: model.objects.count()
        for model in (TraitEvidence, MemoryHistory, MemorySource, MemoryLink, Memory)
    }

    expected = {
        "evidence_trait": sorted(
            [
                ("trait_evidence", str(to_missing_trait.id), str(gone[1]), "u1"),
                ("trait_evidence", str(fact_as_trait.id), str(fact.id), "u1"),
            ]
        ),
        "evidence_memory": [("trait_evidence", str(to_missing_memory.id), str(gone[0]), "u1")],
        "history_memory": [("memory_history", str(history.id), str(gone[2]), None)],
        "source_memory": [("memory_sources", f"{gone[5]}/{session.id}", str(gone[5]), "u1")],
        "source_session": [("memory_sources", f"{fact.id}/{gone[6]}", str(gone[6]), "u1")],
        "superseded_by": [("memories", str(superseded.id), str(gone[3]), "u1")],
        "link_source": [("memory_links", str(from_missing.id), str(gone[7]), "u1")],
        "link_target": [("memory_links", str(to_missing.id), str(gone[8]), "u1")],
        "trait_parent": sorted(
            [
                ("memories", str(orphan.id), str(gone[4]), "u1"),
                ("memories", str(fact_parent.id), str(fact.id), "u1"),
            ]
        ),
    }
    # None here: tests/reflection/test_graph_consistency.py
    sizes = {check: len(issues) for check, issues in expected.items()} | {"graph_contradiction": 0}

    assert consistency_check(now=NOW) == sizes
    assert open_issues() == expected
    assert {model: model.objects.count() for model in counts} == counts
    assert reload(superseded).superseded_by == gone[3]  # reported, not repaired

    # Seen again: the same open issues, no duplicates, last_seen_at moves on.
    later = NOW + DAY
    assert consistency_check(now=later) == sizes
    assert open_issues() == expected
    assert ConsistencyIssue.objects.count() == sum(sizes.values())
    assert set(ConsistencyIssue.objects.values_list("first_seen_at", "last_seen_at")) == {
        (NOW, later)
    }

    # Repaired by staff: that issue is resolved, the others stay open.
    to_missing_memory.delete()
    latest = later + DAY
    assert consistency_check(now=latest) == {**sizes, "evidence_memory": 0}
    resolved = ConsistencyIssue.objects.get(check_name="evidence_memory")
    assert (resolved.resolved_at, resolved.last_seen_at) == (latest, later)
    assert ConsistencyIssue.objects.filter(resolved_at__isnull=True).count() == (
        sum(sizes.values()) - 1
    )


def test_a_sound_database_has_no_issues():
    fact, trait = make_fact(), make_trait()
    parent = make_trait(trait_subtype="preference")
    Memory.objects.filter(pk=trait.pk).update(trait_parent_id=parent.id)
    TraitEvidence.objects.create(
        trait_id=trait.id, memory_id=fact.id, evidence_type="supporting", quality="A"
    )
    session = ConversationSession.objects.create(user_id="u1")
    MemorySource.objects.create(memory_id=fact.id, session_id=session.id)
    newer = make_fact()
    Memory.objects.filter(pk=fact.pk).update(superseded_by=newer.id, expired_at=NOW)
    assert set(consistency_check(now=NOW).values()) == {0}
    assert not ConsistencyIssue.objects.exists()


# --- Reflection triggers ---------------------------------------------------------------------


def cycle(user_id: str, started_at: datetime, status: str = ReflectionStatus.COMPLETED):
    return ReflectionCycle.objects.create(
        user_id=user_id, trigger_type="manual", status=status, started_at=started_at
    )


def quiet_session(user_id: str, last_message_at: datetime, **fields) -> ConversationSession:
    session = ConversationSession.objects.create(user_id=user_id, **fields)
    ConversationMessage.objects.create(
        session=session, user_id=user_id, role="user", content="hi", created_at=last_message_at
    )
    return session


def queued_cycles() -> dict[str, tuple[str, float | None]]:
    return {
        c.user_id: (c.trigger_type, c.trigger_value)
        for c in ReflectionCycle.objects.filter(status=ReflectionStatus.QUEUED)
    }


def test_due_users_get_one_cycle_each_by_the_first_trigger_that_holds(settings):
    settings.REFLECTION_IMPORTANCE_THRESHOLD = 3.0
    settings.REFLECTION_IDLE_AFTER = 1800
    settings.REFLECTION_INTERVAL = 86_400
    settings.TASK_TIME_LIMIT = 300
    now = timezone.now()
    hour_ago = now - timedelta(hours=1)
    # Importance: 4 × 0.8 = 3.2 unreflected (an idle session too: importance comes first).
    for _ in range(4):
        make_fact("imp", importance=0.8)
    quiet_session("imp", now - timedelta(hours=2))
    # Below the threshold, reflected an hour ago: nothing.
    make_fact("low", importance=0.5)
    cycle("low", hour_ago)
    # Reflected an hour ago, but a session quiet for 2 hours has messages since.
    make_fact("idle", importance=0.5)
    cycle("idle", hour_ago)
    quiet_session("idle", now - timedelta(hours=2))
    # Quiet sessions that are not idle: reflected since, still talking, ended.
    make_fact("not-idle", importance=0.5)
    cycle("not-idle", hour_ago)
    quiet_session("not-idle", now - timedelta(hours=2), last_reflected_at=hour_ago)
    quiet_session("not-idle", now - timedelta(minutes=10))
    quiet_session("not-idle", now - timedelta(hours=2), ended_at=now - timedelta(hours=2))
    # No cycle for two days: scheduled (a cycle `running` for days died with its worker).
    make_fact("sched", importance=0.1)
    cycle("sched", now - 2 * DAY)
    make_fact("stale", importance=0.1)
    cycle("stale", now - 3 * DAY, status=ReflectionStatus.RUNNING)
    # Never reflected at all: scheduled.
    make_fact("new", importance=0.1)
    # Already queued or running: no second cycle, whatever is due.
    for _ in range(5):
        make_fact("queued", importance=1.0)
    cycle("queued", hour_ago, status=ReflectionStatus.QUEUED)
    make_fact("running", importance=0.1)
    cycle("running", now - timedelta(minutes=1), status=ReflectionStatus.RUNNING)
    # Nothing unreflected: nothing, even with an idle session and no cycle ever.
    make_fact("done", importance=1.0, reflected_at=hour_ago)
    make_fact("done", importance=1.0, expired_at=hour_ago)
    Memory.objects.create(user_id="done", memory_type="document", content="d", importance=1.0)
    quiet_session("done", now - timedelta(hours=2))

    assert reflection_due_users(now=now) == {"importance_accumulated": 1, "idle": 1, "scheduled": 3}
    queued = queued_cycles()
    assert queued.pop("queued") == ("manual", None)
    assert queued["imp"][0] == "importance_accumulated"
    assert queued["imp"][1] == pytest.approx(3.2, abs=1e-5)
    assert queued["idle"][0] == "idle"
    assert queued["idle"][1] == pytest.approx(7200, abs=60)  # seconds quiet
    assert {user: trigger for user, (trigger, _) in queued.items()} == {
        "imp": "importance_accumulated",
        "idle": "idle",
        "sched": "scheduled",
        "stale": "scheduled",
        "new": "scheduled",
    }
    assert ReflectionCycle.objects.get(user_id="imp").requested_by == "system"

    # Run again: every due user has a queued cycle now.
    assert reflection_due_users(now=now) == {"importance_accumulated": 0, "idle": 0, "scheduled": 0}
    assert ReflectionCycle.objects.filter(status=ReflectionStatus.QUEUED).count() == 6


def test_due_users_beyond_the_limit_wait_for_the_next_run_most_pressing_first():
    for _ in range(4):
        make_fact("imp", importance=0.9)
    make_fact("sched-a", importance=0.2)
    make_fact("sched-b", importance=0.1)
    now = timezone.now()
    assert reflection_due_users(now=now, limit=2) == {
        "importance_accumulated": 1,
        "idle": 0,
        "scheduled": 1,
    }
    assert set(queued_cycles()) == {"imp", "sched-a"}
    assert reflection_due_users(now=now, limit=2)["scheduled"] == 1
    assert set(queued_cycles()) == {"imp", "sched-a", "sched-b"}
