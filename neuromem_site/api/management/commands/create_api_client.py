from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from neuromem_site.api.services import api_client_create


class Command(BaseCommand):
    help = (
        "Create an API client and print its bearer token (shown only this once). "
        "Without --user-prefix a non-staff client gets the prefix 'NAME:'."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument(
            "--user-prefix",
            action="append",
            dest="user_prefixes",
            default=[],
            help="user_id prefix this client may use (repeatable)",
        )
        parser.add_argument(
            "--staff", action="store_true", help="may see all end users and staff endpoints"
        )

    def handle(self, *args, name: str, user_prefixes: list[str], staff: bool, **options) -> None:
        if not user_prefixes and not staff:
            user_prefixes = [f"{name}:"]
        try:
            client, token = api_client_create(
                name=name, user_prefixes=user_prefixes, is_staff=staff
            )
        except ValidationError as error:
            raise CommandError("; ".join(error.messages)) from None
        scope = "all users (staff)" if client.is_staff else ", ".join(client.user_prefixes)
        self.stderr.write(f"Created API client '{client.name}' for user_ids: {scope}")
        self.stderr.write("Its token is printed below, once; keep it, it cannot be shown again.")
        self.stdout.write(token)
