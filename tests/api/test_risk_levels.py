"""Every REST write and every MCP tool declares its risk level (seed 003 §4.0.4: none may rely
on the fail-closed default), as docs/evolution.md's table states it."""

import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

from core.risk import RiskLevel
from neuromem_site.api.permissions import view_risk
from neuromem_site.mcp.tools import TOOLS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "evolution.md"
WRITES = ("post", "put", "patch", "delete")
# The same routes act on another agent under /agents/{agent_id}/: one row in the docs.
AGENT_PREFIX = re.compile(r"^/api/v1/agents/\{agent_id\}/(?=soul/|guard/)")
TABLE_ROW = re.compile(r"^\| `([^`]+)` \| (low|high) \|", re.M)


def api_views() -> dict[str, type]:
    """'/path/' → view class, of every route a client calls (/api/, seed 004's at the root;
    not the admin's)."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "view_class"):
                yield prefix + str(pattern.pattern), pattern.callback.view_class

    return {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route): view
        for route, view in walk(get_resolver().url_patterns)
        if not route.startswith("admin/")
    }


def declared() -> dict[str, str]:
    """'METHOD /path' (or an MCP tool's name) → its risk level, as the code declares it."""
    levels = {
        f"{method.upper()} {AGENT_PREFIX.sub('/api/v1/', path)}": view_risk(view, method.upper())
        for path, view in api_views().items()
        if not getattr(view, "guard_exempt", False)
        for method in WRITES
        if hasattr(view, method)
    }
    return {**levels, **{name: tool.risk for name, tool in TOOLS.items()}}


def test_every_rest_write_declares_its_risk_level():
    undeclared = [
        f"{method.upper()} {path}"
        for path, view in api_views().items()
        if not getattr(view, "guard_exempt", False)
        for method in WRITES
        if hasattr(view, method) and method not in getattr(view, "risk_levels", {})
    ]
    assert undeclared == []


def test_every_mcp_tool_declares_the_seed_s_level():
    assert all(isinstance(tool.risk, RiskLevel) for tool in TOOLS.values())
    seed = {"memory_search": "low", "soul_status": "low", "soul_propose": "high"}
    assert {name: TOOLS[name].risk for name in [*seed, "soul_rollback"]} == {
        **seed,
        "soul_rollback": "high",
    }
    # What changes nothing is low; what changes something high, but the guard's own check.
    for tool in TOOLS.values():
        if tool.name != "guard_check":
            assert tool.risk == ("low" if tool.read_only else "high"), tool.name


def test_the_docs_table_states_every_level_as_the_code_does():
    documented = dict(TABLE_ROW.findall(DOCS.read_text()))
    assert documented == {call: str(level) for call, level in declared().items()}
