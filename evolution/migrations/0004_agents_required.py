"""Versions, events and contracts belong to an agent: numbers, the one active version and the
event log are per agent (the triggers of 0002, now naming the agent)."""

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models


def agent_field(related_name: str) -> models.ForeignKey:
    return models.ForeignKey(
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to="evolution.agent",
    )


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0003_agents"),
    ]

    operations = [
        migrations.AlterField("soulversion", "agent", agent_field("soul_versions")),
        migrations.AlterField("soulevent", "agent", agent_field("soul_events")),
        migrations.AlterField("safetycontract", "agent", agent_field("safety_contracts")),
        migrations.AlterModelOptions(
            name="safetycontract", options={"ordering": ["agent", "-version"]}
        ),
        migrations.AlterModelOptions(
            name="soulversion", options={"ordering": ["agent", "version"]}
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name="soulversion", name="soul_versions_transitions"
        ),
        pgtrigger.migrations.RemoveTrigger(model_name="soulversion", name="soul_versions_log"),
        migrations.RemoveConstraint(model_name="soulversion", name="soul_versions_one_active"),
        migrations.RemoveIndex(model_name="soulevent", name="idx_soul_events_version"),
        migrations.AlterField("safetycontract", "version", models.IntegerField()),
        migrations.AlterField("soulversion", "version", models.IntegerField()),
        pgtrigger.migrations.AddTrigger(
            model_name="soulversion",
            trigger=pgtrigger.compiler.Trigger(
                name="soul_versions_transitions",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="\n                IF (NEW.agent_id, NEW.version, NEW.content, NEW.created_by, NEW.proposal,\n                    NEW.created_at)\n                   IS DISTINCT FROM\n                   (OLD.agent_id, OLD.version, OLD.content, OLD.created_by, OLD.proposal,\n                    OLD.created_at) THEN\n                    RAISE EXCEPTION 'SOUL version %: only its status and evaluation change',\n                        OLD.version USING ERRCODE = 'check_violation';\n                END IF;\n                IF OLD.eval_result IS NOT NULL\n                   AND NEW.eval_result IS DISTINCT FROM OLD.eval_result THEN\n                    RAISE EXCEPTION 'SOUL version %: evaluated already', OLD.version\n                        USING ERRCODE = 'check_violation';\n                END IF;\n                IF NEW.eval_result IS DISTINCT FROM OLD.eval_result\n                   AND OLD.status <> 'proposed' THEN\n                    RAISE EXCEPTION 'SOUL version %: only a proposal is evaluated', OLD.version\n                        USING ERRCODE = 'check_violation';\n                END IF;\n                IF NEW.status IS DISTINCT FROM OLD.status THEN\n                    IF NOT ((OLD.status = 'proposed' AND NEW.status IN ('active', 'vetoed')) OR (OLD.status = 'active' AND NEW.status IN ('superseded', 'rolled_back', 'vetoed'))) THEN\n                        RAISE EXCEPTION 'SOUL version %: % cannot become %', OLD.version,\n                            OLD.status, NEW.status USING ERRCODE = 'check_violation';\n                    END IF;\n                    IF OLD.status = 'proposed' AND NEW.status = 'active'\n                       AND coalesce((NEW.eval_result->>'passed')::boolean, false) IS NOT TRUE THEN\n                        RAISE EXCEPTION 'SOUL version %: applied without a passed evaluation',\n                            OLD.version USING ERRCODE = 'check_violation';\n                    END IF;\n                END IF;\n                RETURN NEW;",
                    hash="c35dade62e58a1b6b4748d64f9688ba68f6bf881",
                    operation="UPDATE",
                    pgid="pgtrigger_soul_versions_transitions_b6d54",
                    table="soul_versions",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="soulversion",
            trigger=pgtrigger.compiler.Trigger(
                name="soul_versions_log",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="\nDECLARE\n    actor text := coalesce(nullif(current_setting('neuromem.actor', true), ''), 'system');\n    reason text := coalesce(current_setting('neuromem.reason', true), '');\nBEGIN\n                IF TG_OP = 'UPDATE' AND NEW.status IS NOT DISTINCT FROM OLD.status THEN\n                    RETURN NULL;\n                END IF;\n                INSERT INTO soul_events (agent_id, version, from_status, to_status, actor, reason)\n                VALUES (NEW.agent_id, NEW.version, CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END,\n                        NEW.status, actor, reason);\n                RETURN NULL;\n                END;",
                    hash="5a25f202837db7e1f9a8b27373b2143c5931d4d6",
                    operation='INSERT OR UPDATE OF "status"',
                    pgid="pgtrigger_soul_versions_log_b4433",
                    table="soul_versions",
                    when="AFTER",
                ),
            ),
        ),
        migrations.AddIndex(
            model_name="soulevent",
            index=models.Index(fields=["agent", "version", "id"], name="idx_soul_events_version"),
        ),
        migrations.AddConstraint(
            model_name="safetycontract",
            constraint=models.UniqueConstraint(
                fields=("agent", "version"), name="safety_contracts_number_per_agent"
            ),
        ),
        migrations.AddConstraint(
            model_name="soulversion",
            constraint=models.UniqueConstraint(
                fields=("agent", "version"), name="soul_versions_number_per_agent"
            ),
        ),
        migrations.AddConstraint(
            model_name="soulversion",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status", "active")),
                fields=("agent",),
                name="soul_versions_one_active",
            ),
        ),
        migrations.AddConstraint(
            model_name="agent",
            constraint=models.UniqueConstraint(
                fields=("client", "name"), name="agents_name_per_client", nulls_distinct=False
            ),
        ),
        migrations.AddConstraint(
            model_name="agent",
            constraint=models.UniqueConstraint(
                condition=models.Q(("is_default", True)),
                fields=("client",),
                name="agents_one_default_per_client",
                nulls_distinct=False,
            ),
        ),
    ]
