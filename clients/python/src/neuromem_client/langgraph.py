"""`NeuroMemStore`: LangGraph's long-term memory interface (`BaseStore`) on NeuroMem.

An item is a memory of the end user its namespace starts with:

- `namespace[0]` is the `user_id` (inside the API client's prefixes); the rest of the
  namespace and the item's key are in the memory's `metadata["langgraph"]`, and together in
  its `key` (`["prefs","theme"]` as JSON), which the API keeps unique among the user's
  current memories, so an item is found by one exact lookup;
- the memory's content is the value's `text` when it has one (its other fields go in
  `metadata["langgraph"]["fields"]`), else the whole value as JSON;
- a put of a new key writes a memory, of a held key changes it (new content makes a new
  version, as `PATCH /memories/{id}/` does), and a delete (`value=None`) deletes it;
- search with a `query` is recall (`POST /recall/`), its hits under the namespace prefix in
  recall's order with recall's score; without one, the user's items oldest first;
- `list_namespaces` reads the namespaces off the items; without the user as the first
  element of `prefix` it reads every end user's memories, which needs a staff token.

The store sees only the memories it wrote (those with `metadata["langgraph"]`). As in
LangGraph's InMemoryStore, a batch's reads see the state before its writes, and of several
puts of one item the last wins.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from neuromem_client._core import PAGE_MAX, Request, Steps, page
from neuromem_client.async_client import AsyncNeuroMem
from neuromem_client.client import NeuroMem
from neuromem_client.errors import Conflict
from neuromem_client.types import Memory, MemoryType

METADATA_KEY = "langgraph"
RECALL_LIMIT = 100  # the API's maximum (RECALL_LIMIT_MAX)


class NeuroMemStore(BaseStore):
    """A LangGraph store on NeuroMem: `NeuroMemStore(base_url=…, token=…)` (and the clients'
    other options), or `NeuroMemStore(client)` with a `NeuroMem` or an `AsyncNeuroMem` (the
    other kind is made with its options). Items are memories of type `memory_type`."""

    def __init__(
        self,
        client: NeuroMem | AsyncNeuroMem | None = None,
        *,
        base_url: str | None = None,
        token: str | None = None,
        memory_type: MemoryType = "fact",
        **options: Any,
    ) -> None:
        owned: list[NeuroMem | AsyncNeuroMem] = []
        if client is None:
            if base_url is None or token is None:
                raise TypeError("NeuroMemStore needs a client, or base_url and token")
            client = NeuroMem(base_url, token, **options)
            owned.append(client)
        if isinstance(client, NeuroMem):
            self._client, self._aclient = client, AsyncNeuroMem.from_options(client.options)
            owned.append(self._aclient)
        else:
            self._client, self._aclient = NeuroMem.from_options(client.options), client
            owned.append(self._client)
        self._owned = owned  # what close() and aclose() release
        self.memory_type = memory_type

    def close(self) -> None:
        """Close the sync client the store made (`aclose` closes the async one)."""
        for client in self._owned:
            if isinstance(client, NeuroMem):
                client.close()

    async def aclose(self) -> None:
        for client in self._owned:
            if isinstance(client, AsyncNeuroMem):
                await client.aclose()

    # Each operation is written once, as `Steps` (the requests it needs); `batch` carries it
    # out with the sync client, `abatch` with the async one.

    # --- BaseStore ----------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        reads, puts = self._plan(ops)
        for index, steps in reads:
            results[index] = self._client._call(steps)
        for steps in puts:
            self._client._call(steps)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        reads, puts = self._plan(ops)
        answers = await asyncio.gather(*(self._aclient._call(steps) for _, steps in reads))
        for (index, _), answer in zip(reads, answers, strict=True):
            results[index] = answer
        await asyncio.gather(*(self._aclient._call(steps) for steps in puts))
        return results

    def _plan(self, ops: list[Op]) -> tuple[list[tuple[int, Steps[Result]]], list[Steps[None]]]:
        """The reads, each with its place in the results, and the puts, the last of each
        item's only."""
        reads: list[tuple[int, Steps[Result]]] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for index, op in enumerate(ops):
            if isinstance(op, GetOp):
                reads.append((index, self._get(op)))
            elif isinstance(op, SearchOp):
                reads.append((index, self._search(op)))
            elif isinstance(op, ListNamespacesOp):
                reads.append((index, self._list_namespaces(op)))
            elif isinstance(op, PutOp):
                puts.pop((op.namespace, op.key), None)  # re-inserted last: writes keep order
                puts[(op.namespace, op.key)] = op
            else:
                raise ValueError(f"Unknown operation: {type(op).__name__}")
        return reads, [self._put(op) for op in puts.values()]

    # --- Operations ---------------------------------------------------------------------

    def _lookup(self, user_id: str, key: str) -> Steps[Memory | None]:
        """The user's current memory under `key` (deprecated ones too), if any."""
        answer = yield Request(
            "GET",
            "/memories/",
            {"user_id": user_id, "key": key, "include_all_states": "true", "limit": 1},
        )
        return answer["data"][0] if answer["data"] else None

    def _get(self, op: GetOp) -> Steps[Item | None]:
        user_id, path = split(op.namespace)
        memory = yield from self._lookup(user_id, memory_key(path, op.key))
        return as_item(memory) if memory is not None and is_item(memory) else None

    def _put(self, op: PutOp) -> Steps[None]:
        user_id, path = split(op.namespace)
        key = memory_key(path, op.key)
        # A held key or a stale version means another writer came first: read again, once.
        for attempt in range(2):
            memory = yield from self._lookup(user_id, key)
            try:
                if op.value is None:
                    if memory is not None:
                        yield Request("DELETE", f"/memories/{memory['id']}/")
                    return
                yield from self._write(user_id, key, memory, path, op)
                return
            except Conflict:
                if attempt:
                    raise

    def _write(
        self, user_id: str, key: str, memory: Memory | None, path: list[str], op: PutOp
    ) -> Steps[None]:
        assert op.value is not None
        content, metadata = memory_fields(path, op.key, dict(op.value))
        if memory is None:
            yield Request(
                "POST",
                "/memories/",
                json={
                    "user_id": user_id,
                    "content": content,
                    "memory_type": self.memory_type,
                    "metadata": metadata,
                    "key": key,
                },
            )
            return
        changes: dict[str, Any] = {}
        if memory["content"] != content:
            changes["content"] = content
        if memory["metadata"] != metadata:
            changes["metadata"] = metadata
        if memory["memory_type"] != self.memory_type:
            changes["memory_type"] = self.memory_type
        if changes:
            yield Request(
                "PATCH",
                f"/memories/{memory['id']}/",
                json={"version": memory["version"], **changes},
            )

    def _search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        user_id, path = split(op.namespace_prefix)
        wanted = op.offset + op.limit
        found: list[SearchItem] = []
        if op.query and op.query.strip():
            answer = yield Request(
                "POST",
                "/recall/",
                json={
                    "user_id": user_id,
                    "query": op.query,
                    "limit": RECALL_LIMIT,
                    "memory_types": [self.memory_type],
                    "include_traits": False,
                },
                idempotent=True,  # recall only reads
            )
            for hit in answer["data"]["merged"]:
                if is_item(hit) and under(hit, path) and matches(item_value(hit), op.filter):
                    found.append(as_search_item(hit, hit["score"]))
            return found[op.offset : wanted]
        params = {
            "user_id": user_id,
            "include_all_states": "true",
            "sort_order": "asc",
            "limit": PAGE_MAX,
        }
        cursor: str | None = None
        while len(found) < wanted:
            memories, cursor = yield from page("/memories/", params, cursor)
            for memory in memories:
                if (
                    is_item(memory)
                    and under(memory, path)
                    and matches(item_value(memory), op.filter)
                ):
                    found.append(as_search_item(memory, None))
            if cursor is None:
                break
        return found[op.offset : wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        conditions = op.match_conditions or ()
        user_ids = {
            c.path[0] for c in conditions if c.match_type == "prefix" and c.path[:1] != ("*",)
        }
        params: dict[str, Any] = {"include_all_states": "true", "limit": PAGE_MAX}
        if len(user_ids) == 1:
            params["user_id"] = user_ids.pop()
        elif user_ids:  # two prefixes naming different users: nothing matches both
            return []
        namespaces: set[tuple[str, ...]] = set()
        cursor: str | None = None
        while True:
            memories, cursor = yield from page("/memories/", params, cursor)
            namespaces.update(namespace(memory) for memory in memories if is_item(memory))
            if cursor is None:
                break
        matched = [ns for ns in namespaces if all(does_match(c, ns) for c in conditions)]
        if op.max_depth is not None:
            matched = list({ns[: op.max_depth] for ns in matched})
        return sorted(matched)[op.offset : op.offset + op.limit]


# --- Items and memories ----------------------------------------------------------------


def split(namespace: tuple[str, ...]) -> tuple[str, list[str]]:
    """The end user (the first element) and the rest of a namespace."""
    if not namespace:
        raise InvalidNamespaceError("A NeuroMem namespace starts with the end user's user_id.")
    return namespace[0], list(namespace[1:])


def memory_key(path: list[str], key: str) -> str:
    """The memory `key` of an item: the rest of its namespace and its key, as a JSON list."""
    encoded = json.dumps([*path, key], ensure_ascii=False, separators=(",", ":"))
    if len(encoded) > 255:  # the API's limit on a memory key
        raise ValueError(f"Namespace and key too long for a NeuroMem key: {encoded[:60]}…")
    return encoded


def memory_fields(path: list[str], key: str, value: dict[str, Any]) -> tuple[str, dict]:
    """A value's memory content and metadata: its `text`, the other fields beside it."""
    stored: dict[str, Any] = {"namespace": path, "key": key}
    text = value.get("text")
    if isinstance(text, str) and text.strip():
        stored["fields"] = {name: v for name, v in value.items() if name != "text"}
        return text, {METADATA_KEY: stored}
    return json.dumps(value, ensure_ascii=False), {METADATA_KEY: stored}


def is_item(memory: dict[str, Any]) -> bool:
    return isinstance(memory.get("metadata", {}).get(METADATA_KEY), dict)


def namespace(memory: dict[str, Any]) -> tuple[str, ...]:
    return (memory["user_id"], *memory["metadata"][METADATA_KEY]["namespace"])


def under(memory: dict[str, Any], path: list[str]) -> bool:
    """Whether the memory's namespace (after the user) starts with `path`."""
    return memory["metadata"][METADATA_KEY]["namespace"][: len(path)] == path


def item_value(memory: dict[str, Any]) -> dict[str, Any]:
    stored = memory["metadata"][METADATA_KEY]
    if "fields" in stored:
        return {"text": memory["content"], **stored["fields"]}
    try:
        value = json.loads(memory["content"])
    except ValueError:  # the content was changed through the API into plain text
        value = None
    return value if isinstance(value, dict) else {"text": memory["content"]}


def as_item(memory: dict[str, Any]) -> Item:
    return Item(
        namespace=namespace(memory),
        key=memory["metadata"][METADATA_KEY]["key"],
        value=item_value(memory),
        created_at=memory["created_at"],
        updated_at=memory["updated_at"] or memory["created_at"],
    )


def as_search_item(memory: dict[str, Any], score: float | None) -> SearchItem:
    found = as_item(memory)
    return SearchItem(
        found.namespace, found.key, found.value, found.created_at, found.updated_at, score
    )


# --- Filters and namespace conditions, as LangGraph's InMemoryStore reads them ----------

OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return all(compare(value.get(name), wanted) for name, wanted in (filter or {}).items())


def compare(actual: Any, wanted: Any) -> bool:
    """As InMemoryStore compares: `{"$gt": 3}` compares (a missing field is no number: never
    greater nor less, but `$ne` anything but None), another dict matches nested fields, a list
    or tuple element by element, anything else is equal."""
    if isinstance(wanted, dict):
        if any(name.startswith("$") for name in wanted):
            return all(
                (actual is not None or name in ("$eq", "$ne")) and OPERATORS[name](actual, operand)
                for name, operand in wanted.items()
            )
        return isinstance(actual, dict) and matches(actual, wanted)
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return actual == wanted


def does_match(condition: MatchCondition, ns: tuple[str, ...]) -> bool:
    """A prefix or suffix condition, `*` matching any one element."""
    path = tuple(condition.path)
    if len(ns) < len(path):
        return False
    part = ns[: len(path)] if condition.match_type == "prefix" else ns[len(ns) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))
