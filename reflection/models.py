import uuid

from django.conf import settings
from django.contrib.postgres.functions import RandomUUID
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now
from pgvector.django import HalfVectorField

from core.db.schema import choice_constraint
from memories.models import Memory, MemoryQuerySet, MemoryType


class ReflectionTrigger(models.TextChoices):
    IMPORTANCE_ACCUMULATED = "importance_accumulated"
    SCHEDULED = "scheduled"  # beat: a day since the user's last cycle
    SESSION_END = "session_end"
    IDLE = "idle"  # beat: a session quiet for REFLECTION_IDLE_AFTER
    MANUAL = "manual"  # POST /reflection/cycles/


class ReflectionStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"  # another cycle for the user held the lock


# What a cycle did, as its lists and answers show it.
CYCLE_COUNTS = ("memories_scanned", "traits_created", "traits_updated", "traits_dissolved")


class ReflectionCycle(models.Model):
    """One run of the reflection engine for one user, with what it did."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, db_default=RandomUUID())
    user_id = models.CharField(max_length=255)
    trigger_type = models.CharField(max_length=30, choices=ReflectionTrigger)
    trigger_value = models.FloatField(null=True, blank=True)
    memories_scanned = models.IntegerField(default=0, db_default=0)
    traits_created = models.IntegerField(default=0, db_default=0)
    traits_updated = models.IntegerField(default=0, db_default=0)
    traits_dissolved = models.IntegerField(default=0, db_default=0)
    started_at = models.DateTimeField(db_default=Now())
    completed_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(
        max_length=20,
        choices=ReflectionStatus,
        default=ReflectionStatus.RUNNING,
        db_default=ReflectionStatus.RUNNING,
    )
    error_message = models.TextField(null=True, blank=True)
    requested_by = models.CharField(max_length=255, default="system", db_default="system")

    class Meta:
        db_table = "reflection_cycles"
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["user_id", "-started_at"], name="idx_reflection_user"),
            models.Index(fields=["status", "-started_at"], name="idx_reflection_status"),
            # The admin's cycle list, newest first.
            models.Index(fields=["-started_at", "-id"], name="idx_reflection_recent"),
        ]
        constraints = [
            choice_constraint(
                name="chk_reflection_status", field="status", choices=ReflectionStatus
            ),
        ]

    def __str__(self) -> str:
        return f"{self.trigger_type} cycle for {self.user_id} ({self.status})"


class EvidenceType(models.TextChoices):
    SUPPORTING = "supporting"
    CONTRADICTING = "contradicting"


class EvidenceQuality(models.TextChoices):
    A = "A"
    B = "B"
    C = "C"
    D = "D"


class TraitEvidence(models.Model):
    """A memory that supports or contradicts a trait (both ids point into `memories`)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, db_default=RandomUUID())
    trait_id = models.UUIDField()
    memory_id = models.UUIDField()
    evidence_type = models.CharField(max_length=15, choices=EvidenceType)
    quality = models.CharField(max_length=1, choices=EvidenceQuality)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "trait_evidence"
        ordering = ["created_at"]
        verbose_name_plural = "trait evidence"
        indexes = [
            models.Index(fields=["trait_id", "evidence_type"], name="idx_evidence_trait"),
            models.Index(fields=["memory_id"], name="idx_evidence_memory"),
            # The admin's evidence list, newest first.
            models.Index(fields=["-created_at", "-id"], name="idx_evidence_recent"),
        ]
        constraints = [
            choice_constraint(
                name="chk_evidence_type", field="evidence_type", choices=EvidenceType
            ),
            choice_constraint(name="chk_quality", field="quality", choices=EvidenceQuality),
        ]

    def __str__(self) -> str:
        return f"{self.evidence_type} ({self.quality}) for trait {self.trait_id}"


class TraitManager(models.Manager.from_queryset(MemoryQuerySet)):
    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().filter(memory_type=MemoryType.TRAIT)


class Trait(Memory):
    """Trait memories (the `trait` partition of `memories`), for the admin."""

    objects = TraitManager()

    class Meta:
        proxy = True
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.trait_subtype or 'trait'} ({self.trait_stage}): {self.content[:60]}"


class TraitDecayRate(models.Model):
    """Decay per trait subtype, read by `mv_trait_decayed`: λ = base_lambda / (1 + spacing ×
    reinforcements) per day; the row DEFAULT holds the rate of any other subtype, or none (seed
    002 §5.1's ELSE). Written from the lifecycle rules (reflection/rules.py) before every
    refresh, so the view follows the configuration."""

    DEFAULT = "*"

    trait_subtype = models.CharField(max_length=20, primary_key=True)
    base_lambda = models.FloatField()
    spacing = models.FloatField()

    class Meta:
        db_table = "trait_decay_rates"

    def __str__(self) -> str:
        return f"{self.trait_subtype}: λ {self.base_lambda}"


class TraitDecayed(models.Model):
    """A row of the materialized view `mv_trait_decayed` (migrations 0002, 0007): every current
    trait outside trend and dissolved, with its confidence decayed as of the last refresh
    (`computed_at`) and its embedding (HNSW-indexed, for traits by meaning; NULL until the worker
    made it, and as of the last refresh). Read only; beat refreshes it every 30 minutes."""

    id = models.UUIDField(primary_key=True)
    user_id = models.CharField(max_length=255)
    content = models.TextField()
    embedding = HalfVectorField(dimensions=settings.EMBEDDING_DIM, null=True)
    trait_subtype = models.CharField(max_length=20, null=True)
    trait_stage = models.TextField(null=True)  # the column, or V1's metadata value
    trait_context = models.CharField(max_length=20, null=True)
    trait_parent_id = models.UUIDField(null=True)
    raw_confidence = models.FloatField(null=True)
    decayed_confidence = models.FloatField(null=True)
    trait_reinforcement_count = models.IntegerField(null=True)
    trait_contradiction_count = models.IntegerField(null=True)
    trait_first_observed = models.DateTimeField(null=True)
    trait_last_reinforced = models.DateTimeField(null=True)
    importance = models.FloatField()
    metadata = models.JSONField()
    created_at = models.DateTimeField()
    computed_at = models.DateTimeField()

    class Meta:
        managed = False
        db_table = "mv_trait_decayed"
        ordering = ["user_id", "-decayed_confidence"]
        verbose_name = "trait (decayed)"
        verbose_name_plural = "traits (decayed)"

    def __str__(self) -> str:
        return f"{self.trait_subtype} {self.trait_stage}: {self.content[:60]}"


class ConsistencyCheck(models.TextChoices):
    EVIDENCE_TRAIT = "evidence_trait", "evidence → missing trait"
    EVIDENCE_MEMORY = "evidence_memory", "evidence → missing memory"
    HISTORY_MEMORY = "history_memory", "history → missing memory"
    SOURCE_MEMORY = "source_memory", "source → missing memory"
    SOURCE_SESSION = "source_session", "source → missing session"
    SUPERSEDED_BY = "superseded_by", "superseded_by → missing memory"
    TRAIT_PARENT = "trait_parent", "trait_parent_id → missing trait"
    LINK_SOURCE = "link_source", "link → missing source memory"
    LINK_TARGET = "link_target", "link → missing target memory"
    # Seed 002 §5.3: two current values of a single-valued attribute said at the same instant,
    # which time cannot order (memories/graph/services.py); `missing_id` is the other edge.
    GRAPH_CONTRADICTION = "graph_contradiction", "edge → another current value"


class ConsistencyIssue(models.Model):
    """A dangling reference the consistency job found (nothing holds a foreign key to the
    partitioned `memories`). Reported, never deleted: staff decide. `resolved_at` is set by
    the job once the reference holds again (or its row is gone)."""

    id = models.BigAutoField(primary_key=True)
    check_name = models.CharField(max_length=30, choices=ConsistencyCheck)
    table_name = models.CharField(max_length=63)
    row_id = models.CharField(max_length=100)
    missing_id = models.CharField(max_length=100)
    user_id = models.CharField(max_length=255, null=True, blank=True)
    first_seen_at = models.DateTimeField(db_default=Now())
    last_seen_at = models.DateTimeField(db_default=Now())
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "consistency_issues"
        ordering = ["-last_seen_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["check_name", "row_id"],
                condition=Q(resolved_at__isnull=True),
                name="uniq_open_consistency_issue",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.check_name}: {self.table_name} {self.row_id} → {self.missing_id}"
