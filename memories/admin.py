"""Staff views of memory-side tables. (The Memory admin itself is still to come.)"""

from django.contrib import admin
from django.db import connection
from django.utils.text import Truncator

from memories.models import JobRun
from neuromem_site.admin_base import ReadOnlyAdmin

# The distinct job names by a loose index scan on idx_job_runs_job (job, started_at): one
# index probe per job, however many runs each has.
DISTINCT_JOBS_SQL = """
WITH RECURSIVE jobs(job) AS (
    (SELECT job FROM job_runs ORDER BY job LIMIT 1)
    UNION ALL
    SELECT (SELECT r.job FROM job_runs r WHERE r.job > jobs.job ORDER BY r.job LIMIT 1)
    FROM jobs WHERE jobs.job IS NOT NULL
)
SELECT job FROM jobs WHERE job IS NOT NULL
"""


class JobFilter(admin.SimpleListFilter):
    title = "job"
    parameter_name = "job"

    def lookups(self, request, model_admin):
        with connection.cursor() as cursor:
            cursor.execute(DISTINCT_JOBS_SQL)
            return [(job, job) for (job,) in cursor.fetchall()]

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
