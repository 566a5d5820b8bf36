from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The kernel every app builds on: errors, access, validation, locks, jobs and their runs.
    It imports no app (tests/test_architecture.py)."""

    name = "core"
    label = "core"
    verbose_name = "Jobs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import after_response  # noqa: F401  connects its request signal receivers
        from core.db import prepared  # noqa: F401  connects its connection_created receiver
