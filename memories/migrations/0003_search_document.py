"""Full text that works for Chinese, Japanese and Korean as well as Latin text.

PostgreSQL's parsers do not segment CJK: `to_tsvector` turns "我喜欢喝咖啡" into one lexeme,
so a word in the middle of a sentence is never found. `neuromem_search_text` rewrites each
run of CJK characters as its overlapping bigrams (and, in documents, its single characters),
the way Lucene's CJK analyzer does, and leaves everything else to the `english` configuration
(stemming, stop words). The `search_vector` column is generated from `content` by the
database, so every write path (ORM, COPY, raw SQL, admin) keeps it in step; see
docs/recall.md for why this over jieba or pg_trgm.
"""

import django.contrib.postgres.search
from django.db import migrations, models

CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
# Characters whose bigrams are grammar or question words ("我的", "什么", "是不"): dropped from
# queries (not from documents), unless nothing would be left of the query's CJK run.
CJK_QUERY_STOP = "的了是在我你他她它们吗呢吧啊么什哪谁怎"

FUNCTIONS_SQL = rf"""
CREATE OR REPLACE FUNCTION neuromem_search_text(content text, for_query boolean)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN content !~ '[{CJK}]' THEN content ELSE (  -- no CJK: nothing to cut
    SELECT coalesce(string_agg(
        CASE
            WHEN run !~ '^[{CJK}]' OR char_length(run) = 1 THEN run
            WHEN for_query THEN coalesce(
                (SELECT string_agg(gram, ' ') FROM (
                    SELECT substr(run, i, 2) AS gram
                    FROM generate_series(1, char_length(run) - 1) AS i) grams
                 WHERE gram !~ '[{CJK_QUERY_STOP}]'),
                (SELECT string_agg(substr(run, i, 2), ' ')
                 FROM generate_series(1, char_length(run) - 1) AS i))
            ELSE (SELECT string_agg(substr(run, i, 2), ' ')
                  FROM generate_series(1, char_length(run) - 1) AS i)
                 || ' ' || regexp_replace(run, '(.)', '\1 ', 'g')
        END, ' ' ORDER BY n), '')
    FROM regexp_matches(content, '[{CJK}]+|[^{CJK}]+', 'g') WITH ORDINALITY AS runs(parts, n),
         LATERAL (SELECT parts[1] AS run) AS part
    ) END
$$;

CREATE OR REPLACE FUNCTION neuromem_search_document(content text)
RETURNS tsvector LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT to_tsvector('english'::regconfig, neuromem_search_text(content, false))
$$;

-- The query's lexemes, distinct; their OR is the text-side query, and the share of them a
-- memory holds is its text coverage (the text side's relevance floor).
CREATE OR REPLACE FUNCTION neuromem_search_lexemes(query text)
RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT tsvector_to_array(to_tsvector('english'::regconfig, neuromem_search_text(query, true)))
$$;

-- Any of the query's lexemes (plainto_tsquery quotes them; its AND becomes OR).
CREATE OR REPLACE FUNCTION neuromem_search_query(query text)
RETURNS tsquery LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT replace(
        plainto_tsquery('english'::regconfig, neuromem_search_text(query, true))::text,
        ' & ', ' | ')::tsquery
$$;
"""

DROP_FUNCTIONS_SQL = """
DROP FUNCTION IF EXISTS neuromem_search_query(text);
DROP FUNCTION IF EXISTS neuromem_search_lexemes(text);
DROP FUNCTION IF EXISTS neuromem_search_document(text);
DROP FUNCTION IF EXISTS neuromem_search_text(text, boolean);
"""

COLUMN_SQL = """
ALTER TABLE memories ADD COLUMN IF NOT EXISTS search_vector tsvector NOT NULL
    GENERATED ALWAYS AS (neuromem_search_document(content)) STORED;
CREATE INDEX IF NOT EXISTS idx_memories_search ON memories USING gin (search_vector);
-- Superseded by idx_memories_search (they indexed the unsegmented 'simple' parse).
DROP INDEX IF EXISTS idx_fact_fts;
DROP INDEX IF EXISTS idx_episodic_fts;
"""

DROP_COLUMN_SQL = """
CREATE INDEX IF NOT EXISTS idx_fact_fts ON memories_fact USING gin (to_tsvector('simple', content));
CREATE INDEX IF NOT EXISTS idx_episodic_fts
    ON memories_episodic USING gin (to_tsvector('simple', content));
DROP INDEX IF EXISTS idx_memories_search;
ALTER TABLE memories DROP COLUMN IF EXISTS search_vector;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_write_path_audit")]

    operations = [
        migrations.RunSQL(FUNCTIONS_SQL, DROP_FUNCTIONS_SQL),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(COLUMN_SQL, DROP_COLUMN_SQL)],
            state_operations=[
                migrations.AddField(
                    model_name="memory",
                    name="search_vector",
                    field=models.GeneratedField(
                        expression=models.Func(
                            models.F("content"), function="neuromem_search_document"
                        ),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                        db_persist=True,
                    ),
                ),
            ],
        ),
    ]
