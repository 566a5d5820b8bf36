"""A preference promoted from behaviors is as supported as they are: one contradiction of a
child, or a child's reinforcement forgotten, re-weighs the parent by the same formulas and
does not dissolve it for having no evidence of its own."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.access import SYSTEM
from memories.models import Memory
from memories.services import MemoryInput, memory_add, memory_update
from memories.services.forgetting import user_forget
from reflection.detection import Detection, Pattern, detector
from reflection.models import TraitEvidence
from reflection.wording import polarity
from tests.reflection.test_engine import (
    ENGLISH,
    ScriptedDetector,
    converse,
    reflect,
    supported_by,
    trait_about,
    trait_row,
)

pytestmark = pytest.mark.django_db

USER = "tree:1"


def established(content: str, **fields) -> Memory:
    return trait_row(
        USER, content, **{"trait_stage": "established", "trait_confidence": 0.7, **fields}
    )


class EveryNewMemoryIs(ScriptedDetector):
    """Every new memory evidence for one trait, for or against, and the offline review: its
    decisions are what these tests are about."""

    def review(self, *, trait, evidence):
        return detector().review(trait=trait, evidence=evidence)


@pytest.fixture
def tree():
    preference = established(
        "The user likes quiet mornings", trait_subtype="preference", trait_confidence=0.6
    )
    reading = established("The user reads at dawn", trait_parent_id=preference.id)
    meditating = established("The user meditates at sunrise", trait_parent_id=preference.id)
    supported_by(reading, "I read at dawn.", "Read before sunrise again.", "Dawn reading.")
    supported_by(meditating, "Meditated at sunrise.", "Sunrise meditation.", "Meditation.")
    return preference, reading


def say(text: str) -> Memory:
    item = MemoryInput(user_id=USER, content=f"User: {text}", memory_type="episodic")
    return memory_add(item=item, caller=SYSTEM).memory


def test_one_contradiction_of_a_child_re_weighs_its_parent_without_dissolving_it(tree, monkeypatch):
    preference, reading = tree
    contradicting = EveryNewMemoryIs(reading.id, supports=False)
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: contradicting)
    say("Slept in and skipped my reading today.")
    assert reflect(USER).status == "completed"
    reading.refresh_from_db()
    preference.refresh_from_db()
    assert reading.trait_confidence == pytest.approx(0.7 * 0.8)
    assert preference.trait_stage != "dissolved"
    assert preference.trait_confidence == pytest.approx(0.6 * 0.8)


def test_forgetting_a_childs_reinforcement_leaves_the_parent_as_it_was(tree, monkeypatch):
    preference, reading = tree
    reinforcing = EveryNewMemoryIs(reading.id, supports=True)
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: reinforcing)
    read = say("Read two chapters at dawn today.")
    assert reflect(USER).status == "completed"
    preference.refresh_from_db()
    assert preference.trait_confidence > 0.6
    user_forget(caller=SYSTEM, user_id=USER, memory_ids=[read.id])
    preference.refresh_from_db()
    assert preference.trait_stage != "dissolved"
    assert preference.trait_confidence == pytest.approx(0.6)


def test_forgetting_a_memory_a_trait_was_made_from_undoes_no_reinforcement():
    user = "tree:2"
    converse(user, ENGLISH)
    assert reflect(user).status == "completed"
    running = trait_about(user, "run", "ran")
    made_at = running.trait_confidence
    assert running.trait_reinforcement_count == 0
    founder = TraitEvidence.objects.filter(trait_id=running.id).values_list("memory_id")[1][0]
    user_forget(caller=SYSTEM, user_id=user, memory_ids=[founder])
    running.refresh_from_db()
    assert running.trait_confidence == pytest.approx(made_at)
    assert running.trait_reinforcement_count == 0


@pytest.mark.parametrize(
    ("text", "sign"),
    [
        ("I never miss my morning run before work, not even on holidays.", 1),
        ("Not a day goes by without a run.", 1),
        ("I don't ever skip leg day.", 1),
        ("我没有一天不去跑步，早上跑步雷打不动。", 1),
        ("I never run in the morning.", -1),
        ("I stopped running, not even on weekends.", -1),
        ("I don't miss smoking at all.", -1),
        ("我从不跑步。", -1),
    ],
)
def test_a_negation_that_says_yes_supports_the_trait(text, sign):
    assert polarity(text) == sign


class TwoBatchesAlike(ScriptedDetector):
    """A detector that, as an LLM's reading two batches would, finds one pattern twice."""

    def detect(self, *, observations, traits):
        new = [o.id for o in observations if o.new]
        half = len(new) // 2
        return Detection(
            [],
            [
                Pattern(tuple(new[:half]), "The user runs every morning"),
                Pattern(tuple(new[half:]), "The user  runs every morning"),
            ],
        )


def test_one_pattern_found_in_two_batches_of_a_cycle_is_one_trait(monkeypatch):
    user = "tree:3"
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: TwoBatchesAlike(None))
    for n in range(8):
        memory_add(
            item=MemoryInput(
                user_id=user, content=f"User: Ran 5k, run {n}", memory_type="episodic"
            ),
            caller=SYSTEM,
        )
    assert reflect(user).status == "completed"
    runs = Memory.objects.current().filter(user_id=user, memory_type="trait")
    assert list(runs.values_list("content", flat=True)) == ["The user runs every morning"]
    assert TraitEvidence.objects.filter(trait_id=runs.get().id).count() == 8


def test_a_memory_reworded_after_a_cycle_read_it_is_not_counted_again():
    user = "tree:4"
    converse(user, ENGLISH)
    assert reflect(user).status == "completed"
    running = trait_about(user, "run", "ran")
    before = (running.trait_confidence, running.trait_reinforcement_count)
    cited = TraitEvidence.objects.filter(trait_id=running.id).values_list("memory_id")[0][0]
    memory = Memory.objects.get(pk=cited)
    reworded = memory.content.replace("User: ", "User: So, ", 1)
    memory_update(
        memory=memory, version=memory.version, changes={"content": reworded}, caller=SYSTEM
    )
    assert reflect(user).status == "completed"
    running.refresh_from_db()
    assert (running.trait_confidence, running.trait_reinforcement_count) == before


def test_a_trend_counts_only_what_is_said_by_its_windows_end(monkeypatch):
    now = timezone.now()
    trend = trait_row(
        USER,
        "The user keeps a journal",
        trait_stage="trend",
        trait_confidence=None,
        trait_reinforcement_count=1,
        trait_window_start=now - timedelta(days=35),
        trait_window_end=now - timedelta(days=5),
        trait_first_observed=now - timedelta(days=35),
    )
    reinforcing = EveryNewMemoryIs(trend.id, supports=True)
    monkeypatch.setattr("reflection.cycle.plan.detector", lambda: reinforcing)
    say("Wrote a page in my journal tonight.")  # five days after its window ended
    assert reflect(USER).status == "completed"
    trend.refresh_from_db()
    assert trend.trait_stage == "dissolved"
    assert not TraitEvidence.objects.filter(trait_id=trend.id).exists()
