"""Memories and what hangs off them.

`memories` is LIST-partitioned by memory_type with PRIMARY KEY (id, memory_type) (see
docs/schema.md): the table, partitions and indexes are created by hand-written SQL in the
migrations, and Django's state keeps `id` as the primary key. Nothing holds a database foreign
key to `memories`; references to memory ids are kept consistent by the services, and a daily
consistency job reports dangling ones (reflection/services/maintenance.py).
"""

import uuid
from datetime import datetime

import pgtrigger
from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.functions import RandomUUID
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone
from pgvector.django import HalfVectorField

from core.db.fields import RealField
from core.db.schema import append_only, choice_constraint
from memories.embeddings import LEXICAL_DIMENSIONS
from memories.predicates import as_of_q, current_q


class MemoryType(models.TextChoices):
    FACT = "fact"
    EPISODIC = "episodic"
    TRAIT = "trait"
    DOCUMENT = "document"


class EmbeddingStatus(models.TextChoices):
    PENDING = "pending"
    READY = "ready"
    FAILED = "failed"


# V1 memory types and what they became in the upgrade.
def search_document() -> models.GeneratedField:
    """The full-text document of the row's `content`, CJK-aware (migration 0003): derived by
    the database, so every write path keeps it in step and erasing content erases its words."""
    return models.GeneratedField(
        expression=models.Func(models.F("content"), function="neuromem_search_document"),
        output_field=SearchVectorField(),
        db_persist=True,
    )


LEGACY_MEMORY_TYPES = {"general": MemoryType.FACT, "insight": MemoryType.TRAIT}


class TraitSubtype(models.TextChoices):
    BEHAVIOR = "behavior"
    PREFERENCE = "preference"
    CORE = "core"


class TraitStage(models.TextChoices):
    TREND = "trend"
    CANDIDATE = "candidate"
    EMERGING = "emerging"
    ESTABLISHED = "established"
    CORE = "core"
    DISSOLVED = "dissolved"


class TraitContext(models.TextChoices):
    WORK = "work"
    PERSONAL = "personal"
    SOCIAL = "social"
    LEARNING = "learning"
    GENERAL = "general"
    CONTEXTUAL = "contextual"


class TraitDerivedFrom(models.TextChoices):
    REFLECTION = "reflection"
    TREND_PROMOTION = "trend_promotion"
    CONTRADICTION_SPLIT = "contradiction_split"


# Who changed a memory: set per transaction by the services (core.db.actor).
AUDIT_PRELUDE = """
DECLARE
    actor text := coalesce(nullif(current_setting('neuromem.actor', true), ''), 'system');
    moving text := coalesce(current_setting('neuromem.moving', true), '');
    forgetting text := coalesce(current_setting('neuromem.forgetting', true), '');
BEGIN"""
# What a history row is worth writing for, and what is bookkeeping (changes with no history
# row). Every column is in one or the other: a test fails on a new column in neither.
AUDITED = (
    "content",
    "metadata",
    "memory_type",
    "user_id",
    "importance",
    "key",
    "valid_at",
    "invalid_at",
    "expired_at",
    "superseded_by",
    "trait_subtype",
    "trait_stage",
    "trait_confidence",
    "trait_context",
    "trait_parent_id",
    "trait_window_start",
    "trait_window_end",
)
NOT_AUDITED = (
    "id",
    "content_hash",  # follows content
    "search_vector",  # generated from content
    "embedding",
    "embedding_status",
    "lexical_vector",  # follows content
    "version",
    "created_at",
    "updated_at",
    "score",
    "access_count",
    "last_accessed_at",
    "source_episode_ids",  # provenance, set once at the write
    "subject_entity_id",
    "object_entity_id",
    "trait_reinforcement_count",  # the reflection engine's counters and timestamps
    "trait_contradiction_count",
    "trait_last_reinforced",
    "trait_first_observed",
    "trait_derived_from",
    "valid_from",  # V1's, kept as they were
    "valid_until",
    "extracted_timestamp",
    "reflected_at",  # the reflection engine's scan mark
    "traverse_count",  # the activity score's inputs and flags (docs/decay.md)
    "last_linked_at",
    "eligible_for_delete",
    "merge_candidate_of",
    "redactions",  # counts only: what the write replaced by placeholders
    "forgotten_at",  # a forget is logged as FORGET, without content (see the trigger)
    "forget_request_id",
)
# "@" stands for OLD. or NEW.
AUDITED_COLUMNS = ", ".join(f"@{column}" for column in AUDITED)


class MemoryQuerySet(models.QuerySet):
    def current(self) -> "MemoryQuerySet":
        """Neither expired nor invalidated (memories/predicates.py)."""
        return self.filter(current_q())

    def as_of(self, instant: datetime) -> "MemoryQuerySet":
        """What was valid and recorded at `instant` (memories/predicates.py)."""
        return self.filter(as_of_q(instant))


class Memory(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.CharField(max_length=255)
    memory_type = models.CharField(max_length=50, choices=MemoryType)  # the partition key

    content = models.TextField()
    # Written asynchronously after the row (NULL until then); halfvec halves the storage.
    embedding = HalfVectorField(dimensions=settings.EMBEDDING_DIM, null=True, blank=True)
    embedding_status = models.CharField(
        max_length=10,
        choices=EmbeddingStatus,
        default=EmbeddingStatus.PENDING,
        db_default=EmbeddingStatus.PENDING,
    )
    # The text's lexical vector (hashing provider), computed inside the write: what the
    # near-duplicate check compares, whatever model embeds for recall (docs/write-path.md).
    lexical_vector = HalfVectorField(dimensions=LEXICAL_DIMENSIONS, null=True, blank=True)

    # Bi-temporal: valid_* is when it was true in the world, created/expired when we knew it.
    valid_at = models.DateTimeField(null=True, blank=True)
    invalid_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(null=True, blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    # V1 columns, kept so the upgrade loses nothing; valid_at is derived from valid_from.
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    extracted_timestamp = models.DateTimeField(null=True, blank=True)

    version = models.IntegerField(default=1)
    superseded_by = models.UUIDField(null=True, blank=True)

    importance = RealField(default=0.5)
    score = RealField(default=50.0)
    key = models.CharField(max_length=255, null=True, blank=True)
    access_count = models.IntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=32, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    # Trait columns: NULL on every other memory type (the database defaults the two counters
    # to 0 for raw inserts; the ORM writes NULL for non-traits).
    trait_subtype = models.CharField(max_length=20, null=True, blank=True, choices=TraitSubtype)
    trait_stage = models.CharField(max_length=20, null=True, blank=True, choices=TraitStage)
    trait_confidence = RealField(null=True, blank=True)
    trait_context = models.CharField(max_length=20, null=True, blank=True, choices=TraitContext)
    trait_parent_id = models.UUIDField(null=True, blank=True)
    trait_reinforcement_count = models.IntegerField(null=True, blank=True)
    trait_contradiction_count = models.IntegerField(null=True, blank=True)
    trait_last_reinforced = models.DateTimeField(null=True, blank=True)
    trait_first_observed = models.DateTimeField(null=True, blank=True)
    trait_window_start = models.DateTimeField(null=True, blank=True)
    trait_window_end = models.DateTimeField(null=True, blank=True)
    trait_derived_from = models.CharField(
        max_length=20, null=True, blank=True, choices=TraitDerivedFrom
    )

    # Entities of the memory graph (graph_nodes): the subject of a fact written from a
    # conversation (memories/ingest.py), NULL otherwise; nothing sets the object yet.
    subject_entity_id = models.UUIDField(null=True, blank=True)
    object_entity_id = models.UUIDField(null=True, blank=True)
    source_episode_ids = ArrayField(models.UUIDField(), null=True, blank=True)
    # When a reflection cycle scanned this fact or episode (NULL: not yet). A mark per memory,
    # not a timestamp watermark: created_at can be backdated (imports) and commits land out of
    # order, so a time cut-off would skip some memories and rescan others (docs/reflection.md).
    reflected_at = models.DateTimeField(null=True, blank=True)

    # The activity score's inputs and what its job flags for staff (memories/scoring.py,
    # docs/decay.md): how often a bulk read reached this memory through a link, and when it
    # was last linked or reached so. The job only flags: a memory nobody links to or reads
    # whose score fell low is `eligible_for_delete`; one that restates a better-scored memory
    # of its user points at it in `merge_candidate_of`. Neither deletes nor merges anything.
    traverse_count = models.IntegerField(default=0, db_default=0)
    last_linked_at = models.DateTimeField(null=True, blank=True)
    eligible_for_delete = models.BooleanField(default=False, db_default=False)
    merge_candidate_of = models.UUIDField(null=True, blank=True)

    # What the write redacted (kind → count; docs/privacy.md): the secrets themselves were
    # never stored.
    redactions = models.JSONField(null=True, blank=True)
    # Forgotten (docs/privacy.md): the row keeps its id, times and type; its content, metadata,
    # key and vectors are erased. Every client read leaves it out.
    forgotten_at = models.DateTimeField(null=True, blank=True)
    forget_request_id = models.UUIDField(null=True, blank=True)

    search_vector = search_document()

    objects = MemoryQuerySet.as_manager()

    class Meta:
        db_table = "memories"
        ordering = ["-created_at"]
        verbose_name_plural = "memories"
        # An end user has no row of their own: purging one is a permission on their memories.
        permissions = [("purge_end_user", "Can purge all data held about an end user")]
        constraints = [
            choice_constraint(name="chk_memory_type", field="memory_type", choices=MemoryType),
            models.CheckConstraint(
                name="chk_memory_importance", condition=Q(importance__gte=0, importance__lte=1)
            ),
            models.CheckConstraint(
                name="chk_memory_score", condition=Q(score__gte=0, score__lte=100)
            ),
            # The decay divides by 1 + a multiple of the reinforcements: a negative count
            # failed every read of the trait and the believed traits' refresh for every user.
            models.CheckConstraint(
                name="chk_trait_confidence",
                condition=Q(trait_confidence__gte=0, trait_confidence__lte=1),
            ),
            models.CheckConstraint(
                name="chk_trait_counts",
                condition=Q(trait_reinforcement_count__gte=0, trait_contradiction_count__gte=0),
            ),
            choice_constraint(
                name="chk_memory_embedding_status",
                field="embedding_status",
                choices=EmbeddingStatus,
            ),
        ]
        # The audit log lives in the database, so every path that changes a row (ORM, raw
        # SQL, admin, tasks) is recorded. BEFORE triggers, because moving a row to another
        # partition (a memory_type change) fires BEFORE UPDATE, BEFORE DELETE and BEFORE
        # INSERT but no AFTER UPDATE: the UPDATE trigger logs the move once and flags it so
        # the DELETE and INSERT that carry it out log nothing.
        triggers = [
            pgtrigger.Trigger(
                name="memories_audit_insert",
                operation=pgtrigger.Insert,
                when=pgtrigger.Before,
                func=AUDIT_PRELUDE
                + """
                IF moving = NEW.id::text THEN
                    PERFORM set_config('neuromem.moving', '', true);
                    RETURN NEW;
                END IF;
                INSERT INTO memory_history
                    (memory_id, memory_type, event, new_content, new_metadata, actor)
                VALUES (NEW.id, NEW.memory_type, 'ADD', NEW.content, NEW.metadata, actor);
                RETURN NEW;
                END;""",
            ),
            pgtrigger.Trigger(
                name="memories_audit_update",
                operation=pgtrigger.Update,
                when=pgtrigger.Before,
                func=AUDIT_PRELUDE
                + f"""
                IF NEW.memory_type IS DISTINCT FROM OLD.memory_type THEN
                    PERFORM set_config('neuromem.moving', NEW.id::text, true);
                END IF;
                IF ({AUDITED_COLUMNS.replace("@", "OLD.")}) IS NOT DISTINCT FROM
                   ({AUDITED_COLUMNS.replace("@", "NEW.")}) THEN
                    RETURN NEW;  -- bookkeeping only (embedding, access counts, score)
                END IF;
                IF forgetting <> '' THEN
                    -- Erasing: the event and its request, never the content erased.
                    INSERT INTO memory_history (memory_id, memory_type, event, new_metadata, actor)
                    VALUES (NEW.id, NEW.memory_type, 'FORGET',
                            jsonb_build_object('forget_request', forgetting), actor);
                    RETURN NEW;
                END IF;
                INSERT INTO memory_history (memory_id, memory_type, event, old_content,
                                            new_content, old_metadata, new_metadata, actor)
                VALUES (NEW.id, NEW.memory_type,
                        CASE WHEN OLD.expired_at IS NULL AND NEW.expired_at IS NOT NULL
                                  AND NEW.superseded_by IS NOT NULL THEN 'SUPERSEDE'
                             WHEN OLD.expired_at IS NULL AND NEW.expired_at IS NOT NULL
                                  THEN 'DELETE'
                             WHEN OLD.memory_type IS DISTINCT FROM NEW.memory_type
                                  THEN 'UPDATE'
                             WHEN OLD.trait_stage IS DISTINCT FROM NEW.trait_stage
                                  THEN 'STAGE_CHANGE'
                             ELSE 'UPDATE' END,
                        OLD.content, NEW.content, OLD.metadata, NEW.metadata, actor);
                RETURN NEW;
                END;""",
            ),
            pgtrigger.Trigger(
                name="memories_audit_delete",
                operation=pgtrigger.Delete,
                when=pgtrigger.Before,
                func=AUDIT_PRELUDE
                + """
                IF moving = OLD.id::text THEN
                    RETURN OLD;
                END IF;
                INSERT INTO memory_history
                    (memory_id, memory_type, event, old_content, old_metadata, actor)
                VALUES (OLD.id, OLD.memory_type, 'DELETE', OLD.content, OLD.metadata, actor);
                RETURN OLD;
                END;""",
            ),
        ]

    def __str__(self) -> str:
        if self.forgotten_at is not None:
            return f"{self.memory_type}: (forgotten)"
        return f"{self.memory_type}:{self.content[:60]}"


class HistoryEvent(models.TextChoices):
    ADD = "ADD"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    SUPERSEDE = "SUPERSEDE"
    STAGE_CHANGE = "STAGE_CHANGE"
    FORGET = "FORGET"  # content erased on request; earlier events of the memory redacted


# A history row may be changed in one way only: its content and metadata erased (set NULL), when
# the memory is forgotten. Everything else about it stays as written.
HISTORY_REDACTION_ONLY = """
(NEW.id, NEW.memory_id, NEW.memory_type, NEW.event, NEW.actor, NEW.created_at)
    IS NOT DISTINCT FROM (OLD.id, OLD.memory_id, OLD.memory_type, OLD.event, OLD.actor,
                          OLD.created_at)
AND (NEW.old_content IS NULL OR NEW.old_content IS NOT DISTINCT FROM OLD.old_content)
AND (NEW.new_content IS NULL OR NEW.new_content IS NOT DISTINCT FROM OLD.new_content)
AND (NEW.old_metadata IS NULL OR NEW.old_metadata IS NOT DISTINCT FROM OLD.old_metadata)
AND (NEW.new_metadata IS NULL OR NEW.new_metadata IS NOT DISTINCT FROM OLD.new_metadata)
"""


class MemoryHistory(models.Model):
    """Audit log of changes to memories (append-only; a forget erases content, nothing else)."""

    # Database defaults: the audit trigger inserts rows without the ORM.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, db_default=RandomUUID())
    memory_id = models.UUIDField()
    memory_type = models.CharField(max_length=50)
    event = models.CharField(max_length=20, choices=HistoryEvent)
    old_content = models.TextField(null=True, blank=True)
    new_content = models.TextField(null=True, blank=True)
    old_metadata = models.JSONField(null=True, blank=True)
    new_metadata = models.JSONField(null=True, blank=True)
    actor = models.CharField(max_length=50, default="system", db_default="system")
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "memory_history"
        ordering = ["created_at"]
        verbose_name_plural = "memory history"
        # Append-only: no row is deleted but by the user purge (which lifts `history_no_delete`
        # with pgtrigger.ignore), none changed but to erase its content on a forget.
        triggers = append_only("history", refuse_update_when=f"NOT ({HISTORY_REDACTION_ONLY})")
        indexes = [
            models.Index(fields=["memory_id", "-created_at"], name="idx_history_memory"),
        ]
        constraints = [
            choice_constraint(name="chk_history_event", field="event", choices=HistoryEvent),
        ]

    def __str__(self) -> str:
        return f"{self.event} {self.memory_id} by {self.actor}"


class ConversationSession(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.CharField(max_length=255)
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)
    # Reflection's watermark: messages after it have not been reflected on yet.
    last_reflected_at = models.DateTimeField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "conversation_sessions"
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["user_id", "-started_at"], name="idx_sessions_user")]

    def __str__(self) -> str:
        return f"session {self.id} ({self.user_id})"


class ConversationMessage(models.Model):
    """One message of a session (V1's `conversations` table, one row per message)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session = models.ForeignKey(
        ConversationSession, on_delete=models.CASCADE, related_name="messages"
    )
    user_id = models.CharField(max_length=255)
    role = models.CharField(max_length=20)
    content = models.TextField()
    extraction_status = models.CharField(max_length=20, default="pending")
    created_at = models.DateTimeField(default=timezone.now)
    # What was redacted from the message as received (kind → count; docs/privacy.md).
    redactions = models.JSONField(null=True, blank=True)
    # Recall's text side reads an episode with the whole assistant message it answers
    # (docs/recall.md).
    search_vector = search_document()

    class Meta:
        db_table = "conversations"
        ordering = ["created_at"]
        indexes = [
            models.Index(fields=["session", "created_at"], name="idx_conversations_session"),
            models.Index(fields=["user_id", "created_at"], name="idx_conversations_user"),
            # An assistant message's words under its end user (migration 0019).
            GinIndex(
                models.Func(
                    models.F("user_id"),
                    models.F("search_vector"),
                    function="neuromem_user_terms",
                    output_field=ArrayField(models.TextField()),
                ),
                condition=Q(role="assistant"),
                name="idx_assistant_message_terms",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class MemorySource(models.Model):
    """Which conversation session (and message) a memory came from."""

    pk = models.CompositePrimaryKey("memory_id", "session_id")
    memory_id = models.UUIDField()
    session_id = models.UUIDField()
    conversation_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "memory_sources"
        indexes = [
            models.Index(fields=["session_id"], name="idx_sources_session"),
            # The facts a message gave, beside its episode (memories/graph/answering.py).
            models.Index(fields=["conversation_id"], name="idx_sources_message"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} from session {self.session_id}"


class MemoryLink(models.Model):
    """A weighted, directed link between two memories of one end user. Links follow a
    memory's current version: superseding a memory moves its links to the successor."""

    id = models.BigAutoField(primary_key=True)
    user_id = models.CharField(max_length=255)
    source_id = models.UUIDField()
    target_id = models.UUIDField()
    weight = RealField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "memory_links"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["source_id", "target_id"], name="uq_memory_link"),
            models.CheckConstraint(
                name="chk_memory_link_not_self", condition=~Q(source_id=models.F("target_id"))
            ),
            models.CheckConstraint(
                name="chk_memory_link_weight", condition=Q(weight__gte=0, weight__lte=1)
            ),
        ]
        indexes = [
            models.Index(fields=["target_id"], name="idx_memory_links_target"),
            models.Index(fields=["user_id"], name="idx_memory_links_user"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} → {self.target_id} ({self.weight:g})"


class ForgetVia(models.TextChoices):
    CONVERSATION = "conversation", "conversation"  # the end user asked, in a message
    API = "api", "REST API"  # POST /users/{user_id}/forget/
    MCP = "mcp", "MCP"  # the memory_forget tool
    ADMIN = "admin", "admin"  # staff, in the back-office


class ForgetRequest(models.Model):
    """A request to forget, and what it erased: the record that stays when the content is gone
    (docs/privacy.md). It names ids only, never what was said: the topic itself may be the
    secret ("forget that I have diabetes")."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.CharField(max_length=255)
    # The API client (the agent) that passed the request on, or staff:<username>.
    requested_by = models.CharField(max_length=100)
    via = models.CharField(max_length=20, choices=ForgetVia)
    # The end user's message that asked, for requests made in a conversation.
    message_id = models.UUIDField(null=True, blank=True)
    memory_ids = ArrayField(models.UUIDField(), default=list, blank=True)  # forgotten whole
    erased_memory_ids = ArrayField(models.UUIDField(), default=list, blank=True)  # in part
    message_ids = ArrayField(models.UUIDField(), default=list, blank=True)  # messages erased
    traits_reweighed = ArrayField(models.UUIDField(), default=list, blank=True)
    traits_dissolved = ArrayField(models.UUIDField(), default=list, blank=True)
    # Why nothing was forgotten (a request naming nothing, or nothing held on the topic).
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "forget_requests"
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["user_id", "-created_at"], name="idx_forget_requests_user"),
            models.Index(fields=["-created_at", "-id"], name="idx_forget_requests_recent"),
        ]
        constraints = [
            choice_constraint(name="chk_forget_via", field="via", choices=ForgetVia),
        ]

    def __str__(self) -> str:
        return f"forget request {self.id} for {self.user_id} ({self.via})"


# The memory graph's tables (seed 002 §4.1), in their own module.
from memories.graph.models import EntityKind, GraphEdge, GraphNode  # noqa: E402, F401
