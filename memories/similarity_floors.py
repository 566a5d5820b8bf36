"""Recall's relevance floor for the vector side, calibrated per query.

A semantic model's cosine similarities crowd together and move with the question: the same
model scores every "the user …" fact high for any "What … the user …?" question, related or
not, and a Chinese question scores everything higher than an English one. A fixed floor cannot
separate them. So each query is first compared with a fixed set of background memories that
answer nothing in particular (memories/data/relevance_background.txt: facts about a user,
remarks and requests, in English and Chinese, compared with memories of the same language). A
stored memory is recalled by its vector only if it is more similar to the query than the
RECALL_NOISE_QUANTILE of those, plus RECALL_RELEVANCE_MARGIN. The settings come from the
quality benchmark (docs/recall.md).
"""

import logging
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings

from memories.embeddings import EmbeddingError, EmbeddingProvider, embedding_provider

log = logging.getLogger("neuromem.recall")

BACKGROUND_FILE = Path(__file__).parent / "data" / "relevance_background.txt"
# Han, kana and hangul: a memory holding any is compared with the Chinese background, others
# with the English one (a model scores text of the question's own language higher: one floor
# for both would drop every answer in the other language).
CJK_CHARACTERS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
CJK = re.compile(f"[{CJK_CHARACTERS}]")


def background_sentences() -> list[str]:
    return [line.strip() for line in BACKGROUND_FILE.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class Background:
    latin: np.ndarray
    cjk: np.ndarray


@cache
def _background(provider: EmbeddingProvider) -> Background:
    """Embedded once per provider (a few hundred ms for the slowest local model)."""
    sentences = background_sentences()
    vectors = np.asarray(provider.embed(sentences), dtype=np.float32)
    is_cjk = np.array([bool(CJK.search(sentence)) for sentence in sentences])
    return Background(latin=vectors[~is_cjk], cjk=vectors[is_cjk])


@dataclass(frozen=True)
class SimilarityFloors:
    """Per language of the memory."""

    floor_latin: float
    floor_cjk: float


def similarity_floors(
    query_vector: np.ndarray, quantile: float | None = None
) -> SimilarityFloors | None:
    """The cosine similarity a memory must reach to be recalled by its vector for this query
    (above the `quantile` of the background's, RECALL_NOISE_QUANTILE unless given); None when
    the provider cannot embed the background (recall goes by text alone)."""
    provider = embedding_provider()
    try:
        background = _background(provider)
    except EmbeddingError:
        log.warning("recall without the vector side: no background to calibrate", exc_info=True)
        return None
    query = np.asarray(query_vector, dtype=np.float32)
    level = settings.RECALL_NOISE_QUANTILE if quantile is None else quantile

    def floor(sentences: np.ndarray) -> float:
        noise = float(np.quantile(sentences @ query, level))
        return max(noise + settings.RECALL_RELEVANCE_MARGIN, settings.RECALL_MIN_SIMILARITY)

    return SimilarityFloors(floor_latin=floor(background.latin), floor_cjk=floor(background.cjk))


def topic_similarity(quantile: float | None = None) -> float | None:
    """The cosine similarity above which two memories are taken to be about one topic: above
    the `quantile` (RECALL_TOPIC_QUANTILE unless given) of pairs of background memories, which
    answer nothing in particular (so the same rule holds for each provider's own scale). None
    when the provider cannot embed the background."""
    try:
        return _pair_quantile(
            embedding_provider(),
            settings.RECALL_TOPIC_QUANTILE if quantile is None else quantile,
        )
    except EmbeddingError:
        log.warning("recall without the newer-first rule: no background", exc_info=True)
        return None


@cache
def _pair_quantile(provider: EmbeddingProvider, quantile: float) -> float:
    background = _background(provider)
    # Pairs in one language only: a model scores pairs across languages lower.
    pairs = [
        (vectors @ vectors.T)[np.triu_indices(len(vectors), 1)]
        for vectors in (background.latin, background.cjk)
    ]
    return float(np.quantile(np.concatenate(pairs), quantile))
