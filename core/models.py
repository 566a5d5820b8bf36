from django.db import models
from django.utils import timezone


class JobStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    SKIPPED = "skipped"  # another run held the job's lock
    FAILED = "failed"


class JobRun(models.Model):
    """One run of a scheduled job (beat), with what it touched: the admin dashboard and the
    health endpoint read the last runs from here."""

    id = models.BigAutoField(primary_key=True)
    job = models.CharField(max_length=100)
    status = models.CharField(max_length=10, choices=JobStatus, default=JobStatus.RUNNING)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    rows = models.IntegerField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        db_table = "job_runs"
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["job", "-started_at"], name="idx_job_runs_job")]

    def __str__(self) -> str:
        return f"{self.job} {self.status} at {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def duration_seconds(self) -> float | None:
        if self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()
