import os
from contextlib import suppress

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError
from django.db import OperationalError

from core.errors import Invalid
from evolution.services import GuardScope, guard_scope_parsed
from neuromem_site.api.selectors import api_client_by_token
from neuromem_site.mcp.server import stdio_caller, stdio_serve

TOKEN_VARIABLE = "NEUROMEM_API_TOKEN"
# The agent the tools are called for, and its session (the runtime guardrail's scope).
AGENT_VARIABLE = "NEUROMEM_AGENT_ID"
SESSION_VARIABLE = "NEUROMEM_AGENT_SESSION"


def guard_scope_from_environment() -> GuardScope:
    try:
        return guard_scope_parsed(
            agent=os.environ.get(AGENT_VARIABLE, "").strip() or None,
            session=os.environ.get(SESSION_VARIABLE, ""),
            agent_field=AGENT_VARIABLE,
            session_field=SESSION_VARIABLE,
        )
    except Invalid as error:
        raise CommandError(f"{error.field}: {error.message}") from None


class Command(BaseCommand):
    help = (
        "Serve NeuroMem's tools over MCP on stdin/stdout (docs/mcp.md), acting as the API "
        f"client whose token is in the environment variable {TOKEN_VARIABLE}."
    )

    def handle(self, *args, **options) -> None:
        token = os.environ.get(TOKEN_VARIABLE, "").strip()
        if not token:
            raise CommandError(
                f"{TOKEN_VARIABLE} is not set: put an API client's token in it "
                "(python manage.py create_api_client NAME prints one)."
            )
        try:
            client = api_client_by_token(token=token)
        except OperationalError as error:
            raise CommandError(f"Cannot reach the database: {error}") from None
        if client is None:
            raise CommandError(f"{TOKEN_VARIABLE} is not a valid API token (unknown or revoked).")
        caller = client.caller
        scope = guard_scope_from_environment()
        users = "all users (staff)" if caller.is_staff else ", ".join(caller.user_prefixes)
        # stdout carries the protocol: anything for people goes to stderr.
        self.stderr.write(f"NeuroMem MCP server (stdio), API client '{caller.name}': {users}")
        with suppress(KeyboardInterrupt):
            async_to_sync(stdio_serve)(stdio_caller(token), scope)
