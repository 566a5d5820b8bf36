"""Beat's per-user refresh was renamed (it now builds text indexes as well as HNSW graphs).

The database scheduler installs the new entry from CELERY_BEAT_SCHEDULE but keeps rows it
no longer finds there: the old one would send a task no worker knows, every hour."""

from django.db import migrations

OLD_ENTRY = "refresh-user-graphs"


def remove_old_entry(apps, schema_editor) -> None:
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(name=OLD_ENTRY).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0004_hnsw_ready_only"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    # Backwards: nothing to restore; the scheduler installs whatever the settings name.
    operations = [migrations.RunPython(remove_old_entry, migrations.RunPython.noop)]
