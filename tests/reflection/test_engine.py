"""Reflection cycles on the real database with the default embeddings (the real USE weights):
realistic conversations become the expected traits; the lifecycle's rules hold with
hand-computed numbers; a cycle is all-or-nothing, one per user at a time, and never scans a
memory twice nor skips one."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core.access import SYSTEM
from memories.ingest import session_end, session_message_add, session_open
from memories.models import ConversationSession, Memory, MemoryHistory
from memories.services import MemoryInput, content_md5, memory_add
from memories.services.forgetting import user_forget
from reflection.cycle.plan import cycle_plan
from reflection.cycle.state import cycle_state_load
from reflection.detection import Detection, Match, Pattern, Review, detector
from reflection.models import ReflectionCycle, TraitEvidence
from reflection.services.cycles import (
    reflection_cycle_request,
    reflection_cycle_run,
    reflection_cycles_recover,
)
from reflection.services.traits import trait_veto

pytestmark = pytest.mark.django_db

ENGLISH = [
    [
        (6, "I go running every morning before work."),
        (6, "I usually drink way too much coffee when I code late."),
        (6, "My sister lives in Berlin."),
    ],
    [
        (4, "Went for a 5k run at 6am today, felt great."),
        (4, "Had three espressos while debugging last night."),
        (4, "I'm so stressed about deadlines lately."),
    ],
    [
        (2, "I ran again this morning before the office."),
        (2, "Coffee keeps me going during late coding sessions."),
        (2, "I love reading sci-fi novels."),
    ],
]
CHINESE = [
    [(6, "我每天早上都去跑步。"), (6, "我写代码的时候离不开咖啡。"), (6, "我妹妹住在柏林。")],
    [(4, "今天早上又去跑步了，跑了五公里。"), (4, "昨晚写代码又喝了三杯咖啡。")],
    [
        (2, "早上跑步的习惯坚持一年了。"),
        (2, "咖啡是我熬夜写代码的必需品。"),
        (2, "我喜欢看科幻小说。"),
    ],
]


def converse(user_id: str, sessions: list[list[tuple[int, str]]]) -> None:
    now = timezone.now()
    for turns in sessions:
        session = session_open(caller=SYSTEM, user_id=user_id)
        for days_ago, text in turns:
            session_message_add(
                session=session,
                role="user",
                content=text,
                caller=SYSTEM,
                sent_at=now - timedelta(days=days_ago),
            )


def reflect(user_id: str) -> ReflectionCycle:
    cycle, _ = reflection_cycle_request(caller=SYSTEM, user_id=user_id)
    return reflection_cycle_run(cycle_id=cycle.id)


def traits_of(user_id: str, **filters) -> list[Memory]:
    return list(
        Memory.objects.filter(user_id=user_id, memory_type="trait", **filters).order_by(
            "created_at", "content"
        )
    )


def trait_about(user_id: str, *words: str) -> Memory:
    (trait,) = [t for t in traits_of(user_id) if any(w in t.content for w in words)]
    return trait


@pytest.mark.parametrize(
    ("user_id", "sessions", "running", "coffee", "liked", "sister"),
    [
        ("en:1", ENGLISH, ("run", "ran"), ("offee", "espresso"), "sci-fi", "Berlin"),
        ("zh:1", CHINESE, ("跑步",), ("咖啡",), "科幻", "柏林"),
    ],
)
def test_a_realistic_conversation_gives_the_expected_traits(
    user_id, sessions, running, coffee, liked, sister
):
    converse(user_id, sessions)
    cycle = reflect(user_id)

    assert cycle.status == "completed", cycle.error_message
    assert (
        cycle.memories_scanned
        == Memory.objects.filter(user_id=user_id, memory_type__in=["fact", "episodic"]).count()
    )
    for words in (running, coffee):  # three mentions each: a behavior at 0.4, emerging
        trait = trait_about(user_id, *words)
        assert (trait.trait_subtype, trait.trait_stage) == ("behavior", "emerging")
        assert trait.trait_confidence == pytest.approx(0.4)
        assert (
            TraitEvidence.objects.filter(trait_id=trait.id, evidence_type="supporting").count() == 3
        )
        assert trait.trait_derived_from == "reflection"
    liked_trend = trait_about(user_id, liked)  # said once, outright: a trend for 30 days
    assert liked_trend.trait_stage == "trend"
    window = liked_trend.trait_window_end - liked_trend.trait_window_start
    assert window == timedelta(days=30)
    assert not [t for t in traits_of(user_id) if sister in t.content]  # a fact, not a trait
    assert cycle.traits_created == len(traits_of(user_id))
    history = MemoryHistory.objects.filter(memory_id=liked_trend.id).get()
    assert (history.event, history.actor) == ("ADD", "reflection")


def test_an_emotional_trend_is_watched_for_14_days():
    converse("en:2", ENGLISH)
    reflect("en:2")
    stressed = trait_about("en:2", "stressed")
    assert stressed.trait_stage == "trend"
    assert stressed.trait_window_end - stressed.trait_window_start == timedelta(days=14)
    assert stressed.metadata["emotional"] is True


def test_nothing_is_scanned_twice_and_nothing_is_skipped():
    converse("en:3", ENGLISH[:1])
    first = reflect("en:3")
    said = Memory.objects.filter(user_id="en:3", memory_type__in=["fact", "episodic"])
    assert first.memories_scanned == said.count() >= 3
    again = reflect("en:3")
    assert again.memories_scanned == 0
    # A memory dated before the last cycle (an imported conversation) is still reflected on.
    memory_add(
        item=MemoryInput(
            user_id="en:3",
            content="I go for a run most mornings.",
            memory_type="episodic",
            recorded_at=timezone.now() - timedelta(days=30),
        ),
        caller=SYSTEM,
    )
    late = reflect("en:3")
    assert late.memories_scanned == 1
    assert (
        Memory.objects.filter(user_id="en:3", reflected_at__isnull=True)
        .exclude(memory_type="trait")
        .count()
        == 0
    )
    sessions = ConversationSession.objects.filter(user_id="en:3")
    assert all(s.last_reflected_at is not None for s in sessions)


def test_reinforcement_follows_evidence_quality():
    converse("en:4", ENGLISH)
    reflect("en:4")
    running = trait_about("en:4", "run", "ran")
    # A fourth morning run, in a new conversation, no habit words: quality C (0.15).
    converse("en:4", [[(1, "Did my morning run again, 7 km this time.")]])
    reflect("en:4")
    running.refresh_from_db()
    evidence = TraitEvidence.objects.filter(trait_id=running.id).order_by("created_at").last()
    assert evidence.quality == "C"
    assert running.trait_confidence == pytest.approx(0.4 + 0.6 * 0.15)  # 0.49
    assert running.trait_reinforcement_count == 1
    assert running.version == 2


def trait_row(user_id: str, content: str, **fields) -> Memory:
    defaults = {
        "trait_subtype": "behavior",
        "trait_stage": "emerging",
        "trait_confidence": 0.5,
        "trait_reinforcement_count": 0,
        "trait_contradiction_count": 0,
        "trait_last_reinforced": timezone.now(),
    }
    return Memory.objects.create(
        user_id=user_id, memory_type="trait", content=content, **{**defaults, **fields}
    )


def supported_by(trait: Memory, *said: str, quality: str = "C") -> None:
    """Episodes of the trait's user, already reflected, each a supporting evidence row."""
    for text in said:
        memory = Memory.objects.create(
            user_id=trait.user_id,
            memory_type="episodic",
            content=f"User: {text}",
            reflected_at=timezone.now(),
        )
        TraitEvidence.objects.create(
            trait_id=trait.id, memory_id=memory.id, evidence_type="supporting", quality=quality
        )


def test_full_lifecycle_trend_to_core_and_dissolved():
    user = "life:1"
    now = timezone.now()
    # A trend whose window ended after two reinforcements becomes a candidate at 0.3.
    trend = trait_row(
        user,
        "The user reads science fiction",
        trait_stage="trend",
        trait_confidence=None,
        trait_reinforcement_count=2,
        trait_window_start=now - timedelta(days=31),
        trait_window_end=now - timedelta(minutes=1),
    )
    lonely = trait_row(
        user,
        "The user paints on weekends",
        trait_stage="trend",
        trait_confidence=None,
        trait_reinforcement_count=1,
        trait_window_start=now - timedelta(days=31),
        trait_window_end=now - timedelta(minutes=1),
    )
    # Two confident behaviors pointing the same way make a preference; two confident
    # preferences a core.
    runs = trait_row(user, "The user goes running every morning", trait_confidence=0.55)
    jogs = trait_row(user, "The user jogs every morning before work", trait_confidence=0.7)
    tea = trait_row(
        user,
        "The user prefers green tea",
        trait_subtype="preference",
        trait_confidence=0.65,
        trait_stage="established",
    )
    matcha = trait_row(
        user,
        "The user loves matcha tea",
        trait_subtype="preference",
        trait_confidence=0.8,
        trait_stage="established",
    )
    cycle = reflect(user)
    assert cycle.status == "completed", cycle.error_message

    trend.refresh_from_db()
    assert (trend.trait_stage, trend.trait_confidence) == ("candidate", pytest.approx(0.3))
    assert trend.trait_window_end is None and trend.trait_derived_from == "trend_promotion"
    lonely.refresh_from_db()
    # Dissolved and expired (seed 002 §5.2), not invalidated: both changes in the history.
    assert lonely.trait_stage == "dissolved" and lonely.expired_at is not None
    assert lonely.invalid_at is None
    assert list(
        MemoryHistory.objects.filter(memory_id=lonely.id, actor="reflection")
        .order_by("created_at", "id")
        .values_list("event", flat=True)
    ) == ["STAGE_CHANGE", "DELETE"]

    runs.refresh_from_db()
    jogs.refresh_from_db()
    assert runs.trait_parent_id is not None and runs.trait_parent_id == jogs.trait_parent_id
    preference = Memory.objects.get(pk=runs.trait_parent_id)
    assert preference.trait_subtype == "preference"
    assert preference.trait_confidence == pytest.approx(0.55)  # the least of its children
    assert preference.trait_stage == "emerging"
    tea.refresh_from_db()
    matcha.refresh_from_db()
    assert tea.trait_parent_id is not None and tea.trait_parent_id == matcha.trait_parent_id
    core = Memory.objects.get(pk=tea.trait_parent_id)
    assert (core.trait_subtype, core.trait_confidence) == ("core", pytest.approx(0.65))
    assert core.trait_stage == "established"
    assert cycle.traits_created == 2 and cycle.traits_dissolved == 1

    # Decay: a behavior left alone for 500 days has 0.4·e^(−2.5) ≈ 0.033 < 0.05: dissolved.
    old = trait_row(
        user,
        "The user collects stamps",
        trait_confidence=0.4,
        trait_last_reinforced=now - timedelta(days=500),
    )
    reflect(user)
    old.refresh_from_db()
    assert old.trait_stage == "dissolved"


def test_contradictions_split_a_trait_by_context():
    user = "split:1"
    trait = trait_row(
        user,
        "The user likes to talk a lot",
        trait_confidence=0.6,
        trait_stage="established",
    )
    supported_by(
        trait,
        "I like to talk a lot in meetings at work.",
        "At the office I like to talk in meetings with colleagues.",
        quality="B",
    )
    for text in (
        "I don't like to talk much when I'm with friends.",
        "With friends at dinner I don't like to talk a lot.",
    ):
        memory_add(
            item=MemoryInput(user_id=user, content=f"User: {text}", memory_type="episodic"),
            caller=SYSTEM,
        )
    cycle = reflect(user)
    assert cycle.status == "completed", cycle.error_message
    trait.refresh_from_db()
    # Two contradictions in one cycle, stated outright ("I don't like…"): strong, so f is the
    # maximum 0.4 (two implicit ones would be 0.3): c = 0.6 × (1 − 0.4) = 0.36, emerging.
    assert trait.trait_contradiction_count == 2
    assert trait.trait_confidence == pytest.approx(0.36)
    assert trait.trait_stage == "emerging"
    assert trait.trait_context == "contextual"
    assert trait.trait_derived_from == "contradiction_split"
    assert trait.metadata["contexts"]["work"]["tendency"] == "holds"
    assert trait.metadata["contexts"]["social"]["tendency"] == "does not hold"


def test_a_failed_cycle_changes_nothing(monkeypatch):
    converse("fail:1", ENGLISH)

    def broken(plan):
        raise RuntimeError("disk full")

    before = Memory.objects.filter(user_id="fail:1").count()
    monkeypatch.setattr("reflection.services.cycles.cycle_apply", broken)
    cycle = reflect("fail:1")
    assert cycle.status == "failed" and "disk full" in cycle.error_message
    assert Memory.objects.filter(user_id="fail:1").count() == before
    assert not Memory.objects.filter(user_id="fail:1", reflected_at__isnull=False).exists()


def test_a_trait_changed_during_planning_is_read_again_not_overwritten(monkeypatch):
    user = "race:1"
    trait = trait_row(user, "The user drinks coffee when coding late", trait_confidence=0.5)
    converse(user, [[(1, "Coffee keeps me going during late coding sessions.")]])
    plans = []
    real_plan = cycle_plan

    def plan_then_veto(state, *, now):
        plan = real_plan(state, now=now)
        if not plans:
            trait_veto(caller=SYSTEM, trait_id=trait.id, reason="wrong")  # lands mid-cycle
        plans.append(plan)
        return plan

    monkeypatch.setattr("reflection.services.cycles.cycle_plan", plan_then_veto)
    cycle = reflect(user)
    assert cycle.status == "completed", cycle.error_message
    assert len(plans) == 2
    trait.refresh_from_db()
    assert trait.trait_stage == "dissolved"  # the veto stands
    assert trait.metadata["veto"]["reason"] == "wrong"


def test_what_is_forgotten_during_planning_never_comes_back_as_a_trait(monkeypatch):
    user = "race:2"
    memory_add(
        item=MemoryInput(user_id=user, content="The user prefers green tea", memory_type="fact"),
        caller=SYSTEM,
    )
    plans = []
    real_plan = cycle_plan

    def plan_then_forget(state, *, now):
        plan = real_plan(state, now=now)
        if not plans:
            user_forget(caller=SYSTEM, user_id=user, topic="green tea")  # lands mid-cycle
        plans.append(plan)
        return plan

    monkeypatch.setattr("reflection.services.cycles.cycle_plan", plan_then_forget)
    cycle = reflect(user)
    assert cycle.status == "completed", cycle.error_message
    assert len(plans) == 2 and any(trait.created for trait in plans[0].traits)
    assert not Memory.objects.filter(user_id=user, content__icontains="green tea").exists()
    assert not TraitEvidence.objects.exists()


def test_an_invalidated_memory_is_evidence_as_the_planner_read_it():
    """A correction leaves a memory invalidated but not expired, as the planner reads it: the
    cycle's evidence check takes it as it is, never as gone on every attempt."""
    user = "said-wrong:1"
    converse(user, ENGLISH)
    ran_again = Memory.objects.filter(user_id=user, content__icontains="ran again")
    assert ran_again.update(invalid_at=timezone.now()) == 1
    cycle = reflect(user)
    assert cycle.status == "completed", cycle.error_message


@pytest.mark.django_db(transaction=True)
def test_two_cycles_for_one_user_run_one_at_a_time(monkeypatch):
    converse("lock:1", ENGLISH[:1])
    first, _ = reflection_cycle_request(caller=SYSTEM, user_id="lock:1")
    second = ReflectionCycle.objects.create(
        user_id="lock:1", trigger_type="manual", status="queued"
    )
    loading, release = threading.Event(), threading.Event()
    real_load = cycle_state_load

    def slow_load(**kwargs):
        loading.set()  # the first cycle holds the user's lock from here
        release.wait(timeout=30)
        return real_load(**kwargs)

    monkeypatch.setattr("reflection.services.cycles.cycle_state_load", slow_load)
    results = {}

    def run_first():
        try:
            results["first"] = reflection_cycle_run(cycle_id=first.pk).status
        finally:
            connection.close()

    thread = threading.Thread(target=run_first)
    thread.start()
    assert loading.wait(timeout=30)
    results["second"] = reflection_cycle_run(cycle_id=second.pk).status
    release.set()
    thread.join(timeout=60)
    assert results == {"first": "completed", "second": "skipped"}
    second.refresh_from_db()
    assert "in flight" in second.error_message


def test_ending_a_session_queues_a_cycle():
    session = session_open(caller=SYSTEM, user_id="end:1")
    session_end(session=session, caller=SYSTEM)
    cycle = ReflectionCycle.objects.get(user_id="end:1")
    assert (cycle.trigger_type, cycle.status) == ("session_end", "queued")
    session_end(session=session, caller=SYSTEM)  # already ended: no second cycle
    assert ReflectionCycle.objects.filter(user_id="end:1").count() == 1


def test_detector_is_the_offline_one_by_default():
    assert type(detector()).__name__ == "OfflineDetector"


def test_cycles_whose_task_or_worker_was_lost_are_recovered(settings):
    long_ago = timezone.now() - timedelta(hours=2)
    waiting = ReflectionCycle.objects.create(
        user_id="lost:1", trigger_type="manual", status="queued", started_at=long_ago
    )
    dead = ReflectionCycle.objects.create(
        user_id="lost:2", trigger_type="manual", status="running", started_at=long_ago
    )
    fresh = ReflectionCycle.objects.create(
        user_id="lost:3", trigger_type="manual", status="running"
    )
    assert reflection_cycles_recover(now=timezone.now()) == {"failed": 1, "republished": 1}
    dead.refresh_from_db()
    fresh.refresh_from_db()
    waiting.refresh_from_db()
    assert (dead.status, fresh.status, waiting.status) == ("failed", "running", "queued")


class ScriptedDetector:
    """Every new memory is evidence for one trait (supporting or not): the lifecycle's
    arithmetic, without the model's judgement in the way."""

    def __init__(self, trait_id, *, supports: bool = True) -> None:
        self.trait_id, self.supports = trait_id, supports

    def detect(self, *, observations, traits):
        return Detection(
            [Match(o.id, self.trait_id, self.supports) for o in observations if o.new], []
        )

    def group(self, *, children, parents):
        return []

    def review(self, *, trait, evidence):
        return Review("revise")


def test_one_trait_lives_from_trend_to_core_and_is_dissolved(monkeypatch):
    user = "journey:1"
    now = timezone.now()
    trait = trait_row(
        user,
        "The user keeps a journal",
        trait_stage="trend",
        trait_confidence=None,
        trait_window_start=now,
        trait_window_end=now + timedelta(days=30),
    )
    scripted = ScriptedDetector(trait.id)
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: scripted)

    def observe(*texts: str) -> ReflectionCycle:
        for text in texts:
            memory_add(
                item=MemoryInput(user_id=user, content=f"User: {text}", memory_type="episodic"),
                caller=SYSTEM,
            )
        cycle = reflect(user)
        assert cycle.status == "completed", cycle.error_message
        trait.refresh_from_db()
        return cycle

    observe("Wrote a page tonight.", "Another page written.")  # plain mentions: D, D
    assert (trait.trait_stage, trait.trait_reinforcement_count) == ("trend", 2)
    assert trait.trait_confidence is None  # a trend is counted, not believed
    # The window ends (as 30 days passing would): reinforced twice → candidate at 0.3.
    Memory.objects.filter(pk=trait.pk).update(trait_window_end=timezone.now())
    observe()
    assert (trait.trait_stage, trait.trait_confidence) == ("candidate", pytest.approx(0.3))
    observe("I always write before bed.")  # explicit: B, 0.3 + 0.7 × 0.2
    assert (trait.trait_stage, trait.trait_confidence) == ("emerging", pytest.approx(0.44))
    # Six explicit statements: 0.552, 0.6416, 0.71328, 0.770624, 0.8164992, 0.85319936.
    observe(
        "I always write before breakfast.",
        "On the train home I always journal.",
        "Sundays are for my notebook, always.",
        "I always carry a pen for my diary.",
        "Every evening I usually fill two pages.",
        "I prefer paper notebooks for journaling.",
    )
    assert (trait.trait_stage, trait.trait_confidence) == ("core", pytest.approx(0.85319936))
    scripted.supports = False  # one implicit contradiction: f 0.2
    observe("Skipped writing tonight.")
    assert trait.trait_confidence == pytest.approx(0.85319936 * 0.8)
    assert (trait.trait_stage, trait.trait_contradiction_count) == ("established", 1)
    qualities = list(
        TraitEvidence.objects.filter(trait_id=trait.id)
        .order_by("created_at", "id")
        .values_list("evidence_type", "quality")
    )
    assert [q for _, q in qualities] == ["D", "D", "B", "B", "B", "B", "B", "B", "B", "D"]
    assert qualities[-1][0] == "contradicting"
    # Left alone for 3,000 days: λ = 0.005 / (1 + 0.1 × 9), so 0.68 · e^(−7.9) < 0.05: dissolved.
    Memory.objects.filter(pk=trait.pk).update(
        trait_last_reinforced=timezone.now() - timedelta(days=3000)
    )
    cycle = observe()
    assert cycle.traits_dissolved == 1
    assert trait.trait_stage == "dissolved" and trait.expired_at is not None
    assert trait.invalid_at is None
    stage_changes = MemoryHistory.objects.filter(memory_id=trait.id, event="STAGE_CHANGE")
    # trend→candidate, candidate→emerging, emerging→core, core→established, →dissolved
    assert stage_changes.count() == 5
    assert set(stage_changes.values_list("actor", flat=True)) == {"reflection"}


def test_evidence_for_a_behavior_reinforces_its_parents(monkeypatch):
    user = "chain:1"
    preference = trait_row(
        user, "The user likes quiet mornings", trait_subtype="preference", trait_confidence=0.55
    )
    behavior = trait_row(
        user, "The user reads at dawn", trait_confidence=0.5, trait_parent_id=preference.id
    )
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: ScriptedDetector(behavior.id))
    memory_add(
        item=MemoryInput(
            user_id=user, content="User: I always read at dawn.", memory_type="episodic"
        ),
        caller=SYSTEM,
    )
    assert reflect(user).traits_updated == 2
    behavior.refresh_from_db()
    preference.refresh_from_db()
    assert behavior.trait_confidence == pytest.approx(0.5 + 0.5 * 0.2)  # B: 0.6
    assert preference.trait_confidence == pytest.approx(0.55 + 0.45 * 0.2)  # B: 0.64
    assert (preference.trait_stage, preference.trait_reinforcement_count) == ("established", 1)
    assert TraitEvidence.objects.filter(trait_id=preference.id).count() == 1


def test_children_of_a_vetoed_parent_can_join_another(monkeypatch):
    user = "orphan:1"
    gone = trait_row(user, "The user likes tea", trait_subtype="preference", trait_confidence=0.6)
    children = [
        trait_row(user, content, trait_confidence=0.7, trait_parent_id=gone.id)
        for content in ("The user drinks green tea daily", "The user drinks matcha every day")
    ]
    trait_veto(caller=SYSTEM, trait_id=gone.id, reason="wrong")
    cycle = reflect(user)
    assert cycle.traits_created == 1
    parents = {Memory.objects.get(pk=child.pk).trait_parent_id for child in children}
    (parent_id,) = parents
    assert parent_id != gone.id
    assert Memory.objects.get(pk=parent_id).trait_subtype == "preference"


@pytest.mark.django_db(transaction=True)
def test_the_weak_trait_job_leaves_a_trait_reinforced_while_it_waited():
    from reflection.services.maintenance import traits_dissolve_weak

    stale = timezone.now() - timedelta(days=500)  # 0.4 · e^(−2.5) ≈ 0.033: weak
    trait = trait_row(
        "race:2", "The user collects stamps", trait_confidence=0.4, trait_last_reinforced=stale
    )
    locked, done = threading.Event(), threading.Event()

    def reinforce():
        try:
            with transaction.atomic():
                Memory.objects.filter(pk=trait.pk).update(
                    trait_confidence=0.55,
                    trait_last_reinforced=timezone.now(),
                    version=F("version") + 1,
                )
                locked.set()
                done.wait(timeout=30)  # the job is now waiting for this row
        finally:
            connection.close()

    thread = threading.Thread(target=reinforce)
    thread.start()
    assert locked.wait(timeout=30)
    timer = threading.Timer(1.0, done.set)  # commit while the job waits on the row lock
    timer.start()
    assert traits_dissolve_weak(now=timezone.now()) == 0
    thread.join(timeout=30)
    trait.refresh_from_db()
    assert (trait.trait_stage, trait.trait_confidence) == ("emerging", pytest.approx(0.55))


def test_a_revised_wording_gets_a_new_hash_and_embedding(monkeypatch):
    user = "revise:1"
    trait = trait_row(user, "The user likes to talk", trait_confidence=0.6)
    Memory.objects.filter(pk=trait.pk).update(embedding_status="ready")
    supporting = Memory.objects.create(
        user_id=user,
        memory_type="episodic",
        content="User: I talk a lot",
        reflected_at=timezone.now(),
    )
    TraitEvidence.objects.create(
        trait_id=trait.id, memory_id=supporting.id, evidence_type="supporting", quality="D"
    )
    scripted = ScriptedDetector(trait.id, supports=False)
    scripted.review = lambda *, trait, evidence: Review("revise", content="The user talks at work")
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: scripted)
    memory_add(
        item=MemoryInput(user_id=user, content="User: Quiet with friends.", memory_type="episodic"),
        caller=SYSTEM,
    )
    assert reflect(user).status == "completed"
    trait.refresh_from_db()
    assert trait.content == "The user talks at work"
    assert trait.content_hash == content_md5("The user talks at work")
    assert (trait.embedding_status, trait.trait_stage) == ("pending", "emerging")  # 0.6 × 0.8
    assert trait.metadata["review"]["decision"] == "revise"


class PatternDetector(ScriptedDetector):
    """Every new memory (and earlier unattached one) forms one pattern."""

    def detect(self, *, observations, traits):
        ids = tuple(o.id for o in sorted(observations, key=lambda o: o.created_at))
        return Detection([], [Pattern(ids, "The user climbs")] if ids else [])


@pytest.mark.parametrize(
    ("days_ago", "trend"),
    [
        ((3, 1), True),  # two mentions two days apart: a trend, its window from the first
        ((20, 1), False),  # 19 days apart: too spread out for a trend
        ((40,), False),  # an imported mention whose 30-day window is long over
    ],
)
def test_a_trend_needs_a_short_span_and_a_window_still_open(monkeypatch, days_ago, trend):
    user = f"span:{len(days_ago)}:{days_ago[0]}"
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: PatternDetector(None))
    for n, days in enumerate(days_ago):
        memory_add(
            item=MemoryInput(
                user_id=user,
                content=f"User: climbing session number {n}, {'great' if n else 'tiring'}",
                memory_type="episodic",
                recorded_at=timezone.now() - timedelta(days=days),
            ),
            caller=SYSTEM,
        )
    reflect(user)
    traits = traits_of(user)
    assert bool(traits) == trend
    if trend:
        (made,) = traits
        assert made.trait_stage == "trend"
        assert made.trait_window_start == made.trait_first_observed
        assert made.trait_window_end == made.trait_window_start + timedelta(days=30)


def test_profile_facts_and_their_messages_make_no_trait_but_a_stated_taste_does():
    user = "profile:1"
    converse(
        user, [[(3, "I live in Berlin."), (2, "I moved to Austin."), (1, "I live in Austin.")]]
    )
    for content in ("My dog is called Rex", "The user prefers green tea"):
        memory_add(
            item=MemoryInput(user_id=user, content=content, memory_type="fact"), caller=SYSTEM
        )
    cycle = reflect(user)
    assert (
        cycle.memories_scanned
        == Memory.objects.filter(
            user_id=user, memory_type__in=["fact", "episodic"], expired_at__isnull=True
        ).count()
    )
    assert [(t.content, t.trait_stage) for t in traits_of(user)] == [
        ("The user prefers green tea", "trend")
    ]
