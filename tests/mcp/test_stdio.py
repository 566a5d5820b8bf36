"""`manage.py mcp_server`: the MCP server over stdio, as a real subprocess on the test database,
driven by the SDK's stdio client."""

import subprocess

import pytest
from mcp import MCPError

from core.access import Caller
from evolution.services import agent_default, safety_contract_update, soul_bootstrap
from memories.models import Memory
from neuromem_site.api.models import ApiClient
from tests.evolution.conftest import ANCHORS, CONSTRAINTS, SEED, STAFF, edited
from tests.mcp.conftest import mcp_stdio, stdio_command, stdio_environment
from tests.memories.scratch import BASE_DIR

# The subprocess reads what the test wrote: it must be committed.
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TOOLS = {
    "memory_get",
    "memory_search",
    "memory_add",
    "bulk_read_memory",
    "memory_recall",
    "memory_forget",
    "memory_delete",
    "memory_entities",
    "memory_links",
    "memory_stats",
    "memory_update",
    "memory_supersede",
    "memory_invalidate",
    "memory_history",
    "memory_versions",
    "memory_link_set",
    "memory_link_remove",
    "session_open",
    "session_message",
    "session_end",
    "traits_get",
    "soul_status",
    "soul_propose",
    "soul_rollback",
    "guard_check",
}


def command(token: str | None) -> subprocess.CompletedProcess:
    return subprocess.run(
        stdio_command(),
        cwd=BASE_DIR,
        env=stdio_environment(token),
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_a_token_the_command_exits_with_a_message():
    done = command(None)
    assert done.returncode != 0
    assert "NEUROMEM_API_TOKEN is not set" in done.stderr
    assert done.stdout == ""  # nothing on the protocol's stream


def test_with_an_unknown_or_revoked_token_the_command_exits(make_agent):
    assert "not a valid API token" in command("nm_not-a-token").stderr
    agent = make_agent("a")
    ApiClient.objects.update(is_active=False)
    done = command(agent.token)
    assert done.returncode != 0 and "not a valid API token" in done.stderr


def test_with_a_valid_token_it_serves_until_stdin_closes(make_agent):
    done = command(make_agent("a").token)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "API client 'a': a:" in done.stderr


def test_it_lists_every_tool_with_input_schemas(make_agent):
    with mcp_stdio(make_agent("a").token) as mcp:
        tools = {tool.name: tool for tool in mcp.tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        schema = tool.input_schema
        assert tool.description and len(tool.description) > 80, tool.name
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for name, prop in schema["properties"].items():
            assert prop.get("type") and prop.get("description"), (tool.name, name)
        assert tool.annotations.read_only_hint is (
            tool.name
            in {"memory_get", "memory_search", "bulk_read_memory", "memory_recall"}
            | {"memory_entities", "traits_get", "soul_status", "memory_links", "memory_stats"}
            | {"memory_history", "memory_versions"}
        )
    assert tools["memory_add"].input_schema["required"] == ["user_id", "content", "memory_type"]
    assert tools["memory_search"].input_schema["required"] == ["user_id", "q"]
    search = tools["memory_search"].input_schema["properties"]
    assert (search["limit"]["minimum"], search["limit"]["maximum"]) == (1, 100)
    assert search["limit"]["default"] == 10
    bulk = tools["bulk_read_memory"].input_schema["properties"]
    assert {
        name: (bulk[name]["default"], bulk[name]["maximum"])
        for name in bulk
        if name in {"depth", "breadth", "total"}
    } == {
        "depth": (3, 6),
        "breadth": (5, 20),
        "total": (20, 50),
    }
    get = tools["memory_get"].input_schema["properties"]
    assert get["sort_links"]["enum"] == [True, False, "true", "false"]
    assert set(tools["soul_status"].input_schema["properties"]) == {"agent_id"}


def test_every_tool_answers(make_agent):
    """Each tool once, successfully, as a staff client (on its default agent's SOUL)."""
    ops = make_agent("ops", staff=True)
    soul = agent_default(caller=Caller(name="ops"))
    safety_contract_update(agent=soul, caller=STAFF, anchors=ANCHORS, constraints=CONSTRAINTS)
    soul_bootstrap(agent=soul, caller=STAFF, content=SEED)
    with mcp_stdio(ops.token) as mcp:
        added = mcp.data(
            "memory_add", user_id="u:1", content="I like green tea", memory_type="fact", key="tea"
        )
        assert added["operation"] == "ADD"
        memory_id = added["memory"]["id"]
        assert mcp.data("memory_get", memory_id=memory_id)["links"] == []
        assert mcp.data("memory_get", user_id="u:1", key="tea")["id"] == memory_id
        assert isinstance(mcp.data("memory_search", user_id="u:1", q="tea"), list)
        bulk = mcp.data("bulk_read_memory", memory_id=memory_id)
        assert bulk["targetMemory"]["id"] == memory_id and bulk["associatedMemories"] == []
        recall = mcp.data("memory_recall", user_id="u:1", query="tea")
        assert set(recall) == {"fields", "merged", "traits"}
        assert mcp.data("traits_get", user_id="u:1") == {
            "core": [],
            "preference": [],
            "behavior": [],
            "other": [],
        }
        assert mcp.data("soul_status")["version"] == 0
        proposed = mcp.data("soul_propose", intent="Kinder", new_content=edited("Be kind."))
        assert (proposed["status"], proposed["version"]) == ("applied", 1)
        rolled = mcp.data("soul_rollback", reason="not yet")
        assert (rolled["version"], rolled["content"]) == (2, SEED)
        deleted = mcp.data("memory_delete", memory_id=memory_id)
        assert deleted["id"] == memory_id and deleted["expired_at"] is not None
        assert Memory.objects.current().filter(pk=memory_id).count() == 0
        forgotten = mcp.data("memory_forget", user_id="u:1", memory_ids=[memory_id])
        assert [m["id"] for m in forgotten["memories"]] == [memory_id]
        checked = mcp.data("guard_check", context=" ".join(ANCHORS), session="s")
        assert (checked["passed"], checked["session"]) == (True, "s")
    assert Memory.objects.get(pk=memory_id).forgotten_at is not None


def test_unknown_tools_and_arguments_are_refused(make_agent):
    with mcp_stdio(make_agent("a").token) as mcp:
        with pytest.raises(MCPError, match="Unknown tool: memory_erase"):
            mcp.result("memory_erase", memory_id="x")
        error = mcp.error("traits_get", user_id="a:1", user="a:1")
    assert error == {
        "code": "VALIDATION_ERROR",
        "message": "Unknown field.",
        "field": "user",
        "details": {"user": ["Unknown field."]},
    }


def test_a_token_revoked_while_serving_stops_working_at_once(make_agent):
    agent = make_agent("a")
    with mcp_stdio(agent.token) as mcp:
        assert mcp.call("traits_get", user_id="a:1")[0]
        ApiClient.objects.update(is_active=False)
        error = mcp.error("traits_get", user_id="a:1")
    assert error == {"code": "UNAUTHORIZED", "message": "Invalid or revoked API token."}


def test_a_malformed_agent_or_session_stops_it_at_start(make_agent):
    token = make_agent("a").token
    for name, value in (("NEUROMEM_AGENT_ID", "seven"), ("NEUROMEM_AGENT_SESSION", "a\tb")):
        result = subprocess.run(
            stdio_command(),
            cwd=BASE_DIR,
            env={**stdio_environment(token), name: value},
            input="",
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 1, name
        assert name in result.stderr
