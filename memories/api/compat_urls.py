"""Seed 004's routes at the site root (memories/api/compat.py)."""

from django.urls import path

from memories.api import compat

urlpatterns = [
    path("add_memory", compat.AddMemoryApi.as_view()),
    path("get_memory", compat.GetMemoryApi.as_view()),
    path("update_memory", compat.UpdateMemoryApi.as_view()),
    path("update_memory_key", compat.UpdateMemoryKeyApi.as_view()),
    path("search", compat.SeedSearchApi.as_view()),
    path("fulltext", compat.FulltextApi.as_view()),
    path("api/memories/<path:key>/bulk", compat.BulkApi.as_view()),  # keys may hold "/"
]

# Outside /api/, yet API routes: errors answer in the envelope (neuromem_site/api/middleware.py).
ROOT_API_PATHS = frozenset(
    f"/{route.pattern}" for route in urlpatterns if not str(route.pattern).startswith("api/")
)
