"""The trait lifecycle's rules: numbers and pure functions, no database.

Every number has the default of the trait classification design (docs/reflection.md) and can be
overridden by name in the TRAIT_RULES setting (JSON), e.g. `{"behavior_min_memories": 4}`.
"""

import json
import math
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from functools import cache
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.validation import is_number
from memories.models import TraitStage
from reflection.models import EvidenceQuality

# Past it a decayed confidence is 0 in all but name; any `real` confidence times exp(-600)
# stays above float8's smallest number (exp(-700) would not: the product underflows).
DECAY_EXPONENT_FLOOR = 600


@dataclass(frozen=True)
class LifecycleRules:
    # Creation: a pattern in this many memories is a behavior at this confidence; a smaller
    # one seen within a short span is a trend, watched over a window from its first
    # observation (shorter when emotion drives it).
    behavior_min_memories: int = 3
    behavior_initial_confidence: float = 0.4
    trend_max_span_days: int = 14
    trend_window_days: int = 30
    emotional_trend_window_days: int = 14
    # A trend reinforced this often by its window's end becomes a candidate at this confidence.
    trend_min_reinforcements: int = 2
    candidate_initial_confidence: float = 0.3
    # Promotion: this many children, each at least this confident, make a parent.
    promotion_min_children: int = 2
    preference_min_child_confidence: float = 0.5
    core_min_child_confidence: float = 0.6
    # Stage by confidence: below `emerging` a candidate, below `established` emerging, ...
    emerging_from: float = 0.3
    established_from: float = 0.6
    core_above: float = 0.85
    # Reinforcement c ← c + (1 − c)·f by evidence quality.
    quality_factor: dict[str, float] = field(
        default_factory=lambda: {"A": 0.25, "B": 0.20, "C": 0.15, "D": 0.05}
    )
    # Contradiction c ← c·(1 − f): f for one piece, growing by the step per further piece (or
    # straight to the maximum for an explicit statement).
    contradiction_factor: float = 0.2
    contradiction_factor_step: float = 0.1
    contradiction_factor_max: float = 0.4
    # Above this share of contradicting evidence a trait is revised, split or dissolved.
    contradiction_review_ratio: float = 0.3
    # ... dissolved when contradictions are the majority (and no context explains them).
    contradiction_dissolve_ratio: float = 0.5
    # Decay per day: base / (1 + spacing × reinforcements); a subtype the table does not name
    # (or none) at `decay_default`, seed 002 §5.1's ELSE.
    decay_base: dict[str, float] = field(
        default_factory=lambda: {"behavior": 0.005, "preference": 0.002, "core": 0.001}
    )
    decay_default: float = 0.003
    decay_spacing: float = 0.1
    # Decayed below this, a trait is dissolved (the weekly job, and each cycle for its user).
    dissolve_below: float = 0.05
    # Traits at least this decayed-confident are recalled and put in prompts.
    recall_min_confidence: float = 0.3

    def stage_for(self, confidence: float) -> str:
        if confidence > self.core_above:
            return TraitStage.CORE
        if confidence >= self.established_from:
            return TraitStage.ESTABLISHED
        if confidence >= self.emerging_from:
            return TraitStage.EMERGING
        return TraitStage.CANDIDATE

    def reinforced(self, confidence: float, quality: str) -> float:
        return confidence + (1 - confidence) * self.quality_factor[quality]

    def reinforcement_undone(self, confidence: float, quality: str) -> float:
        """The confidence before `reinforced` (its evidence was forgotten)."""
        factor = self.quality_factor[quality]
        return max(0.0, (confidence - factor) / (1 - factor))

    def contradiction_f(self, pieces: int, *, strong: bool) -> float:
        if strong:
            return self.contradiction_factor_max
        grown = self.contradiction_factor + self.contradiction_factor_step * (pieces - 1)
        return min(self.contradiction_factor_max, grown)

    def contradicted(self, confidence: float, pieces: int, *, strong: bool) -> float:
        return confidence * (1 - self.contradiction_f(pieces, strong=strong))

    def contradiction_undone(self, confidence: float) -> float:
        """The confidence before one piece contradicted it (its evidence was forgotten), at the
        base factor: which factor the cycle used is not recorded."""
        return min(1.0, confidence / (1 - self.contradiction_factor))

    def decay_lambda(self, subtype: str | None, reinforcements: int) -> float:
        base = self.decay_base.get(subtype, self.decay_default) if subtype else self.decay_default
        return base / (1 + self.decay_spacing * reinforcements)

    def decayed(
        self,
        confidence: float,
        *,
        subtype: str | None,
        reinforcements: int,
        since: datetime,
        now: datetime,
    ) -> float:
        days = max(0.0, (now - since).total_seconds() / 86400)
        exponent = min(self.decay_lambda(subtype, reinforcements) * days, DECAY_EXPONENT_FLOOR)
        return confidence * math.exp(-exponent)

    def decay_params(self) -> dict[str, Any]:
        """The parameters `decayed_sql` reads."""
        return {
            "decay_bases": json.dumps({k: float(v) for k, v in self.decay_base.items()}),
            "decay_default": float(self.decay_default),
            "decay_spacing": float(self.decay_spacing),
        }

    def trend_window(self, *, emotional: bool) -> timedelta:
        return timedelta(
            days=self.emotional_trend_window_days if emotional else self.trend_window_days
        )


QUALITIES = tuple(EvidenceQuality.values)


def decayed_sql(alias: str) -> str:
    """The SQL twin of `LifecycleRules.decayed`: the trait's confidence decayed until the
    parameter %(now)s, with the rates of `decay_params()` (a NULL or unknown subtype at
    `decay_default`, a future date not at all). (The decay view reads its rates from a table.)"""
    base = (
        f"coalesce((%(decay_bases)s::jsonb ->> {alias}.trait_subtype)::float8, %(decay_default)s)"
    )
    since = f"coalesce({alias}.trait_last_reinforced, {alias}.created_at)"
    # The exponent stops at -DECAY_EXPONENT_FLOOR: exp() of less underflows, an error in SQL.
    return (
        f"({alias}.trait_confidence * exp(-least("
        f"({base} / (1 + %(decay_spacing)s * coalesce({alias}.trait_reinforcement_count, 0)))"
        f" * greatest(0, extract(epoch FROM (%(now)s - {since}))::float8 / 86400.0),"
        f" {DECAY_EXPONENT_FLOOR})))"
    )


@cache
def lifecycle_rules() -> LifecycleRules:
    """The defaults with TRAIT_RULES applied; a table (quality factors, decay bases) may be
    given in part. Cached: settings do not change at run time (tests that override
    TRAIT_RULES call `lifecycle_rules.cache_clear()`)."""
    overrides = dict(getattr(settings, "TRAIT_RULES", {}) or {})
    known = {f.name for f in fields(LifecycleRules)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ImproperlyConfigured(f"TRAIT_RULES: unknown rule(s) {', '.join(unknown)}")
    defaults = LifecycleRules()
    for name, value in overrides.items():
        default = getattr(defaults, name)
        if isinstance(default, dict):  # a partial table keeps the other entries
            if not isinstance(value, dict):
                raise ImproperlyConfigured(f"TRAIT_RULES: {name} must be an object")
            overrides[name] = {**default, **value}
    rules = replace(defaults, **overrides)
    problem = _rules_out_of_range(rules)
    if problem is not None:
        raise ImproperlyConfigured(f"TRAIT_RULES: {problem}")
    return rules


# Factors a confidence is moved by (c + (1 − c)·f, c·(1 − f), and undone dividing by 1 − f):
# below 1, or a cycle would write a confidence the database refuses (or divide by zero).
FACTORS = (
    "quality_factor",
    "contradiction_factor",
    "contradiction_factor_step",
    "contradiction_factor_max",
)


def _rules_out_of_range(rules: LifecycleRules) -> str | None:
    """What in `rules` no cycle can work with, or None: confidences, thresholds and ratios are
    shares (0 to 1), factors below 1, counts, days and decay rates never negative."""
    defaults = LifecycleRules()
    for item in fields(LifecycleRules):
        value = getattr(rules, item.name)
        values = list(value.values()) if isinstance(value, dict) else [value]
        if not all(map(is_number, values)):
            return f"{item.name} must be a number (or a table of numbers)"
        share = isinstance(getattr(defaults, item.name), float)
        if item.name in FACTORS:
            if not all(0 <= v < 1 for v in values):
                return f"{item.name} must be from 0 to below 1"
        elif share and not item.name.startswith("decay"):
            if not 0 <= value <= 1:
                return f"{item.name} must be from 0 to 1"
        elif not all(v >= 0 for v in values):
            return f"{item.name} must not be negative"
    return None
