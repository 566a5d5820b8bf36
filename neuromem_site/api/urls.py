from django.urls import path

from neuromem_site.api import views

urlpatterns = [
    path("health/", views.HealthApi.as_view(), name="health"),
    path("auth/whoami/", views.WhoAmIApi.as_view(), name="whoami"),
]
