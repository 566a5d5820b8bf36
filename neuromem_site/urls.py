from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("neuromem_site.api.docs_urls")),
    path("api/v1/", include("neuromem_site.api.urls")),
]
