"""The assistant messages' word index (idx_assistant_message_terms, migration 0019) leaves out a
word whose key, "<user_id> <lexeme>", would be too large for a GIN entry: a long user id in a
script of several bytes a letter and a token of a couple of thousand letters (a base64 blob in
an answer) failed the message's write. Such a word finds no message by the index; nothing real
is asked by it. The index is rebuilt for the function's new answer (it reads assistant messages
only, and blocks writes to `conversations` while it runs).

Backwards: the function as before, the index rebuilt again."""

from django.db import migrations

# Well under GIN's largest entry (about 2.7 kB on 8 kB pages, its header included).
KEY_MAX_BYTES = 2000

FUNCTION_SQL = """
CREATE OR REPLACE FUNCTION neuromem_user_terms(user_id text, document tsvector)
RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array_agg(user_id || ' ' || lexeme) FROM unnest(tsvector_to_array(document)) lexeme
    {where}
$$;
REINDEX INDEX idx_assistant_message_terms;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0020_trait_ranges")]

    operations = [
        migrations.RunSQL(
            FUNCTION_SQL.format(
                where=f"WHERE octet_length(user_id) + 1 + octet_length(lexeme) <= {KEY_MAX_BYTES}"
            ),
            FUNCTION_SQL.format(where=""),
        )
    ]
