"""The API's calls, each described once as the requests it makes, for both clients: on a
`NeuroMem` a call answers its result (a listing, an iterator), on an `AsyncNeuroMem` an
awaitable (an async iterator)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any, Generic, Self, TypeVar, Unpack, cast

from neuromem_client._calls import C, Listing, Resource, endpoint, listing
from neuromem_client._core import (
    BATCH_MAX,
    PAGE_MAX,
    ClientOptions,
    Request,
    Steps,
    batches,
    body,
    data,
    query_params,
    reindexed,
    segment,
    soul_path,
    wire,
)
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
    SoulBootstrap,
    SoulVersion,
    SoulVersionSummary,
    Stats,
    TraitDetail,
    Traits,
    WhoAmI,
    WriteResult,
)

Sent = TypeVar("Sent")  # what `request` answers: a response, or an awaitable of one


class BaseClient(Generic[Sent]):
    """What `NeuroMem` and `AsyncNeuroMem` share: their options, resources and the calls at
    the API's root. A subclass sends requests (`_send`) and carries out calls (`_call`,
    `_pages`) its own way."""

    _HTTP: Any  # the httpx client class, called with the options' keyword arguments
    _send: Callable[[Request], Sent]

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
        self._http = self._HTTP(**self.options.http_options())
        self.memories: Memories[Self] = Memories(self)
        self.sessions: Sessions[Self] = Sessions(self)
        self.users: Users[Self] = Users(self)
        self.traits: TraitsResource[Self] = TraitsResource(self)
        self.soul: SoulResource[Self] = SoulResource(self)

    @classmethod
    def from_options(cls, options: ClientOptions) -> Self:
        return cls(**asdict(options))

    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        idempotent: bool | None = None,
    ) -> Sent:
        """One call of the API (`path` under /api/v1), retried when it is idempotent (by its
        method, unless `idempotent` says) and failed with 429, 503 or no answer. Answers the
        successful response; raises the NeuroMemError an error answer stands for."""
        return self._send(Request(method, path, params, json, idempotent))

    # --- Recall, search, statistics -----------------------------------------------------

    @endpoint
    def recall(
        self,
        user_id: str,
        query: str,
        *,
        limit: int | None = None,
        memory_types: Sequence[MemoryType] | None = None,
        as_of: datetime | str | None = None,
        include_traits: bool | None = None,
        compact: bool = False,
    ) -> Steps[RecallResult]:
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
        return data("POST", "/recall/", json=payload, idempotent=True)

    @endpoint
    def search(
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
    ) -> Steps[list[SearchHit]]:
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
        return data("GET", "/search/scored/" if scored else "/search/", params=params)

    @endpoint
    def stats(
        self,
        user_id: str | None = None,
        *,
        from_timestamp: int | None = None,
        to_timestamp: int | None = None,
        histogram_bin_size: int | None = None,
        cache_ttl_ms: int | None = None,
    ) -> Steps[Stats]:
        """Counts per state and a score histogram (timestamps: epoch milliseconds). Without
        `user_id`, every end user: staff clients only."""
        params = query_params(
            user_id=user_id,
            from_timestamp=from_timestamp,
            to_timestamp=to_timestamp,
            histogram_bin_size=histogram_bin_size,
            cache_ttl_ms=cache_ttl_ms,
        )
        return data("GET", "/memories/stats/", params=params)

    @endpoint
    def whoami(self) -> Steps[WhoAmI]:
        return data("GET", "/auth/whoami/")

    @endpoint
    def health(self) -> Steps[Health]:
        """The service's health; an unhealthy one raises Unavailable (after the retries)."""
        return data("GET", "/health/")


class Memories(Resource[C]):
    """`/memories/`: write, read, list, change and link memories."""

    @endpoint
    def add(
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
    ) -> Steps[WriteResult]:
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
        return data("POST", "/memories/", json=payload)

    @endpoint
    def add_many(
        self, items: Iterable[MemoryInput], *, batch_size: int = BATCH_MAX
    ) -> Steps[list[BatchItemResult]]:
        """Write many memories, `batch_size` (at most 1,000) a request: one result per item,
        in order, `ok` or with its `error`; a bad item fails alone."""
        results: list[BatchItemResult] = []
        items = [{name: wire(value) for name, value in item.items()} for item in items]
        for start, chunk in batches(items, batch_size):
            answer = yield from data("POST", "/memories/batch/", json={"items": chunk})
            results.extend(cast(list[BatchItemResult], reindexed(answer["results"], start)))
        return results

    @endpoint
    def get(
        self, memory_id: str, *, include_embedding: bool = False, sort_links: bool | None = None
    ) -> Steps[MemoryWithLinks]:
        """One memory, current or not, with its links."""
        params = query_params(
            include="embedding" if include_embedding else None, sort_links=sort_links
        )
        return data("GET", f"/memories/{segment(memory_id)}/", params=params)

    @endpoint
    def update(
        self, memory_id: str, version: int, **changes: Unpack[MemoryChanges]
    ) -> Steps[Memory]:
        """Change a current memory whose `version` you read (a stale one raises Conflict with
        `current_version`). New `content` makes a new version; `key=None` clears the key."""
        payload = {"version": version, **{name: wire(v) for name, v in changes.items()}}
        return data("PATCH", f"/memories/{segment(memory_id)}/", json=payload)

    @endpoint
    def delete(self, memory_id: str) -> Steps[Memory]:
        """Soft delete: the memory stops being current; its history stays."""
        return data("DELETE", f"/memories/{segment(memory_id)}/")

    @endpoint
    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        metadata: dict[str, Any] | None = None,
        version: int | None = None,
    ) -> Steps[Memory]:
        """A new version replaces the memory (with `version`, a stale one raises Conflict)."""
        payload = body(content=content, metadata=metadata, version=version)
        return data("POST", f"/memories/{segment(memory_id)}/supersede/", json=payload)

    @endpoint
    def invalidate(
        self, memory_id: str, *, invalid_at: datetime | str | None = None
    ) -> Steps[Memory]:
        """The fact stopped being true at `invalid_at` (default now)."""
        payload = body(invalid_at=invalid_at)
        return data("POST", f"/memories/{segment(memory_id)}/invalidate/", json=payload)

    @endpoint
    def history(self, memory_id: str) -> Steps[list[HistoryEvent]]:
        """The memory's audit events, oldest first."""
        return data("GET", f"/memories/{segment(memory_id)}/history/")

    @endpoint
    def versions(self, memory_id: str) -> Steps[list[Memory]]:
        """The supersede chain the memory belongs to, oldest first."""
        return data("GET", f"/memories/{segment(memory_id)}/versions/")

    @endpoint
    def links(self, memory_id: str) -> Steps[list[Link]]:
        """The memory's links to current memories, in their order."""
        memory = yield from data("GET", f"/memories/{segment(memory_id)}/")
        return memory["links"]

    @endpoint
    def link(self, memory_id: str, target_id: str, weight: float) -> Steps[Link]:
        """Link the memory to another current memory of the same user (0 ≤ weight ≤ 1). One
        link a pair, so a repeat only sets the weight again: retried like a PUT."""
        payload = {"target_id": target_id, "weight": weight}
        return data("POST", f"/memories/{segment(memory_id)}/links/", json=payload, idempotent=True)

    @endpoint
    def unlink(self, memory_id: str, target_id: str) -> Steps[LinkRemoved]:
        # Tried once: a repeat after the link went would answer NotFound.
        return data(
            "DELETE",
            f"/memories/{segment(memory_id)}/links/",
            params={"target_id": target_id},
            idempotent=False,
        )

    # Last in the class: a method named `list` shadows the builtin in annotations after it.
    @listing
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
    ) -> Listing[Memory]:
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
        return Listing("/memories/", params)


class Sessions(Resource[C]):
    """`/sessions/`: a conversation, its messages (what they state is extracted), its end."""

    @endpoint
    def open(self, user_id: str, *, metadata: dict[str, Any] | None = None) -> Steps[Session]:
        return data("POST", "/sessions/", json=body(user_id=user_id, metadata=metadata))

    @endpoint
    def add_message(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        sent_at: datetime | str | None = None,
    ) -> Steps[MessageResult]:
        """Store a message (`user`, `assistant` or `system`); a user's message also writes
        the facts and the episode it states. Not retried: a repeat is another message."""
        payload = body(role=role, content=content, sent_at=sent_at)
        return data("POST", f"/sessions/{segment(session_id)}/messages/", json=payload)

    @endpoint
    def end(self, session_id: str) -> Steps[Session]:
        """End the session (a reflection cycle follows); ending it again changes nothing."""
        return data("POST", f"/sessions/{segment(session_id)}/end/", idempotent=True)


class Users(Resource[C]):
    """`/users/{user_id}/`: an end user's data, forgetting, and memory graph."""

    @endpoint
    def export(self, user_id: str) -> Steps[dict[str, Any]]:
        """Everything held about the end user (memories with every version, history,
        sessions, messages, graph …)."""
        return data("GET", f"/users/{segment(user_id)}/export/")

    @endpoint
    def purge(self, user_id: str) -> Steps[PurgeResult]:
        """Hard-delete everything about the end user; answers the rows deleted per table. Tried
        once: a repeat would answer zero rows, not what was deleted."""
        return data("DELETE", f"/users/{segment(user_id)}/", idempotent=False)

    @endpoint
    def forget(
        self,
        user_id: str,
        *,
        topic: str | None = None,
        memory_ids: list[str] | None = None,
        dry_run: bool | None = None,
    ) -> Steps[ForgetResult]:
        """Forget for good a `topic` ("my home address") or these memories. A dry run only
        answers what would go, so it is retried; a real forget is not (a repeat would
        answer `nothing_held`, hiding what the first one forgot)."""
        payload = body(topic=topic, memory_ids=memory_ids, dry_run=dry_run)
        return data(
            "POST", f"/users/{segment(user_id)}/forget/", json=payload, idempotent=bool(dry_run)
        )

    @listing
    def entities(self, user_id: str, *, as_of: datetime | str | None = None) -> Listing[Entity]:
        """The user's entities in their memory graph, oldest first, a page at a time."""
        return Listing(
            f"/users/{segment(user_id)}/entities/", query_params(as_of=as_of, limit=PAGE_MAX)
        )

    @endpoint
    def entity(
        self, user_id: str, entity_id: str, *, as_of: datetime | str | None = None
    ) -> Steps[EntityDetail]:
        """One entity with its edges, current and past."""
        path = f"/users/{segment(user_id)}/entities/{segment(entity_id)}/"
        return data("GET", path, params=query_params(as_of=as_of))


class TraitsResource(Resource[C]):
    """Traits: what the reflection engine believes about an end user."""

    @endpoint
    def list(self, user_id: str) -> Steps[Traits]:
        """The user's believed traits, grouped by subtype."""
        return data("GET", f"/users/{segment(user_id)}/traits/")

    @endpoint
    def get(self, trait_id: str) -> Steps[TraitDetail]:
        """One trait with its evidence, parents and children."""
        return data("GET", f"/traits/{segment(trait_id)}/")

    @endpoint
    def prompt_context(
        self, user_id: str, *, max_tokens: int | None = None
    ) -> Steps[PromptContext]:
        """A markdown block for an agent's system prompt: traits, what holds now, facts."""
        params = query_params(max_tokens=max_tokens)
        return data("GET", f"/users/{segment(user_id)}/prompt-context/", params=params)

    @endpoint
    def veto(self, trait_id: str, reason: str) -> Steps[Memory]:
        """Dissolve a trait (staff clients only)."""
        return data("POST", f"/traits/{segment(trait_id)}/veto/", json={"reason": reason})


class SoulResource(Resource[C]):
    """An agent's SOUL: the caller's default agent, or `agent_id`."""

    @endpoint
    def get(self, *, agent_id: int | None = None) -> Steps[Soul]:
        """The active version with its SOUL.md text; NotFound before the bootstrap."""
        return data("GET", soul_path(agent_id))

    @endpoint
    def bootstrap(self, content: str, *, agent_id: int | None = None) -> Steps[SoulBootstrap]:
        """Version 0; idempotent (an agent with a SOUL keeps it: `skipped` is true)."""
        path = soul_path(agent_id, "bootstrap/")
        return data("POST", path, json={"content": content}, idempotent=True)

    @endpoint
    def propose(
        self,
        intent: str,
        new_content: str,
        *,
        risk_notes: str | None = None,
        justification: str | None = None,
        evidence_refs: list[str] | None = None,
        auto_apply: bool | None = None,
        agent_id: int | None = None,
    ) -> Steps[Proposal]:
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
        return data("POST", soul_path(agent_id, "proposals/"), json=payload)

    @listing
    def versions(self, *, agent_id: int | None = None) -> Listing[SoulVersionSummary]:
        """Every version, newest first, a page at a time."""
        return Listing(soul_path(agent_id, "versions/"), {"limit": PAGE_MAX})

    @endpoint
    def version(self, version: int, *, agent_id: int | None = None) -> Steps[dict[str, Any]]:
        """One version with its predecessor, diff and state changes."""
        return data("GET", soul_path(agent_id, f"versions/{version}/"))

    @endpoint
    def apply(self, version: int, *, agent_id: int | None = None) -> Steps[SoulVersion]:
        return data("POST", soul_path(agent_id, f"versions/{version}/apply/"))

    @endpoint
    def veto(
        self, version: int, reason: str, *, agent_id: int | None = None
    ) -> Steps[dict[str, Any]]:
        """Veto a proposal, or the active version (the previous stable one comes back)."""
        path = soul_path(agent_id, f"versions/{version}/veto/")
        return data("POST", path, json={"reason": reason})

    @endpoint
    def rollback(
        self,
        *,
        to_version: int | None = None,
        reason: str | None = None,
        agent_id: int | None = None,
    ) -> Steps[SoulVersion]:
        """Return to the previous stable version, or `to_version`, as a new active one."""
        payload = body(to_version=to_version, reason=reason)
        return data("POST", soul_path(agent_id, "rollback/"), json=payload)

    @endpoint
    def contract(self, *, agent_id: int | None = None) -> Steps[dict[str, Any]]:
        """The agent's current Core Safety Contract."""
        return data("GET", soul_path(agent_id, "contract/"))

    @endpoint
    def set_contract(
        self, anchors: list[str], constraints: list[str], *, agent_id: int | None = None
    ) -> Steps[dict[str, Any]]:
        """Replace the staff's additions to the contract (staff clients only)."""
        payload = {"anchors": anchors, "constraints": constraints}
        return data("PUT", soul_path(agent_id, "contract/"), json=payload)
