from django.apps import AppConfig
from django.apps import apps as global_apps
from django.contrib.admin import apps as admin_apps
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder
from django.db.models.signals import post_migrate

ROLES_MIGRATION = ("backoffice", "0001_roles")


class BackofficeConfig(AppConfig):
    default = True  # the app's own config (the admin's below is named in INSTALLED_APPS)
    name = "neuromem_site.backoffice"
    label = "backoffice"
    verbose_name = "Back-office"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(roles_after_migrate, sender=self)


class NeuroMemAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin with NeuroMem's site as `admin.site`: the same registry every
    app's admin.py registers on, plus the end-user pages and the dashboard (sites.py)."""

    default = False
    default_site = "neuromem_site.backoffice.sites.NeuroMemAdminSite"


def roles_after_migrate(sender, using, apps=global_apps, **kwargs) -> None:
    """After every migrate (and flush): the staff groups exist and see every model, models
    added since they were created included (roles.py). `apps` is the migrated state (flush
    sends none: the installed models). Not before the roles migration is applied (a migrate to
    an earlier state, or backwards past it)."""
    if ROLES_MIGRATION not in MigrationRecorder(connections[using]).applied_migrations():
        return
    from neuromem_site.backoffice.roles import roles_sync

    roles_sync(apps, using=using)
