"""Seed 002 §5.3 in the memory graph: two current values of a single-valued attribute that time
cannot order are reported on the consistency issues page, and resolved once one ends."""

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memories.graph.models import GraphEdge
from memories.graph.services import graph_statements_record
from memories.statements import USER, Statement
from reflection.models import ConsistencyCheck, ConsistencyIssue
from reflection.services.maintenance import consistency_check

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 5, 1, 12, tzinfo=UTC)


def lives_in(city: str, at: datetime) -> None:
    statement = Statement(USER, "lives in", city, single=True)
    graph_statements_record(user_id="cc:ana", statements=[(statement, [])], at=at, actor="test")


def open_issues() -> list[tuple[str, str]]:
    issues = ConsistencyIssue.objects.filter(
        check_name=ConsistencyCheck.GRAPH_CONTRADICTION, resolved_at__isnull=True
    )
    return sorted((issue.row_id, issue.missing_id) for issue in issues)


def test_two_values_said_at_one_instant_are_reported_and_resolved_when_time_orders_them():
    lives_in("Rome", T0)
    lives_in("Milan", T0)
    rome, milan = (str(GraphEdge.objects.get(object_value=c).id) for c in ("Rome", "Milan"))
    assert consistency_check(now=timezone.now())[ConsistencyCheck.GRAPH_CONTRADICTION] == 2
    assert open_issues() == sorted([(rome, milan), (milan, rome)])
    lives_in("Turin", T0 + timedelta(days=1))  # a later value ends both
    consistency_check(now=timezone.now())
    assert open_issues() == []


def test_a_change_ordered_by_time_is_no_contradiction():
    lives_in("Rome", T0)
    lives_in("Milan", T0 + timedelta(days=1))
    assert consistency_check(now=timezone.now())[ConsistencyCheck.GRAPH_CONTRADICTION] == 0
