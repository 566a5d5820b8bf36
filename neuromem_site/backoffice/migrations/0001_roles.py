"""The staff roles `viewer` and `operator` (neuromem_site/backoffice/roles.py).

Permissions are made by post_migrate, after every migration has run: on a fresh database
none exists yet here, so this makes the ones it grants first (auth's create_permissions, on
this migration's state). Running it again changes nothing; the reverse removes the groups.
"""

from django.db import migrations


def groups_create(apps, schema_editor) -> None:
    from neuromem_site.backoffice.roles import roles_create

    roles_create(apps, using=schema_editor.connection.alias)


def groups_remove(apps, schema_editor) -> None:
    from neuromem_site.backoffice.roles import roles_remove

    roles_remove(apps, using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("api", "0002_api_client_verbose_names"),
        ("memories", "0011_end_user_purge_permission"),
        ("reflection", "0005_consistency_link_checks"),
        ("evolution", "0002_soul_lifecycle"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(groups_create, groups_remove)]
