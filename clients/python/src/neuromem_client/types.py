"""What the API answers, as typed dictionaries: the JSON as it came, with the types the
schema (docs/openapi.yaml) gives. Ids are strings (UUIDs), timestamps ISO 8601 strings (UTC).
Nested parts the schema leaves open stay `dict[str, Any]`."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict

MemoryType = Literal["fact", "episodic", "trait", "document"]
State = Literal["active", "cold", "deprecated", "deleted"]
Operation = Literal["ADD", "UPDATE", "NOOP"]


class Memory(TypedDict):
    id: str
    user_id: str
    memory_type: MemoryType
    content: str
    key: str | None
    importance: float
    score: float
    state: State
    metadata: dict[str, Any]
    valid_at: str | None
    invalid_at: str | None
    created_at: str
    updated_at: str | None
    expired_at: str | None
    version: int
    superseded_by: str | None
    content_hash: str | None
    access_count: int
    last_accessed_at: str | None
    embedding_status: Literal["pending", "ready", "failed"]
    source_episode_ids: list[str] | None
    subject_entity_id: str | None
    object_entity_id: str | None
    redactions: dict[str, int]
    trait: dict[str, Any] | None
    embedding: NotRequired[list[float] | None]


class Link(TypedDict):
    target_id: str
    key: str | None
    weight: float
    target_score: float
    combined_score: float
    created_at: str


class MemoryWithLinks(Memory):
    links: list[Link]


class MemoryInput(TypedDict):
    """One memory to write (`add_many`'s items); only `user_id` and `content` are required,
    `memory_type` defaults to `fact` in `add` but is required here, as the API wants it."""

    user_id: str
    content: str
    memory_type: MemoryType
    metadata: NotRequired[dict[str, Any]]
    importance: NotRequired[float]
    valid_at: NotRequired[str]
    key: NotRequired[str | None]
    embedding: NotRequired[list[float] | None]
    session_id: NotRequired[str | None]
    source_episode_ids: NotRequired[list[str]]


class MemoryChanges(TypedDict, total=False):
    """What `memories.update` may change; new `content` makes a new version."""

    content: str
    memory_type: MemoryType
    metadata: dict[str, Any]
    importance: float
    valid_at: str | datetime
    key: str | None


class WriteResult(TypedDict):
    operation: Operation
    memory: Memory
    redactions: dict[str, int]  # what was redacted from it, kind → count
    superseded: NotRequired[str]


class BatchError(TypedDict):
    code: str
    message: str
    field: NotRequired[str]


class BatchItemResult(TypedDict):
    """One item of `add_many`, in order: `ok` with the id, or `error`."""

    index: int
    ok: bool
    operation: NotRequired[Operation]
    id: NotRequired[str]
    version: NotRequired[int]
    superseded: NotRequired[str]
    redactions: NotRequired[dict[str, int]]
    error: NotRequired[BatchError]


class HistoryEvent(TypedDict):
    id: str
    memory_id: str
    memory_type: MemoryType
    event: Literal["ADD", "UPDATE", "SUPERSEDE", "DELETE", "STAGE_CHANGE"]
    old_content: str | None
    new_content: str | None
    old_metadata: dict[str, Any] | None
    new_metadata: dict[str, Any] | None
    actor: str
    created_at: str


class LinkRemoved(TypedDict):
    source_id: str
    target_id: str


class RecallHit(Memory):
    """A recalled memory: `score` is the recall score, the activity score `activity_score`."""

    activity_score: float
    rrf_score: float
    vector_rank: int | None
    text_rank: int | None
    similarity: float | None
    text_coverage: float | None
    boosts: dict[str, float]


class CompactHit(TypedDict):
    id: str
    content: str
    memory_type: MemoryType
    valid_at: str | None
    score: NotRequired[float]


class RecallResult(TypedDict):
    """`merged` holds RecallHit items, or CompactHit ones with `compact=True`."""

    fields: Literal["full", "compact"]
    merged: list[Any]
    traits: list[Any]


class SearchHit(TypedDict):
    id: str
    content: str
    memory_type: MemoryType
    metadata: dict[str, Any]
    score: float
    relevance: NotRequired[float]
    recency: NotRequired[float]
    importance: NotRequired[float]


class Session(TypedDict):
    id: str
    user_id: str
    started_at: str
    ended_at: str | None
    last_reflected_at: str | None
    metadata: dict[str, Any]


class Message(TypedDict):
    id: str
    session_id: str
    user_id: str
    role: Literal["user", "assistant", "system"]
    content: str
    created_at: str
    redactions: dict[str, int]


class MessageResult(TypedDict):
    """A message and what it wrote: memories (each a WriteResult with `redactions`), the
    outcome of each request to forget in it, and what was redacted from it."""

    message: Message
    memories: list[dict[str, Any]]
    forget: list[ForgetResult]
    redactions: dict[str, int]


class ForgetResult(TypedDict):
    id: str | None
    user_id: str
    dry_run: bool
    memories: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    traits_reweighed: list[str]
    traits_dissolved: list[str]
    reason: dict[str, str] | None


class PurgeResult(TypedDict):
    user_id: str
    deleted: dict[str, int]


class Entity(TypedDict):
    id: str
    kind: Literal["user", "person", "pet", "place", "organisation", "thing"]
    name: str
    role: str
    aliases: list[str]
    created_at: str


class EntityDetail(Entity):
    outgoing: list[dict[str, Any]]
    incoming: list[dict[str, Any]]


class Trait(TypedDict):
    id: str
    content: str
    subtype: str | None
    stage: str | None
    context: str | None
    parent_id: str | None
    confidence: float | None
    decayed_confidence: float | None
    reinforcement_count: int | None
    contradiction_count: int | None
    first_observed: str | None
    last_reinforced: str | None
    computed_at: str


class Traits(TypedDict):
    core: list[Trait]
    preference: list[Trait]
    behavior: list[Trait]
    other: list[Trait]


class TraitDetail(Memory):
    decayed_confidence: float | None
    evidence: list[dict[str, Any]]
    parents: list[dict[str, Any]]
    children: list[dict[str, Any]]


class PromptContext(TypedDict):
    markdown: str
    language: Literal["en", "zh"]
    tokens: int
    trait_ids: list[str]
    fact_ids: list[str]
    attributes: list[dict[str, Any]]


class SoulVersion(TypedDict):
    version: int
    status: Literal["proposed", "active", "superseded", "rolled_back", "vetoed"]
    content: str
    created_by: str
    created_at: str
    eval: dict[str, Any] | None
    proposal: dict[str, Any] | None


class SoulBootstrap(SoulVersion):
    skipped: bool  # the agent had a SOUL already: it is kept, and answered


class Soul(SoulVersion):
    """The active version, the SOUL.md text an agent loads, and the pending proposals."""

    soul_md: str
    pending_proposals: list[int]


class SoulVersionSummary(TypedDict):
    version: int
    status: str
    created_by: str
    created_at: str
    eval: dict[str, Any] | None
    intent: str | None


class Proposal(TypedDict):
    status: Literal["applied", "rejected", "proposed"]
    version: int
    eval: dict[str, Any]


class Stats(TypedDict):
    generated_at: str
    cached: bool
    user_id: str | None
    from_timestamp: int | None
    to_timestamp: int | None
    counts: dict[str, int]
    histogram: dict[str, Any]
    redactions: dict[str, dict[str, int]]
    query_duration_ms: float


class WhoAmI(TypedDict):
    name: str
    user_prefixes: list[str]
    is_staff: bool


class Health(TypedDict):
    status: Literal["healthy", "degraded", "unhealthy"]
    checks: dict[str, dict[str, Any]]
