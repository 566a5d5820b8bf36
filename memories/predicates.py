"""What the words mean, once: "current", "latest", "as of", a trait's stage, the weights recall
scores with, and a memory's state. SQL fragments and ORM filters side by side, so the two cannot
drift apart (tests/memories/test_predicates.py checks that they agree).

- **Current**: neither expired (superseded or deleted: `expired_at`) nor invalidated (the
  fact stopped being true: `invalid_at`).
- **Latest**: not expired — the latest version of a memory, not deleted, whether or not it has
  since been invalidated (writes, per-user indexes, reflection's scans).
- **As of** an instant: valid then (`valid_at` not after it, `invalid_at` after it), not yet
  expired then, and already recorded then (`created_at` not after it). Superseded versions
  count for the instants they were current; forgotten memories for none (docs/privacy.md).
- **Trait stage**: the dedicated column, else V1's `metadata.trait_stage`.
- **State**: `deleted` when expired, else by the activity score: `active` from
  SCORE_ACTIVE_FROM, `cold` from SCORE_COLD_FROM, `deprecated` below.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q

from core.validation import float4


def current_sql(alias: str = "m") -> str:
    return f"{alias}.expired_at IS NULL AND {alias}.invalid_at IS NULL"


def latest_sql(alias: str = "m") -> str:
    return f"{alias}.expired_at IS NULL"


def as_of_sql(alias: str = "m", param: str = "as_of") -> str:
    """The SQL twin of `as_of_q`; the instant is the named parameter `param`."""
    at = f"%({param})s"
    return (
        f"({alias}.valid_at IS NULL OR {alias}.valid_at <= {at})"
        f" AND ({alias}.invalid_at IS NULL OR {alias}.invalid_at > {at})"
        f" AND ({alias}.expired_at IS NULL OR {alias}.expired_at > {at})"
        f" AND {alias}.created_at <= {at}"
        f" AND {alias}.forgotten_at IS NULL"
    )


def current_q() -> Q:
    return Q(expired_at__isnull=True, invalid_at__isnull=True)


def latest_q() -> Q:
    return Q(expired_at__isnull=True)


def valid_as_of_q(instant: datetime) -> Q:
    """Valid then, not yet expired then, and recorded by then: "as of" on both timelines, for
    memories and the memory graph's edges alike."""
    return (
        (Q(valid_at__isnull=True) | Q(valid_at__lte=instant))
        & (Q(invalid_at__isnull=True) | Q(invalid_at__gt=instant))
        & (Q(expired_at__isnull=True) | Q(expired_at__gt=instant))
        & Q(created_at__lte=instant)
    )


def as_of_q(instant: datetime) -> Q:
    return valid_as_of_q(instant) & Q(forgotten_at__isnull=True)


def trait_stage_sql(alias: str = "m") -> str:
    return f"coalesce({alias}.trait_stage, {alias}.metadata->>'trait_stage')"


# --- Scores ----------------------------------------------------------------------------------

# A memory's activity score (0–100) names its state (deprecated ones are hidden from listings
# unless asked for); highest floor first.
# The floors as the `real` score column holds numbers, so Python, the ORM and SQL agree.
STATE_THRESHOLDS = (
    ("active", float4(settings.SCORE_ACTIVE_FROM)),
    ("cold", float4(settings.SCORE_COLD_FROM)),
    ("deprecated", 0.0),
)
DEPRECATED_BELOW = STATE_THRESHOLDS[1][1]
STATES = (*(state for state, _ in STATE_THRESHOLDS), "deleted")


def state_sql(alias: str = "m") -> str:
    """The SQL twin of memories.selectors.memory_state."""
    floors = " ".join(
        f"WHEN {alias}.score >= {floor!r}::real THEN '{state}'" for state, floor in STATE_THRESHOLDS
    )
    return f"CASE WHEN {alias}.expired_at IS NOT NULL THEN 'deleted' {floors} END"


def _state_bounds() -> dict[str, tuple[float | None, float | None]]:
    """Each live state's score range: [low, high), None where open."""
    floors = dict(STATE_THRESHOLDS)
    return {
        "active": (floors["active"], None),
        "cold": (floors["cold"], floors["active"]),
        "deprecated": (None, floors["cold"]),
    }


def states_q(states: list[str]) -> Q:
    """Memories in any of `states` (values of STATES)."""
    condition = Q(pk__in=[])
    for state in states:
        if state == "deleted":
            condition |= Q(expired_at__isnull=False)
            continue
        low, high = _state_bounds()[state]
        part = Q(expired_at__isnull=True)
        if low is not None:
            part &= Q(score__gte=low)
        if high is not None:
            part &= Q(score__lt=high)
        condition |= part
    return condition


def states_sql(states: list[str], alias: str = "m") -> str:
    """The SQL twin of `states_q` (the states are validated values; the floors are numbers)."""
    parts = []
    for state in states:
        if state == "deleted":
            parts.append(f"{alias}.expired_at IS NOT NULL")
            continue
        low, high = _state_bounds()[state]
        part = f"{alias}.expired_at IS NULL"
        if low is not None:
            part += f" AND {alias}.score >= {low!r}::real"
        if high is not None:
            part += f" AND {alias}.score < {high!r}::real"
        parts.append(f"({part})")
    return "(" + (" OR ".join(parts) or "false") + ")"


@dataclass(frozen=True)
class ActivityFilter:
    """Which memories by activity score and state: `states` (values of STATES), else, unless
    `include_all_states`, not deprecated; and the score between `score_min` and `score_max`.
    The default lets everything through."""

    score_min: float | None = None
    score_max: float | None = None
    states: tuple[str, ...] = ()
    include_all_states: bool = True

    def q(self) -> Q:
        condition = Q()
        if self.states:
            condition &= states_q(list(self.states))
        elif not self.include_all_states:
            condition &= ~Q(expired_at__isnull=True, score__lt=DEPRECATED_BELOW)
        if self.score_min is not None:
            condition &= Q(score__gte=self.score_min)
        if self.score_max is not None:
            condition &= Q(score__lte=self.score_max)
        return condition

    def sql(self, alias: str = "m") -> str:
        """The SQL twin of `q` ("true" when it lets everything through). The bounds are
        validated numbers, written as real (float4) literals, as the ORM rounds them."""
        parts = []
        if self.states:
            parts.append(states_sql(list(self.states), alias))
        elif not self.include_all_states:
            parts.append(
                f"NOT ({alias}.expired_at IS NULL AND {alias}.score < {DEPRECATED_BELOW!r}::real)"
            )
        if self.score_min is not None:
            parts.append(f"{alias}.score >= {float(self.score_min)!r}::real")
        if self.score_max is not None:
            parts.append(f"{alias}.score <= {float(self.score_max)!r}::real")
        return " AND ".join(parts) or "true"


ANY_ACTIVITY = ActivityFilter()


# Recall: score = rrf × (1 + recency + importance + trait_stage), where
# recency = RECENCY_WEIGHT · exp(−age / (RECENCY_SCALE · (1 + AROUSAL_SLOWDOWN · arousal))),
# importance = IMPORTANCE_WEIGHT · importance, trait_stage = STAGE_BOOSTS[stage] or 0.
RRF_K = 60
RECENCY_WEIGHT = 0.15
RECENCY_SCALE = timedelta(days=30)
AROUSAL_SLOWDOWN = 0.5
IMPORTANCE_WEIGHT = 0.15
STAGE_BOOSTS = {"core": 0.25, "established": 0.15, "emerging": 0.05}  # TraitStage values
# Trait stages recall ranks (their decayed confidence floor is a lifecycle rule).
RECALLED_TRAIT_STAGES = tuple(STAGE_BOOSTS)


def score_params() -> dict[str, float]:
    """The weights as SQL parameters (recall's statement reads them by these names)."""
    return {
        "recency_weight": RECENCY_WEIGHT,
        "recency_scale_seconds": RECENCY_SCALE.total_seconds(),
        "arousal_slowdown": AROUSAL_SLOWDOWN,
        "importance_weight": IMPORTANCE_WEIGHT,
        **{f"boost_{stage}": boost for stage, boost in STAGE_BOOSTS.items()},
    }
