"""Memory statistics and the memory system's health: `urlpatterns` under /api/v1/, and
`compat_urlpatterns` at the root (seed 004's paths)."""

from django.urls import path

from memories.api.stats import MemoryStatsApi, SeedMemoryStatsApi
from neuromem_site.api.memory_health import MemorySystemHealthApi

urlpatterns = [
    path("memories/stats/", MemoryStatsApi.as_view(), name="memories-stats"),
]
compat_urlpatterns = [
    path("api/memories/stats", SeedMemoryStatsApi.as_view(), name="seed-memories-stats"),
    path(
        "api/health/memory-system",
        MemorySystemHealthApi.as_view(),
        name="seed-memory-system-health",
    ),
]
