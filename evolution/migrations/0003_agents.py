"""Agents: each has its own SOUL lineage, contract and events (docs/evolution.md). Today's
single lineage, with its contracts and events, moves to the first agent: the default agent of
the oldest API client, or the deployment's own agent (no client) when there is none yet."""

import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models

# The append-only triggers (0002) are lifted for this one UPDATE of their rows' new column.
MOVE_TO_FIRST_AGENT = """
ALTER TABLE soul_events DISABLE TRIGGER pgtrigger_soul_events_append_only_eea0c;
ALTER TABLE safety_contracts DISABLE TRIGGER pgtrigger_safety_contracts_append_only_a8bd1;
INSERT INTO agents (client_id, name, is_default)
SELECT first_client.id, coalesce(first_client.name, 'default'), true
FROM (SELECT 1) AS one
LEFT JOIN LATERAL (
    SELECT id, name FROM api_clients ORDER BY created_at, name LIMIT 1
) AS first_client ON true
WHERE EXISTS (SELECT 1 FROM soul_versions) OR EXISTS (SELECT 1 FROM safety_contracts);
UPDATE soul_versions SET agent_id = (SELECT min(id) FROM agents);
UPDATE soul_events SET agent_id = (SELECT min(id) FROM agents);
UPDATE safety_contracts SET agent_id = (SELECT min(id) FROM agents);
ALTER TABLE soul_events ENABLE TRIGGER pgtrigger_soul_events_append_only_eea0c;
ALTER TABLE safety_contracts ENABLE TRIGGER pgtrigger_safety_contracts_append_only_a8bd1;
"""


def agent_field(related_name: str) -> models.ForeignKey:
    return models.ForeignKey(
        null=True,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="evolution.agent",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_api_client_verbose_names"),
        ("evolution", "0002_soul_lifecycle"),
    ]

    operations = [
        migrations.CreateModel(
            name="Agent",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100)),
                ("is_default", models.BooleanField(default=False)),
                (
                    "created_at",
                    models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                ),
                (
                    "client",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="agents",
                        to="api.apiclient",
                    ),
                ),
            ],
            options={"db_table": "agents", "ordering": ["id"]},
        ),
        migrations.AddField("soulversion", "agent", agent_field("soul_versions")),
        migrations.AddField("soulevent", "agent", agent_field("soul_events")),
        migrations.AddField("safetycontract", "agent", agent_field("safety_contracts")),
        migrations.AddField(
            "safetycontract", "extracted_anchors", models.JSONField(db_default=[], default=list)
        ),
        migrations.AddField(
            "safetycontract", "extracted_constraints", models.JSONField(db_default=[], default=list)
        ),
        migrations.AddField(
            "safetycontract",
            "source_hash",
            models.CharField(blank=True, db_default="", default="", max_length=64),
        ),
        # Backwards, the next step drops the columns and the table: nothing to undo here.
        migrations.RunSQL(MOVE_TO_FIRST_AGENT, reverse_sql=migrations.RunSQL.noop),
    ]
