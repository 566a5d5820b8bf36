"""Embedding providers.

- `hashing` (default): offline and deterministic, no model to download. Character n-grams
  (1–3) hashed into EMBEDDING_DIM signed buckets, L2-normalised. Works for CJK (each Han
  character is a unigram, pairs of them bigrams) as for Latin text. Cheap enough to run inside
  the write, so the near-duplicate check has a vector at once.
- `openai`: any OpenAI-compatible `/embeddings` endpoint (base URL, key, model, timeout,
  retries). Remote, so it runs in the Celery task after commit.
"""

import re
import zlib
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Protocol

import numpy as np
from django.conf import settings

from neuromem_site.openai_compat import OpenAICompatibleClient, OpenAICompatibleError


class EmbeddingError(Exception):
    """The provider could not embed; the memory stays `pending` and the task retries."""


class EmbeddingProvider(Protocol):
    dimensions: int
    # True: cheap and local, computed in the write itself; False: computed by the task.
    inline: bool

    def embed(self, texts: list[str]) -> np.ndarray:
        """One float32 row per text."""


WORD_CHARACTERS = re.compile(r"\w+", re.UNICODE)


class HashingEmbeddingProvider:
    inline = True

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    def embed(self, texts: list[str]) -> np.ndarray:
        # Rows stay NumPy: as Python lists, 1,024 floats a text cost more than the hashing.
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        return np.stack([self._embed_one(text) for text in texts])

    # The write path compares new memories with those still waiting for the worker, which
    # it embeds again batch after batch: remember recent texts (10,000 vectors, ~40 MB).
    @lru_cache(maxsize=10_000)  # noqa: B019 (one provider per process, see embedding_provider)
    def _embed_one(self, text: str) -> np.ndarray:
        # CRC-32 of each n-gram: its low bits pick the bucket, its top bit the sign. Stable
        # across processes (unlike hash()), so the worker and the write path agree.
        hashes = np.fromiter(
            (
                zlib.crc32(gram.encode())
                for token in WORD_CHARACTERS.findall(text.lower())
                for gram in ngrams(f" {token} ")
            ),
            dtype=np.uint64,
        )
        if hashes.size == 0:
            # Nothing to hash (punctuation only): a fixed unit vector, never a zero vector,
            # which cosine distance cannot handle.
            vector = np.zeros(self.dimensions, dtype=np.float32)
            vector[0] = 1.0
            return vector
        signs = np.where(hashes >> 31, 1.0, -1.0)
        vector = np.bincount(
            (hashes % self.dimensions).astype(np.int64), weights=signs, minlength=self.dimensions
        )
        norm = np.linalg.norm(vector)
        return (vector / norm if norm else np.eye(1, self.dimensions)[0]).astype(np.float32)


def ngrams(padded: str) -> Iterator[str]:
    for size in (1, 2, 3):
        for start in range(len(padded) - size + 1):
            gram = padded[start : start + size]
            if not gram.isspace():
                yield gram


class OpenAIEmbeddingProvider:
    inline = False

    def __init__(
        self, *, dimensions: int, base_url: str, api_key: str, model: str, timeout: float
    ) -> None:
        self.dimensions = dimensions
        self.model = model
        self.client = OpenAICompatibleClient(base_url=base_url, api_key=api_key, timeout=timeout)

    def embed(self, texts: list[str]) -> np.ndarray:
        try:
            vectors = self.client.embeddings(
                model=self.model, texts=texts, dimensions=self.dimensions
            )
        except OpenAICompatibleError as error:
            raise EmbeddingError(f"embedding provider failed: {error}") from error
        if len(vectors) != len(texts) or any(len(v) != self.dimensions for v in vectors):
            raise EmbeddingError(
                f"embedding provider answered {len(vectors)} vectors for {len(texts)} texts, "
                f"expected {self.dimensions} dimensions each"
            )
        return np.asarray(vectors, dtype=np.float32)


@cache
def embedding_provider() -> EmbeddingProvider:
    if settings.EMBEDDING_PROVIDER == "openai":
        return OpenAIEmbeddingProvider(
            dimensions=settings.EMBEDDING_DIM,
            base_url=settings.EMBEDDING_API_BASE,
            api_key=settings.EMBEDDING_API_KEY,
            model=settings.EMBEDDING_MODEL,
            timeout=settings.EMBEDDING_TIMEOUT,
        )
    return HashingEmbeddingProvider(settings.EMBEDDING_DIM)
