"""The README's quick start is a tested path: its shell blocks run, as written, with bash
against a started service (the real `make run` entry point on a free port and a data
directory of its own), and every answer is checked. Only the base URL differs: the README
reads it from `API`, which this test sets.

Every `curl` the blocks run goes through a wrapper (defined before the blocks, so the blocks
themselves are unchanged) that keeps the status, the request and the body of each answer.
"""

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_entry_point import BASE_DIR, Stack, fresh_environment

pytestmark = pytest.mark.slow

README = BASE_DIR / "README.md"
BEGIN, END = "<!-- quickstart:begin -->", "<!-- quickstart:end -->"
SCRIPT_TIMEOUT = 180

# Records every curl of the blocks: NNN.args (the arguments), NNN.head (the response headers),
# NNN.body (what it printed). A counter file, since `$(curl …)` runs in a subshell.
CURL_RECORDER = r"""
curl() {
  local n
  n=$(( $(cat "$QUICKSTART_LOG/count" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$QUICKSTART_LOG/count"
  n=$(printf '%03d' "$n")
  printf '%s\n' "$@" > "$QUICKSTART_LOG/$n.args"
  command curl --dump-header "$QUICKSTART_LOG/$n.head" "$@" | tee "$QUICKSTART_LOG/$n.body"
}
"""


def quickstart_blocks(text: str) -> list[str]:
    """The ```bash blocks between the quick-start markers, in order."""
    sections = re.findall(re.escape(BEGIN) + r"(.*?)" + re.escape(END), text, re.S)
    assert sections, f"README.md has no {BEGIN} … {END} section"
    return [
        block for section in sections for block in re.findall(r"```bash\n(.*?)```", section, re.S)
    ]


@dataclass
class Answer:
    args: list[str]
    status: int
    body: dict

    @property
    def method(self) -> str:
        return self.args[self.args.index("-X") + 1] if "-X" in self.args else "GET"

    @property
    def url(self) -> str:
        return next(arg for arg in self.args if arg.startswith("http"))

    @property
    def data(self):
        assert self.body["ok"] is True, self.body
        return self.body["data"]

    def sent(self) -> dict:
        return json.loads(self.args[self.args.index("-d") + 1])


def answers(log: Path) -> list[Answer]:
    recorded = []
    for args_file in sorted(log.glob("*.args")):
        head = args_file.with_suffix(".head").read_text().splitlines()
        body = args_file.with_suffix(".body").read_text()
        recorded.append(
            Answer(
                args=args_file.read_text().splitlines(),
                status=int(head[0].split()[1]),
                body=json.loads(body),
            )
        )
    return recorded


def test_readme_blocks_are_extracted():
    blocks = quickstart_blocks(README.read_text())
    script = "\n".join(blocks)
    assert len(blocks) >= 4
    assert "make run" not in script  # the service is already running in another terminal
    assert "API=${API:-http://127.0.0.1:8000/api/v1}" in script


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("quickstart")
    with Stack(tmp / "data", tmp / "run.log").running() as stack:
        yield stack


def shell_environment(stack: Stack, **extra: str) -> dict[str, str]:
    """A user's shell in the repository: no test URLs, the stack's data directory, and no
    make variables inherited from `make test` (a sub-make would print its directory)."""
    env = {
        key: value
        for key, value in fresh_environment().items()
        if key not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"}
        and not key.startswith("DJANGO_SUPERUSER_")
    }
    env["NEUROMEM_DATA_DIR"] = str(stack.data_dir)
    env.update(extra)
    return env


def test_quickstart_runs_as_written(stack, tmp_path):
    log = tmp_path / "answers"
    log.mkdir()
    script = "\n".join(["set -euo pipefail", CURL_RECORDER, *quickstart_blocks(README.read_text())])
    run = subprocess.run(
        ["bash", "-c", script],
        cwd=BASE_DIR,
        env=shell_environment(
            stack, API=f"{stack.base}/api/v1", QUICKSTART_LOG=str(log), LC_ALL="C.UTF-8"
        ),
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
    )
    assert run.returncode == 0, f"stdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}"
    assert "Traceback" not in run.stderr, run.stderr

    recorded = iter(answers(log))

    health = next(recorded)
    assert (health.status, health.data["status"]) == (200, "healthy")

    whoami = next(recorded)
    assert whoami.status == 200
    assert whoami.data["user_prefixes"] == ["my-agent:"]
    assert whoami.data["name"].startswith("my-agent-")

    written = {}
    for content in ["Alice prefers green tea", "My dog is called Rex", "我的狗叫旺财"]:
        write = next(recorded)
        assert (write.method, write.sent()["content"]) == ("POST", content)
        assert (write.status, write.data["operation"]) == (201, "ADD"), write.body
        assert write.data["memory"]["user_id"] == "my-agent:alice"
        written[content] = write.data["memory"]["id"]

    again = next(recorded)
    assert (again.status, again.data["operation"]) == (200, "NOOP"), again.body
    assert again.data["memory"]["id"] == written["Alice prefers green tea"]

    listing = next(recorded)
    assert listing.status == 200
    assert {memory["id"] for memory in listing.data} == set(written.values())
    assert listing.body["page"] == {"next": None}

    polls = 0
    while (answer := next(recorded)).method == "GET":  # waiting for the worker's embeddings
        assert answer.url == listing.url, answer.args
        polls += 1
    assert polls >= 1

    recall = answer
    for content in ["My dog is called Rex", "我的狗叫旺财", "Alice prefers green tea"]:
        assert (recall.method, recall.status) == ("POST", 200), recall.body
        merged = recall.data["merged"]
        assert merged, f"{recall.sent()['query']!r} recalled nothing"
        assert merged[0]["content"] == content, merged
        recall = next(recorded)
    assert set(merged[0]) == {"id", "content", "memory_type", "valid_at", "score"}  # compact

    session = recall
    assert session.status == 201, session.body
    session_id = session.data["id"]

    berlin = next(recorded)
    assert berlin.status == 201, berlin.body
    assert berlin.data["message"]["session_id"] == session_id
    home, said = berlin.data["memories"]
    assert (home["operation"], home["memory"]["key"]) == ("ADD", "profile:home_city")
    assert home["memory"]["content"] == "The user lives in Berlin"
    assert (said["memory"]["memory_type"], said["memory"]["content"]) == (
        "episodic",
        "User: I live in Berlin.",
    )

    austin = next(recorded)
    assert austin.status == 201, austin.body
    moved, _ = austin.data["memories"]
    assert (moved["operation"], moved["memory"]["key"]) == ("UPDATE", "profile:home_city")
    assert moved["superseded"] == home["memory"]["id"]

    question = next(recorded)
    assert (question.status, question.data["memories"]) == (201, []), question.body
    answer = next(recorded)
    assert answer.status == 201, answer.body
    [work] = answer.data["memories"]
    assert work["memory"]["content"] == (
        "Assistant: Welcome to Texas! Where do you work now? → User: At a small bakery on South"
        " Congress."
    )

    now = next(recorded)
    assert now.status == 200, now.body
    assert now.data["merged"][0]["content"] == "The user lives in Austin", now.data
    assert not any("Berlin" in hit["content"] for hit in now.data["merged"]), now.data
    before = next(recorded)
    assert before.status == 200, before.body
    assert before.data["merged"][0]["content"] == "The user lives in Berlin", before.data
    assert not any("Austin" in hit["content"] for hit in before.data["merged"]), before.data
    never_said = next(recorded)
    assert (never_said.status, never_said.data["merged"]) == (200, []), never_said.body
    entities = next(recorded)
    assert entities.status == 200, entities.body
    assert {"Berlin", "Austin"} <= {entity["name"] for entity in entities.data}, entities.data

    export = next(recorded)
    assert export.status == 200, export.body
    exported = export.data
    assert exported["user_id"] == "my-agent:alice"
    assert [s["id"] for s in exported["sessions"]] == [session_id]
    assert len(exported["messages"]) == 4
    contents = {memory["content"] for memory in exported["memories"]}
    assert set(written) <= contents
    assert "Austin" in moved["memory"]["content"]

    secret = next(recorded)
    assert secret.status == 201, secret.body
    assert secret.data["redactions"] == {"password": 1}
    assert "hunter2" not in json.dumps(secret.body)
    address, said = secret.data["memories"]
    assert address["memory"]["key"] == "profile:address"
    asked = next(recorded)
    assert (asked.status, asked.data["memories"]) == (201, []), asked.body
    [forgotten] = asked.data["forget"]
    assert forgotten["reason"] is None
    assert {address["memory"]["id"], said["memory"]["id"]} <= {
        memory["id"] for memory in forgotten["memories"]
    }
    planned = next(recorded)
    assert planned.status == 200, planned.body
    assert (planned.data["dry_run"], planned.data["id"]) == (True, None)
    assert (
        "Assistant: Welcome to Texas! Where do you work now? → User: At a small bakery on South"
        " Congress." in [memory["content"] for memory in planned.data["memories"]]
    )
    held = next(recorded)
    assert held.status == 200 and "Evergreen" not in json.dumps(held.body)

    habits = next(recorded)
    assert habits.status == 201, habits.body
    habit_session = habits.data["id"]
    for _ in range(3):
        said = next(recorded)
        assert (said.status, said.data["message"]["session_id"]) == (201, habit_session)
    ended = next(recorded)
    assert (ended.status, ended.url.split("/")[-3]) == (200, habit_session), ended.body
    assert ended.data["ended_at"]
    answer, checks = next(recorded), []
    while answer.url.endswith("/traits/"):  # the loop's checks, then the block's own request
        checks.append(answer)
        answer = next(recorded)
    assert 2 <= len(checks) <= 61, len(checks)
    assert checks[-2].data["behavior"], "the loop stopped before a behavior showed"
    behaviors = checks[-1].data["behavior"]
    assert len(behaviors) == 1, behaviors
    [running] = behaviors
    assert (running["stage"], running["confidence"]) == ("emerging", pytest.approx(0.4))
    assert "run" in running["content"] or "ran" in running["content"], running
    cycles = answer
    assert cycles.status == 200, cycles.body
    assert any(
        (c["trigger_type"], c["status"]) == ("session_end", "completed") for c in cycles.data
    ), cycles.data
    context = next(recorded)
    assert context.status == 200, context.body
    assert "The user lives in Austin" in context.data["markdown"], context.data
    assert context.data["language"] == "en"

    assert next(recorded, None) is None, "the README runs more requests than this test checks"


def test_a_failed_token_line_stops_the_script_before_any_request(stack, tmp_path):
    """The first block with a client name that already exists: `make api-client` says so, the
    script stops at AUTH, and no request goes out with an empty token."""
    first = quickstart_blocks(README.read_text())[0]
    token_line = next(line for line in first.splitlines() if line.startswith("TOKEN="))
    clashing = first.replace(token_line, token_line.replace("my-agent-$(date +%s)", "clash"))
    assert clashing != first
    env = shell_environment(stack, API=f"{stack.base}/api/v1")
    existing = subprocess.run(
        ["make", "-s", "api-client", "NAME=clash"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
    )
    assert existing.returncode == 0, existing.stderr
    script = clashing.split("curl -s $API/auth/whoami/")[0] + 'echo "AUTH=[$AUTH]"'
    # As a script (the test above: set -e stops at the token line already), and as a paste
    # into an interactive shell, where each line runs whatever the one before did.
    for strict in (True, False):
        run = subprocess.run(
            ["bash", "-c", f"set -euo pipefail\n{script}" if strict else script],
            cwd=BASE_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=SCRIPT_TIMEOUT,
        )
        assert run.returncode != 0
        assert "already exists" in run.stderr, run.stderr
        assert "AUTH=[" not in run.stdout
        if not strict:
            assert "no token, see the error above" in run.stderr, run.stderr


def test_make_superuser_without_a_terminal(stack):
    env = shell_environment(stack)
    silent = subprocess.run(
        ["make", "-s", "superuser"],
        cwd=BASE_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
    )
    assert silent.returncode == 2
    assert "DJANGO_SUPERUSER_USERNAME" in silent.stderr

    created = subprocess.run(
        ["make", "-s", "superuser"],
        cwd=BASE_DIR,
        env={
            **env,
            "DJANGO_SUPERUSER_USERNAME": "admin",
            "DJANGO_SUPERUSER_EMAIL": "admin@example.com",
            "DJANGO_SUPERUSER_PASSWORD": os.urandom(12).hex(),
        },
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
    )
    assert created.returncode == 0, created.stderr
    assert "Superuser created successfully" in created.stdout + created.stderr
