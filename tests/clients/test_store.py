"""NeuroMemStore, LangGraph's BaseStore on the live service: the behaviours LangGraph's own
store tests check on InMemoryStore (libs/checkpoint/tests/test_store.py: put, get, delete,
namespace rules, search with filters and pages, list_namespaces with prefixes, suffixes,
wildcards, depth and pages, async batches), with the namespace's first element as the end
user, and search with a query as recall."""

import asyncio
import json

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, PutOp, SearchItem
from langgraph.store.memory import InMemoryStore
from neuromem_client import AsyncNeuroMem, Conflict, Forbidden, NeuroMem
from neuromem_client.langgraph import NeuroMemStore

from tests.clients.conftest import FAST

ALICE, BOB = "cl:alice", "cl:bob"


@pytest.fixture
def store(live_server, token):
    store = NeuroMemStore(base_url=live_server.url, token=token, **FAST)
    yield store
    store.close()


def test_put_get_overwrite_and_delete(store: NeuroMemStore, nm: NeuroMem):
    namespace = (ALICE, "prefs")
    assert store.get(namespace, "theme") is None
    store.put(namespace, "theme", {"text": "The user likes dark mode", "source": "settings"})
    item = store.get(namespace, "theme")
    assert isinstance(item, Item)
    assert (item.namespace, item.key) == (namespace, "theme")
    assert item.value == {"text": "The user likes dark mode", "source": "settings"}
    assert item.created_at.tzinfo is not None and item.updated_at >= item.created_at

    store.put(namespace, "theme", {"text": "The user likes light mode", "source": "settings"})
    assert store.get(namespace, "theme").value["text"] == "The user likes light mode"
    store.put(namespace, "theme", {"text": "The user likes light mode", "source": "chat"})
    assert store.get(namespace, "theme").value["source"] == "chat"

    # One memory of the user's, its versions the puts that changed the text.
    [memory] = nm.memories.list(ALICE)
    assert memory["content"] == "The user likes light mode" and memory["version"] == 3
    assert memory["key"] == '["prefs","theme"]'
    assert memory["metadata"] == {
        "langgraph": {"namespace": ["prefs"], "key": "theme", "fields": {"source": "chat"}}
    }

    store.delete(namespace, "theme")
    assert store.get(namespace, "theme") is None
    store.delete(namespace, "theme")  # nothing to delete: no error
    assert list(nm.memories.list(ALICE)) == []


def test_a_value_without_text_is_stored_as_json(store: NeuroMemStore, nm: NeuroMem):
    value = {"color": "red", "score": 4.5, "tags": ["a", "b"], "nested": {"x": 1}}
    store.put((ALICE,), "doc", value)
    assert store.get((ALICE,), "doc").value == value
    [memory] = nm.memories.list(ALICE)
    assert json.loads(memory["content"]) == value
    assert memory["metadata"] == {"langgraph": {"namespace": [], "key": "doc"}}


def test_namespace_rules(store: NeuroMemStore):
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(namespace, "foo", doc))
    with pytest.raises(InvalidNamespaceError):  # past the public API: no end user to name
        store.batch([PutOp((), "foo", doc)])
    store.put((ALICE, "langgraph", "foo"), "bar", doc)
    assert store.get((ALICE, "langgraph", "foo"), "bar").value == doc
    assert store.search((ALICE, "langgraph", "foo"))[0].value == doc


def test_search_by_filter_in_pages(store: NeuroMemStore):
    docs = [
        ("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
        ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
        ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
        ("doc4", {"text": "blue car", "color": "blue", "score": 3.5}),
    ]
    for key, value in docs:
        store.put((ALICE, "test"), key, value)
    store.put((ALICE, "other"), "doc5", {"text": "red bicycle", "color": "red"})

    def keys(*args, **kwargs) -> list[str]:
        return [item.key for item in store.search(*args, **kwargs)]

    assert keys((ALICE, "test")) == ["doc1", "doc2", "doc3", "doc4"]  # oldest first
    assert keys((ALICE,), filter={"color": "red"}) == ["doc1", "doc2", "doc5"]
    assert keys((ALICE, "test"), filter={"score": {"$gt": 3.2}}) == ["doc1", "doc3", "doc4"]
    assert keys((ALICE, "test"), filter={"score": {"$gte": 4.0}, "color": "green"}) == ["doc3"]
    assert keys((ALICE, "test"), filter={"color": {"$ne": "red"}}) == ["doc3", "doc4"]
    assert keys((ALICE, "test"), limit=2) == ["doc1", "doc2"]
    assert keys((ALICE, "test"), limit=2, offset=2) == ["doc3", "doc4"]
    assert keys((BOB,)) == []
    assert all(item.score is None for item in store.search((ALICE,)))


def test_search_with_a_query_is_recall(store: NeuroMemStore):
    store.put((ALICE, "memories"), "tea", {"text": "The user likes green tea", "kind": "taste"})
    store.put((ALICE, "memories"), "city", {"text": "The user lives in Oslo", "kind": "place"})
    store.put((ALICE, "work"), "job", {"text": "The user works as a nurse in Oslo"})
    store.put((BOB, "memories"), "tea", {"text": "The user likes black tea"})

    [hit] = store.search((ALICE, "memories"), query="green tea")
    assert isinstance(hit, SearchItem)
    assert (hit.key, hit.value["text"], hit.namespace) == (
        "tea",
        "The user likes green tea",
        (ALICE, "memories"),
    )
    assert hit.score is not None and hit.score > 0

    in_oslo = store.search((ALICE,), query="Oslo", limit=5)
    assert {item.key for item in in_oslo} == {"city", "job"}
    assert [i.key for i in store.search((ALICE,), query="Oslo", filter={"kind": "place"})] == [
        "city"
    ]
    assert [i.key for i in store.search((ALICE, "work"), query="Oslo")] == ["job"]
    assert len(store.search((ALICE,), query="Oslo", limit=1)) == 1
    assert [i.value["text"] for i in store.search((BOB,), query="tea")] == [
        "The user likes black tea"
    ]
    # An empty query lists, as InMemoryStore does.
    assert len(store.search((ALICE,), query="")) == 3

    # A changed text is found by its new words only.
    store.put((ALICE, "memories"), "tea", {"text": "The user likes strong coffee"})
    found = store.search((ALICE, "memories"), query="green tea")
    assert all(item.value["text"] != "The user likes green tea" for item in found)
    [hit] = store.search((ALICE, "memories"), query="coffee")
    assert (hit.key, hit.value["text"]) == ("tea", "The user likes strong coffee")


def test_list_namespaces(store: NeuroMemStore):
    namespaces = [
        (ALICE, "a", "b", "c"),
        (ALICE, "a", "b", "d", "e"),
        (ALICE, "a", "b", "d", "i"),
        (ALICE, "a", "b", "f"),
        (ALICE, "a", "c", "f"),
        (ALICE, "b", "a", "f"),
        (ALICE, "users", "123"),
        (BOB, "a", "b", "f"),
    ]
    for index, namespace in enumerate(namespaces):
        store.put(namespace, f"id_{index}", {"data": f"value_{index:02d}"})

    def listed(**kwargs) -> list[tuple[str, ...]]:
        return store.list_namespaces(**kwargs)

    assert listed(prefix=(ALICE, "a", "b")) == [
        (ALICE, "a", "b", "c"),
        (ALICE, "a", "b", "d", "e"),
        (ALICE, "a", "b", "d", "i"),
        (ALICE, "a", "b", "f"),
    ]
    assert listed(prefix=(ALICE,), suffix=("f",)) == [
        (ALICE, "a", "b", "f"),
        (ALICE, "a", "c", "f"),
        (ALICE, "b", "a", "f"),
    ]
    assert listed(prefix=(ALICE, "a", "*", "f")) == [(ALICE, "a", "b", "f"), (ALICE, "a", "c", "f")]
    assert listed(prefix=(ALICE,), suffix=("*", "f")) == [
        (ALICE, "a", "b", "f"),
        (ALICE, "a", "c", "f"),
        (ALICE, "b", "a", "f"),
    ]
    assert listed(prefix=(ALICE, "a", "b"), max_depth=4) == [
        (ALICE, "a", "b", "c"),
        (ALICE, "a", "b", "d"),
        (ALICE, "a", "b", "f"),
    ]
    assert listed(prefix=(ALICE, "a", "b"), limit=2) == [
        (ALICE, "a", "b", "c"),
        (ALICE, "a", "b", "d", "e"),
    ]
    assert listed(prefix=(ALICE, "a", "b"), offset=2) == [
        (ALICE, "a", "b", "d", "i"),
        (ALICE, "a", "b", "f"),
    ]
    assert listed(prefix=(ALICE, "nonexistent")) == []
    assert listed(prefix=(BOB,)) == [(BOB, "a", "b", "f")]
    # Every end user's namespaces: a listing of every memory, which needs a staff client.
    with pytest.raises(Forbidden):
        listed(suffix=("f",))


def test_list_every_users_namespaces_as_staff(live_server, make_token, store):
    store.put((ALICE, "a"), "k", {"text": "one"})
    store.put((BOB, "b"), "k", {"text": "two"})
    staff = NeuroMemStore(base_url=live_server.url, token=make_token("ops", [], staff=True))
    assert staff.list_namespaces() == [(ALICE, "a"), (BOB, "b")]
    assert staff.list_namespaces(max_depth=1) == [(ALICE,), (BOB,)]
    assert staff.list_namespaces(prefix=("*", "b")) == [(BOB, "b")]
    staff.close()


def test_a_batch_reads_before_it_writes_and_the_last_put_wins(store: NeuroMemStore):
    namespace = (ALICE, "test")
    results = store.batch(
        [
            PutOp(namespace, "key", {"text": "first version"}),
            GetOp(namespace, "key"),
            PutOp(namespace, "key", {"text": "second version"}),
        ]
    )
    assert results == [None, None, None]
    assert store.get(namespace, "key").value == {"text": "second version"}
    assert store.batch([GetOp(namespace, "key"), GetOp(namespace, "missing")])[1] is None


def test_the_store_sees_only_its_own_memories(store: NeuroMemStore, nm: NeuroMem):
    nm.memories.add(ALICE, "The user likes green tea")
    store.put((ALICE,), "tea", {"text": "The user drinks green tea daily"})
    assert [item.key for item in store.search((ALICE,), query="green tea")] == ["tea"]
    assert [item.key for item in store.search((ALICE,))] == ["tea"]
    assert {hit["content"] for hit in nm.recall(ALICE, "green tea")["merged"]} == {
        "The user likes green tea",
        "The user drinks green tea daily",
    }


def test_one_text_under_two_keys_conflicts(store: NeuroMemStore):
    # The API holds a content once per user and type: a second key for it is refused.
    store.put((ALICE,), "first", {"text": "The user likes green tea"})
    with pytest.raises(Conflict) as raised:
        store.put((ALICE,), "second", {"text": "The user likes green tea"})
    assert raised.value.field == "key"


def test_async_batches(live_server, token):
    docs = [(f"doc{i}", {"text": word, "index": i}) for i, word in enumerate(WORDS)]

    async def main() -> None:
        async with AsyncNeuroMem(live_server.url, token, **FAST) as client:
            await batches(NeuroMemStore(client))

    async def batches(store: NeuroMemStore) -> None:
        # Built from an async client: the store makes the sync one with its options.
        namespace = (ALICE, "test")
        await asyncio.gather(*(store.aput(namespace, key, value) for key, value in docs))
        await asyncio.gather(*(store.adelete(namespace, key) for key, _ in docs[:3]))
        got = await asyncio.gather(*(store.aget(namespace, key) for key, _ in docs))
        assert [item is None for item in got] == [True] * 3 + [False] * (len(docs) - 3)
        assert got[5].value == docs[5][1]
        found = await store.asearch(namespace, filter={"index": {"$lte": 4}})
        assert sorted(item.key for item in found) == ["doc3", "doc4"]
        hits = await store.asearch(namespace, query=WORDS[7])
        assert hits[0].key == "doc7"
        assert await store.alist_namespaces(prefix=(ALICE,)) == [namespace]
        assert store.get(namespace, "doc5").value == docs[5][1]  # the sync side works too
        store.close()

    asyncio.run(main())


WORDS = ["apple", "banana", "cherry", "damson", "elderberry", "fig", "guava", "huckleberry"]


@pytest.mark.parametrize(
    "condition",
    [{"color": {"$ne": "red"}}, {"color": {"$eq": None}}, {"sizes": [1, 2]}, {"sizes": (1, 2)}],
)
def test_a_filter_reads_as_inmemorystores(store: NeuroMemStore, condition):
    values = {
        "a": {"text": "kalo mine ruti", "color": "red", "sizes": [1, 2]},
        "b": {"text": "saka vomi nelo", "color": "blue"},
        "c": {"text": "tivo lomi kasa"},
    }
    reference = InMemoryStore()
    for key, value in values.items():
        store.put(("cl:alice", "t"), key, value)
        reference.put(("cl:alice", "t"), key, value)
    expected = sorted(item.key for item in reference.search(("cl:alice", "t"), filter=condition))
    assert (
        sorted(item.key for item in store.search(("cl:alice", "t"), filter=condition)) == expected
    )


def test_putting_a_value_holding_a_secret_again_changes_nothing(store: NeuroMemStore, nm: NeuroMem):
    value = {"text": "The user said my password is Lz8Kq2Wv9"}
    for _ in range(3):
        store.put(("cl:alice", "s"), "k", value)
    [memory] = [m for m in nm.memories.list("cl:alice")]
    assert memory["version"] == 1 and "Lz8Kq2Wv9" not in memory["content"]
