"""NeuroMem's admin site: Django's, plus the end-user pages, an "End users" entry in the app
list and the dashboard on the index. It is `admin.site` (apps.NeuroMemAdminConfig), so every
app's admin.py registers on it as usual."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse


class NeuroMemAdminSite(admin.AdminSite):
    index_template = "admin/backoffice/index.html"

    def get_urls(self) -> list:
        # Imported here: this module is loaded with the admin app, before the models.
        from neuromem_site.backoffice.views import EndUserPages

        # Before Django's own, which end with a catch-all.
        return [*EndUserPages(self).urls(), *super().get_urls()]

    def index(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        from neuromem_site.backoffice.views import dashboard_context

        return super().index(request, {**dashboard_context(request), **(extra_context or {})})

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict]:
        """Django's list, with "End users" first on the index and in the side bar (an entry
        for the end-user pages, which belong to no model)."""
        from django.urls import reverse

        from neuromem_site.backoffice.views import may_view_end_users

        app_list = super().get_app_list(request, app_label)
        if app_label is not None or not may_view_end_users(request):
            return app_list
        url = reverse("admin:backoffice_end_users", current_app=self.name)
        entry = {
            "name": "End users",
            "app_label": "backoffice",
            "app_url": url,
            "has_module_perms": True,
            "models": [
                {
                    "model": None,
                    "name": "End users",
                    "object_name": "EndUser",
                    "perms": {"add": False, "change": False, "delete": False, "view": True},
                    "admin_url": url,
                    "add_url": None,
                    "view_only": True,
                }
            ],
        }
        return [entry, *app_list]
