"""The MCP tools: one per NeuroMem operation, each running the very function the HTTP view runs
(`<app>/api/operations.py`), so parameters, defaults, validation, ordering and errors are the
HTTP API's. `TOOLS` by name, in the order tools/list answers them; `tool_call` runs one
(calls.py)."""

from neuromem_site.mcp.tools.agents import AGENT_TOOLS
from neuromem_site.mcp.tools.base import McpTool
from neuromem_site.mcp.tools.calls import DEFAULT_SCOPE, ToolAnswer, tool_call
from neuromem_site.mcp.tools.memories import MEMORY_TOOLS
from neuromem_site.mcp.tools.memory_edits import MEMORY_EDIT_TOOLS
from neuromem_site.mcp.tools.sessions import SESSION_TOOLS

TOOLS: dict[str, McpTool] = {
    tool.name: tool for tool in [*MEMORY_TOOLS, *MEMORY_EDIT_TOOLS, *SESSION_TOOLS, *AGENT_TOOLS]
}

__all__ = ["DEFAULT_SCOPE", "TOOLS", "McpTool", "ToolAnswer", "tool_call"]
