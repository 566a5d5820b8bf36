"""JobRun moves to the kernel app (core 0001): the same job_runs table, only Django's state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0016_privacy_indexes")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel("JobRun")]),
    ]
