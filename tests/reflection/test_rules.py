"""The lifecycle's arithmetic, against numbers worked out by hand."""

import math
from datetime import UTC, datetime, timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured

from reflection.rules import LifecycleRules, lifecycle_rules

RULES = LifecycleRules()
NOW = datetime(2026, 11, 22, tzinfo=UTC)


@pytest.mark.parametrize(
    ("confidence", "stage"),
    [
        (0.0, "candidate"),
        (0.29, "candidate"),
        (0.3, "emerging"),
        (0.59, "emerging"),
        (0.6, "established"),
        (0.85, "established"),
        (0.851, "core"),
    ],
)
def test_stage_follows_confidence(confidence, stage):
    assert RULES.stage_for(confidence) == stage


@pytest.mark.parametrize(
    ("quality", "expected"),
    [("A", 0.4 + 0.6 * 0.25), ("B", 0.4 + 0.6 * 0.20), ("C", 0.4 + 0.6 * 0.15), ("D", 0.43)],
)
def test_reinforcement_closes_the_gap_by_the_quality_factor(quality, expected):
    assert RULES.reinforced(0.4, quality) == pytest.approx(expected)


@pytest.mark.parametrize("quality", ["A", "B", "C", "D"])
def test_forgotten_evidence_undoes_its_reinforcement_and_contradiction(quality):
    assert RULES.reinforcement_undone(RULES.reinforced(0.4, quality), quality) == pytest.approx(0.4)
    assert RULES.contradiction_undone(RULES.contradicted(0.5, 1, strong=False)) == pytest.approx(
        0.5
    )
    assert RULES.reinforcement_undone(0.1, "A") == 0.0  # never below nothing
    assert RULES.contradiction_undone(0.9) == 1.0


def test_contradiction_factor_grows_with_pieces_up_to_the_maximum():
    assert RULES.contradicted(0.5, 1, strong=False) == pytest.approx(0.4)  # 0.5 × 0.8
    assert RULES.contradicted(0.5, 2, strong=False) == pytest.approx(0.35)  # 0.5 × 0.7
    assert RULES.contradicted(0.5, 3, strong=False) == pytest.approx(0.3)  # 0.5 × 0.6
    assert RULES.contradicted(0.5, 9, strong=False) == pytest.approx(0.3)
    assert RULES.contradicted(0.5, 1, strong=True) == pytest.approx(0.3)


@pytest.mark.parametrize(
    ("subtype", "reinforcements", "days", "expected"),
    [
        ("behavior", 0, 100, 0.8 * math.exp(-0.5)),  # λ 0.005
        ("behavior", 10, 100, 0.8 * math.exp(-0.25)),  # λ 0.005 / 2
        ("preference", 0, 100, 0.8 * math.exp(-0.2)),  # λ 0.002
        ("core", 0, 100, 0.8 * math.exp(-0.1)),  # λ 0.001
        # Seed 002 §5.1's ELSE: any other subtype, or none, at λ 0.003.
        (None, 0, 100, 0.8 * math.exp(-0.3)),
        ("habit", 0, 100, 0.8 * math.exp(-0.3)),
        ("habit", 10, 100, 0.8 * math.exp(-0.15)),  # λ 0.003 / 2
        ("behavior", 0, 0, 0.8),
    ],
)
def test_decay_slows_with_subtype_and_spacing(subtype, reinforcements, days, expected):
    decayed = RULES.decayed(
        0.8,
        subtype=subtype,
        reinforcements=reinforcements,
        since=NOW - timedelta(days=days),
        now=NOW,
    )
    assert decayed == pytest.approx(expected)


def test_trend_window_is_shorter_for_emotion():
    assert RULES.trend_window(emotional=False) == timedelta(days=30)
    assert RULES.trend_window(emotional=True) == timedelta(days=14)


def test_rules_are_configurable_by_name(settings):
    settings.TRAIT_RULES = {"behavior_min_memories": 4, "decay_base": {"behavior": 0.01}}
    lifecycle_rules.cache_clear()
    try:
        assert lifecycle_rules().behavior_min_memories == 4
        assert lifecycle_rules().decay_lambda("behavior", 0) == 0.01
        settings.TRAIT_RULES = {"no_such_rule": 1}
        lifecycle_rules.cache_clear()
        with pytest.raises(ImproperlyConfigured, match="no_such_rule"):
            lifecycle_rules()
        # Rules no cycle can work with: a confidence the database refuses, a division by zero.
        for bad, message in (
            ({"quality_factor": {"A": 1.5}}, "quality_factor must be from 0 to below 1"),
            ({"contradiction_factor": 1}, "contradiction_factor must be from 0 to below 1"),
            ({"core_above": 2}, "core_above must be from 0 to 1"),
            ({"decay_default": -0.1}, "decay_default must not be negative"),
            ({"trend_window_days": "30"}, "trend_window_days must be a number"),
        ):
            settings.TRAIT_RULES = bad
            lifecycle_rules.cache_clear()
            with pytest.raises(ImproperlyConfigured, match=message):
                lifecycle_rules()
    finally:
        lifecycle_rules.cache_clear()
