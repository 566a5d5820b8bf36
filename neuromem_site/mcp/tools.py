"""The MCP tools: one per NeuroMem operation, each running the very function the HTTP view runs
(`<app>/api/operations.py`), so parameters, defaults, validation, ordering and errors are the
HTTP API's.

A tool answers the JSON text of what the HTTP route puts in the envelope's `data`; on failure it
answers an MCP tool error (`isError: true`) whose text is the JSON of the envelope's `error`
object, the same object the HTTP route answers (docs/mcp.md).
"""

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from mcp_types import Tool, ToolAnnotations
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from core.access import Caller
from core.risk import RiskLevel
from evolution.api.operations import (
    guard_check_result,
    soul_propose_result,
    soul_rollback_result,
    soul_status_result,
    with_agent,
)
from evolution.api.serializers import (
    AgentIdInput,
    GuardCheckInput,
    SoulProposalInput,
    SoulRollbackInput,
)
from evolution.services import GuardScope, guard_gate
from memories.api import operations as memory_ops
from memories.api.serializers.graph import UserEntitiesInput
from memories.api.serializers.memories import (
    BulkReadInput,
    MemoryCreateInput,
    MemoryGetInput,
    MemoryLookupInput,
)
from memories.api.serializers.recall import RecallInput, SearchInput
from memories.api.serializers.users import UserForgetInput
from neuromem_site.api.envelope import exception_handler
from neuromem_site.api.serializers import UserIdLookupField, validated_input
from neuromem_site.mcp.schema import (
    OUTPUT_FORMAT,
    field_schema,
    object_schema,
    serializer_schema,
    with_seed_names,
)
from reflection.api.operations import traits_get_result

LIMIT = {
    "minimum": 1,
    "maximum": settings.RECALL_LIMIT_MAX,
    "description": f"How many results at most (1–{settings.RECALL_LIMIT_MAX}).",
}
USER_ID = "The end user's id; it must start with one of this client's prefixes."
# Which memory (MemoryLookupInput): by id, or by user and key.
LOOKUP = {
    "memory_id": "The memory's id.",
    "user_id": "With `key`, instead of `memory_id`: the memory's end user.",
    "key": "With `user_id`: the memory's key (unique among current memories).",
}
# Seed 004's names for memory_get's arguments, as its MCP example calls it (seed name → ours).
MEMORY_GET_ALIASES = {"sortLinks": "sort_links"}
ADDRESSING = (
    "Name the memory by `memory_id`, or by `user_id` and `key`. Another client's memory, or one "
    "that does not exist, is NOT_FOUND."
)


SOUL_AGENT = (
    "Acts on the agent `agent_id` names (one of this client's, GET /agents/; another's is "
    "NOT_FOUND), by default on this client's default agent."
)
SOUL_AGENT_ID = field_schema(AgentIdInput().fields["agent_id"])


def soul_tool_schema(
    input_class: type[serializers.Serializer], overrides: Mapping[str, str | dict[str, Any]]
) -> dict[str, Any]:
    """A SOUL tool's arguments: the route's, and `agent_id` (with_agent)."""
    schema = serializer_schema(input_class, overrides)
    return {**schema, "properties": {"agent_id": SOUL_AGENT_ID, **schema["properties"]}}


def bulk_limit(name: str, what: str) -> dict[str, Any]:
    default, most = settings.BULK_READ_LIMITS[name]
    return {"minimum": 1, "maximum": most, "description": f"{what} (1–{most}, default {default})."}


def validating(
    input_class: type[serializers.Serializer], operation: Callable[..., Any]
) -> Callable[..., Any]:
    """`operation`, which takes `data` validated by the route's `input_class`, run on a tool's
    arguments (the REST view validates them alike, then checks the user against its URL)."""

    def run(*, caller: Caller, params: Mapping[str, Any]) -> Any:
        return operation(caller=caller, data=validated_input(input_class, params))

    return run


def memory_add_data(*, caller: Caller, data: Mapping[str, Any]) -> dict[str, Any]:
    """memory_add's answer: the write's data (its `operation` says whether it was new)."""
    return memory_ops.memory_add_result(caller=caller, data=data).data


@dataclass(frozen=True)
class McpTool:
    name: str
    title: str
    description: str
    # The route's operation: fn(*, caller, params) -> data.
    operation: Callable[..., Any]
    input_schema: dict[str, Any]
    read_only: bool
    # What the runtime guardrail lets through while the agent's check failed (core/risk.py).
    risk: RiskLevel
    destructive: bool = False
    idempotent: bool = False
    # The guard's own tool: always callable, or a failed check could not be redone.
    guard_exempt: bool = False
    # Other names the tool takes for its arguments (alias → ours), seed 004's.
    aliases: Mapping[str, str] = field(default_factory=dict)

    def definition(self) -> Tool:
        return Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=self.input_schema,
            annotations=ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=None if self.read_only else self.destructive,
                idempotent_hint=None if self.read_only else self.idempotent,
                open_world_hint=False,
            ),
        )


TOOLS: dict[str, McpTool] = {
    tool.name: tool
    for tool in [
        McpTool(
            name="memory_get",
            title="Read a memory",
            description=(
                "One memory (content, type, importance, activity score 0–100 and state, "
                "metadata, validity and version fields) with its `links`: by default sorted by "
                "link weight × target score (a target without a score counts 50), ties by weight, "
                "then key/id; `sort_links: false` keeps the order the links were made in. "
                + ADDRESSING
            ),
            operation=memory_ops.memory_get_result,
            input_schema=with_seed_names(
                serializer_schema(
                    MemoryGetInput,
                    {
                        **LOOKUP,
                        "sort_links": {
                            "type": ["boolean", "string"],
                            "enum": [True, False, "true", "false"],
                            "default": True,
                            "description": "Sort `links` by weight × target score (default), or "
                            "keep insertion order (false). Any other value is a VALIDATION_ERROR.",
                        },
                        "include": "`embedding` to also answer the memory's vector.",
                    },
                ),
                MEMORY_GET_ALIASES,
            ),
            read_only=True,
            risk=RiskLevel.LOW,
            aliases=MEMORY_GET_ALIASES,
        ),
        McpTool(
            name="memory_search",
            title="Search memories",
            description=(
                "Hybrid (vector + full-text) search over one end user's current memories, best "
                "first: each hit as id, content, memory_type, metadata and score. For building "
                "a prompt prefer memory_recall, which also answers the user's traits."
            ),
            operation=validating(SearchInput, memory_ops.memory_search_result),
            input_schema=serializer_schema(
                SearchInput,
                {
                    "user_id": USER_ID,
                    "q": "What to search for, in natural language or keywords.",
                    "limit": LIMIT,
                    "memory_type": "Only memories of this type.",
                    "state": {
                        "description": "Only memories in these states: a comma list of active, "
                        "cold, deprecated (search reads current memories)."
                    },
                    "score_min": "Lowest activity score (0–100).",
                    "score_max": "Highest activity score (0–100).",
                    "sort_order": "desc: best first (default); asc: reversed.",
                },
            ),
            read_only=True,
            risk=RiskLevel.LOW,
        ),
        McpTool(
            name="memory_add",
            title="Remember something",
            description=(
                "Write one memory for an end user. `operation` in the answer says what happened: "
                "ADD (a new memory), NOOP (already held: the existing memory is answered) or "
                "UPDATE (a near-duplicate current memory was superseded; `superseded` is its id). "
                "Writing for a user_id outside this client's prefixes is FORBIDDEN."
            ),
            operation=validating(MemoryCreateInput, memory_add_data),
            input_schema=serializer_schema(
                MemoryCreateInput,
                {
                    "user_id": "The end user the memory is about.",
                    "content": "The memory itself, in plain language.",
                    "memory_type": {
                        "description": "fact, episodic, trait or document (legacy: general → fact, "
                        "insight → trait at stage trend)."
                    },
                    "metadata": "Free JSON object kept with the memory.",
                    "importance": "0–1: how much the memory matters.",
                    "valid_at": "Since when it is true (default: now).",
                    "key": "A name to address the memory by (unique per user).",
                    "embedding": "Your own vector; normally omitted (NeuroMem embeds).",
                    "session_id": "The conversation session it came from.",
                    "source_episode_ids": "Episodic memories it was derived from.",
                },
            ),
            read_only=False,
            risk=RiskLevel.HIGH,
            idempotent=True,
        ),
        McpTool(
            name="bulk_read_memory",
            title="Read a memory and what it links to",
            description=(
                "Depth-first read from one memory through its links: at most `breadth` links per "
                "level in link order (weight × target score), down to `depth`, at most `total` "
                "memories. Answers `targetMemory`, `associatedMemories` (each with "
                "`retrievalInfo` {depth, weight, path}) and `metadata` {depthReached, "
                "totalRetrieved, duplicatesSkipped, executionTimeMs}. A value out of range is a "
                "VALIDATION_ERROR naming `field`, `minAllowed`/`maxAllowed` and `provided`. "
                + ADDRESSING
            ),
            operation=memory_ops.memory_bulk_result,
            input_schema=serializer_schema(
                BulkReadInput,
                {
                    **LOOKUP,
                    "depth": bulk_limit("depth", "How many links deep to follow"),
                    "breadth": bulk_limit("breadth", "How many links to follow from each memory"),
                    "total": bulk_limit("total", "How many associated memories at most"),
                },
            ),
            read_only=True,
            risk=RiskLevel.LOW,
        ),
        McpTool(
            name="memory_recall",
            title="Recall for a prompt",
            description=(
                "What to put in an agent's context about an end user: `merged`, the memories "
                "that match `query` ranked by relevance (reciprocal rank fusion of vector and "
                "full-text ranks) boosted by recency, importance and trait stage, best first; "
                "and `traits`, the user's active traits. `fields: compact` answers each hit as "
                "id, content, memory_type, valid_at and score only."
            ),
            operation=validating(RecallInput, memory_ops.memory_recall_result),
            input_schema=serializer_schema(
                RecallInput,
                {
                    "user_id": USER_ID,
                    "query": "What the agent is about to talk about.",
                    "limit": LIMIT,
                    "memory_types": "Only these types (default: all).",
                    "as_of": "Recall as the memories stood at this time.",
                    "include_traits": "Also answer the user's active traits.",
                },
            ),
            read_only=True,
            risk=RiskLevel.LOW,
        ),
        McpTool(
            name="memory_forget",
            title="Forget, for good",
            description=(
                'Erase what an end user asked to be forgotten: a `topic` in words ("my home '
                'address", "everything about Alex", "我的病史") or `memory_ids`. Every memory, '
                "older version, history entry and conversation message holding it loses that "
                "content; traits built on it are re-weighed or dissolved; a record of the request "
                "stays (ids and times, never the content). Answers what was forgotten (`memories`,"
                " `messages`), or, when nothing was, `reason`. `dry_run: true` answers what would "
                "be forgotten, with its content, and changes nothing. Forgetting again what is "
                "forgotten forgets nothing more."
            ),
            operation=memory_ops.user_forget_result,
            input_schema=serializer_schema(
                UserForgetInput, {"user_id": "The end user who asked to forget."}
            ),
            read_only=False,
            risk=RiskLevel.HIGH,
            destructive=True,
            idempotent=True,
        ),
        McpTool(
            name="memory_delete",
            title="Retire a memory",
            description=(
                "Soft-delete one memory: it stops being current (`expired_at` is set) and is no "
                "longer recalled; its row and history stay, and a read as of an earlier time "
                "still finds it. To erase content an end user asked to be forgotten, use "
                "memory_forget. Answers the memory as it is now. " + ADDRESSING
            ),
            operation=memory_ops.memory_delete_result,
            input_schema=serializer_schema(MemoryLookupInput, LOOKUP),
            read_only=False,
            risk=RiskLevel.HIGH,
            destructive=True,
        ),
        McpTool(
            name="memory_entities",
            title="An end user's entities",
            description=(
                "The end user's memory graph. Without `entity_id`: their entities (the user, "
                "people, pets, places, organisations, things), each as id, kind, name, role, "
                "aliases and created_at, in the order they became known, at most `limit` (the "
                "first page of GET /users/{user_id}/entities/). With `entity_id`: that entity "
                "with its edges, current and past, oldest first: `outgoing` (its attributes and "
                "relations) and `incoming` (the entities relating to it), each as id, subject, "
                "relation, object (the value, or the other entity {id, kind, name, role}), "
                "valid_at, invalid_at (when it stopped holding), expired_at and memory_ids (the "
                "memories stating it). `as_of` reads the graph as NeuroMem knew it then. Another "
                "client's user, or an entity that is not the user's, is NOT_FOUND."
            ),
            operation=memory_ops.user_entities_result,
            input_schema=serializer_schema(
                UserEntitiesInput,
                {
                    "user_id": USER_ID,
                    "limit": {
                        "minimum": 1,
                        "maximum": settings.API_MAX_PAGE_SIZE,
                        "description": "How many entities at most "
                        f"(1–{settings.API_MAX_PAGE_SIZE}); ignored with `entity_id`.",
                    },
                },
            ),
            read_only=True,
            risk=RiskLevel.LOW,
        ),
        McpTool(
            name="traits_get",
            title="An end user's traits",
            description=(
                "The end user's believed traits (emerging, established or core; confidence "
                "decayed over time, above the recall minimum), grouped `core`, `preference`, "
                "`behavior` and `other`, most confident first within each group."
            ),
            operation=traits_get_result,
            input_schema=object_schema(
                {"user_id": field_schema(UserIdLookupField()) | {"description": USER_ID}},
                required=["user_id"],
            ),
            read_only=True,
            risk=RiskLevel.LOW,
        ),
        McpTool(
            name="soul_status",
            title="The agent's active SOUL",
            description=(
                "The agent's active SOUL: its version, content, the `soul_md` text an agent "
                "loads as SOUL.md, its evaluation, and `pending_proposals` (versions waiting). "
                f"{SOUL_AGENT} NOT_FOUND before the agent's SOUL is bootstrapped."
            ),
            operation=with_agent(soul_status_result),
            input_schema=object_schema({"agent_id": SOUL_AGENT_ID}),
            read_only=True,
            risk=RiskLevel.LOW,
        ),
        McpTool(
            name="soul_propose",
            title="Propose a SOUL change",
            description=(
                "Propose a new SOUL (the whole markdown document, not a diff) for the agent. It "
                "is recorded as its next version and evaluated against its Core Safety "
                "Contract; with `auto_apply` (default) a proposal that passes becomes active. "
                "Answers `status` (applied, proposed or rejected), `version` and `eval` (the "
                "checks). CONFLICT when there is no SOUL yet, the proposal changes nothing, or "
                f"the active version changed meanwhile. {SOUL_AGENT}"
            ),
            operation=with_agent(soul_propose_result),
            input_schema=soul_tool_schema(
                SoulProposalInput, {"risk_notes": "What could go wrong with the change."}
            ),
            read_only=False,
            risk=RiskLevel.HIGH,
        ),
        McpTool(
            name="soul_rollback",
            title="Undo a SOUL change on the user's word",
            description=(
                "When the user asks to undo or refuse a change of the agent's SOUL. "
                "`action` rollback (default): a new active version with the content of the "
                "previous stable version, or of `to_version` (a version that was active once); "
                "the current one becomes rolled_back. `action` veto: the version named by "
                "`version` (default: the active one) becomes vetoed; a vetoed active version is "
                "replaced by the previous stable one. Give the user's `reason` (needed for a "
                "veto); the log records who asked. Answers the active version afterwards, or "
                f"the vetoed proposal. {SOUL_AGENT}"
            ),
            operation=with_agent(soul_rollback_result),
            input_schema=soul_tool_schema(
                SoulRollbackInput, {"reason": "Why, in the user's words (kept in the audit log)."}
            ),
            read_only=False,
            risk=RiskLevel.HIGH,
        ),
        McpTool(
            name="guard_check",
            title="Check the context against the SOUL's safety contract",
            description=(
                "The runtime guardrail's check: call it before each model call with the context "
                "about to be sent (system prompt, compacted context, history). Answers `passed` "
                "and, when not, `missing_anchors` and `violated_constraints` of the agent's Core "
                "Safety Contract with an `error_code` (GUARD_ANCHOR_MISSING, "
                "GUARD_CONSTRAINT_VIOLATED, GUARD_CONTRACT_UNAVAILABLE). Detection only; for an "
                "agent whose guard is on, the result decides this round's high-risk tools: "
                "refused with that code while it failed. `session` (default: the "
                'X-NeuroMem-Session header, else "") names the agent session it speaks for. '
                f"{SOUL_AGENT}"
            ),
            operation=with_agent(guard_check_result),
            input_schema=soul_tool_schema(GuardCheckInput, {}),
            read_only=False,
            risk=RiskLevel.LOW,
            idempotent=True,
            guard_exempt=True,
        ),
    ]
}


# A call with no X-NeuroMem-Agent or -Session: the client's default agent, session "".
DEFAULT_SCOPE = GuardScope()


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's answer: the JSON text of `data`, or of the error object when not `ok`."""

    ok: bool
    text: str


def render(value: Any) -> str:
    """JSON exactly as the HTTP API renders it (DRF's encoder and settings)."""
    return JSONRenderer().render(value).decode()


def error_object(exc: Exception) -> dict[str, Any]:
    """The envelope's `error` for `exc`, as the HTTP API answers it: the API's own exception
    handler (an unexpected exception is logged and answered INTERNAL)."""
    return exception_handler(exc, {}).data["error"]


def tool_call(
    *,
    tool: McpTool,
    caller: Callable[[], Caller],
    arguments: Mapping[str, Any],
    scope: GuardScope = DEFAULT_SCOPE,
) -> ToolAnswer:
    """Run `tool` for whoever `caller()` names, made for `scope`'s agent and session (the
    runtime guardrail's gate first, as for a REST route). Synchronous, on the thread whose
    database connection it uses (a request's, or the stdio server's)."""
    try:
        who = caller()  # first, as HTTP authenticates before it validates
        if not tool.guard_exempt:
            guard_gate(caller=who, scope=scope, action=tool.name, risk=tool.risk)
        arguments = scope_defaults(arguments, tool, scope)
        # A tool's arguments are a JSON object, like a request body: an unknown name is
        # refused as the API refuses an unknown body field (a misspelt `limit` is not ignored).
        unknown = [name for name in arguments if name not in tool.input_schema["properties"]]
        if unknown:
            raise serializers.ValidationError({unknown[0]: ["Unknown field."]})
        with errors_name_the_aliases_given(arguments, tool.aliases):
            data = tool.operation(caller=who, params=our_names(arguments, tool.aliases))
        return ToolAnswer(ok=True, text=render(data))
    except Exception as exc:
        return ToolAnswer(ok=False, text=render(error_object(exc)))


def scope_defaults(arguments: Mapping[str, Any], tool: McpTool, scope: GuardScope) -> dict:
    """`arguments`, with the agent and session the call is made for where the tool takes them
    and they are not given: a SOUL or guard tool acts on the X-NeuroMem-Agent agent."""
    defaults = {"agent_id": scope.agent_id, "session": scope.session or None}
    taken = tool.input_schema["properties"]
    return {
        **{name: value for name, value in defaults.items() if name in taken and value is not None},
        **arguments,
    }


def our_names(arguments: Mapping[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """`arguments` under the names the route's serializer knows: each alias renamed, and
    `output_format` (json, the only format) checked and dropped."""
    both = [alias for alias, name in aliases.items() if alias in arguments and name in arguments]
    if both:
        alias = both[0]
        raise serializers.ValidationError(
            {alias: [f"Give `{aliases[alias]}` or `{alias}`, not both."]}
        )
    if arguments.get(OUTPUT_FORMAT, "json") != "json":
        raise serializers.ValidationError({OUTPUT_FORMAT: ['Only "json": tools answer JSON.']})
    return {
        aliases.get(name, name): value for name, value in arguments.items() if name != OUTPUT_FORMAT
    }


@contextmanager
def errors_name_the_aliases_given(
    arguments: Mapping[str, Any], aliases: Mapping[str, str]
) -> Iterator[None]:
    """A validation error names an argument as the caller spelt it (`sortLinks`, not
    `sort_links`), as seed 004's HTTP routes do."""
    given = {name: alias for alias, name in aliases.items() if alias in arguments}
    try:
        yield
    except serializers.ValidationError as error:
        if isinstance(error.detail, dict):
            error.detail = {given.get(name, name): d for name, d in error.detail.items()}
        raise
