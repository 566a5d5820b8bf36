"""Recall's relevance floor for the vector side, calibrated per query.

A semantic model's cosine similarities crowd together and move with the question: the same
model scores every "the user …" fact high for any "What … the user …?" question, related or
not, and a Chinese question scores everything higher than an English one. A fixed floor cannot
separate them. So each query is first compared with a fixed set of background memories that
answer nothing in particular (memories/data/relevance_background.txt: facts about a user,
remarks and requests, in English and Chinese). A stored memory found by its vector alone is
recalled only if it is more similar to the query than the RECALL_NOISE_QUANTILE of those;
one that also holds a word of the query (the text side agrees) needs only the lower
RECALL_AGREEMENT_QUANTILE; both plus RECALL_RELEVANCE_MARGIN. The settings come from the
quality benchmark (docs/recall.md).
"""

import logging
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings

from memories.embeddings import EmbeddingError, EmbeddingProvider, embedding_provider

log = logging.getLogger("neuromem.recall")

BACKGROUND_FILE = Path(__file__).parent / "data" / "relevance_background.txt"


def background_sentences() -> list[str]:
    return [line.strip() for line in BACKGROUND_FILE.read_text().splitlines() if line.strip()]


@cache
def _background(model_id: str, provider: EmbeddingProvider) -> np.ndarray:
    """Embedded once per process and model (a few hundred ms for the slowest local model)."""
    return np.asarray(provider.embed(background_sentences()), dtype=np.float32)


@dataclass(frozen=True)
class SimilarityFloors:
    alone: float  # for a memory found by its vector alone
    agreeing: float  # for one that also holds a word of the query


def similarity_floors(query_vector: np.ndarray) -> SimilarityFloors | None:
    """The cosine similarities a memory must reach to be recalled by its vector for this
    query; None when the provider cannot embed the background (recall goes by text alone)."""
    provider = embedding_provider()
    try:
        background = _background(provider.model_id, provider)
    except EmbeddingError:
        log.warning("recall without the vector side: no background to calibrate", exc_info=True)
        return None
    similarities = background @ np.asarray(query_vector, dtype=np.float32)
    alone, agreeing = np.quantile(
        similarities, [settings.RECALL_NOISE_QUANTILE, settings.RECALL_AGREEMENT_QUANTILE]
    )
    margin, floor = settings.RECALL_RELEVANCE_MARGIN, settings.RECALL_MIN_SIMILARITY
    return SimilarityFloors(
        alone=max(float(alone) + margin, floor), agreeing=max(float(agreeing) + margin, floor)
    )
