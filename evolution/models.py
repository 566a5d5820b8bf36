from django.db import models
from django.db.models import Q
from django.db.models.functions import Now


class SoulStatus(models.TextChoices):
    ACTIVE = "active"
    PROPOSED = "proposed"
    SUPERSEDED = "superseded"
    ROLLED_BACK = "rolled_back"
    VETOED = "vetoed"


class SoulAuthor(models.TextChoices):
    AGENT = "agent"
    BOOTSTRAP = "bootstrap"
    SYSTEM = "system"
    USER = "user"


class SoulVersion(models.Model):
    """A full snapshot of the SOUL document; at most one is active (enforced by the database)."""

    version = models.IntegerField(unique=True)
    content = models.TextField()
    status = models.CharField(max_length=16, choices=SoulStatus)
    proposal = models.JSONField(null=True, blank=True)
    eval_result = models.JSONField(null=True, blank=True)
    created_by = models.CharField(max_length=32, choices=SoulAuthor)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "soul_versions"
        ordering = ["version"]
        constraints = [
            models.UniqueConstraint(
                fields=["status"], condition=Q(status="active"), name="soul_versions_one_active"
            ),
            models.CheckConstraint(name="chk_soul_version", condition=Q(version__gte=0)),
            models.CheckConstraint(
                name="chk_soul_status", condition=Q(status__in=SoulStatus.values)
            ),
            models.CheckConstraint(
                name="chk_soul_created_by", condition=Q(created_by__in=SoulAuthor.values)
            ),
        ]

    def __str__(self) -> str:
        return f"SOUL v{self.version} ({self.status})"
