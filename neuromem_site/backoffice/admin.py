"""django-celery-beat's schedules, with their actions behind the change permission.

Its PeriodicTaskAdmin offers enable, disable, toggle and "run now" without declaring a
permission, and Django offers such actions to anyone who may view the list: a viewer could
stop or fire every job. Registered again here (this app comes after django_celery_beat, so
its admin module is imported later): each action needs `django_celery_beat.change_periodictask`
and leaves an admin log entry per task.
"""

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django_celery_beat.admin import PeriodicTaskAdmin
from django_celery_beat.models import PeriodicTask

from core.admin_base import CheckedParameters

# action → what the admin's history says was done to each task
LOGGED = {
    "enable_tasks": "Enabled",
    "disable_tasks": "Disabled",
    "toggle_tasks": "Toggled enabled",
    "run_tasks": "Sent to the worker to run now",
}


def guarded(name: str, message: str):
    """django-celery-beat's action `name`, for staff with the change permission, logged."""
    parent = getattr(PeriodicTaskAdmin, name)

    def action(self, request: HttpRequest, queryset: QuerySet) -> None:
        tasks = list(queryset)
        parent(self, request, queryset)
        if name == "run_tasks" and any(self.celery_app.tasks.get(t.task) is None for t in tasks):
            return  # refused whole: a task is not registered (the parent said which)
        for task in tasks:
            self.log_change(request, task, message)

    action.__name__ = name
    return admin.action(description=parent.short_description, permissions=["change"])(action)


admin.site.unregister(PeriodicTask)


@admin.register(PeriodicTask)
class PeriodicTaskStaffAdmin(CheckedParameters, PeriodicTaskAdmin):
    enable_tasks = guarded("enable_tasks", LOGGED["enable_tasks"])
    disable_tasks = guarded("disable_tasks", LOGGED["disable_tasks"])
    toggle_tasks = guarded("toggle_tasks", LOGGED["toggle_tasks"])
    run_tasks = guarded("run_tasks", LOGGED["run_tasks"])
