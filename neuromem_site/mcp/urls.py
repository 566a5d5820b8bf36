"""`/mcp`: include these in ROOT_URLCONF (neuromem_site/urls.py) at the root."""

from django.urls import path

from neuromem_site.mcp.http import McpApi

urlpatterns = [
    path("mcp", McpApi.as_view(), name="mcp"),
    path("mcp/", McpApi.as_view(), name="mcp-slash"),  # a client configured with the slash
]
