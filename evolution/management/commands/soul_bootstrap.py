"""manage.py soul_bootstrap [PATH] [--agent ID]: import a SOUL.md file as an agent's version 0,
once; it skips an agent that has a SOUL, so a deploy hook may run it at every start."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from core.access import SYSTEM
from core.errors import DomainError
from evolution.services import agent_for, soul_bootstrap


class Command(BaseCommand):
    help = (
        "Import an agent's initial SOUL document (a markdown file; default SOUL_BOOTSTRAP_FILE) "
        "as version 0 with the contract its marked sections state. An agent that has a SOUL is "
        "skipped; after that every change is a proposal. Default agent: the first one (made as "
        "the deployment's own when there is none)."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", nargs="?", help="the SOUL.md file to import")
        parser.add_argument("--agent", type=int, help="the agent's id (GET /api/v1/agents/)")

    def handle(self, *args, path: str | None = None, agent: int | None = None, **options) -> None:
        source = path or settings.SOUL_BOOTSTRAP_FILE
        if not source:
            raise CommandError("Name the SOUL.md file (or set SOUL_BOOTSTRAP_FILE).")
        try:
            content = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"Cannot read {source}: {error}") from error
        try:
            target = agent_for(caller=SYSTEM, agent_id=agent)
            outcome = soul_bootstrap(agent=target, caller=SYSTEM, content=content)
        except DomainError as error:
            raise CommandError(error.message) from error
        version = outcome.version
        if outcome.skipped:
            self.stdout.write(
                f"Skipped: agent {target.pk} ({target.name}) has a SOUL already "
                f"(v{version.version} active)."
            )
        else:
            self.stdout.write(
                f"SOUL v{version.version} of agent {target.pk} ({target.name}) imported from "
                f"{source} (active)."
            )
