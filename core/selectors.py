from django.db import connection

# The distinct job names of job_runs by a loose index scan on idx_job_runs_job (job,
# started_at): one index probe per job, however many runs each has.
JOB_NAMES_SQL = """
WITH RECURSIVE jobs(job) AS (
    (SELECT job FROM job_runs ORDER BY job LIMIT 1)
    UNION ALL
    SELECT (SELECT r.job FROM job_runs r WHERE r.job > jobs.job ORDER BY r.job LIMIT 1)
    FROM jobs WHERE jobs.job IS NOT NULL
)
SELECT job FROM jobs WHERE job IS NOT NULL
"""


def job_names() -> list[str]:
    """The names of the jobs with recorded runs, in order."""
    with connection.cursor() as cursor:
        cursor.execute(JOB_NAMES_SQL)
        return [job for (job,) in cursor.fetchall()]
