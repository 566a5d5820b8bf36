"""Every API client has its default agent: made from now on with the client
(`api_client_create`), here for the clients that have none yet (no SOUL call ever named their
default agent). Before, the first call made it, even a call then refused.

Idempotent: a client with a default agent is left alone. The reverse keeps the agents (an
agent may have a SOUL by then; no row says which ones this migration made)."""

from django.db import migrations
from django.db.models import Exists, OuterRef


def default_agents_made(apps, schema_editor) -> None:
    ApiClient = apps.get_model("api", "ApiClient")
    Agent = apps.get_model("evolution", "Agent")
    alias = schema_editor.connection.alias
    has_default = Agent.objects.using(alias).filter(client=OuterRef("pk"), is_default=True)
    without = ApiClient.objects.using(alias).filter(~Exists(has_default)).order_by("created_at")
    Agent.objects.using(alias).bulk_create(
        Agent(client=client, name=client.name, is_default=True) for client in without
    )


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_api_client_verbose_names"),
        ("evolution", "0005_guardrail"),
    ]

    operations = [migrations.RunPython(default_agents_made, migrations.RunPython.noop)]
