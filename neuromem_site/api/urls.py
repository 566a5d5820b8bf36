from django.urls import include, path

from neuromem_site.api import views

urlpatterns = [
    path("health/", views.HealthApi.as_view(), name="health"),
    path("auth/whoami/", views.WhoAmIApi.as_view(), name="whoami"),
    path("", include("memories.api.stats_urls")),
    path("", include("memories.api.urls")),
    path("", include("reflection.api.urls")),
    path("", include("evolution.api.urls")),
]
