"""The project's routes with `/mcp`, for as long as neuromem_site/urls.py does not include
neuromem_site.mcp.urls itself."""

from django.urls import include, path

from neuromem_site.urls import urlpatterns as project_urlpatterns

urlpatterns = [path("", include("neuromem_site.mcp.urls")), *project_urlpatterns]
