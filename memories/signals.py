"""What memories tells the apps built on it (they connect in their AppConfig.ready)."""

import uuid
from dataclasses import dataclass, field

from django.dispatch import Signal


@dataclass(frozen=True)
class ForgottenEffect:
    """What a receiver changed because memories were forgotten: traits re-weighed (their
    confidence without the forgotten evidence) and traits dissolved (no evidence left)."""

    reweighed: list[uuid.UUID] = field(default_factory=list)
    dissolved: list[uuid.UUID] = field(default_factory=list)


# Memories were forgotten whole (memories/services/forgetting.py), inside the forget's
# transaction: `user_id`, `memory_ids`. A receiver drops what it derived from them and answers
# a ForgottenEffect.
memories_forgotten = Signal()
