"""JobRun moves to the kernel app (core 0001): the same job_runs table, only Django's state.
After core 0001, so that one app always holds the model; `migrate core zero` undoes both."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0016_privacy_indexes"), ("core", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel("JobRun")]),
    ]
