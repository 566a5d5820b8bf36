"""django-celery-beat's schedules, with their actions behind the change permission; Django's
users and groups. Registered again here (this app comes after django.contrib.auth and
django_celery_beat, so its admin module is imported later).

Its PeriodicTaskAdmin offers enable, disable, toggle and "run now" without declaring a
permission, and Django offers such actions to anyone who may view the list: a viewer could
stop or fire every job. Here each action needs `django_celery_beat.change_periodictask`, acts
only on tasks that exist, and leaves an admin log entry per task; a task's `args` and `kwargs`
are JSON celery can send. Every list, theirs too, holds its lookups to `CheckedParameters`.
"""

import json

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import Group, User
from django.db.models import QuerySet
from django.http import HttpRequest
from django_celery_beat.admin import PeriodicTaskAdmin, PeriodicTaskForm
from django_celery_beat.models import (
    ClockedSchedule,
    CrontabSchedule,
    IntervalSchedule,
    PeriodicTask,
    SolarSchedule,
)

from core.admin_base import CheckedParameters
from core.validation import JSON_MAX_DEPTH, json_problem

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
        if not tasks:
            # The parent would still mark the schedule changed, and every beat reload it.
            self.message_user(request, "The selection names no such objects.", messages.ERROR)
            return
        parent(self, request, queryset)
        if name == "run_tasks" and any(self.celery_app.tasks.get(t.task) is None for t in tasks):
            return  # refused whole: a task is not registered (the parent said which)
        for task in tasks:
            self.log_change(request, task, message)

    action.__name__ = name
    return admin.action(description=parent.short_description, permissions=["change"])(action)


class PeriodicTaskStaffForm(PeriodicTaskForm):
    """`args` a JSON array, `kwargs` and `headers` JSON objects, as celery sends them: the
    parent's parser takes NaN (no JSON) and fails on deep nesting, and leaves `headers`
    unchecked (beat's scheduler fails on one that is no object, or drops the schedule)."""

    JSON_SHAPES = {
        "args": (list, "a JSON array"),
        "kwargs": (dict, "a JSON object"),
        "headers": (dict, "a JSON object"),
    }

    def clean_headers(self) -> str:
        return self._clean_json("headers")

    def _clean_json(self, field: str) -> str:
        value = self.cleaned_data[field]
        shape, shape_name = self.JSON_SHAPES[field]
        try:
            parsed = json.loads(value)
        except RecursionError:
            raise forms.ValidationError(f"Nested deeper than {JSON_MAX_DEPTH} levels.") from None
        except ValueError as error:
            raise forms.ValidationError(f"Unable to parse JSON: {error}") from None
        if not isinstance(parsed, shape):
            raise forms.ValidationError(f"Must be {shape_name}.")
        problem = json_problem(parsed)
        if problem is not None:
            raise forms.ValidationError(problem)
        return value


admin.site.unregister(PeriodicTask)


@admin.register(PeriodicTask)
class PeriodicTaskStaffAdmin(CheckedParameters, PeriodicTaskAdmin):
    form = PeriodicTaskStaffForm
    enable_tasks = guarded("enable_tasks", LOGGED["enable_tasks"])
    disable_tasks = guarded("disable_tasks", LOGGED["disable_tasks"])
    toggle_tasks = guarded("toggle_tasks", LOGGED["toggle_tasks"])
    run_tasks = guarded("run_tasks", LOGGED["run_tasks"])


for model in (User, Group, ClockedSchedule, CrontabSchedule, SolarSchedule, IntervalSchedule):
    registered = type(admin.site.get_model_admin(model))
    admin.site.unregister(model)
    admin.site.register(model, type(registered.__name__, (CheckedParameters, registered), {}))
