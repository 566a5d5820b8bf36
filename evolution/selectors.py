"""Reads of the agents' SOUL documents: the agents a caller reaches, an agent's active version,
its audit trail, one version with its events and its diff against the version it changed."""

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from core.access import Caller, agent_access_check
from core.errors import NotFound
from evolution.evaluation import unified_diff
from evolution.models import (
    Agent,
    GuardEvent,
    SafetyContract,
    SoulEvent,
    SoulStatus,
    SoulVersion,
)


def agents_visible(*, caller: Caller) -> QuerySet[Agent]:
    """The agents `caller` may touch (its own; staff: all), oldest first."""
    return Agent.objects.filter(caller.agents_q()).select_related("client").order_by("id")


def agent_get(*, caller: Caller, agent_id: int) -> Agent:
    """The agent, when `caller` may touch it; NotFound otherwise (never a hint it exists)."""
    agent = Agent.objects.select_related("client").filter(id=agent_id).first()
    if agent is None:
        raise NotFound("Agent not found.")
    agent_access_check(caller=caller, owner=agent.client.name if agent.client else None)
    return agent


def soul_active(*, agent: Agent) -> SoulVersion | None:
    return SoulVersion.objects.filter(agent=agent, status=SoulStatus.ACTIVE).first()


def soul_version_find(*, agent: Agent, version: int) -> SoulVersion | None:
    return SoulVersion.objects.filter(agent=agent, version=version).first()


def soul_markdown(version: SoulVersion) -> str:
    """The version as the `SOUL.md` file an agent loads: a comment naming it, then the text."""
    return f"<!-- SOUL.md v{version.version} ({version.status}) -->\n{version.content}"


def soul_versions(*, agent: Agent) -> QuerySet[SoulVersion]:
    """Every version of the agent's SOUL, newest first (the audit trail)."""
    return SoulVersion.objects.filter(agent=agent).order_by("-version")


def soul_proposals_pending(*, agent: Agent) -> QuerySet[SoulVersion]:
    """Proposals still waiting: not evaluated yet, or passed and not applied (a rejected one
    stays `proposed` for the record but waits for nothing)."""
    return (
        SoulVersion.objects.filter(agent=agent, status=SoulStatus.PROPOSED)
        .filter(Q(eval_result__isnull=True) | Q(eval_result__passed=True))
        .order_by("version")
    )


def soul_predecessor(version: SoulVersion) -> SoulVersion | None:
    """The version this one changed: a proposal's base, a restore's replaced version."""
    proposal = version.proposal or {}
    number = proposal.get("base_version", proposal.get("replaces"))
    return None if number is None else soul_version_find(agent=version.agent, version=number)


@dataclass(frozen=True)
class SoulVersionDetail:
    version: SoulVersion
    predecessor: SoulVersion | None
    diff: str  # unified diff against the predecessor ("" for the bootstrap)
    events: list[SoulEvent]


def soul_version_detail(*, agent: Agent, version: int) -> SoulVersionDetail:
    found = soul_version_find(agent=agent, version=version)
    if found is None:
        raise NotFound(f"SOUL version {version} not found.")
    predecessor = soul_predecessor(found)
    diff = (
        ""
        if predecessor is None
        else unified_diff(
            predecessor.content,
            found.content,
            old_name=f"SOUL.md@v{predecessor.version}",
            new_name=f"SOUL.md@v{found.version}",
        )
    )
    events = list(SoulEvent.objects.filter(agent=agent, version=found.version).order_by("id"))
    return SoulVersionDetail(found, predecessor, diff, events)


def safety_contract_current(*, agent: Agent) -> SafetyContract | None:
    return SafetyContract.objects.filter(agent=agent).order_by("-version").first()


def guard_events(
    *, agent: Agent, kind: str | None = None, session: str | None = None
) -> QuerySet[GuardEvent]:
    """What the agent's runtime guardrail recorded, newest first; of one kind, one session."""
    events = GuardEvent.objects.filter(agent=agent)
    if kind is not None:
        events = events.filter(kind=kind)
    if session is not None:
        events = events.filter(session=session)
    return events.order_by("-id")
