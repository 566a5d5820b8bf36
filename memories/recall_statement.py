"""Recall's one SQL statement (docs/recall.md, "The statement"): the vector side per memory
type, the text side's documents ranked by BM25 over their candidates, the relevance floor,
reciprocal rank fusion and the boosts. memories/recall.py runs it."""

from datetime import datetime

from memories.hooks import trait_belief
from memories.models import Memory, MemoryType
from memories.predicates import (
    ANY_ACTIVITY,
    RRF_K,
    ActivityFilter,
    as_of_sql,
    current_sql,
    latest_sql,
    trait_stage_sql,
)
from memories.similarity_floors import CJK_CHARACTERS

TRAIT_STAGE = trait_stage_sql("m")
# BM25's customary term-frequency saturation and length normalisation.
BM25_K1 = 1.2
BM25_B = 0.75
# The least time between two turns of a conversation (see neighbour_episode_sql).
TURN_APART = "interval '1 second'"


def visible_sql(
    as_of: datetime | None,
    activity: ActivityFilter = ANY_ACTIVITY,
    alias: str = "m",
    *,
    history: bool = False,
) -> str:
    """What recall may return: current memories, or what was valid and known at `as_of`, or
    (`history`, for a question about the past) the latest version of every memory, values
    since invalidated included; of those, what `activity` lets through."""
    if as_of is not None:
        visible = as_of_sql(alias, "as_of")
    else:
        visible = latest_sql(alias) if history else current_sql(alias)
    return visible if activity == ANY_ACTIVITY else f"{visible} AND {activity.sql(alias)}"


def _branch_filters(memory_type: str) -> str:
    # memory_type is one of MemoryType's values (validated), written as a literal so the
    # planner prunes to one partition and can use that partition's indexes.
    if memory_type not in MemoryType.values:
        raise ValueError(f"unknown memory type {memory_type!r}")
    # Traits: at a recalled stage and still believed (decayed until %(now)s above the
    # minimum; a trait written with no confidence has nothing to decay).
    trait_filter = (
        f" AND {TRAIT_STAGE} = ANY(%(trait_stages)s) AND (m.trait_confidence IS NULL"
        f" OR {trait_belief().decayed_sql('m')} > %(min_trait_confidence)s)"
        if memory_type == "trait"
        else ""
    )
    return f"m.memory_type = '{memory_type}' AND m.user_id = %(user_id)s{trait_filter}"


def vector_branch_sql(memory_type: str, visible: str) -> str:
    """One memory type's nearest neighbours (the benchmark measures this against exact search)."""
    return f"""(
        SELECT m.id, m.memory_type, m.embedding <=> %(vector)b AS distance
        FROM memories m
        WHERE {_branch_filters(memory_type)} AND m.embedding_status = 'ready' AND {visible}
        ORDER BY m.embedding <=> %(vector)b
        LIMIT %(branch_limit)s)"""


def text_branch_sql(memory_type: str, visible: str, *, own_index: bool) -> str:
    """One memory type's memories holding enough of the query's words (the exact floor is
    checked after): through the user's own GIN index when they have one, else by matching each
    of the user's rows, found by their btree index. Not through the shared GIN index: it
    checks the query against every user's rows holding any of its words, which grows with the
    partition (docs/benchmarks.md, "Recall")."""
    # ts_match_vq is the function behind @@: the same match, but not one an index can take.
    match = (
        "m.search_vector @@ %(candidates)s::tsquery"
        if own_index
        else "ts_match_vq(m.search_vector, %(candidates)s::tsquery)"
    )
    return f"""(
        SELECT m.id, m.memory_type, m.search_vector, m.valid_at
        FROM memories m
        WHERE {_branch_filters(memory_type)} AND {match} AND {visible})"""


def relevant_sql(distance: str, alias: str) -> str:
    """Whether memory `alias`, at cosine `distance` from the query, is as similar as the
    relevance floor asks, which is per language of the memory (memories/similarity_floors.py)."""
    return f"""1 - nullif({distance}, 'NaN') >= CASE WHEN {alias}.content ~ '[{CJK_CHARACTERS}]'
                   THEN %(floor_cjk)s::float8 ELSE %(floor_latin)s::float8 END"""


def neighbour_episode_sql(alias: str, of: str, *, after: bool, visible: str) -> str:
    """The user's episode just after (or before) episode `of`, a second to %(context_gap)s
    from it: the next (or previous) turn of the same conversation, found on
    idx_episodic_temporal. Episodes dated within the same second are one write (a batch of
    notes stored together), not turns answering each other."""
    a, at = alias, f"{of}.valid_at"
    within = (
        f"{a}.valid_at >= {at} + {TURN_APART} AND {a}.valid_at <= {at} + %(context_gap)s"
        if after
        else f"{a}.valid_at <= {at} - {TURN_APART} AND {a}.valid_at >= {at} - %(context_gap)s"
    )
    return f"""
        SELECT {a}.id, {a}.memory_type, {a}.search_vector, {a}.valid_at
        FROM memories {a}
        WHERE {a}.memory_type = 'episodic' AND {a}.user_id = %(user_id)s AND {within}
          AND {visible}
        ORDER BY {a}.valid_at{"" if after else " DESC"}
        LIMIT 1"""


def single_turn_sql(alias: str) -> str:
    """An episode written on its own (the memories API), not from a conversation's message:
    the conversation path's episodes already quote the assistant turn they answer."""
    return f"""{alias}.memory_type = 'episodic' AND NOT EXISTS (
        SELECT 1 FROM memory_sources s
        WHERE s.memory_id = {alias}.id AND s.conversation_id IS NOT NULL)"""


def adjacent_message_sql(alias: str, of: str, *, after: bool) -> str:
    """The message just after (or before) message `of` in its session, as `alias`: its id,
    role and search document, found on idx_conversations_session."""
    a = alias
    return f"""
        SELECT {a}.id, {a}.role, {a}.search_vector FROM conversations {a}
        WHERE {a}.session_id = {of}.session_id
          AND {a}.created_at {">" if after else "<"} {of}.created_at
        ORDER BY {a}.created_at{"" if after else " DESC"}
        LIMIT 1"""


def answered_message_sql(alias: str) -> str:
    """The assistant message that a conversation's episode `alias` answers: the message just
    before the episode's own in its session, when the assistant's (the one it quotes the end
    of). None for an episode written on its own; not probed for other memory types (the
    guard on `alias` is a one-time filter)."""
    return f"""
        SELECT a.search_vector
        FROM memory_sources s
        JOIN conversations u ON u.id = s.conversation_id
        CROSS JOIN LATERAL ({adjacent_message_sql("b", "u", after=False)}) a
        WHERE s.memory_id = {alias}.id AND {alias}.memory_type = 'episodic'
          AND a.role = 'assistant'
        LIMIT 1"""


def answering_episodes_sql(visible: str) -> str:
    """The user's episodes answering an assistant message that holds the query's words: the
    user message right after it in its session, kept as episode `e`. The messages are found
    on idx_assistant_message_terms, by "<user_id> <lexeme>" keys (migration 0019)."""
    return f"""
        SELECT DISTINCT ON (e.id) e.id, e.memory_type, e.search_vector, e.valid_at
        FROM conversations a
        CROSS JOIN LATERAL ({adjacent_message_sql("n", "a", after=True)}) u
        JOIN memory_sources s ON s.conversation_id = u.id
        JOIN memories e ON e.id = s.memory_id AND e.memory_type = 'episodic'
        WHERE neuromem_user_terms(a.user_id, a.search_vector) && %(user_terms)s::text[]
          AND a.role = 'assistant' AND a.user_id = %(user_id)s AND u.role = 'user'
          AND ts_match_vq(a.search_vector, %(candidates)s::tsquery)
          AND e.user_id = %(user_id)s AND {visible}"""


def text_documents_sql(
    as_of: datetime | None,
    activity: ActivityFilter,
    *,
    turn_before: bool,
    answered: bool,
    history: bool = False,
) -> str:
    """The text side's documents: what matched, and what reading episodes in context adds.
    `turn_before`: the single-turn episodes right after matched ones join (the question a turn
    answers may hold the words the turn lacks), each such episode read with the one before it.
    `answered`: a conversation's episode is read with the whole assistant message it answers
    (it quotes only its end), and the episodes answering a message holding the query's words
    join. Read, never stored: the turn before is its own row, the message is erased with its
    content, so superseding, invalidating or forgetting takes them out of the document too."""
    joined = ["SELECT f.id, f.memory_type, f.search_vector, f.valid_at FROM text_found f"]
    document = "d.search_vector"
    laterals = ""
    if turn_before:
        following = neighbour_episode_sql(
            "n", "f", after=True, visible=visible_sql(as_of, activity, "n", history=history)
        )
        # The guard on `d` inside the subquery gates it (a one-time filter): no probe for a
        # fact, nor for a session's episode.
        before = neighbour_episode_sql(
            "p",
            "d",
            after=False,
            visible=f"{visible_sql(as_of, alias='p', history=history)} AND {single_turn_sql('d')}",
        )
        joined.append(f"""
            SELECT DISTINCT ON (n.id) n.*
            FROM text_found f CROSS JOIN LATERAL ({following}) n
            WHERE f.memory_type = 'episodic' AND n.id NOT IN (SELECT id FROM text_found)
              AND {single_turn_sql("n")}""")
        document += " || coalesce(p.search_vector, ''::tsvector)"
        laterals += f"\n        LEFT JOIN LATERAL ({before}) p ON true"
    if answered:
        answering = answering_episodes_sql(visible_sql(as_of, activity, "e", history=history))
        joined.append(f"""
            SELECT * FROM ({answering}) e
            WHERE e.id NOT IN (SELECT id FROM text_found)""")
        # The message's words the episode does not hold already (the end it quotes, and
        # anything the user repeated): counted once.
        document += (
            " || coalesce(ts_delete(am.search_vector, tsvector_to_array(d.search_vector)),"
            " ''::tsvector)"
        )
        laterals += f"\n        LEFT JOIN LATERAL ({answered_message_sql('d')}) am ON true"
    union = "\n            UNION ALL\n".join(joined)
    return f"""
        SELECT d.id, d.memory_type, {document} AS search_vector
        FROM (
            {union}
        ) d{laterals}"""


# What a hit carries of its memory: every column but those only for searching.
RECALLED_FIELDS = [
    field
    for field in Memory._meta.concrete_fields
    if field.attname not in ("embedding", "search_vector", "lexical_vector")
]


def recall_sql(
    *,
    memory_types: tuple[str, ...],
    as_of: datetime | None,
    vector: bool,
    text: bool,
    text_indexed_types: set[str],
    activity: ActivityFilter = ANY_ACTIVITY,
    turn_before: bool = False,
    answered: bool = False,
    history: bool = False,
) -> str:
    """`vector` / `text`: whether there is a query vector / are query lexemes;
    `text_indexed_types`: the memory types for which the user has a text index of their own;
    `turn_before`, `answered`: how the text side reads episodes in context
    (`text_documents_sql`); `history`: values since invalidated too (`visible_sql`)."""
    visible = visible_sql(as_of, activity, history=history)
    # The hits' memory rows come with the scores (m_<column>: id, importance... are also score
    # columns), saving a second query over four partitions.
    columns = [field.column for field in RECALLED_FIELDS]
    memory_columns = ", ".join(f'm."{column}" AS "m_{column}"' for column in columns)
    recalled_columns = ", ".join(f'"m_{column}"' for column in columns)
    branches = (
        " UNION ALL ".join(vector_branch_sql(memory_type, visible) for memory_type in memory_types)
        if vector
        else "SELECT NULL::uuid AS id, NULL::text AS memory_type, NULL::float8 AS distance LIMIT 0"
    )
    text_branches = (
        " UNION ALL ".join(
            text_branch_sql(memory_type, visible, own_index=memory_type in text_indexed_types)
            for memory_type in memory_types
        )
        if text
        else "SELECT NULL::uuid AS id, NULL::text AS memory_type, NULL::tsvector AS search_vector,"
        " NULL::timestamptz AS valid_at LIMIT 0"
    )
    text_documents = (
        text_documents_sql(
            as_of, activity, turn_before=turn_before, answered=answered, history=history
        )
        if (turn_before or answered) and text and "episodic" in memory_types
        else "SELECT id, memory_type, search_vector FROM text_found"
    )
    text_relevant = (
        f"""
        SELECT t.*, CASE WHEN m.embedding_status = 'ready'
                         THEN {relevant_sql("m.embedding <=> %(vector)b", "m")}
                    END AS relevant
        FROM text_side t JOIN memories m ON m.id = t.id AND m.memory_type = t.memory_type"""
        if vector
        else "SELECT t.*, NULL::boolean AS relevant FROM text_side t"
    )
    return f"""
    WITH vector_hits AS MATERIALIZED ({branches}),
    vector_side AS (
        -- A zero vector has no cosine: NaN, which PostgreSQL sorts above every number.
        SELECT h.id, h.memory_type, 1 - nullif(h.distance, 'NaN') AS similarity,
               row_number() OVER (ORDER BY h.distance, h.id) AS vector_rank,
               {relevant_sql("h.distance", "m")} AS relevant,
               -- By meaning a question is near other questions by its form, not by what it
               -- tells: a memory ending in one weighs less (docs/recall.md, "The score").
               %(vector_weight)s::float8 * CASE WHEN m.content ~ '[?？][[:space:]]*$'
                   THEN %(question_vector_weight)s::float8 ELSE 1 END AS weight
        FROM vector_hits h JOIN memories m ON m.id = h.id AND m.memory_type = h.memory_type
    ),
    text_found AS MATERIALIZED ({text_branches}),
    -- Each document built once: inlined, its expression would be evaluated again for its
    -- length, its coverage and the row.
    text_documents AS MATERIALIZED ({text_documents}),
    -- The text side's candidates: the documents holding at least the floor's share of the
    -- query's lexemes, with their length in lexemes; then each query lexeme they hold, with
    -- its frequency in the document and the number of candidates holding it.
    text_rows AS MATERIALIZED (
        SELECT c.id, c.memory_type, c.length, c.coverage,
               -- the document cut down to the query's lexemes, positions kept: unnesting
               -- it is cheaper than unnesting every lexeme of the document
               ts_delete(c.search_vector, tsvector_to_array(c.rest)) AS held
        FROM (
            SELECT t.id, t.memory_type, t.search_vector, r.rest,
                   length(t.search_vector)::float8 AS length,
                   (length(t.search_vector) - length(r.rest))::float8
                       / cardinality(%(lexemes)s::text[]) AS coverage
            FROM text_documents t
            -- OFFSET 0: computed once, not again in each expression using it
            CROSS JOIN LATERAL (
                SELECT ts_delete(t.search_vector, %(lexemes)s::text[]) AS rest OFFSET 0
            ) r
        ) c
        WHERE c.coverage >= %(candidate_coverage)s
    ),
    text_terms AS (
        SELECT r.id, cardinality(u.positions)::float8 AS frequency, r.length,
               count(*) OVER (PARTITION BY u.lexeme) AS holding
        FROM text_rows r CROSS JOIN LATERAL unnest(r.held) u
    ),
    -- BM25 over the candidates: a lexeme few of them hold weighs more than one most hold
    -- (the candidates' own statistics; docs/recall.md).
    text_collection AS (
        SELECT count(*)::float8 AS documents, coalesce(avg(length), 1) AS mean_length
        FROM text_rows
    ),
    text_side AS (
        SELECT r.id, r.memory_type, r.coverage,
               row_number() OVER (ORDER BY s.bm25 DESC, r.id) AS text_rank
        FROM text_rows r
        JOIN (
            SELECT t.id,
                   sum(ln(1 + (c.documents - t.holding + 0.5) / (t.holding + 0.5))
                       * t.frequency * ({BM25_K1} + 1)
                       / (t.frequency + {BM25_K1} * (1 - {BM25_B}
                          + {BM25_B} * t.length / greatest(c.mean_length, 1)))) AS bm25
            FROM text_terms t CROSS JOIN text_collection c
            GROUP BY t.id
        ) s ON s.id = r.id
        ORDER BY s.bm25 DESC, r.id
        LIMIT %(branch_limit)s
    ),
    -- A text candidate passes the relevance floor by meaning too, found among the vector
    -- side's first rows or not.
    text_relevant AS ({text_relevant}),
    fused AS (
        SELECT coalesce(v.id, t.id) AS id, coalesce(v.memory_type, t.memory_type) AS memory_type,
               v.vector_rank, t.text_rank, v.similarity, t.coverage,
               coalesce(v.weight / ({RRF_K} + v.vector_rank), 0)
                 + coalesce(1.0 / ({RRF_K} + t.text_rank), 0) AS rrf_score
        FROM vector_side v FULL JOIN text_relevant t ON t.id = v.id
        WHERE v.relevant OR t.relevant OR coalesce(t.coverage, 0) >= %(min_coverage)s
    ),
    boosted AS (
        SELECT f.*, {memory_columns},
               -- decays with age, slower for emotionally arousing memories (arousal 0–1);
               -- the exponent stops at -700: exp() of less underflows, an error in SQL
               %(recency_weight)s * exp(-least(
                   greatest(extract(epoch FROM %(now)s - coalesce(m.valid_at, m.created_at)), 0)
                   / (%(recency_scale_seconds)s * (1 + a.arousal * %(arousal_slowdown)s)),
                   700)) AS recency,
               %(importance_weight)s * coalesce(m.importance, 0.5) AS importance,
               CASE WHEN m.memory_type <> 'trait' THEN 0
                    WHEN {TRAIT_STAGE} = 'core' THEN %(boost_core)s
                    WHEN {TRAIT_STAGE} = 'established' THEN %(boost_established)s
                    WHEN {TRAIT_STAGE} = 'emerging' THEN %(boost_emerging)s
                    ELSE 0 END AS trait_stage
        FROM fused f
        JOIN memories m ON m.id = f.id AND m.memory_type = f.memory_type
        CROSS JOIN LATERAL (
            -- bounded as numeric, which holds any JSON number: 1e400 is out of float8's
            -- range, and 5e-324 would underflow once multiplied
            SELECT CASE WHEN n.arousal IS NULL OR n.arousal < 1e-300 THEN 0
                        ELSE least(n.arousal, 1)::float8 END AS arousal
            FROM (SELECT CASE WHEN jsonb_typeof(m.metadata->'emotion'->'arousal') = 'number'
                              THEN (m.metadata->'emotion'->>'arousal')::numeric
                         END AS arousal) n
        ) a
    )
    SELECT vector_rank, text_rank, similarity, coverage, rrf_score::float8,
           recency, importance::float8, trait_stage::float8,
           (rrf_score * (1 + recency + importance + trait_stage))::float8 AS score,
           {recalled_columns}
    FROM boosted
    ORDER BY score DESC, id
    LIMIT %(limit)s
    """
