"""The asynchronous client: `AsyncNeuroMem(base_url=…, token=…)`, the synchronous one's
calls as coroutines (and its listings as async iterators)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any, Unpack, cast

import httpx

from neuromem_client._core import (
    BATCH_MAX,
    IDEMPOTENT_METHODS,
    PAGE_MAX,
    ClientOptions,
    batches,
    body,
    page_of,
    query_params,
    reindexed,
    retry_delay,
    soul_path,
    wire,
)
from neuromem_client.errors import NeuroMemError, error_from_response, error_from_transport
from neuromem_client.types import (
    BatchItemResult,
    Entity,
    EntityDetail,
    ForgetResult,
    Health,
    HistoryEvent,
    Link,
    LinkRemoved,
    Memory,
    MemoryChanges,
    MemoryInput,
    MemoryType,
    MemoryWithLinks,
    MessageResult,
    PromptContext,
    Proposal,
    PurgeResult,
    RecallResult,
    SearchHit,
    Session,
    Soul,
    SoulVersion,
    SoulVersionSummary,
    Stats,
    TraitDetail,
    Traits,
    WhoAmI,
    WriteResult,
)


class AsyncNeuroMem:
    """NeuroMem's client with coroutines: use it within one event loop, and close it
    (`await aclose()`, or `async with`) to release its connections. `ClientOptions` explains
    the keyword arguments."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.options = ClientOptions(
            base_url, token, timeout, max_retries, backoff, max_backoff, dict(headers or {})
        )
        self._http = httpx.AsyncClient(**self.options.http_options())
        self.memories = AsyncMemories(self)
        self.sessions = AsyncSessions(self)
        self.users = AsyncUsers(self)
        self.traits = AsyncTraitsResource(self)
        self.soul = AsyncSoulResource(self)

    @classmethod
    def from_options(cls, options: ClientOptions) -> AsyncNeuroMem:
        return cls(**asdict(options))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncNeuroMem:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- Transport ----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        idempotent: bool | None = None,
    ) -> httpx.Response:
        """One call of the API (`path` under /api/v1), retried when it is idempotent (by its
        method, unless `idempotent` says) and failed with 429, 503 or no answer. Answers the
        successful response; raises the NeuroMemError an error answer stands for."""
        retryable = method in IDEMPOTENT_METHODS if idempotent is None else idempotent
        attempt = 0
        while True:
            failure: NeuroMemError
            try:
                response = await self._http.request(method, path, params=params, json=json)
            except httpx.TransportError as error:
                failure = error_from_transport(error)
                failure.__cause__ = error
            else:
                if response.is_success:
                    return response
                failure = error_from_response(response)
            delay = retry_delay(self.options, attempt, failure, retryable)
            if delay is None:
                raise failure
            await asyncio.sleep(delay)
            attempt += 1

    async def _data(self, method: str, path: str, **kwargs: Any) -> Any:
        return (await self.request(method, path, **kwargs)).json()["data"]

    async def _pages(self, path: str, params: dict[str, Any]) -> AsyncIterator[Any]:
        """Every item of a paged route, a page at a time, following `page.next`."""
        cursor = None
        while True:
            page_params = params if cursor is None else {**params, "cursor": cursor}
            items, cursor = page_of(await self.request("GET", path, params=page_params))
            for item in items:
                yield item
            if cursor is None:
                return

    # --- Recall, search, statistics -----------------------------------------------------

    async def recall(
        self,
        user_id: str,
        query: str,
        *,
        limit: int | None = None,
        memory_types: Sequence[MemoryType] | None = None,
        as_of: datetime | str | None = None,
        include_traits: bool | None = None,
        compact: bool = False,
    ) -> RecallResult:
        """The memories that answer `query`, best first (`merged`), and the user's believed
        traits. Read-only, so retried like a GET."""
        fields = "compact" if compact else None
        payload = body(
            user_id=user_id,
            query=query,
            limit=limit,
            memory_types=list(memory_types) if memory_types is not None else None,
            as_of=as_of,
            include_traits=include_traits,
            fields=fields,
        )
        return await self._data("POST", "/recall/", json=payload, idempotent=True)

    async def search(
        self,
        user_id: str,
        query: str,
        *,
        limit: int | None = None,
        memory_type: MemoryType | None = None,
        state: str | Sequence[str] | None = None,
        score_min: float | None = None,
        score_max: float | None = None,
        include_all_states: bool | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        scored: bool = False,
    ) -> list[SearchHit]:
        """Search by words (no question rules), sent as `q`; `scored` adds the parts of each
        hit's score (`/search/scored/`)."""
        params = query_params(
            user_id=user_id,
            q=query,
            limit=limit,
            memory_type=memory_type,
            state=state,
            score_min=score_min,
            score_max=score_max,
            include_all_states=include_all_states,
            sort_by=sort_by,
            sort_order=sort_order,
        )
        return await self._data("GET", "/search/scored/" if scored else "/search/", params=params)

    async def stats(
        self,
        user_id: str | None = None,
        *,
        from_timestamp: int | None = None,
        to_timestamp: int | None = None,
        histogram_bin_size: int | None = None,
        cache_ttl_ms: int | None = None,
    ) -> Stats:
        """Counts per state and a score histogram (timestamps: epoch milliseconds). Without
        `user_id`, every end user: staff clients only."""
        params = query_params(
            user_id=user_id,
            from_timestamp=from_timestamp,
            to_timestamp=to_timestamp,
            histogram_bin_size=histogram_bin_size,
            cache_ttl_ms=cache_ttl_ms,
        )
        return await self._data("GET", "/memories/stats/", params=params)

    async def whoami(self) -> WhoAmI:
        return await self._data("GET", "/auth/whoami/")

    async def health(self) -> Health:
        """The service's health; an unhealthy one raises Unavailable (after the retries)."""
        return await self._data("GET", "/health/")


class AsyncMemories:
    """`/memories/`: write, read, list, change and link memories."""

    def __init__(self, client: AsyncNeuroMem) -> None:
        self._c = client

    async def add(
        self,
        user_id: str,
        content: str,
        *,
        memory_type: MemoryType = "fact",
        metadata: dict[str, Any] | None = None,
        importance: float | None = None,
        valid_at: datetime | str | None = None,
        key: str | None = None,
        embedding: list[float] | None = None,
        session_id: str | None = None,
        source_episode_ids: list[str] | None = None,
    ) -> WriteResult:
        """Write one memory: `operation` says ADD, UPDATE (it superseded a near duplicate) or
        NOOP (already held). Not retried: a repeat could write twice."""
        payload = body(
            user_id=user_id,
            content=content,
            memory_type=memory_type,
            metadata=metadata,
            importance=importance,
            valid_at=valid_at,
            key=key,
            embedding=embedding,
            session_id=session_id,
            source_episode_ids=source_episode_ids,
        )
        return await self._c._data("POST", "/memories/", json=payload)

    async def add_many(
        self, items: Iterable[MemoryInput], *, batch_size: int = BATCH_MAX
    ) -> list[BatchItemResult]:
        """Write many memories, `batch_size` (at most 1,000) a request: one result per item,
        in order, `ok` or with its `error`; a bad item fails alone."""
        results: list[BatchItemResult] = []
        for start, chunk in batches(list(items), batch_size):
            answer = await self._c._data("POST", "/memories/batch/", json={"items": chunk})
            results.extend(cast(list[BatchItemResult], reindexed(answer["results"], start)))
        return results

    async def get(
        self, memory_id: str, *, include_embedding: bool = False, sort_links: bool | None = None
    ) -> MemoryWithLinks:
        """One memory, current or not, with its links."""
        params = query_params(
            include="embedding" if include_embedding else None, sort_links=sort_links
        )
        return await self._c._data("GET", f"/memories/{memory_id}/", params=params)

    async def update(
        self, memory_id: str, version: int, **changes: Unpack[MemoryChanges]
    ) -> Memory:
        """Change a current memory whose `version` you read (a stale one raises Conflict with
        `current_version`). New `content` makes a new version; `key=None` clears the key."""
        payload = {"version": version, **{name: wire(v) for name, v in changes.items()}}
        return await self._c._data("PATCH", f"/memories/{memory_id}/", json=payload)

    async def delete(self, memory_id: str) -> Memory:
        """Soft delete: the memory stops being current; its history stays."""
        return await self._c._data("DELETE", f"/memories/{memory_id}/")

    async def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        version: int | None = None,
    ) -> Memory:
        """A new version replaces the memory (with `version`, a stale one raises Conflict)."""
        payload = body(content=content, metadata=metadata, version=version)
        return await self._c._data("POST", f"/memories/{memory_id}/supersede/", json=payload)

    async def invalidate(
        self, memory_id: str, *, invalid_at: datetime | str | None = None
    ) -> Memory:
        """The fact stopped being true at `invalid_at` (default now)."""
        payload = body(invalid_at=invalid_at)
        return await self._c._data("POST", f"/memories/{memory_id}/invalidate/", json=payload)

    async def history(self, memory_id: str) -> list[HistoryEvent]:
        """The memory's audit events, oldest first."""
        return await self._c._data("GET", f"/memories/{memory_id}/history/")

    async def versions(self, memory_id: str) -> list[Memory]:
        """The supersede chain the memory belongs to, oldest first."""
        return await self._c._data("GET", f"/memories/{memory_id}/versions/")

    async def links(self, memory_id: str) -> list[Link]:
        """The memory's links to current memories, in their order."""
        return (await self.get(memory_id))["links"]

    async def link(self, memory_id: str, target_id: str, weight: float) -> Link:
        """Link the memory to another current memory of the same user (0 ≤ weight ≤ 1). One
        link a pair, so a repeat only sets the weight again: retried like a PUT."""
        payload = {"target_id": target_id, "weight": weight}
        return await self._c._data(
            "POST", f"/memories/{memory_id}/links/", json=payload, idempotent=True
        )

    async def unlink(self, memory_id: str, target_id: str) -> LinkRemoved:
        return await self._c._data(
            "DELETE", f"/memories/{memory_id}/links/", params={"target_id": target_id}
        )

    # Last in the class: a method named `list` shadows the builtin in annotations after it.
    def list(
        self,
        user_id: str | None = None,
        *,
        memory_type: MemoryType | None = None,
        state: str | Sequence[str] | None = None,
        include_all_states: bool | None = None,
        include_expired: bool | None = None,
        as_of: datetime | str | None = None,
        score_min: float | None = None,
        score_max: float | None = None,
        key: str | None = None,
        sort_by: str | None = None,
        sort_order: str | None = None,
        include_embedding: bool = False,
        page_size: int = PAGE_MAX,
    ) -> AsyncIterator[Memory]:
        """Every memory that matches, fetched a page (`page_size`, 1–200) at a time as the
        iteration goes. Without `user_id`, every end user: staff clients only."""
        params = query_params(
            user_id=user_id,
            memory_type=memory_type,
            state=state,
            include_all_states=include_all_states,
            include_expired=include_expired,
            as_of=as_of,
            score_min=score_min,
            score_max=score_max,
            key=key,
            sort_by=sort_by,
            sort_order=sort_order,
            include="embedding" if include_embedding else None,
            limit=page_size,
        )
        return self._c._pages("/memories/", params)


class AsyncSessions:
    """`/sessions/`: a conversation, its messages (what they state is extracted), its end."""

    def __init__(self, client: AsyncNeuroMem) -> None:
        self._c = client

    async def open(self, user_id: str, *, metadata: dict[str, Any] | None = None) -> Session:
        return await self._c._data(
            "POST", "/sessions/", json=body(user_id=user_id, metadata=metadata)
        )

    async def add_message(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        sent_at: datetime | str | None = None,
    ) -> MessageResult:
        """Store a message (`user`, `assistant` or `system`); a user's message also writes
        the facts and the episode it states. Not retried: a repeat is another message."""
        payload = body(role=role, content=content, sent_at=sent_at)
        return await self._c._data("POST", f"/sessions/{session_id}/messages/", json=payload)

    async def end(self, session_id: str) -> Session:
        """End the session (a reflection cycle follows); ending it again changes nothing."""
        return await self._c._data("POST", f"/sessions/{session_id}/end/", idempotent=True)


class AsyncUsers:
    """`/users/{user_id}/`: an end user's data, forgetting, and memory graph."""

    def __init__(self, client: AsyncNeuroMem) -> None:
        self._c = client

    async def export(self, user_id: str) -> dict[str, Any]:
        """Everything held about the end user (memories with every version, history,
        sessions, messages, graph …)."""
        return await self._c._data("GET", f"/users/{user_id}/export/")

    async def purge(self, user_id: str) -> PurgeResult:
        """Hard-delete everything about the end user; answers the rows deleted per table."""
        return await self._c._data("DELETE", f"/users/{user_id}/")

    async def forget(
        self,
        user_id: str,
        *,
        topic: str | None = None,
        memory_ids: list[str] | None = None,
        dry_run: bool | None = None,
    ) -> ForgetResult:
        """Forget for good a `topic` ("my home address") or these memories. A dry run only
        answers what would go, so it is retried; a real forget is not (a repeat would
        answer `nothing_held`, hiding what the first one forgot)."""
        payload = body(topic=topic, memory_ids=memory_ids, dry_run=dry_run)
        return await self._c._data(
            "POST", f"/users/{user_id}/forget/", json=payload, idempotent=bool(dry_run)
        )

    def entities(
        self, user_id: str, *, as_of: datetime | str | None = None
    ) -> AsyncIterator[Entity]:
        """The user's entities in their memory graph, oldest first, a page at a time."""
        return self._c._pages(
            f"/users/{user_id}/entities/", query_params(as_of=as_of, limit=PAGE_MAX)
        )

    async def entity(
        self, user_id: str, entity_id: str, *, as_of: datetime | str | None = None
    ) -> EntityDetail:
        """One entity with its edges, current and past."""
        return await self._c._data(
            "GET", f"/users/{user_id}/entities/{entity_id}/", params=query_params(as_of=as_of)
        )


class AsyncTraitsResource:
    """Traits: what the reflection engine believes about an end user."""

    def __init__(self, client: AsyncNeuroMem) -> None:
        self._c = client

    async def list(self, user_id: str) -> Traits:
        """The user's believed traits, grouped by subtype."""
        return await self._c._data("GET", f"/users/{user_id}/traits/")

    async def get(self, trait_id: str) -> TraitDetail:
        """One trait with its evidence, parents and children."""
        return await self._c._data("GET", f"/traits/{trait_id}/")

    async def prompt_context(self, user_id: str, *, max_tokens: int | None = None) -> PromptContext:
        """A markdown block for an agent's system prompt: traits, what holds now, facts."""
        return await self._c._data(
            "GET", f"/users/{user_id}/prompt-context/", params=query_params(max_tokens=max_tokens)
        )

    async def veto(self, trait_id: str, reason: str) -> Memory:
        """Dissolve a trait (staff clients only)."""
        return await self._c._data("POST", f"/traits/{trait_id}/veto/", json={"reason": reason})


class AsyncSoulResource:
    """An agent's SOUL: the caller's default agent, or `agent_id`."""

    def __init__(self, client: AsyncNeuroMem) -> None:
        self._c = client

    async def get(self, *, agent_id: int | None = None) -> Soul:
        """The active version with its SOUL.md text; NotFound before the bootstrap."""
        return await self._c._data("GET", soul_path(agent_id))

    async def bootstrap(self, content: str, *, agent_id: int | None = None) -> SoulVersion:
        """Version 0; idempotent (an agent with a SOUL keeps it: `skipped` is true)."""
        return await self._c._data(
            "POST", soul_path(agent_id, "bootstrap/"), json={"content": content}, idempotent=True
        )

    async def propose(
        self,
        intent: str,
        new_content: str,
        *,
        risk_notes: str | None = None,
        justification: str | None = None,
        evidence_refs: list[str] | None = None,
        auto_apply: bool | None = None,
        agent_id: int | None = None,
    ) -> Proposal:
        """Propose a new document: evaluated against the contract, applied when it passes
        (unless `auto_apply` is false)."""
        payload = body(
            intent=intent,
            new_content=new_content,
            risk_notes=risk_notes,
            justification=justification,
            evidence_refs=evidence_refs,
            auto_apply=auto_apply,
        )
        return await self._c._data("POST", soul_path(agent_id, "proposals/"), json=payload)

    def versions(self, *, agent_id: int | None = None) -> AsyncIterator[SoulVersionSummary]:
        """Every version, newest first, a page at a time."""
        return self._c._pages(soul_path(agent_id, "versions/"), {"limit": PAGE_MAX})

    async def version(self, version: int, *, agent_id: int | None = None) -> dict[str, Any]:
        """One version with its predecessor, diff and state changes."""
        return await self._c._data("GET", soul_path(agent_id, f"versions/{version}/"))

    async def apply(self, version: int, *, agent_id: int | None = None) -> SoulVersion:
        return await self._c._data("POST", soul_path(agent_id, f"versions/{version}/apply/"))

    async def veto(
        self, version: int, reason: str, *, agent_id: int | None = None
    ) -> dict[str, Any]:
        """Veto a proposal, or the active version (the previous stable one comes back)."""
        path = soul_path(agent_id, f"versions/{version}/veto/")
        return await self._c._data("POST", path, json={"reason": reason})

    async def rollback(
        self,
        *,
        to_version: int | None = None,
        reason: str | None = None,
        agent_id: int | None = None,
    ) -> SoulVersion:
        """Return to the previous stable version, or `to_version`, as a new active one."""
        payload = body(to_version=to_version, reason=reason)
        return await self._c._data("POST", soul_path(agent_id, "rollback/"), json=payload)

    async def contract(self, *, agent_id: int | None = None) -> dict[str, Any]:
        """The agent's current Core Safety Contract."""
        return await self._c._data("GET", soul_path(agent_id, "contract/"))

    async def set_contract(
        self, anchors: list[str], constraints: list[str], *, agent_id: int | None = None
    ) -> dict[str, Any]:
        """Replace the staff's additions to the contract (staff clients only)."""
        payload = {"anchors": anchors, "constraints": constraints}
        return await self._c._data("PUT", soul_path(agent_id, "contract/"), json=payload)
