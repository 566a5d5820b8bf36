from django.contrib import admin
from django.utils.text import Truncator

from core.admin_base import ReadOnlyAdmin
from core.models import JobRun
from core.selectors import job_names


class JobFilter(admin.SimpleListFilter):
    title = "job"
    parameter_name = "job"

    def lookups(self, request, model_admin):
        return [(job, job) for job in job_names()]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(job=self.value())
        return queryset


@admin.register(JobRun)
class JobRunAdmin(ReadOnlyAdmin):
    """Runs of the scheduled jobs."""

    list_display = ["job", "status", "started_at", "duration", "rows", "error_short"]
    list_filter = [JobFilter, "status"]
    sortable_by = ["started_at"]

    @admin.display(description="duration")
    def duration(self, obj: JobRun) -> str:
        seconds = obj.duration_seconds
        return "–" if seconds is None else f"{seconds:.1f} s"

    @admin.display(description="error")
    def error_short(self, obj: JobRun) -> str:
        return Truncator(obj.error or "").chars(80)
