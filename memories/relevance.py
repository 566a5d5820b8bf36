"""Recall's relevance floor for the vector side, calibrated per query.

A semantic model's cosine similarities crowd together and move with the question: the same
model scores every "the user …" fact high for any "What … the user …?" question, related or
not, and a Chinese question scores everything higher than an English one. A fixed floor cannot
separate them. So each query is first compared with a fixed set of background memories that
answer nothing in particular (memories/data/relevance_background.txt: facts about a user,
remarks and requests, in English and Chinese); a stored memory is recalled by its vector only
if it is more similar to the query than the RECALL_NOISE_QUANTILE of those, plus
RECALL_RELEVANCE_MARGIN. Both settings come from the quality benchmark (docs/recall.md).
"""

import logging
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


def similarity_floor(query_vector: np.ndarray) -> float | None:
    """The cosine similarity a memory must reach to be recalled by its vector for this query;
    None when the provider cannot embed the background (then recall goes by text alone)."""
    provider = embedding_provider()
    try:
        background = _background(provider.model_id, provider)
    except EmbeddingError:
        log.warning("recall without the vector side: no background to calibrate", exc_info=True)
        return None
    noise = float(
        np.quantile(
            background @ np.asarray(query_vector, dtype=np.float32), settings.RECALL_NOISE_QUANTILE
        )
    )
    return max(noise + settings.RECALL_RELEVANCE_MARGIN, settings.RECALL_MIN_SIMILARITY)
