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


# A session ended (memories/ingest.py, `session_end`), inside its transaction: `caller`,
# `user_id`. Reflection queues a cycle for the user.
session_ended = Signal()

# Everything held about one end user is read (`user_export`) or purged (`user_purge`, inside its
# transaction, before the memories go): `user_id`, `memory_ids` (all of the user's, forgotten
# ones too). A receiver answers its own rows about them: for the export, a dict of section name
# to rows; for the purge, a dict of table to rows deleted.
user_data_exported = Signal()
user_data_purged = Signal()
