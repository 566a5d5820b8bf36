from django.contrib import admin
from django.urls import include, path

from memories.api.stats_urls import compat_urlpatterns as stats_compat_urls
from neuromem_site.metrics import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("metrics", metrics_view, name="metrics"),
    path("api/", include("neuromem_site.api.docs_urls")),
    path("api/v1/", include("neuromem_site.api.urls")),
    path("", include(stats_compat_urls)),
    path("", include("memories.api.compat_urls")),
    path("", include("neuromem_site.mcp.urls")),
]
