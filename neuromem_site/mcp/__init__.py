"""NeuroMem's operations as MCP tools (docs/mcp.md).

`tools.py` names the tools and runs them (the same operation functions the HTTP views call),
`server.py` is the MCP server for one caller, served over stdio by `manage.py mcp_server`, and
`http.py` serves it over streamable HTTP at `/mcp`, behind the REST API's bearer tokens.
"""
