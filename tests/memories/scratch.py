"""Scratch databases on the test server, and the real `manage.py migrate` run against them."""

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import psycopg
from django.conf import settings

BASE_DIR = Path(__file__).resolve().parents[2]


def server_url(database: str) -> str:
    db = settings.DATABASES["default"]
    user = quote(db["USER"] or "", safe="")
    password = quote(db["PASSWORD"] or "", safe="")
    host = db["HOST"] or ""
    if host.startswith("/"):  # a Unix socket directory
        return f"postgresql://{user}:{password}@/{database}?host={quote(host, safe='')}"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgresql://{user}:{password}@{host}{port}/{database}"


@contextmanager
def scratch_database(template: str | None = None) -> Iterator[str]:
    """A new database, empty or cloned from the database `template` (no one may be connected
    to it); dropped afterwards. Yields its URL."""
    name = f"neuromem_scratch_{uuid.uuid4().hex[:12]}"
    clone = f' TEMPLATE "{template}"' if template else ""
    with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"{clone}')
    try:
        yield server_url(name)
    finally:
        with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def migrate(url: str, *args: str) -> subprocess.CompletedProcess:
    """The real `manage.py migrate`, in its own process, against `url`."""
    env = {**os.environ, "DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def migrated(url: str, *args: str) -> None:
    """`migrate`, which must succeed: its errors are the failure's message."""
    result = migrate(url, *args)
    assert result.returncode == 0, result.stderr


def catalog(conn: psycopg.Connection) -> dict[str, list]:
    """What a schema is made of, ordered so two databases can be compared."""
    queries = {
        "columns": """
            SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                   pg_get_expr(d.adbin, d.adrelid)
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND a.attnum > 0
              AND NOT a.attisdropped
            ORDER BY 1, 2""",
        "constraints": """
            SELECT c.relname, con.conname, pg_get_constraintdef(con.oid)
            FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' ORDER BY 1, 2""",
        "indexes": """
            SELECT tablename, indexname, indexdef FROM pg_indexes
            WHERE schemaname = 'public' ORDER BY 1, 2""",
        "partitions": """
            SELECT parent.relname, child.relname, pg_get_expr(child.relpartbound, child.oid),
                   child.reloptions
            FROM pg_inherits i JOIN pg_class parent ON parent.oid = i.inhparent
            JOIN pg_class child ON child.oid = i.inhrelid
            JOIN pg_namespace n ON n.oid = child.relnamespace
            WHERE n.nspname = 'public' ORDER BY 1, 2""",
        "tables": """
            SELECT c.relname, c.relkind, c.reloptions FROM pg_class c
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1""",
    }
    return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}
