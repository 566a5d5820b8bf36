"""`/mcp`: the same tools over MCP's streamable HTTP transport, behind the REST API's bearer
tokens, served by the WSGI application on a real socket and driven by the SDK's streamable HTTP
client (and by plain HTTP where the transport's edges are tested)."""

import json

import httpx
import pytest
from mcp import MCPError

from core.access import SYSTEM
from memories.models import Memory
from memories.services import MemoryInput, memory_add
from tests.mcp.conftest import mcp_http
from tests.mcp.test_stdio import TOOLS

pytestmark = pytest.mark.django_db(transaction=True)

LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def remember(user_id: str, content: str, key: str) -> Memory:
    return memory_add(
        item=MemoryInput(user_id=user_id, content=content, memory_type="fact", key=key),
        caller=SYSTEM,
    ).memory


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_uses_the_tools_over_http(web, make_agent, mode):
    """`auto` negotiates the 2026-07-28 protocol (one self-contained POST per request),
    `legacy` the initialize handshake of the earlier ones: both are served."""
    memory = remember("a:1", "I like green tea", "tea")
    agent = make_agent("a")
    with mcp_http(f"{web}/mcp", agent.token, mode=mode) as mcp:
        assert {tool.name for tool in mcp.tools()} == TOOLS
        assert (
            mcp.data("memory_get", memory_id=str(memory.id))
            == (agent.http.get(f"/api/v1/memories/{memory.id}/").json()["data"])
        )
        assert (
            mcp.data("traits_get", user_id="a:1")
            == (agent.http.get("/api/v1/users/a:1/traits/").json()["data"])
        )
        added = mcp.data("memory_add", user_id="a:1", content="Runs on Sundays", memory_type="fact")
        assert added["operation"] == "ADD"
        error = mcp.error("bulk_read_memory", memory_id=str(memory.id), depth=9)
        assert (
            error
            == (agent.http.get(f"/api/v1/memories/{memory.id}/bulk/", {"depth": 9}).json()["error"])
        )
    assert Memory.objects.current().filter(user_id="a:1").count() == 2


def test_each_request_acts_as_the_client_whose_token_it_carries(web, make_agent):
    theirs = remember("b:1", "Someone else's", "x")
    a, b = make_agent("a"), make_agent("b")
    with mcp_http(f"{web}/mcp", b.token) as as_b:
        assert as_b.data("memory_get", memory_id=str(theirs.id))["content"] == "Someone else's"
    with mcp_http(f"{web}/mcp", a.token) as as_a:
        assert (
            as_a.error("memory_get", memory_id=str(theirs.id))
            == (a.http.get(f"/api/v1/memories/{theirs.id}/").json()["error"])
        )
        forbidden = as_a.error("memory_add", user_id="b:1", content="Mine", memory_type="fact")
    assert forbidden["code"] == "FORBIDDEN"


def test_without_a_valid_token_mcp_is_refused_as_the_api_refuses(web, make_agent):
    url = f"{web}/mcp"
    for headers, message in [
        ({}, "Authentication credentials were not provided."),
        ({"Authorization": "Bearer nm_not-a-token"}, "Invalid or revoked API token."),
    ]:
        response = httpx.post(url, json=LIST_TOOLS, headers={**MCP_HEADERS, **headers})
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="neuromem"'
        assert response.json() == {
            "ok": False,
            "error": {"code": "UNAUTHORIZED", "message": message},
        }
    # The SDK client, refused (an HTTP error, no JSON-RPC answer): it fails to connect.
    with (
        pytest.raises(MCPError, match="Server returned an error response"),
        mcp_http(url, "nm_not-a-token") as mcp,
    ):
        mcp.tools()


def test_one_post_one_json_answer_and_nothing_else(web, make_agent):
    """Stateless and JSON-only: a POST is answered with one JSON body and no session; there is
    no event stream to GET and no session to DELETE (405), and a body that is not JSON is the
    API's 415."""
    url = f"{web}/mcp"
    auth = {"Authorization": f"Bearer {make_agent('a').token}"}
    response = httpx.post(url, json=LIST_TOOLS, headers={**MCP_HEADERS, **auth})
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    assert "mcp-session-id" not in response.headers
    answer = response.json()
    assert answer["id"] == 1 and {t["name"] for t in answer["result"]["tools"]} == TOOLS
    for method in ("GET", "DELETE"):
        refused = httpx.request(method, url, headers={**MCP_HEADERS, **auth})
        assert refused.status_code == 405
        assert refused.json()["error"]["code"] == "METHOD_NOT_ALLOWED"
    text = httpx.post(url, content="tools/list", headers={**MCP_HEADERS, **auth})
    assert text.status_code == 415
    assert text.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"
    garbled = httpx.post(
        url,
        content="{not json",
        headers={**MCP_HEADERS, **auth, "Content-Type": "application/json"},
    )
    assert garbled.status_code == 400 and garbled.json()["error"]["code"] == -32700  # PARSE_ERROR


CALL = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "memory_list"}}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "message",
    [
        {**CALL, "id": None},
        {**CALL, "id": 1.5},
        {**CALL, "id": {"x": 1}},
        {**CALL, "id": True},
        [{**CALL, "id": 1}],
        {"id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1},
        7,
    ],
    ids=[
        "null-id",
        "float-id",
        "object-id",
        "boolean-id",
        "batch",
        "no-jsonrpc",
        "no-method",
        "number",
    ],
)
def test_a_message_that_is_no_json_rpc_request_is_an_invalid_request(make_agent, message):
    """Never silently dropped as a notification (a request whose id is null), nor answered with
    the SDK validator's dump: JSON-RPC's own -32600, and no tool runs."""
    response = make_agent("a").http.post("/mcp", message, format="json", HTTP_ACCEPT="*/*")
    assert response.status_code == 400
    answer = response.json()
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", None, -32600)
    assert "pydantic" not in answer["error"]["message"]


@pytest.mark.django_db
def test_no_accept_header_accepts_the_json_answer(make_agent):
    """As on the REST API (RFC 9110: no Accept, anything goes); only one that excludes JSON is
    406."""
    http = make_agent("a").http
    answered = http.post("/mcp", {**LIST_TOOLS}, format="json")
    assert answered.status_code == 200 and answered.json()["id"] == 1
    refused = http.post("/mcp", {**LIST_TOOLS}, format="json", HTTP_ACCEPT="text/html")
    assert refused.status_code == 406


@pytest.mark.django_db  # not transactional: the memory below is never committed
def test_tools_run_on_the_requests_own_database_connection(make_agent):
    """Through Django's test client, inside the test's transaction: the tool sees the memory
    only if it runs on the request's thread and connection (not on a thread of its own)."""
    memory = remember("a:1", "Uncommitted", "u")
    agent = make_agent("a")
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "memory_get", "arguments": {"memory_id": str(memory.id)}},
    }
    response = agent.http.post("/mcp", call, format="json", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is False
    assert json.loads(result["content"][0]["text"])["content"] == "Uncommitted"


@pytest.mark.django_db
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_in_a_tools_arguments_is_the_error_object_rest_answers(make_agent, constant):
    """The SDK's JSON reader takes NaN and Infinity, as Python's does: refused as the REST
    parser refuses them, naming the field."""
    http = make_agent("a").http
    body = (
        '{"user_id": "a:1", "content": "x", "memory_type": "fact", "metadata": {"x": '
        + constant
        + "}}"
    )
    rest = http.post("/api/v1/memories/", body, content_type="application/json")
    call = (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "memory_add", '
        '"arguments": ' + body + "}}"
    )
    response = http.post(
        "/mcp", call, content_type="application/json", HTTP_ACCEPT="application/json"
    )
    result = response.json()["result"]
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == rest.json()["error"]
    assert rest.json()["error"]["field"] == "metadata.x"
    assert not Memory.objects.exists()
