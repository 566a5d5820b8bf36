"""The local embedding providers, with their real weights (small inputs): shape, norm, and that
they place a question nearer its answer than an unrelated memory, across English and Chinese.
And what the OpenAI-compatible provider takes from an answer."""

import numpy as np
import pytest

from memories.embeddings import (
    E5EmbeddingProvider,
    EmbeddingError,
    HashingEmbeddingProvider,
    OpenAIEmbeddingProvider,
    UniversalSentenceEncoderProvider,
    lexical_provider,
)
from tests.fake_openai import FakeOpenAIHandler, serving

MEMORIES = [
    "It's Marcus Chen",
    "My sister lives in Boston",
    "我喜欢吃辣的食物",
    "The printer on the third floor is out of toner",
]
# question → the memory that answers it, in the memory's language
ANSWERS = {"Where does the user's sister live?": 1, "用户喜欢吃什么？": 2}
# and across languages
CROSS_LINGUAL_ANSWERS = {"用户的姐姐住在哪里？": 1, "What food does the user like?": 2}


@pytest.fixture(scope="module", params=[E5EmbeddingProvider, UniversalSentenceEncoderProvider])
def provider(request):
    return request.param()


def test_a_local_model_embeds_unit_vectors_of_its_dimension(provider):
    vectors = provider.embed([*MEMORIES, "", "!!!", "😀"])
    assert vectors.shape == (len(MEMORIES) + 3, provider.dimensions)
    assert vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1, abs=1e-3)
    assert provider.embed([]).shape == (0, provider.dimensions)


def test_a_local_model_is_deterministic(provider):
    first, second = provider.embed([MEMORIES[1]]), provider.embed([MEMORIES[1]])
    assert np.array_equal(first, second)


@pytest.mark.parametrize(("question", "answer"), ANSWERS.items())
def test_a_local_model_finds_the_answer_by_meaning(provider, question, answer):
    similarities = provider.embed(MEMORIES) @ provider.embed_query(question)
    assert int(np.argmax(similarities)) == answer, similarities


@pytest.mark.parametrize(("question", "answer"), CROSS_LINGUAL_ANSWERS.items())
def test_the_default_model_finds_the_answer_across_languages(question, answer):
    """e5-small misses the first of these (docs/embeddings.md); the default must not."""
    provider = UniversalSentenceEncoderProvider()
    similarities = provider.embed(MEMORIES) @ provider.embed_query(question)
    assert int(np.argmax(similarities)) == answer, similarities


def test_the_lexical_model_misses_what_the_semantic_ones_find():
    """What the default provider buys: no shared word, and hashing cannot tell."""
    hashing = HashingEmbeddingProvider(512)
    question = "用户的姐姐住在哪里？"
    similarities = hashing.embed(MEMORIES) @ hashing.embed_query(question)
    assert int(np.argmax(similarities)) != CROSS_LINGUAL_ANSWERS[question]


def test_the_lexical_vector_tells_a_restatement_from_another_memory():
    """What the write path's near-duplicate check relies on (DEDUP_SIMILARITY 0.95)."""
    vector, restated, other = lexical_provider().embed(
        [
            "The user's favourite editor is Vim",
            "the user's favourite editor is Vim!",
            "The user's favourite colour is green",
        ]
    )
    assert vector.shape == (512,)
    assert float(vector @ restated) > 0.95
    assert float(vector @ other) < 0.9


class MalformedEmbeddings(FakeOpenAIHandler):
    vectors: list = []

    def answer(self, path: str, body: dict) -> tuple[int, dict]:
        return 200, {"data": [{"index": i, "embedding": v} for i, v in enumerate(self.vectors)]}


@pytest.mark.parametrize(
    "vectors",
    [
        [None],
        [[None, 0.5, 0.5, 0.5]],
        [[1e39, 0.5, 0.5, 0.5]],  # beyond float32: infinite
        [[0.0, 0.0, 0.0, 0.0]],
        [[0.5, 0.5, 0.5]],
        [[0.5, 0.5, 0.5, 0.5], [0.5, 0.5, 0.5, 0.5]],
        [["a", 0.5, 0.5, 0.5]],
    ],
)
def test_an_answer_that_is_no_usable_vector_for_each_text_is_the_providers_failure(vectors):
    MalformedEmbeddings.vectors = vectors
    with serving(MalformedEmbeddings) as base_url:
        provider = OpenAIEmbeddingProvider(
            dimensions=4, base_url=base_url, api_key="", model="m", timeout=5
        )
        with pytest.raises(EmbeddingError):
            provider.embed(["one text"])
