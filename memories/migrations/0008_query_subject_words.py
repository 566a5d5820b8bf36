"""Questions about "the user" do not match every memory by that word.

Facts are written about the user in the third person ("The user lives in Hangzhou", 用户住在杭州),
and agents ask about them the same way ("Where does the user live?"), so "user" / 用户 would give
every fact half the coverage of a two-word question, enough for the text side's floor: a
question about something never said recalled every fact. In queries (not in stored documents)
these subject words are dropped before the terms are made; a query of nothing else is answered
by the vector side.

Without 用户, a Chinese question is often only grammar and question words (住在哪里): when every
bigram of a CJK run holds one of those characters, the query now keeps the run's other single
characters (住; documents index single characters too) before falling back to every bigram.
"""

import importlib

from django.db import migrations

search_document = importlib.import_module("memories.migrations.0003_search_document")
search_candidates = importlib.import_module("memories.migrations.0006_search_candidates")

# "user", "users", "user's" (any case, either apostrophe), and 用户. Quotes doubled for SQL.
SUBJECT_WORDS = r"\musers?(?:[''’]s)?\M|用户"

CJK = search_document.CJK
# 里 as in 哪里 / 这里: a question word's half once the bigrams are gone.
CJK_QUERY_STOP = search_document.CJK_QUERY_STOP + "里"


def run_grams(size: int) -> str:
    return (
        f"SELECT substr(run, i, {size}) AS gram"
        f" FROM generate_series(1, char_length(run) - {size - 1}) AS i"
    )


CANDIDATES_SQL = search_candidates.FUNCTION_SQL.replace(
    "neuromem_search_text(query, true)", "neuromem_search_query_text(query)"
)

FUNCTIONS_SQL = rf"""
CREATE OR REPLACE FUNCTION neuromem_search_text(content text, for_query boolean)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN content !~ '[{CJK}]' THEN content ELSE (  -- no CJK: nothing to cut
    SELECT coalesce(string_agg(
        CASE
            WHEN run !~ '^[{CJK}]' OR char_length(run) = 1 THEN run
            WHEN for_query THEN coalesce(
                (SELECT string_agg(gram, ' ') FROM ({run_grams(2)}) grams
                 WHERE gram !~ '[{CJK_QUERY_STOP}]'),
                (SELECT string_agg(gram, ' ') FROM ({run_grams(1)}) grams
                 WHERE gram !~ '[{CJK_QUERY_STOP}]'),
                (SELECT string_agg(gram, ' ') FROM ({run_grams(2)}) grams))
            ELSE (SELECT string_agg(gram, ' ') FROM ({run_grams(2)}) grams)
                 || ' ' || regexp_replace(run, '(.)', '\1 ', 'g')
        END, ' ' ORDER BY n), '')
    FROM regexp_matches(content, '[{CJK}]+|[^{CJK}]+', 'g') WITH ORDINALITY AS runs(parts, n),
         LATERAL (SELECT parts[1] AS run) AS part
    ) END
$$;

CREATE OR REPLACE FUNCTION neuromem_search_query_text(query text)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT neuromem_search_text(regexp_replace(query, '{SUBJECT_WORDS}', ' ', 'gi'), true)
$$;

CREATE OR REPLACE FUNCTION neuromem_search_lexemes(query text)
RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT tsvector_to_array(to_tsvector('english'::regconfig, neuromem_search_query_text(query)))
$$;

CREATE OR REPLACE FUNCTION neuromem_search_query(query text)
RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT replace(
        plainto_tsquery('english'::regconfig, neuromem_search_query_text(query))::text,
        ' & ', ' | ')::tsquery
$$;

{CANDIDATES_SQL}
"""

REVERSE_SQL = f"""
{search_document.FUNCTIONS_SQL}
{search_candidates.FUNCTION_SQL}
DROP FUNCTION IF EXISTS neuromem_search_query_text(text);
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0007_lexical_vector")]

    operations = [migrations.RunSQL(FUNCTIONS_SQL, REVERSE_SQL)]
