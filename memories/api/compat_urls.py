"""Seed 004's routes at the site root (memories/api/compat.py)."""

from django.urls import path

from memories.api import compat

# Route → view, in seed 004's spelling (no trailing slash).
ROUTES = {
    "add_memory": compat.AddMemoryApi,
    "get_memory": compat.GetMemoryApi,
    "update_memory": compat.UpdateMemoryApi,
    "update_memory_key": compat.UpdateMemoryKeyApi,
    "search": compat.SeedSearchApi,
    "fulltext": compat.FulltextApi,
    "api/memories/<path:key>/bulk": compat.BulkApi,  # keys may hold "/"
}

urlpatterns = [path(route, view.as_view()) for route, view in ROUTES.items()]

# Outside /api/, yet API routes: errors answer in the envelope (neuromem_site/api/middleware.py).
ROOT_API_PATHS = frozenset(f"/{route}" for route in ROUTES if not route.startswith("api/"))
