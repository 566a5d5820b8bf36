"""Trait fields: the types of a trait's columns and how V1 metadata maps onto them.

A trait's subtype, stage, confidence, context, parent and counters live in dedicated columns;
V1 wrote them into `metadata`, which stays as the fallback (readers look at the column first).
Writers, readers and the reflection engine share these parsers.
"""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.errors import Invalid
from core.validation import float4, is_number
from memories.models import (
    LEGACY_MEMORY_TYPES,
    MemoryType,
    TraitContext,
    TraitDerivedFrom,
    TraitStage,
    TraitSubtype,
)

# A legacy `insight` becomes a trait at stage trend, observed over this window.
TREND_WINDOW = timedelta(days=30)


def _choice(choices: type) -> Any:
    def parse(value: Any) -> str:
        if value not in choices.values:
            raise ValueError(f"must be one of {', '.join(choices.values)}")
        return value

    return parse


def _number(value: Any) -> int | float:
    if not is_number(value):
        raise ValueError("must be a number")
    return value


def _count(value: Any) -> int:
    """A counter (an `integer` column): the decay divides by 1 + its multiple, and a negative
    one made every read of the trait and the refresh of the believed traits fail."""
    whole = isinstance(_number(value), int) or value.is_integer()
    if not whole or not 0 <= value < 2**31:
        raise ValueError(f"must be a whole number from 0 to {2**31 - 1}")
    return int(value)


def _share(value: Any) -> float:
    """A confidence (a `real` column), from 0 to 1."""
    if not 0 <= _number(value) <= 1:
        raise ValueError("must be a number from 0 to 1")
    return float4(value)


def _timestamp(value: Any) -> datetime:
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise ValueError("must be an ISO 8601 timestamp")
    aware = parsed if parsed.tzinfo else timezone.make_aware(parsed)
    try:
        # Stored in UTC: "0001-01-01T00:00:00+14:00" is before year 1 there, and PostgreSQL
        # would keep what no read could turn back into a datetime.
        aware.astimezone(UTC)
    except OverflowError:
        raise ValueError("is out of range") from None
    return aware


TRAIT_METADATA = {
    "trait_subtype": ("trait_subtype", _choice(TraitSubtype)),
    "trait_stage": ("trait_stage", _choice(TraitStage)),
    "confidence": ("trait_confidence", _share),
    "context": ("trait_context", _choice(TraitContext)),
    "parent_id": ("trait_parent_id", lambda value: uuid.UUID(str(value))),
    "reinforcement_count": ("trait_reinforcement_count", _count),
    "contradiction_count": ("trait_contradiction_count", _count),
    "last_reinforced": ("trait_last_reinforced", _timestamp),
    "first_observed": ("trait_first_observed", _timestamp),
    "window_start": ("trait_window_start", _timestamp),
    "window_end": ("trait_window_end", _timestamp),
    "derived_from": ("trait_derived_from", _choice(TraitDerivedFrom)),
}
TRAIT_COLUMNS = [column for column, _ in TRAIT_METADATA.values()]


def trait_fields(*, memory_type: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """The trait columns for a memory: from its metadata for traits (which keeps the keys, for
    readers of V1 metadata), all NULL for every other type."""
    fields: dict[str, Any] = dict.fromkeys(TRAIT_COLUMNS)
    if memory_type != MemoryType.TRAIT:
        return fields
    fields["trait_reinforcement_count"] = fields["trait_contradiction_count"] = 0
    for key, (column, parse) in TRAIT_METADATA.items():
        if metadata.get(key) is not None:
            try:
                fields[column] = parse(metadata[key])
            except (TypeError, ValueError) as error:
                raise Invalid(str(error), field=f"metadata.{key}") from None
    return fields


def normalised_type(memory_type: str, metadata: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Legacy types: general → fact, insight → trait at stage trend (a 30-day window)."""
    mapped = LEGACY_MEMORY_TYPES.get(memory_type, memory_type)
    if mapped not in MemoryType.values:
        raise Invalid(f"Unknown memory type '{memory_type}'.", field="memory_type")
    if memory_type == "insight":
        now = timezone.now()
        metadata = {
            "trait_stage": TraitStage.TREND,
            "window_start": now.isoformat(),
            "window_end": (now + TREND_WINDOW).isoformat(),
            **metadata,
        }
    return mapped, metadata
