"""The text side's index filter: which memories can reach the text floor (docs/recall.md).

Recall's text side ranks the memories holding at least RECALL_MIN_TEXT_COVERAGE of the query's
lexemes. Asking the GIN index for any one of them, as `neuromem_search_query` does, hands a
big user's recall thousands of rows to read and score when the words are common (2,800 of the
benchmark's heavy user's 20,000 for a four-word query). `neuromem_search_candidates` asks for
any two of them instead whenever the floor needs two or more, so the index itself drops most
of the rows that could not pass; the exact floor is still checked row by row.

Pairs, not the exact "k of n" combinations: GIN checks every combination against every row
holding any of the words, and that check grows with their number. On the benchmark's heavy
user (counting the matches): 8 lexemes as pairs (28) 6 ms, as fours (70) 83 ms.
Past 8 lexemes (45+ pairs) it no longer pays, and the query falls back to any one lexeme.
"""

from django.db import migrations

FUNCTION_SQL = """
CREATE OR REPLACE FUNCTION neuromem_search_candidates(query text, min_share float8)
RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    WITH operands AS (  -- the query's lexemes, quoted as tsquery operands, distinct
        SELECT coalesce(array_agg(DISTINCT operand ORDER BY operand), '{}') AS o
        FROM unnest(string_to_array(
            plainto_tsquery('english'::regconfig, neuromem_search_text(query, true))::text, ' & '
        )) AS operand
    )
    SELECT CASE
        WHEN cardinality(o) NOT BETWEEN 2 AND 8 OR 1.0 / cardinality(o) >= min_share
            THEN neuromem_search_query(query)
        ELSE (SELECT string_agg(o[i] || ' & ' || o[j], ' | ' ORDER BY i, j)::tsquery
              FROM generate_subscripts(o, 1) AS i, generate_subscripts(o, 1) AS j
              WHERE i < j)
    END
    FROM operands
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0005_user_indexes_beat_entry")]

    operations = [
        migrations.RunSQL(
            FUNCTION_SQL, "DROP FUNCTION IF EXISTS neuromem_search_candidates(text, float8);"
        )
    ]
