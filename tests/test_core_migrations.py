"""JobRun's move from memories to the kernel app (memories 0017, core 0001), forward on a
database that already holds runs and a group allowed to see them, backward, and forward again:
the table and its rows stay, the content type (with what staff were given on it) changes app."""

import psycopg
import pytest

from tests.memories.scratch import migrated, scratch_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

RUN_SQL = """
INSERT INTO job_runs (job, status, started_at, finished_at, rows, detail, error)
VALUES ('score-memories', 'done', now(), now(), 12, '{}', '')
"""
# A group given the view permission of job runs, as the viewer role is.
GROUP_SQL = """
WITH g AS (INSERT INTO auth_group (name) VALUES ('watchers') RETURNING id)
INSERT INTO auth_group_permissions (group_id, permission_id)
SELECT g.id, p.id FROM g, auth_permission p
JOIN django_content_type t ON t.id = p.content_type_id
WHERE t.model = 'jobrun' AND p.codename = 'view_jobrun'
"""
HELD_SQL = """
SELECT t.app_label, p.codename FROM auth_group_permissions gp
JOIN auth_group g ON g.id = gp.group_id AND g.name = 'watchers'
JOIN auth_permission p ON p.id = gp.permission_id
JOIN django_content_type t ON t.id = p.content_type_id
"""


def job_run_apps(conn: psycopg.Connection) -> list[tuple[str]]:
    return conn.execute(
        "SELECT app_label FROM django_content_type WHERE model = 'jobrun' ORDER BY 1"
    ).fetchall()


def test_job_runs_move_to_core_with_their_rows_and_permissions():
    with scratch_database() as url:
        for app, target in (("auth", "0012"), ("memories", "0016")):
            migrated(url, app, target)
        with psycopg.connect(url, autocommit=True) as conn:
            assert job_run_apps(conn) == [("memories",)]
            conn.execute(RUN_SQL)
            conn.execute(GROUP_SQL)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT job, rows FROM job_runs").fetchall() == [
                ("score-memories", 12)
            ]
            assert job_run_apps(conn) == [("core",)]
            assert conn.execute(HELD_SQL).fetchall() == [("core", "view_jobrun")]
        migrated(url, "core", "zero")
        with psycopg.connect(url, autocommit=True) as conn:
            assert job_run_apps(conn) == [("memories",)]
            assert conn.execute(HELD_SQL).fetchall() == [("memories", "view_jobrun")]
            assert conn.execute("SELECT count(*) FROM job_runs").fetchone() == (1,)
        migrated(url)
        with psycopg.connect(url, autocommit=True) as conn:
            assert job_run_apps(conn) == [("core",)]
            assert conn.execute(HELD_SQL).fetchall() == [("core", "view_jobrun")]
