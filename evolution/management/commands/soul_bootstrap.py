"""manage.py soul_bootstrap [PATH]: import a SOUL.md file as version 0, once."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.access import SYSTEM
from core.errors import DomainError
from evolution.services import soul_bootstrap


class Command(BaseCommand):
    help = (
        "Import the initial SOUL document (a markdown file; default SOUL_BOOTSTRAP_FILE) as "
        "version 0, only when no version exists. After that every change is a proposal."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", nargs="?", help="the SOUL.md file to import")

    def handle(self, *args, path: str | None = None, **options) -> None:
        source = path or settings.SOUL_BOOTSTRAP_FILE
        if not source:
            raise CommandError("Name the SOUL.md file (or set SOUL_BOOTSTRAP_FILE).")
        try:
            content = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {source}: {error}") from error
        try:
            version = soul_bootstrap(caller=SYSTEM, content=content)
        except DomainError as error:
            raise CommandError(error.message) from error
        self.stdout.write(f"SOUL v{version.version} imported from {source} (active).")
