"""Beat's reflection and maintenance schedules, stored in the database (django-celery-beat).

Seeded here, not in CELERY_BEAT_SCHEDULE: the database scheduler rewrites entries named there
at every start, which would undo what staff change in the admin. Seeding creates what is
missing and leaves existing rows (an edited or disabled schedule) alone, so running it again
changes nothing; the reverse removes only these entries.
"""

from django.db import migrations
from django.utils import timezone

# name: (task, crontab fields or an interval in seconds)
SCHEDULES = {
    "reflection-triggers": ("reflection.tasks.reflect_due_users", 300),
    "refresh-trait-decay-view": ("reflection.tasks.refresh_trait_view", {"minute": "*/30"}),
    "expire-trends": ("reflection.tasks.expire_trends", {"minute": "0", "hour": "3"}),
    "dissolve-weak-traits": (
        "reflection.tasks.dissolve_weak_traits",
        {"minute": "0", "hour": "4", "day_of_week": "1"},
    ),
    "consistency-check": ("reflection.tasks.check_consistency", {"minute": "0", "hour": "5"}),
}


def schedules_seed(apps, schema_editor) -> None:
    periodic_tasks = apps.get_model("django_celery_beat", "PeriodicTask")
    crontabs = apps.get_model("django_celery_beat", "CrontabSchedule")
    intervals = apps.get_model("django_celery_beat", "IntervalSchedule")
    for name, (task, when) in SCHEDULES.items():
        if periodic_tasks.objects.filter(name=name).exists():
            continue
        if isinstance(when, int):
            interval, _ = intervals.objects.get_or_create(every=when, period="seconds")
            periodic_tasks.objects.create(name=name, task=task, interval=interval)
        else:
            fields = {"minute": "*", "hour": "*", "day_of_week": "*", "day_of_month": "*",
                      "month_of_year": "*", **when}
            crontab, _ = crontabs.objects.get_or_create(timezone="UTC", **fields)
            periodic_tasks.objects.create(name=name, task=task, crontab=crontab)
    # The scheduler reloads when this marker changes (django-celery-beat's PeriodicTasks).
    apps.get_model("django_celery_beat", "PeriodicTasks").objects.update_or_create(
        ident=1, defaults={"last_update": timezone.now()}
    )


def schedules_remove(apps, schema_editor) -> None:
    apps.get_model("django_celery_beat", "PeriodicTask").objects.filter(
        name__in=list(SCHEDULES)
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("reflection", "0002_trait_lifecycle"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(schedules_seed, schedules_remove)]
