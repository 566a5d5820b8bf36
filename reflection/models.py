import uuid

from django.contrib.postgres.functions import RandomUUID
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now


class ReflectionTrigger(models.TextChoices):
    IMPORTANCE_ACCUMULATED = "importance_accumulated"
    SCHEDULED = "scheduled"
    SESSION_END = "session_end"


class ReflectionStatus(models.TextChoices):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


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

    class Meta:
        db_table = "reflection_cycles"
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["user_id", "-started_at"], name="idx_reflection_user")]
        constraints = [
            models.CheckConstraint(
                name="chk_reflection_status", condition=Q(status__in=ReflectionStatus.values)
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
        ]
        constraints = [
            models.CheckConstraint(
                name="chk_evidence_type", condition=Q(evidence_type__in=EvidenceType.values)
            ),
            models.CheckConstraint(
                name="chk_quality", condition=Q(quality__in=EvidenceQuality.values)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.evidence_type} ({self.quality}) for trait {self.trait_id}"
