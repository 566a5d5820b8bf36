"""A value said before the one held now (a conversation imported after a later one) is written
already ended: it stays ended when reworded, holds its slot's key against no current memory,
repeats no current memory, and a live message is never taken for the past."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from core.access import SYSTEM
from memories.ingest import session_message_add, session_open
from memories.models import Memory
from memories.services import MemoryInput, memory_add, memory_supersede

pytestmark = pytest.mark.django_db

USER = "past:ana"
T0 = datetime(2025, 1, 6, 9, tzinfo=UTC)


def said(content: str, at: datetime | None) -> None:
    session = session_open(caller=SYSTEM, user_id=USER)
    session_message_add(session=session, role="user", content=content, caller=SYSTEM, sent_at=at)


def home_holders() -> list[str]:
    current = Memory.objects.current().filter(user_id=USER, key="profile:home_city")
    return sorted(current.values_list("content", flat=True))


def test_an_ended_value_reworded_stays_ended():
    said("I live in Denver now.", T0 + timedelta(weeks=1))
    said("I live in Austin, right by the river.", T0)
    ended = Memory.objects.get(user_id=USER, content="The user lives in Austin")
    reworded = memory_supersede(
        memory=ended, content="The user lives in Austin, Texas", caller=SYSTEM
    )
    assert reworded.invalid_at == ended.invalid_at
    assert home_holders() == ["The user lives in Denver"]


def test_an_older_value_the_user_holds_in_the_same_words_is_still_imported():
    said("I live in Denver now.", T0 + timedelta(weeks=1))
    memory_add(
        item=MemoryInput(user_id=USER, content="The user lives in Austin", memory_type="fact"),
        caller=SYSTEM,
    )
    said("I live in Austin, right by the river.", T0)
    austin = Memory.objects.filter(user_id=USER, content="The user lives in Austin")
    assert sorted((m.key or "", m.invalid_at is None) for m in austin) == [
        ("", True),  # the one held now, as it was
        ("profile:home_city", False),  # the one said before Denver, ended
    ]
    assert home_holders() == ["The user lives in Denver"]


def test_a_live_message_after_a_value_dated_ahead_is_the_new_value():
    said("I live in Denver.", None)
    Memory.objects.filter(user_id=USER, key="profile:home_city").update(
        valid_at=timezone.now() + timedelta(days=30)
    )
    said("I moved to Austin.", None)
    assert home_holders() == ["The user lives in Austin"]


def home_as_of(instant: datetime) -> list[str]:
    held = Memory.objects.as_of(instant).filter(user_id=USER, key="profile:home_city")
    return sorted(held.values_list("content", flat=True))


@pytest.mark.parametrize(
    "order",
    [
        # Two past values imported after the current one, the later first or the earlier first
        ["denver", "austin", "chicago"],
        ["denver", "chicago", "austin"],
        # One imported between a value and its successor, said live in order
        ["chicago", "denver", "austin"],
    ],
)
def test_one_value_of_a_slot_holds_at_any_instant_whatever_order_they_come_in(order):
    sayings = {
        "chicago": ("I live in Chicago.", T0),
        "austin": ("I live in Austin now.", T0 + timedelta(weeks=1)),
        "denver": ("I live in Denver now.", T0 + timedelta(weeks=2)),
    }
    for name in order:
        said(*sayings[name])
    assert home_as_of(T0 + timedelta(days=3)) == ["The user lives in Chicago"]
    assert home_as_of(T0 + timedelta(days=10)) == ["The user lives in Austin"]
    assert home_as_of(T0 + timedelta(days=20)) == ["The user lives in Denver"]
    assert home_holders() == ["The user lives in Denver"]
