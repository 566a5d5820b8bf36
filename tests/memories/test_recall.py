"""Recall: hybrid retrieval, CJK full text, fusion and boosts, time travel, the relevance floor.

Every ranking here uses hand-built memories whose correct order is known, on the real database
with the lexical (hashing) embeddings, whose similarities are predictable from the words; the
default semantic model's recall is tested in test_semantic_recall.py.
"""

import math
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from core.access import Caller
from core.redis_client import app_redis
from memories.common_names import meaning_query
from memories.embeddings import embedding_provider
from memories.ingest import session_message_add, session_open
from memories.models import ConversationMessage, Memory
from memories.recall import (
    RECALLED_FIELDS,
    RecallQuery,
    memories_recall,
    query_cache_key,
    recall_plan,
)
from memories.selectors import trait_field
from memories.services import (
    MemoryInput,
    content_md5,
    memories_embed,
    memory_add_many,
    memory_invalidate,
    memory_supersede,
)
from memories.services.user_data import user_purge
from reflection.selectors import traits_believed_memories
from reflection.services.maintenance import trait_view_refresh
from tests.memories.bulk import insert_facts

pytestmark = pytest.mark.django_db

USER = "agent:alice"
TEST = Caller(name="test", is_staff=True)


@pytest.fixture(autouse=True)
def lexical_embeddings(settings):
    settings.EMBEDDING_PROVIDER = "hashing"
    settings.RECALL_MIN_SIMILARITY = 0.6
    embedding_provider.cache_clear()
    yield
    embedding_provider.cache_clear()


def remember(
    *contents: str, user_id: str = USER, memory_type: str = "fact", embed: bool = True, **fields
) -> list[Memory]:
    results = memory_add_many(
        items=[
            MemoryInput(user_id=user_id, content=content, memory_type=memory_type, **fields)
            for content in contents
        ],
        caller=TEST,
    )
    memories = [result.memory for result in results]
    if embed:
        memories_embed(memory_ids=[memory.id for memory in memories])
    return [Memory.objects.get(pk=memory.pk) for memory in memories]


def recall(query: str, user_id: str = USER, **options) -> list:
    return memories_recall(
        caller=TEST, request=RecallQuery(user_id=user_id, query=query, **options)
    )


def contents(hits) -> list[str]:
    return [hit.memory.content for hit in hits]


ENGLISH = [
    "My dog is called Rex",
    "I work as a nurse at the city hospital",
    "I live in Berlin",
    "I love spicy Thai food",
    "My sister Anna lives in Paris",
]
CHINESE = [
    "昨天我在公司附近的咖啡店遇到了老同学",
    "我的狗叫旺财",
    "我在医院当护士",
    "我住在上海",
    "周末我常去爬山",
]


def test_english_question_finds_its_memory_first():
    remember(*ENGLISH)
    assert contents(recall("What is my dog's name?"))[0] == "My dog is called Rex"
    assert contents(recall("Where do I work?"))[0] == "I work as a nurse at the city hospital"
    assert contents(recall("which city do I live in"))[0] == "I live in Berlin"


def test_chinese_words_are_found_in_the_middle_of_a_sentence():
    remember(*CHINESE)
    for query, expected in [
        ("咖啡店", CHINESE[0]),
        ("老同学", CHINESE[0]),
        ("我的狗叫什么名字", CHINESE[1]),
        ("护士", CHINESE[2]),
        ("上海", CHINESE[3]),
        ("爬山", CHINESE[4]),
    ]:
        hits = recall(query)
        assert hits and hits[0].memory.content == expected, query
        assert hits[0].text_rank == 1


def test_single_han_character_query_matches_inside_words():
    remember(*CHINESE)
    assert contents(recall("狗")) == [CHINESE[1]]


def test_a_question_about_something_never_mentioned_returns_nothing():
    remember(*ENGLISH, *CHINESE)
    assert recall("What is my blood type?") == []
    assert recall("我的血型是什么") == []
    assert recall("Do I own a car?") == []


def test_a_query_of_stop_words_only_is_answered_by_the_vector_side():
    remember("To be or not to be", *ENGLISH)
    hits = recall("to be, or not to be?")  # no lexeme: the text side has nothing to match
    assert contents(hits) == ["To be or not to be"]
    assert (hits[0].vector_rank, hits[0].text_rank) == (1, None)


def test_the_text_side_ranks_only_memories_that_reach_the_candidate_share(settings):
    settings.RECALL_MIN_SIMILARITY = -1  # every vector neighbour comes back: text ranks show
    settings.RECALL_RELEVANCE_MARGIN = -2
    remember("violin lessons on tuesday", "violin repair shop downtown")
    hits = {hit.memory.content: hit for hit in recall("violin lessons tuesday evening")}
    assert hits["violin lessons on tuesday"].text_rank == 1  # 3 of 4 words
    # 1 of 4, under RECALL_TEXT_CANDIDATE_COVERAGE
    below = hits["violin repair shop downtown"]
    assert (below.text_rank, below.text_coverage) == (None, None)
    assert below.vector_rank is not None


def test_the_text_side_weighs_a_rare_word_above_a_common_one(settings):
    """BM25 over the candidates: "tart", held by one memory, says more than "bake", held by
    most; by the share of words alone (each holds two of the three) and their counts, the
    memory repeating the common word would rank first."""
    settings.RECALL_MIN_SIMILARITY = -1
    settings.RECALL_RELEVANCE_MARGIN = -2
    remember(
        "Priya: I bake, I bake every day, baking is my life",
        "Priya: I ordered a lemon tart at the cafe",
        "Priya: we bake bread this weekend",
        "Priya: the kids bake with their grandmother",
        "Priya: I bought a new bake tray",
    )
    hits = {hit.memory.content: hit for hit in recall("When did Priya bake a tart?")}
    assert hits["Priya: I ordered a lemon tart at the cafe"].text_rank == 1
    assert hits["Priya: I bake, I bake every day, baking is my life"].text_rank == 2


def test_the_text_side_saturates_repeated_words():
    """A memory saying one query word many times does not outrank one holding more of them."""
    remember(
        "garden garden garden garden garden garden garden",
        "the garden roses bloom in june",
    )
    ranks = {hit.memory.content: hit.text_rank for hit in recall("garden roses june")}
    assert ranks["the garden roses bloom in june"] == 1


def conversation(*turns: tuple[str, timedelta]) -> list[Memory]:
    """Episodes said `ago` each (one batch, in order)."""
    now = timezone.now()
    return [remember(text, memory_type="episodic", valid_at=now - ago)[0] for text, ago in turns]


def text_sides(query: str, **options) -> dict[str, tuple[int | None, float | None]]:
    """Each hit's text rank and coverage, the question rules off (they may drop hits)."""
    options.setdefault("answer_rules", False)
    return {
        hit.memory.content: (hit.text_rank, hit.text_coverage) for hit in recall(query, **options)
    }


def test_the_text_side_reads_an_episode_with_the_turn_before_it(settings):
    """The answer holds none of the question's words, the turn it answers holds them all: the
    answer is found by text too (after the question turn, its document being longer); a turn
    said longer than RECALL_EPISODE_CONTEXT_SECONDS after the one before it is read alone."""
    settings.RECALL_MIN_SIMILARITY = -1  # every vector neighbour comes back: text ranks show
    settings.RECALL_RELEVANCE_MARGIN = -2
    settings.RECALL_EPISODE_CONTEXT_SECONDS = 600
    conversation(
        ("Priya: what did you do over the long weekend?", timedelta(hours=3, seconds=10)),
        ("Tomas: we drove up the coast and hiked", timedelta(hours=3)),
        ("Tomas: later I fixed the bike", timedelta(hours=2)),
    )
    sides = text_sides("long weekend")
    assert sides["Priya: what did you do over the long weekend?"] == (1, 1.0)
    assert sides["Tomas: we drove up the coast and hiked"] == (2, 1.0)
    assert sides["Tomas: later I fixed the bike"] == (None, None)

    settings.RECALL_EPISODE_CONTEXT_SECONDS = 0
    assert text_sides("long weekend")["Tomas: we drove up the coast and hiked"] == (
        None,
        None,
    )


def test_the_turn_before_is_read_only_while_it_is_visible(settings):
    """A turn before that was invalidated no longer lends its words (nor its own hit), and a
    read as of an instant before it was invalidated still reads it."""
    settings.RECALL_MIN_SIMILARITY = -1
    settings.RECALL_RELEVANCE_MARGIN = -2
    settings.RECALL_EPISODE_CONTEXT_SECONDS = 600
    question, answer = conversation(
        ("Priya: which city did your sister move to?", timedelta(days=2, seconds=30)),
        ("Tomas: Lisbon, last spring", timedelta(days=2)),
    )
    before = timezone.now()
    memory_invalidate(memory=question, caller=TEST)
    assert text_sides("sister move city").get(answer.content, (None, None)) == (None, None)
    assert text_sides("sister move city", as_of=before)[answer.content] == (2, 1.0)


def test_episodes_stored_in_the_same_second_are_read_alone(settings):
    """A batch of notes written together, undated, is one write, not turns of a conversation."""
    settings.RECALL_MIN_SIMILARITY = -1
    settings.RECALL_RELEVANCE_MARGIN = -2
    settings.RECALL_EPISODE_CONTEXT_SECONDS = 600
    remember(
        "Priya: what did you do over the long weekend?",
        "Tomas: we drove up the coast and hiked",
        memory_type="episodic",
    )
    assert text_sides("long weekend")["Tomas: we drove up the coast and hiked"] == (
        None,
        None,
    )


def session_said(*messages: tuple[str, str], user_id: str = USER) -> None:
    """One session's messages (role, content), ten seconds apart an hour ago, embeddings made."""
    session = session_open(caller=TEST, user_id=user_id)
    start = timezone.now() - timedelta(hours=1)
    for n, (role, content) in enumerate(messages):
        session_message_add(
            session=session,
            role=role,
            content=content,
            caller=TEST,
            sent_at=start + timedelta(seconds=10 * n),
        )
    memories_embed(
        memory_ids=list(Memory.objects.filter(user_id=user_id).values_list("id", flat=True))
    )


def test_a_conversation_s_episodes_are_read_alone(settings):
    """The conversation path's episode already quotes the assistant turn it answers; the user's
    episode before it is another exchange, and lends it no words."""
    settings.RECALL_MIN_SIMILARITY = -1
    settings.RECALL_RELEVANCE_MARGIN = -2
    settings.RECALL_EPISODE_CONTEXT_SECONDS = 600
    session_said(
        ("user", "I spent the long weekend in the mountains"),
        ("assistant", "Sounds lovely."),
        ("user", "We drove up the coast and hiked"),
    )
    sides = text_sides("long weekend")
    hike = next(content for content in sides if "hiked" in content)
    assert sides[hike] == (None, None)


# The episode answering it quotes only its last two sentences: not the ferry.
FERRY_ANSWER = (
    "There is a morning ferry from Setubal to Troia every hour, and the crossing takes about "
    "twenty minutes. Bring cash for the parking at the terminal, the card machine is often "
    "broken. Would you like me to check the weather for the weekend?"
)


def test_a_conversation_s_episode_is_read_with_the_whole_assistant_message_it_answers(settings):
    """Found by the words of the message it answers beyond the end it quotes, on the text side,
    as the holder of all of them; another user's same conversation lends it nothing; with
    RECALL_EPISODE_ANSWERED_MESSAGE off, read alone."""
    settings.RECALL_MIN_SIMILARITY = -1
    settings.RECALL_RELEVANCE_MARGIN = -2
    settings.RECALL_EPISODE_ANSWERED_MESSAGE = True
    exchange = [("user", "How do I get to Troia?"), ("assistant", FERRY_ANSWER)]
    session_said(*exchange, ("user", "Perfect, book it for Saturday"))
    session_said(*exchange, ("user", "No thanks, we will drive round"), user_id="agent:bob")
    (episode,) = Memory.objects.filter(user_id=USER, content__contains="book it")
    assert "ferry" not in episode.content

    sides = text_sides("ferry Setubal")
    assert sides[episode.content] == (1, 1.0)
    assert not any("drive round" in content for content in sides)

    settings.RECALL_EPISODE_ANSWERED_MESSAGE = False
    assert text_sides("ferry Setubal").get(episode.content, (None, None)) == (None, None)


def test_an_erased_assistant_message_lends_no_words(settings):
    """The message's words are read from its content: once erased (as a forget erases it), the
    episode answering it is no longer found by them."""
    settings.RECALL_MIN_SIMILARITY = -1
    settings.RECALL_RELEVANCE_MARGIN = -2
    session_said(("assistant", FERRY_ANSWER), ("user", "Perfect, book it for Saturday"))
    (episode,) = Memory.objects.filter(user_id=USER)
    assert text_sides("ferry Setubal")[episode.content] == (1, 1.0)
    ConversationMessage.objects.filter(role="assistant").update(
        content=FERRY_ANSWER.replace("ferry from Setubal", "[forgotten]")
    )
    assert text_sides("ferry Setubal").get(episode.content, (None, None)) == (None, None)


def search_candidates(query: str, min_share: float) -> set[str]:
    """The clauses of the tsquery that recall's text side asks the GIN index for."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT neuromem_search_candidates(%s, %s)::text", [query, min_share])
        (text,) = cursor.fetchone()
    return set(text.split(" | "))


INSTRUMENTS = "violin piano guitar drums flute harp cello oboe tuba"


@pytest.mark.parametrize(
    "query, min_share, clauses",
    [
        # The floor needs two of three words: the GIN index is asked for any two.
        (
            "violin lessons tuesday",
            0.5,
            {"'lesson' & 'tuesday'", "'lesson' & 'violin'", "'tuesday' & 'violin'"},
        ),
        # One word reaches the floor: any one.
        ("violin lessons tuesday", 0.3, {"'violin'", "'lesson'", "'tuesday'"}),
        ("violin", 0.5, {"'violin'"}),
        # Past 8 words the pairs cost the index more than they save: any one.
        (INSTRUMENTS, 0.5, None),
    ],
)
def test_search_candidates_ask_the_index_for_what_can_reach_the_floor(query, min_share, clauses):
    if clauses is None:  # the fallback is the plain any-word query
        with connection.cursor() as cursor:
            cursor.execute("SELECT neuromem_search_query(%s)::text", [query])
            clauses = set(cursor.fetchone()[0].split(" | "))
        assert len(clauses) == 9
    assert search_candidates(query, min_share) == clauses


def test_search_candidates_pair_chinese_bigrams():
    clauses = search_candidates("咖啡店员", 0.5)  # bigrams 咖啡 啡店 店员: any two of them
    assert len(clauses) == 3 and all(clause.count(" & ") == 1 for clause in clauses)


def test_memories_waiting_for_their_embedding_are_found_by_text():
    remember("I collect vintage fountain pens", embed=False)
    [hit] = recall("fountain pens")
    assert (hit.vector_rank, hit.text_rank, hit.similarity) == (None, 1, None)


def test_a_hit_carries_the_memory_as_the_orm_reads_it():
    [memory] = remember("I keep bees on the roof", metadata={"source": {"app": "chat"}})
    [hit] = recall("bees on the roof")
    stored = Memory.objects.get(pk=memory.pk)
    assert hit.memory.metadata == {"source": {"app": "chat"}}  # JSON decoded, not a string
    for field in RECALLED_FIELDS:
        assert getattr(hit.memory, field.attname) == getattr(stored, field.attname), field.name


def test_score_is_rrf_times_the_boosts_of_seed_002():
    now = timezone.now()
    [old] = remember(
        "I ran the Boston marathon",
        valid_at=now - timedelta(days=30),
        importance=0.8,
        metadata={"emotion": {"arousal": 1.0}},
    )
    [hit] = recall("Boston marathon")
    assert (hit.vector_rank, hit.text_rank) == (1, 1)
    assert hit.rrf_score == pytest.approx(2 / 61)
    age = (timezone.now() - old.valid_at).total_seconds()
    assert hit.boosts.recency == pytest.approx(0.15 * math.exp(-age / (2592000 * 1.5)), rel=1e-4)
    assert hit.boosts.importance == pytest.approx(0.12)
    assert hit.boosts.trait_stage == 0
    assert hit.score == pytest.approx(hit.rrf_score * (1 + hit.boosts.recency + 0.12), rel=1e-6)


def test_the_vector_side_weighs_recall_vector_weight_in_the_fusion(settings):
    # "Old photographs" shares no lexeme with "photography" (the stemmer keeps them apart) but
    # most of its letters, so only the vector side finds it; the class, still waiting for its
    # embedding, only the text side. Equal weights (the default) tie them, and the tie goes by
    # id; at 0.5 the text match comes first.
    [text_only] = remember("Booked a photography class", embed=False)
    [vector_only] = remember("Old photographs")
    ranks = [(None, 1), (1, None)]
    hits = recall("photography")
    assert [hit.rrf_score for hit in hits] == pytest.approx([1 / 61, 1 / 61])
    settings.RECALL_VECTOR_WEIGHT = 0.5
    hits = recall("photography")
    assert [hit.memory.id for hit in hits] == [text_only.id, vector_only.id]
    assert [(hit.vector_rank, hit.text_rank) for hit in hits] == ranks
    assert [hit.rrf_score for hit in hits] == pytest.approx([1 / 61, 0.5 / 61])


def test_a_memory_ending_in_a_question_weighs_less_on_the_vector_side(settings):
    # Both found by meaning only (no lexeme of "photography"), the question nearer by letters:
    # it weighs a quarter (the default) and comes second; weighed whole, it comes first. (The
    # question rules, which may reorder two hits on one topic, are not asked.)
    [question] = remember("Old photographs?")
    [statement] = remember("The old photographs")
    hits = recall("photography", answer_rules=False)
    assert [(hit.memory.id, hit.vector_rank, hit.text_rank) for hit in hits] == [
        (statement.id, 2, None),
        (question.id, 1, None),
    ]
    assert [hit.rrf_score for hit in hits] == pytest.approx([1 / 62, 0.25 / 61])
    settings.RECALL_QUESTION_VECTOR_WEIGHT = 1
    settings.RECALL_VECTOR_WEIGHT = 0.5
    hits = recall("photography", answer_rules=False)
    assert [hit.memory.id for hit in hits] == [question.id, statement.id]
    assert [hit.rrf_score for hit in hits] == pytest.approx([0.5 / 61, 0.5 / 62])
    [chinese] = remember("老照片？", user_id="agent:bo")
    settings.RECALL_QUESTION_VECTOR_WEIGHT = 0.25
    [hit] = recall("老照片", user_id="agent:bo")
    assert (hit.memory.id, hit.vector_rank, hit.text_rank) == (chinese.id, 1, 1)
    assert hit.rrf_score == pytest.approx(0.5 * 0.25 / 61 + 1 / 61)


# Sixty things, no two of them near duplicates (the write path would merge those).
THINGS = [
    f"{colour} {thing}"
    for colour in ("red", "old", "new", "big", "odd", "tiny")
    for thing in ("kite", "lamp", "boat", "drum", "vase", "sofa", "tent", "bell", "coin", "rope")
]


def test_a_name_most_of_the_users_memories_hold_is_left_out_of_the_embedded_query(settings):
    # A transcript: every turn begins with its speaker, most of them one of two; "Okafor" and
    # "Mount Tam" are said once or twice. Counted among current memories only.
    turns = [f"Priya: I saw the {thing}" for thing in THINGS[:40]]
    turns += [f"Tomasz: a {thing}, Priya?" for thing in THINGS[40:]]
    turns += ["Priya: Dr. Okafor moved her clinic", "Tomasz: we hiked Mount Tam on Sunday"]
    remember(*turns, memory_type="episodic", embed=False)
    assert (
        meaning_query(user_id=USER, query="Did Priya tell Tomasz about Dr. Okafor's clinic?")
        == "Did tell about Dr. Okafor's clinic?"
    )
    assert meaning_query(user_id=USER, query="What is Priya's job?") == "What is job?"
    assert meaning_query(user_id=USER, query="Priya在哪里工作？") == "在哪里工作？"
    assert meaning_query(user_id=USER, query="Zoë told Priya-Anne") == "Zoë told Priya-Anne"
    # Nothing but the names: the query as asked.
    assert meaning_query(user_id=USER, query="Priya, Tomasz?") == "Priya, Tomasz?"
    settings.RECALL_COMMON_NAME_SHARE = 0.5  # Tomasz is in 21 of 62 (his turns, not Priya's)
    assert meaning_query(user_id=USER, query="Priya met Tomasz") == "met Tomasz"
    settings.RECALL_COMMON_NAME_SHARE = 0
    assert meaning_query(user_id=USER, query="Priya met Tomasz") == "Priya met Tomasz"


def test_recall_embeds_the_query_without_the_common_names():
    remember(*(f"Priya: I saw the {thing}" for thing in THINGS), embed=False)
    recall("Where is Priya's tiny kite?")
    model = embedding_provider().model_id
    assert app_redis().exists(query_cache_key(model, "Where is tiny kite?"))
    assert not app_redis().exists(query_cache_key(model, "Where is Priya's tiny kite?"))


def test_a_names_verdict_is_kept_in_redis(django_assert_num_queries):
    remember(*(f"Priya: I saw the {thing}" for thing in THINGS), embed=False)
    with django_assert_num_queries(1):
        assert meaning_query(user_id=USER, query="Where is Priya?") == "Where is ?"
    with django_assert_num_queries(0):
        assert meaning_query(user_id=USER, query="Priya, where?") == ", where?"


def test_a_purge_drops_the_users_cached_names(
    django_assert_num_queries, django_capture_on_commit_callbacks
):
    for user_id in (USER, "agent:bo"):
        remember(*(f"Priya: I saw the {thing}" for thing in THINGS), user_id=user_id, embed=False)
        meaning_query(user_id=user_id, query="Where is Priya?")
    with django_capture_on_commit_callbacks(execute=True):
        user_purge(caller=TEST, user_id=USER)
    with django_assert_num_queries(1):  # counted again: nothing left to hold the name
        assert meaning_query(user_id=USER, query="Where is Priya?") == "Where is Priya?"
    with django_assert_num_queries(0):
        assert meaning_query(user_id="agent:bo", query="Where is Priya?") == "Where is ?"


def test_a_name_is_common_only_among_enough_memories(settings):
    # Every memory names Mike, but three memories make no share to judge by.
    remember("Mike is a doctor", "Mike lives in Chicago", "Mike has two kids")
    assert meaning_query(user_id=USER, query="What does Mike do?") == "What does Mike do?"


def test_a_memory_holding_few_of_the_words_is_ranked_by_them_when_near_by_meaning(settings):
    # Two of the question's five lexemes ("violinists" stems to "violinist"): enough to be
    # ranked by the text side (RECALL_TEXT_CANDIDATE_COVERAGE 0.34), not to be recalled by
    # words alone (RECALL_MIN_TEXT_COVERAGE 0.5). By letters (the hashing embeddings), the
    # violinists' schedule is near the question (0.81), the weekly one not (0.68, under this
    # test's floor of 0.7), and the last is still waiting for its embedding.
    settings.RECALL_MIN_SIMILARITY = 0.7
    remember(
        "Violin lesson schedule on tuesday evening",
        "Violinists tuesday schedule",
        "Printed my weekly schedule for tuesday",
    )
    remember("The violinist schedule on tuesday", embed=False)
    query = "violin lesson schedule tuesday evening"
    hits = {hit.memory.content: hit for hit in recall(query)}
    assert set(hits) == {"Violin lesson schedule on tuesday evening", "Violinists tuesday schedule"}
    near = hits["Violinists tuesday schedule"]
    assert near.vector_rank == 2 and near.text_rank is not None
    assert near.text_coverage == pytest.approx(2 / 5)
    settings.RECALL_TEXT_CANDIDATE_COVERAGE = 0.5
    near = {hit.memory.content: hit for hit in recall(query)}["Violinists tuesday schedule"]
    assert (near.vector_rank, near.text_rank, near.text_coverage) == (2, None, None)


def stored(memory_id: str, memory_type: str, content: str, **fields) -> Memory:
    """A memory with a chosen id (the text side breaks its ties by id), embedded."""
    memory = Memory.objects.create(
        id=uuid.UUID(memory_id),
        user_id=fields.pop("user_id", USER),
        memory_type=memory_type,
        content=content,
        content_hash=content_md5(content),
        **fields,
    )
    assert memories_embed(memory_ids=[memory.id]) == 1
    return memory


# Two memories equal but for one boost: the same content, one a fact and one an episode, so
# they tie on both sides, where the tie goes to the smaller id. That one is given the weaker
# boost, so the stronger boost has to beat worse ranks (2/61 against 2/62) to come first.
RRF_FIRST = 2 / 61  # 0.0327869
RRF_SECOND = 2 / 62  # 0.0322581


def test_recency_orders_memories_equal_but_for_valid_at():
    now = timezone.now()
    old = stored(
        "00000000-0000-0000-0000-000000000001",
        "fact",
        "I visited Rome",
        valid_at=now - timedelta(days=300),
    )
    new = stored(
        "00000000-0000-0000-0000-000000000002",
        "episodic",
        "I visited Rome",
        valid_at=now - timedelta(days=1),
    )
    hits = recall("visited Rome")
    assert [hit.memory.id for hit in hits] == [new.id, old.id]
    assert [(hit.vector_rank, hit.text_rank) for hit in hits] == [(2, 2), (1, 1)]
    assert [hit.rrf_score for hit in hits] == pytest.approx([RRF_SECOND, RRF_FIRST])
    # By hand: recency = 0.15·e^(−days/30): 0.15·e^(−1/30) = 0.1450824, 0.15·e^(−10) = 6.81e-6;
    # importance = 0.15 · 0.5 = 0.075 for both.
    assert [hit.boosts.recency for hit in hits] == pytest.approx([0.1450824, 6.80999e-6], rel=1e-4)
    assert [hit.boosts.importance for hit in hits] == pytest.approx([0.075, 0.075])
    # score = rrf · (1 + recency + importance):
    #   new: 0.0322581 · 1.2200824 = 0.0393575;  old: 0.0327869 · 1.0750068 = 0.0352461
    assert [hit.score for hit in hits] == pytest.approx([0.0393575, 0.0352461], rel=1e-4)


def test_importance_orders_memories_equal_but_for_importance():
    then = timezone.now() - timedelta(days=30)
    low = stored(
        "00000000-0000-0000-0000-000000000003",
        "fact",
        "I play the cello",
        valid_at=then,
        importance=0.1,
    )
    high = stored(
        "00000000-0000-0000-0000-000000000004",
        "episodic",
        "I play the cello",
        valid_at=then,
        importance=0.9,
    )
    hits = recall("play the cello")
    assert [hit.memory.id for hit in hits] == [high.id, low.id]
    assert [(hit.vector_rank, hit.text_rank) for hit in hits] == [(2, 2), (1, 1)]
    # By hand: importance = 0.15 · 0.9 = 0.135 and 0.15 · 0.1 = 0.015; recency 0.15·e^(−1) =
    # 0.0551819 for both. score: high 0.0322581 · 1.1901819 = 0.0383929,
    #                            low 0.0327869 · 1.0701819 = 0.0350879
    assert [hit.boosts.importance for hit in hits] == pytest.approx([0.135, 0.015], rel=1e-6)
    assert [hit.boosts.recency for hit in hits] == pytest.approx([0.0551819] * 2, rel=1e-4)
    assert [hit.score for hit in hits] == pytest.approx([0.0383929, 0.0350879], rel=1e-4)


def test_trait_stage_boost_and_only_believed_traits():
    def trait(content: str, stage: str) -> None:
        remember(
            content,
            memory_type="trait",
            metadata={"trait_stage": stage, "trait_subtype": "preference", "confidence": 0.8},
        )

    trait("Prefers tea over coffee in the morning", "core")
    trait("Prefers tea with honey", "emerging")
    trait("Prefers tea when tired", "trend")
    hits = recall("prefers tea", memory_types=("trait",))
    assert {hit.memory.content: hit.boosts.trait_stage for hit in hits} == {
        "Prefers tea over coffee in the morning": 0.25,
        "Prefers tea with honey": 0.05,
    }


def test_invalid_expired_and_superseded_memories_are_not_recalled():
    moved, job, gone = remember("I live in Boston", "I work at Acme Corp", "My cat is Tom")
    memory_supersede(memory=moved, content="I live in Austin", caller=TEST)
    memories_embed(
        memory_ids=list(Memory.objects.filter(user_id=USER).values_list("id", flat=True))
    )
    memory_invalidate(memory=job, caller=TEST)
    Memory.objects.filter(pk=gone.pk).update(expired_at=timezone.now())
    assert contents(recall("where do I live")) == ["I live in Austin"]
    assert recall("Acme Corp") == []
    assert recall("cat Tom") == []


def test_as_of_recalls_what_was_true_then():
    [moved] = remember("I live in Boston")
    before = timezone.now()
    memory_supersede(memory=moved, content="I live in Austin", caller=TEST)
    memories_embed(
        memory_ids=list(Memory.objects.filter(user_id=USER).values_list("id", flat=True))
    )
    assert contents(recall("where do I live", as_of=before)) == ["I live in Boston"]
    assert contents(recall("where do I live")) == ["I live in Austin"]
    assert recall("where do I live", as_of=moved.created_at - timedelta(seconds=1)) == []


def test_memory_types_and_limit_filter():
    remember("I like jazz music", "I like jazz bars")
    remember("Went to a jazz concert", memory_type="episodic")
    assert {hit.memory.memory_type for hit in recall("jazz", memory_types=("episodic",))} == {
        "episodic"
    }
    assert len(recall("jazz", limit=2)) == 2


def test_recall_sees_only_the_users_memories():
    remember("I like jazz music", user_id="agent:bob")
    assert recall("jazz music") == []


def test_trait_fields_read_the_column_first_then_metadata():  # TC-R01–R03
    [trait] = remember(
        "Enjoys hiking", memory_type="trait", metadata={"trait_subtype": "preference"}
    )
    assert trait_field(trait, "trait_subtype") == "preference"
    Memory.objects.filter(pk=trait.pk).update(metadata={"trait_subtype": "behavior"})
    trait.refresh_from_db()
    assert trait_field(trait, "trait_subtype") == "preference"  # TC-R01
    Memory.objects.filter(pk=trait.pk).update(trait_subtype=None)
    trait.refresh_from_db()
    assert trait_field(trait, "trait_subtype") == "behavior"  # TC-R02
    Memory.objects.filter(pk=trait.pk).update(metadata={})
    trait.refresh_from_db()
    assert trait_field(trait, "trait_subtype") is None  # TC-R03


def test_active_traits_are_grouped_for_the_prompt():
    for content, subtype, stage, confidence in [
        ("Likes routine", "behavior", "established", 0.9),
        ("Values honesty", "core", "core", 0.6),
        ("Prefers email", "preference", "emerging", 0.7),
        ("Values family", "core", "established", 0.9),
        ("Maybe likes opera", "preference", "trend", 0.9),
        ("Weakly likes tea", "preference", "emerging", 0.2),
    ]:
        remember(
            content,
            memory_type="trait",
            metadata={"trait_subtype": subtype, "trait_stage": stage, "confidence": confidence},
        )
    trait_view_refresh()  # believed traits come from the decay view
    believed = traits_believed_memories(caller=TEST, user_id=USER)
    assert [trait.content for trait in believed] == [
        "Values family",
        "Values honesty",
        "Prefers email",
        "Likes routine",
    ]


TOPICS = ("apples", "trains", "violins", "glaciers", "lanterns")


def test_vector_side_ranks_halfvec_embeddings_by_cosine():
    """The halfvec column answers nearest-neighbour queries (TC-H07 on an upgraded V1 database
    is test_v1_upgrade.test_recall_after_conversion)."""
    remember(*[f"test memory about {topic}" for topic in TOPICS])
    hits = recall("test memory about violins", limit=5)
    assert hits[0].memory.content == "test memory about violins"
    assert (hits[0].vector_rank, hits[0].text_rank) == (1, 1)
    query, *stored = embedding_provider().embed(
        ["test memory about violins", *(hit.memory.content for hit in hits)]
    )
    # Each similarity is the cosine of the full-precision vectors, to half precision.
    for hit, vector in zip(hits, stored, strict=True):
        assert hit.similarity == pytest.approx(float(query @ vector), abs=2e-3)
    by_vector_rank = sorted(hits, key=lambda hit: hit.vector_rank)
    assert [hit.vector_rank for hit in by_vector_rank] == [1, 2, 3, 4, 5]
    similarities = [hit.similarity for hit in by_vector_rank]
    assert similarities == sorted(similarities, reverse=True)


def test_the_vector_side_uses_the_hnsw_index():
    """At a size where the index wins (one user, 3,000 facts), the plan is an HNSW index scan
    on the fact partition, not a sequential scan and sort."""
    insert_facts(USER, 3000)
    plan = recall_plan(request=RecallQuery(user_id=USER, query="memory 42", memory_types=("fact",)))
    vector_side = plan.split("CTE vector_hits")[1].split("CTE ")[0]
    assert "Index Scan using idx_fact_embedding on memories_fact" in vector_side, plan
    assert "Seq Scan" not in vector_side, plan


def test_recall_falls_back_to_text_when_the_embedding_provider_is_down(settings):
    remember("I collect vintage fountain pens")
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_API_BASE = "http://127.0.0.1:1/v1"  # nothing listens there
    embedding_provider.cache_clear()
    try:
        [hit] = recall("fountain pens")
    finally:
        embedding_provider.cache_clear()
    assert (hit.memory.content, hit.vector_rank, hit.text_rank) == (
        "I collect vintage fountain pens",
        None,
        1,
    )


@pytest.mark.parametrize(
    ("query", "lexemes"),
    [
        ("Where does the user live?", ["live"]),
        ("What is the User's name?", ["name"]),
        ("users’ favourite tea", ["favourit", "tea"]),
        ("用户住在哪里？", ["住"]),  # 在, 哪, 里: grammar and question words
        ("user", []),
    ],
)
def test_the_subject_words_of_a_question_are_not_search_terms(query, lexemes):
    """Facts are written about "the user": that word would match every one of them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT neuromem_search_lexemes(%s)", [query])
        assert sorted(cursor.fetchone()[0]) == lexemes


def test_a_question_about_the_user_recalls_only_what_answers_it():
    remember("The user lives in Hangzhou", "The user has a cat called Miso", "用户住在杭州")
    assert contents(recall("What is the user's blood type?")) == []
    assert "The user lives in Hangzhou" in contents(recall("Where does the user live?"))
    assert contents(recall("用户住在哪里？"))[:1] == ["用户住在杭州"]


def test_a_trait_decayed_below_the_minimum_is_not_recalled():
    long_ago = timezone.now() - timedelta(days=400)  # 0.5 · e^(−2) ≈ 0.068 < 0.3
    for content, last_reinforced in [
        ("Enjoys long hikes in the mountains", timezone.now()),
        ("Enjoys long hikes along the coast", long_ago),
    ]:
        remember(
            content,
            memory_type="trait",
            metadata={"trait_subtype": "behavior", "trait_stage": "emerging", "confidence": 0.5},
        )
        Memory.objects.filter(content=content).update(trait_last_reinforced=last_reinforced)
    hits = recall("long hikes", limit=10)
    assert [hit.memory.content for hit in hits] == ["Enjoys long hikes in the mountains"]
