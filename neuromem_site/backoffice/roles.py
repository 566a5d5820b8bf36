"""The staff roles, as groups: assign a staff member to one of them (docs/admin.md).

- **viewer**: every NeuroMem page and the beat schedules, read only — the view permission of
  every model of NeuroMem's apps and django-celery-beat's, nothing else.
- **operator**: a viewer who may also act: veto traits, act on SOUL versions (veto, evaluate,
  apply, roll back), write a new safety contract, use the memory staff actions (supersede,
  invalidate, soft delete), purge an end user and forget for one (the purge permission).

Migration 0001 creates them with exactly these permissions. After every migrate (and flush)
a missing group is created again, and both groups get the view permission of any model added
since, so new pages are visible to both. Nothing is taken from a group: what staff add stays,
and an operator permission staff removed stays removed (a view permission comes back).
"""

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import DEFAULT_DB_ALIAS

VIEWER = "viewer"
OPERATOR = "operator"
# The apps whose every model a viewer sees: NeuroMem's and the beat schedules'.
VIEWED_APPS = ("api", "core", "memories", "reflection", "evolution", "django_celery_beat")
# What an operator may do beyond viewing.
OPERATOR_PERMISSIONS = (
    "reflection.change_trait",  # veto a trait
    "evolution.change_soulversion",  # veto, evaluate, apply, roll back a SOUL version
    "evolution.add_safetycontract",  # a new safety contract version
    "memories.change_memory",  # the memory staff actions
    "memories.purge_end_user",  # purge an end user
)


def permissions_create(apps, *, using: str) -> None:
    """The permissions of the viewed apps' models, in case post_migrate has not made them yet
    (it runs after all migrations: on a fresh database, not before this one)."""
    for label in VIEWED_APPS:
        create_permissions(global_apps.get_app_config(label), verbosity=0, using=using, apps=apps)


def role_permissions(apps, *, using: str, strict: bool = True) -> dict[str, list]:
    """Each role's permissions (Permission rows of `apps`' state). A missing operator
    permission is an error when `strict` (the migration: the roles would silently grant less
    than they say), else left out."""
    permission = apps.get_model("auth", "Permission")
    views = list(
        permission.objects.using(using).filter(
            content_type__app_label__in=VIEWED_APPS, codename__startswith="view_"
        )
    )
    extras = []
    for name in OPERATOR_PERMISSIONS:
        app_label, codename = name.split(".")
        found = permission.objects.using(using).filter(
            content_type__app_label=app_label, codename=codename
        )
        if not found and strict:
            raise LookupError(f"The operator role's permission {name} does not exist.")
        extras.extend(found)
    return {VIEWER: views, OPERATOR: [*views, *extras]}


def roles_create(apps, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The two groups with exactly their permissions (the migration)."""
    permissions_create(apps, using=using)
    group = apps.get_model("auth", "Group")
    for name, permissions in role_permissions(apps, using=using).items():
        role, _ = group.objects.using(using).get_or_create(name=name)
        role.permissions.set(permissions)


def roles_sync(apps, *, using: str = DEFAULT_DB_ALIAS) -> None:
    """The two groups exist (again, after a flush: created whole) and see every model: the
    view permissions they miss are added; nothing is taken away. Idempotent."""
    permissions_create(apps, using=using)
    group = apps.get_model("auth", "Group")
    wanted = role_permissions(apps, using=using, strict=False)
    for name, permissions in wanted.items():
        role, created = group.objects.using(using).get_or_create(name=name)
        if created:
            role.permissions.set(permissions)
        else:
            role.permissions.add(*wanted[VIEWER])


def roles_remove(apps, *, using: str = DEFAULT_DB_ALIAS) -> None:
    apps.get_model("auth", "Group").objects.using(using).filter(
        name__in=[VIEWER, OPERATOR]
    ).delete()
