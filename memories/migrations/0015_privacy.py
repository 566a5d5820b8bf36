"""Privacy (docs/privacy.md): forget requests and what they erased; memories and messages say what
was redacted from them; a forgotten memory keeps its row (id, times, type) with its content
erased.

The audit triggers learn the FORGET event (logged without content, while `neuromem.forgetting`
names the request), and `memory_history` stays append-only but for one change: a forget may
erase a row's content and metadata (set them NULL). Deleting history rows stays the user
purge's alone, now as its own trigger (`history_no_delete`).

The three new `memories` columns are NULL (no rewrite of the table). The history event check
is replaced NOT VALID, then validated, which does not block writes meanwhile.
"""

import django.contrib.postgres.fields
import django.utils.timezone
import pgtrigger.compiler
import pgtrigger.migrations
import uuid
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0014_admin_bench_indexes'),
    ]

    operations = [
        migrations.CreateModel(
            name='ForgetRequest',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('user_id', models.CharField(max_length=255)),
                ('requested_by', models.CharField(max_length=100)),
                ('via', models.CharField(choices=[('conversation', 'conversation'), ('api', 'REST API'), ('mcp', 'MCP'), ('admin', 'admin')], max_length=20)),
                ('message_id', models.UUIDField(blank=True, null=True)),
                ('memory_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, default=list, size=None)),
                ('erased_memory_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, default=list, size=None)),
                ('message_ids', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, default=list, size=None)),
                ('traits_reweighed', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, default=list, size=None)),
                ('traits_dissolved', django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField(), blank=True, default=list, size=None)),
                ('reason', models.TextField(blank=True, default='')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                'db_table': 'forget_requests',
                'ordering': ['-created_at'],
            },
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='memory',
            name='memories_audit_insert',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='memory',
            name='memories_audit_update',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='memory',
            name='memories_audit_delete',
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name='memoryhistory',
            name='history_append_only',
        ),
        migrations.AddField(
            model_name='conversationmessage',
            name='redactions',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='forget_request_id',
            field=models.UUIDField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='forgotten_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='memory',
            name='redactions',
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='memoryhistory',
            name='event',
            field=models.CharField(choices=[('ADD', 'Add'), ('UPDATE', 'Update'), ('DELETE', 'Delete'), ('SUPERSEDE', 'Supersede'), ('STAGE_CHANGE', 'Stage Change'), ('FORGET', 'Forget')], max_length=20),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memory',
            trigger=pgtrigger.compiler.Trigger(name='memories_audit_insert', sql=pgtrigger.compiler.UpsertTriggerSql(func="\nDECLARE\n    actor text := coalesce(nullif(current_setting('neuromem.actor', true), ''), 'system');\n    moving text := coalesce(current_setting('neuromem.moving', true), '');\n    forgetting text := coalesce(current_setting('neuromem.forgetting', true), '');\nBEGIN\n                IF moving = NEW.id::text THEN\n                    PERFORM set_config('neuromem.moving', '', true);\n                    RETURN NEW;\n                END IF;\n                INSERT INTO memory_history\n                    (memory_id, memory_type, event, new_content, new_metadata, actor)\n                VALUES (NEW.id, NEW.memory_type, 'ADD', NEW.content, NEW.metadata, actor);\n                RETURN NEW;\n                END;", hash='5dfd7e7b1612cf83fc566173a25f4ade16fe8d75', operation='INSERT', pgid='pgtrigger_memories_audit_insert_d8f1c', table='memories', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memory',
            trigger=pgtrigger.compiler.Trigger(name='memories_audit_update', sql=pgtrigger.compiler.UpsertTriggerSql(func="\nDECLARE\n    actor text := coalesce(nullif(current_setting('neuromem.actor', true), ''), 'system');\n    moving text := coalesce(current_setting('neuromem.moving', true), '');\n    forgetting text := coalesce(current_setting('neuromem.forgetting', true), '');\nBEGIN\n                IF NEW.memory_type IS DISTINCT FROM OLD.memory_type THEN\n                    PERFORM set_config('neuromem.moving', NEW.id::text, true);\n                END IF;\n                IF (OLD.content, OLD.metadata, OLD.memory_type, OLD.user_id, OLD.importance, OLD.key, OLD.valid_at, OLD.invalid_at, OLD.expired_at, OLD.superseded_by, OLD.trait_subtype, OLD.trait_stage, OLD.trait_confidence, OLD.trait_context, OLD.trait_parent_id, OLD.trait_window_start, OLD.trait_window_end) IS NOT DISTINCT FROM\n                   (NEW.content, NEW.metadata, NEW.memory_type, NEW.user_id, NEW.importance, NEW.key, NEW.valid_at, NEW.invalid_at, NEW.expired_at, NEW.superseded_by, NEW.trait_subtype, NEW.trait_stage, NEW.trait_confidence, NEW.trait_context, NEW.trait_parent_id, NEW.trait_window_start, NEW.trait_window_end) THEN\n                    RETURN NEW;  -- bookkeeping only (embedding, access counts, score)\n                END IF;\n                IF forgetting <> '' THEN\n                    -- Erasing: the event and its request, never the content erased.\n                    INSERT INTO memory_history (memory_id, memory_type, event, new_metadata, actor)\n                    VALUES (NEW.id, NEW.memory_type, 'FORGET',\n                            jsonb_build_object('forget_request', forgetting), actor);\n                    RETURN NEW;\n                END IF;\n                INSERT INTO memory_history (memory_id, memory_type, event, old_content,\n                                            new_content, old_metadata, new_metadata, actor)\n                VALUES (NEW.id, NEW.memory_type,\n                        CASE WHEN OLD.expired_at IS NULL AND NEW.expired_at IS NOT NULL\n                                  AND NEW.superseded_by IS NOT NULL THEN 'SUPERSEDE'\n                             WHEN OLD.expired_at IS NULL AND NEW.expired_at IS NOT NULL\n                                  THEN 'DELETE'\n                             WHEN OLD.memory_type IS DISTINCT FROM NEW.memory_type\n                                  THEN 'UPDATE'\n                             WHEN OLD.trait_stage IS DISTINCT FROM NEW.trait_stage\n                                  THEN 'STAGE_CHANGE'\n                             ELSE 'UPDATE' END,\n                        OLD.content, NEW.content, OLD.metadata, NEW.metadata, actor);\n                RETURN NEW;\n                END;", hash='72f5d6d71df7eef5bc0645b8b6fe3013f0ed0ccf', operation='UPDATE', pgid='pgtrigger_memories_audit_update_4eb15', table='memories', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memory',
            trigger=pgtrigger.compiler.Trigger(name='memories_audit_delete', sql=pgtrigger.compiler.UpsertTriggerSql(func="\nDECLARE\n    actor text := coalesce(nullif(current_setting('neuromem.actor', true), ''), 'system');\n    moving text := coalesce(current_setting('neuromem.moving', true), '');\n    forgetting text := coalesce(current_setting('neuromem.forgetting', true), '');\nBEGIN\n                IF moving = OLD.id::text THEN\n                    RETURN OLD;\n                END IF;\n                INSERT INTO memory_history\n                    (memory_id, memory_type, event, old_content, old_metadata, actor)\n                VALUES (OLD.id, OLD.memory_type, 'DELETE', OLD.content, OLD.metadata, actor);\n                RETURN OLD;\n                END;", hash='6e5e795a89ea049b52f52ff913ff48097520b8f0', operation='DELETE', pgid='pgtrigger_memories_audit_delete_18184', table='memories', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memoryhistory',
            trigger=pgtrigger.compiler.Trigger(name='history_append_only', sql=pgtrigger.compiler.UpsertTriggerSql(condition='WHEN (NOT (\n(NEW.id, NEW.memory_id, NEW.memory_type, NEW.event, NEW.actor, NEW.created_at)\n    IS NOT DISTINCT FROM (OLD.id, OLD.memory_id, OLD.memory_type, OLD.event, OLD.actor,\n                          OLD.created_at)\nAND (NEW.old_content IS NULL OR NEW.old_content IS NOT DISTINCT FROM OLD.old_content)\nAND (NEW.new_content IS NULL OR NEW.new_content IS NOT DISTINCT FROM OLD.new_content)\nAND (NEW.old_metadata IS NULL OR NEW.old_metadata IS NOT DISTINCT FROM OLD.old_metadata)\nAND (NEW.new_metadata IS NULL OR NEW.new_metadata IS NOT DISTINCT FROM OLD.new_metadata)\n))', func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;", hash='ac0f916659d70d3f6b3011df0dff20247f015df8', operation='UPDATE', pgid='pgtrigger_history_append_only_b35ed', table='memory_history', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='memoryhistory',
            trigger=pgtrigger.compiler.Trigger(name='history_no_delete', sql=pgtrigger.compiler.UpsertTriggerSql(func="RAISE EXCEPTION 'pgtrigger: Cannot delete rows from % table', TG_TABLE_NAME;", hash='0d5057eea27e9bcec636af5397f523b2d609c14d', operation='DELETE', pgid='pgtrigger_history_no_delete_1522f', table='memory_history', when='BEFORE')),
        ),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveConstraint(model_name='memoryhistory', name='chk_history_event'),
                migrations.AddConstraint(
                    model_name='memoryhistory',
                    constraint=models.CheckConstraint(condition=models.Q(('event__in', ['ADD', 'UPDATE', 'DELETE', 'SUPERSEDE', 'STAGE_CHANGE', 'FORGET'])), name='chk_history_event'),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    sql=[
                        "ALTER TABLE memory_history DROP CONSTRAINT chk_history_event",
                        "ALTER TABLE memory_history ADD CONSTRAINT chk_history_event CHECK (event IN"
                        " ('ADD', 'UPDATE', 'DELETE', 'SUPERSEDE', 'STAGE_CHANGE', 'FORGET')) NOT VALID",
                        "ALTER TABLE memory_history VALIDATE CONSTRAINT chk_history_event",
                    ],
                    # Back: FORGET events already written stay (the history is append-only);
                    # the check holds for rows written from then on.
                    reverse_sql=[
                        "ALTER TABLE memory_history DROP CONSTRAINT chk_history_event",
                        "ALTER TABLE memory_history ADD CONSTRAINT chk_history_event CHECK (event IN"
                        " ('ADD', 'UPDATE', 'DELETE', 'SUPERSEDE', 'STAGE_CHANGE')) NOT VALID",
                    ],
                ),
            ],
        ),
        migrations.AddIndex(
            model_name='forgetrequest',
            index=models.Index(fields=['user_id', '-created_at'], name='idx_forget_requests_user'),
        ),
        migrations.AddIndex(
            model_name='forgetrequest',
            index=models.Index(fields=['-created_at', '-id'], name='idx_forget_requests_recent'),
        ),
        migrations.AddConstraint(
            model_name='forgetrequest',
            constraint=models.CheckConstraint(condition=models.Q(('via__in', ['conversation', 'api', 'mcp', 'admin'])), name='chk_forget_via'),
        ),
    ]
