"""Messages get the memories' search document (`search_vector`, generated from `content` by the
same function as memories', migration 0003), and an index of each assistant message's words
under its end user: recall's text side reads a conversation's episode with the whole assistant
message it answers, of which the episode quotes only the end, and finds it by that message's
words (docs/recall.md). Adding a stored generated column rewrites `conversations` once.

The index keys are "<user_id> <lexeme>" (`neuromem_user_terms`; a user id holds no whitespace):
one user's messages holding a word are one posting list, however many users share the table and
the word (PostgreSQL's GIN has no user column without the btree_gin extension)."""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models

SEARCH_SQL = """
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS search_vector tsvector NOT NULL
    GENERATED ALWAYS AS (neuromem_search_document(content)) STORED;

CREATE OR REPLACE FUNCTION neuromem_user_terms(user_id text, document tsvector)
RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_agg(user_id || ' ' || lexeme) FROM unnest(tsvector_to_array(document)) lexeme
$$;

CREATE INDEX IF NOT EXISTS idx_assistant_message_terms ON conversations
    USING gin (neuromem_user_terms(user_id, search_vector)) WHERE role = 'assistant';
"""

DROP_SEARCH_SQL = """
DROP INDEX IF EXISTS idx_assistant_message_terms;
DROP FUNCTION IF EXISTS neuromem_user_terms(text, tsvector);
ALTER TABLE conversations DROP COLUMN IF EXISTS search_vector;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0018_graph")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(SEARCH_SQL, DROP_SEARCH_SQL)],
            state_operations=[
                migrations.AddField(
                    model_name="conversationmessage",
                    name="search_vector",
                    field=models.GeneratedField(
                        expression=models.Func(
                            models.F("content"), function="neuromem_search_document"
                        ),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                        db_persist=True,
                    ),
                ),
                migrations.AddIndex(
                    model_name="conversationmessage",
                    index=django.contrib.postgres.indexes.GinIndex(
                        models.Func(
                            models.F("user_id"),
                            models.F("search_vector"),
                            function="neuromem_user_terms",
                            output_field=ArrayField(models.TextField()),
                        ),
                        condition=models.Q(role="assistant"),
                        name="idx_assistant_message_terms",
                    ),
                ),
            ],
        ),
    ]
