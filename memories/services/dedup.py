"""Near duplicates: which current memory a new one is so similar to that it supersedes it (the
UPDATE of the operation model; seed 002 §5.4: similar above the threshold, other content).

Compared by words and by meaning, each where it can be had without slowing the write
(docs/architecture.md, "Near duplicates by words, then by meaning"):

- **Inside the write, by words**: every new memory's lexical vector (the hashing provider's,
  microseconds a text, computed by the write) against the user's DEDUP_WINDOW most recent
  current memories of its type, cosine above DEDUP_SIMILARITY. No model call, and it sees
  memories the worker has not embedded yet: a restatement written a second ago is caught.
- **Inside the write, by meaning, when the client sends `embedding`**: the same query also
  compares it with the stored memories' embeddings (`embedding_status = 'ready'`), cosine
  above DEDUP_MEANING_SIMILARITY; within a batch, items that both carry one are compared too.
- **After the write, by meaning, in the worker** (`near_duplicates_by_meaning`, through
  writes.`duplicates_by_meaning_supersede`, which `memories_embed` calls once it has stored a
  batch's vectors): the write cannot know a
  memory's meaning without embedding it, and a model costs milliseconds a text, which would cap
  the ingest burst (≥ 1,000 memories/s, bench/ingest.py) far below its rate. So the write
  answers ADD, and the worker, once the memory has its embedding, looks for a current memory of
  the same user and type among the DEDUP_WINDOW most recent whose embedding is more similar
  than DEDUP_MEANING_SIMILARITY: of the two, the later supersedes the earlier, as the write
  would have done had it known. Traits are left to the reflection engine (their evidence,
  children and the decay view know them by id); the `hashing` provider embeds no meaning, and
  a rebuild's re-embedding is of memories written before: neither is confirmed.
"""

import uuid
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from pgvector import HalfVector

from memories.embeddings import lexical_provider, normalised
from memories.models import EmbeddingStatus, Memory, MemoryType
from memories.predicates import current_sql
from memories.vectors import halfvecs, vector_cursor

# A new memory is compared with the user's most recent current memories of its type, at most
# this many: a restatement is nearly always of something recent, and the check stays one
# bounded query however many memories the user holds (docs/write-path.md).
DEDUP_WINDOW = 500


def with_lexical_vectors(memories: list[Memory]) -> None:
    if not memories:
        return
    vectors = lexical_provider().embed([memory.content for memory in memories])
    for memory, vector in zip(memories, vectors, strict=True):
        memory.lexical_vector = vector


@dataclass(frozen=True)
class Candidate:
    """A new memory to check for near duplicates among the current ones: its lexical vector,
    and its embedding when the client sent one."""

    index: int
    user_id: str
    memory_type: str
    content_hash: str
    vector: np.ndarray
    embedding: np.ndarray | list[float] | None = None


def near_duplicates(candidates: list[Candidate]) -> dict[int, uuid.UUID]:
    """For each candidate, the stored current memory of the same user and type (other
    content) among the DEDUP_WINDOW most recent that is similar above DEDUP_SIMILARITY by
    words, or above DEDUP_MEANING_SIMILARITY by meaning (only when the candidate carries an
    embedding, against stored ones that are ready), if any; the one most above its threshold
    wins: index → memory id. One query for the batch. A NaN distance never counts."""
    if not candidates:
        return {}
    with vector_cursor() as cursor:
        cursor.execute(
            f"""
            SELECT i.n, m.id
            FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %b::halfvec[],
                        %b::halfvec[])
                 AS i(n, user_id, memory_type, content_hash, vector, embedding)
            CROSS JOIN LATERAL (
                SELECT id, margin FROM (
                    SELECT id, greatest(
                        %s - nullif(lexical_vector <=> i.vector, 'NaN'),
                        CASE WHEN i.embedding IS NOT NULL AND embedding_status = %s
                             THEN %s - nullif(embedding <=> i.embedding, 'NaN') END
                    ) AS margin
                    FROM (
                        SELECT id, lexical_vector, embedding, embedding_status, content_hash
                        FROM memories
                        WHERE user_id = i.user_id AND memory_type = i.memory_type
                          AND {current_sql("memories")}
                        ORDER BY created_at DESC LIMIT %s
                    ) recent
                    WHERE content_hash <> i.content_hash
                ) scored
                WHERE margin > 0
                ORDER BY margin DESC LIMIT 1
            ) m
            """,
            [
                [c.index for c in candidates],
                [c.user_id for c in candidates],
                [c.memory_type for c in candidates],
                [c.content_hash for c in candidates],
                halfvecs([c.vector for c in candidates]),
                [None if c.embedding is None else HalfVector(c.embedding) for c in candidates],
                1.0 - settings.DEDUP_SIMILARITY,  # the largest cosine distance that counts
                EmbeddingStatus.READY.value,
                1.0 - settings.DEDUP_MEANING_SIMILARITY,
                DEDUP_WINDOW,
            ],
            binary=True,
        )
        return dict(cursor.fetchall())


def near_duplicates_in_batch(candidates: list[Candidate]) -> dict[int, int]:
    """Within one batch, the latest earlier item (same user and type, other content) each
    candidate nearly duplicates, by words or (when both carry an embedding) by meaning: index
    → earlier index. Two near duplicates in one batch are then handled as two separate writes
    would be: the later supersedes the earlier."""
    groups: dict[tuple[str, str], list[Candidate]] = {}
    for candidate in candidates:
        groups.setdefault((candidate.user_id, candidate.memory_type), []).append(candidate)
    found: dict[int, int] = {}
    for group in groups.values():
        vectors = np.stack([candidate.vector for candidate in group])
        similar = vectors @ vectors.T > settings.DEDUP_SIMILARITY
        embedded = [n for n, candidate in enumerate(group) if candidate.embedding is not None]
        if len(embedded) > 1:
            meaning = normalised([group[n].embedding for n in embedded])
            close = meaning @ meaning.T > settings.DEDUP_MEANING_SIMILARITY
            similar[np.ix_(embedded, embedded)] |= close
        similar = np.tril(similar, k=-1)
        for position, row in enumerate(similar):
            for earlier in reversed(np.flatnonzero(row)):
                if group[earlier].content_hash != group[position].content_hash:
                    found[group[position].index] = group[int(earlier)].index
                    break
    return found


def near_duplicates_by_meaning(memory_ids: list[uuid.UUID]) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """The worker's confirmation: for each of these memories that is current, embedded and not
    a trait, the current memory of the same user and type (other content) among the
    DEDUP_WINDOW most recent, embedded too, whose embedding is the most similar above
    DEDUP_MEANING_SIMILARITY, if any: (memory id, near duplicate's id) pairs, the most similar
    first. Either may be the earlier: a memory embedded after a later near duplicate of it is
    still found. A NaN distance never counts (NaN sorts above every number).

    One query: each (user, type) window is read once for all the batch's memories in it, and
    each vector in it taken out of TOAST once (`l2_normalize`, which leaves the cosine as it
    is), not once per comparison (timing: docs/benchmarks.md, "Numbers behind the design
    notes")."""
    if not memory_ids:
        return []
    with vector_cursor() as cursor:
        cursor.execute(
            f"""
            WITH new AS MATERIALIZED (
                SELECT n.id, n.user_id, n.memory_type, n.content_hash,
                       l2_normalize(n.embedding) AS embedding
                FROM memories n
                WHERE n.id = ANY(%(ids)s) AND n.memory_type <> %(trait)s
                  AND n.embedding_status = %(ready)s AND {current_sql("n")}
            ), recent AS MATERIALIZED (
                SELECT w.* FROM (SELECT DISTINCT user_id, memory_type FROM new) g
                CROSS JOIN LATERAL (
                    SELECT id, user_id, memory_type, content_hash,
                           l2_normalize(embedding) AS embedding
                    FROM (
                        SELECT id, user_id, memory_type, content_hash, embedding,
                               embedding_status
                        FROM memories
                        WHERE user_id = g.user_id AND memory_type = g.memory_type
                          AND {current_sql("memories")}
                        ORDER BY created_at DESC LIMIT %(window)s
                    ) window_rows
                    WHERE embedding_status = %(ready)s
                ) w
            )
            SELECT new_id, other_id FROM (
                SELECT DISTINCT ON (n.id) n.id AS new_id, r.id AS other_id,
                       r.embedding <=> n.embedding AS distance
                FROM new n
                JOIN recent r ON r.user_id = n.user_id AND r.memory_type = n.memory_type
                WHERE r.id <> n.id AND r.content_hash <> n.content_hash
                ORDER BY n.id, 3
            ) nearest
            WHERE distance < %(max_distance)s
            ORDER BY distance, new_id
            """,
            {
                "ids": list(memory_ids),
                "window": DEDUP_WINDOW,
                "ready": EmbeddingStatus.READY.value,
                "trait": MemoryType.TRAIT.value,
                "max_distance": 1.0 - settings.DEDUP_MEANING_SIMILARITY,
            },
        )
        return [(new_id, other_id) for new_id, other_id in cursor.fetchall()]
