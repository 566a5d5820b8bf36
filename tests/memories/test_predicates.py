""" "Current" and "as of" mean the same in SQL (recall, near duplicates) and in the ORM
(listings, the write path), on rows in every state."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memories.models import Memory
from memories.predicates import ActivityFilter, as_of_sql, current_sql, state_sql
from memories.selectors import memory_state

pytestmark = pytest.mark.django_db

NOW = timezone.now()


def memory(name: str, **fields) -> Memory:
    defaults = {"created_at": NOW - timedelta(days=10), "valid_at": NOW - timedelta(days=10)}
    return Memory.objects.create(
        user_id="u:meaning",
        memory_type="fact",
        content=name,
        content_hash=name,
        **defaults | fields,
    )


@pytest.fixture
def memories() -> dict[str, Memory]:
    rows = [
        memory("current"),
        memory("expired", expired_at=NOW - timedelta(days=5)),
        memory(
            "invalidated", invalid_at=NOW - timedelta(days=3), expired_at=NOW - timedelta(days=3)
        ),
        memory("invalid only", invalid_at=NOW - timedelta(days=2)),  # as V1 rows may be
        memory("valid later", valid_at=NOW + timedelta(days=3)),
        memory("no valid_at", valid_at=None),
        memory("recorded recently", created_at=NOW - timedelta(days=1)),
    ]
    return {row.content: row for row in rows}


def contents(sql_filter: str, params: dict) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT content FROM memories m WHERE user_id = 'u:meaning' AND {sql_filter}", params
        )
        return {content for (content,) in cursor.fetchall()}


def test_current_means_the_same_in_sql_and_the_orm(memories):
    orm = set(
        Memory.objects.current().filter(user_id="u:meaning").values_list("content", flat=True)
    )
    assert orm == contents(current_sql("m"), {})
    assert orm == {"current", "valid later", "no valid_at", "recorded recently"}


@pytest.mark.parametrize("days_ago", [20, 10, 6, 4, 2.5, 1.5, 0.5, -5])
def test_as_of_means_the_same_in_sql_and_the_orm(memories, days_ago):
    instant = NOW - timedelta(days=days_ago)
    orm = Memory.objects.as_of(instant).filter(user_id="u:meaning")
    assert set(orm.values_list("content", flat=True)) == contents(
        as_of_sql("m", "at"), {"at": instant}
    )


def test_as_of_by_hand(memories):
    four_days_ago = Memory.objects.as_of(NOW - timedelta(days=4)).filter(user_id="u:meaning")
    assert set(four_days_ago.values_list("content", flat=True)) == {
        "current",
        "invalidated",
        "invalid only",
        "no valid_at",
    }


@pytest.mark.parametrize(
    "activity",
    [
        ActivityFilter(),
        ActivityFilter(include_all_states=False),
        ActivityFilter(states=("active",)),
        ActivityFilter(states=("cold", "deleted")),
        ActivityFilter(states=("deprecated",), score_min=10),
        ActivityFilter(score_min=29.99, score_max=70, include_all_states=False),
    ],
)
def test_activity_filters_mean_the_same_in_sql_and_the_orm(activity):
    scores = {"at 0": 0, "at 29.99": 29.99, "at 30": 30, "at 69.99": 69.99, "at 70": 70}
    for name, score in scores.items():
        memory(name, score=score)
        memory(f"{name}, deleted", score=score, expired_at=NOW)
    orm = set(
        Memory.objects.filter(activity.q(), user_id="u:meaning").values_list("content", flat=True)
    )
    assert orm == contents(activity.sql("m"), {})


def test_the_state_in_sql_is_the_state_in_python():
    for score in (0, 29.99, 30, 69.99, 70, 100):
        for expired_at in (None, NOW):
            row = memory(f"{score} {expired_at is None}", score=score, expired_at=expired_at)
            with connection.cursor() as cursor:
                cursor.execute(f"SELECT {state_sql('m')} FROM memories m WHERE id = %s", [row.id])
                assert cursor.fetchone()[0] == memory_state(row)
    assert [memory_state(Memory(score=s)) for s in (29.99, 30, 69.99, 70)] == [
        "deprecated",
        "cold",
        "cold",
        "active",
    ]
