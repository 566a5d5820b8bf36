"""Memory statistics and the memory system's health: `urlpatterns` under /api/v1/, and
`compat_urlpatterns` at the root (seed 004's paths)."""

urlpatterns: list = []
compat_urlpatterns: list = []
