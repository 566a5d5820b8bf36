"""The runtime guardrail (seed 003 §4.0.10–§4.0.11, ADR 0035) as a service.

An agent checks the context it is about to send its model before each call (`guard_check`,
detection only: a failure is recorded as `guardrail_warning` and blocks nothing). For an agent
that turns the guard on, each API call and MCP tool it makes then passes `guard_gate`: while
its session's latest check failed, a high-risk call is refused with the check's error code
(`guardrail_blocked`) and a low-risk one goes through (`guardrail_degraded`). A check speaks
for one round only: after GUARD_ROUND_SECONDS, or with no check at all, the gate acts as if
the anchors were not visible (docs/evolution.md, "The runtime guardrail").
"""

import logging
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.access import Caller
from core.errors import Invalid, Refused
from core.risk import RiskLevel
from core.validation import bigint_id
from evolution.evaluation import (
    ANCHOR_MISSING,
    GUARD_ERROR_CODES,
    GuardCheckResult,
    contract_anchors,
    contract_is_empty,
    guard_context_check,
    guard_contract_unavailable,
)
from evolution.models import Agent, GuardEvent, GuardEventKind, GuardState
from evolution.selectors import agent_get, safety_contract_current
from evolution.services.soul import safety_contract_fresh

log = logging.getLogger("neuromem.guardrail")

SESSION_MAX_CHARS = 200
_SESSION_FORBIDDEN = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class GuardScope:
    """The agent a call is made for and the agent's session (one conversation, one loop):
    from the request's X-NeuroMem-Agent and X-NeuroMem-Session headers, or the stdio MCP
    server's NEUROMEM_AGENT_ID and NEUROMEM_AGENT_SESSION. Without them: the client's default
    agent, session ""."""

    agent_id: int | None = None
    session: str = ""


def guard_scope_parsed(
    *, agent: str | None, session: str, agent_field: str, session_field: str
) -> GuardScope:
    """The scope named by text (an HTTP header, an environment variable): an agent's id, or
    None for the default agent, and a session; Invalid naming the field at fault."""
    agent_id = None if agent is None else bigint_id(agent)
    if agent is not None and agent_id is None:
        raise Invalid("An agent's id (GET /api/v1/agents/).", field=agent_field)
    return GuardScope(
        agent_id=agent_id,
        session=guard_session_checked(session, field=session_field),
    )


def guard_session_checked(session: object, *, field: str = "session") -> str:
    if not isinstance(session, str):
        raise Invalid("Must be a string.", field=field)
    if len(session) > SESSION_MAX_CHARS:
        raise Invalid(f"At most {SESSION_MAX_CHARS} characters.", field=field)
    if _SESSION_FORBIDDEN.search(session):
        raise Invalid("Control characters are not allowed.", field=field)
    return session


def _event(
    *,
    agent: Agent,
    session: str,
    kind: GuardEventKind,
    caller: Caller,
    result: GuardCheckResult,
    action: str = "",
    risk: RiskLevel | None = None,
) -> None:
    GuardEvent.objects.create(
        agent=agent,
        session=session,
        kind=kind,
        action=action[:200],
        risk_level=risk or "",
        error_code=result.error_code,
        detail={
            "missing_anchors": result.missing_anchors,
            "violated_constraints": result.violated_constraints,
            "detail": result.detail,
        },
        actor=caller.name,
    )
    log.warning(
        "%s: agent %s, session %r, %s (%s)",
        kind,
        agent.pk,
        session,
        action or "check",
        result.error_code,
        extra={
            "event": str(kind),
            "agent_id": agent.pk,
            "session": session,
            "action": action,
            "risk_level": risk or "",
            "error_code": result.error_code,
            "missing_anchors": result.missing_anchors,
            "violated_constraints": result.violated_constraints,
        },
    )


def guard_check(*, caller: Caller, agent: Agent, session: str, context: str) -> GuardCheckResult:
    """Check `context` against the agent's Core Safety Contract (refreshed first when its SOUL
    changed) and make the result the session's guard state for this round."""
    session = guard_session_checked(session)
    contract = safety_contract_fresh(agent=agent)
    result = guard_context_check(context=context, contract=contract)
    state = GuardState(
        agent=agent,
        session=session,
        passed=result.passed,
        error_code=result.error_code,
        missing_anchors=result.missing_anchors,
        violated_constraints=result.violated_constraints,
        contract_version=contract.version if contract else None,
        checked_at=timezone.now(),
    )
    with transaction.atomic():
        GuardState.objects.bulk_create(
            [state],
            update_conflicts=True,
            unique_fields=["agent", "session"],
            update_fields=[
                "passed",
                "error_code",
                "missing_anchors",
                "violated_constraints",
                "contract_version",
                "checked_at",
            ],
        )
        if not result.passed:
            _event(
                agent=agent,
                session=session,
                kind=GuardEventKind.WARNING,
                caller=caller,
                result=result,
            )
    return result


def _guarded_agent(caller: Caller, scope: GuardScope) -> Agent | None:
    """The agent the call is made for, when its guard is on. Its default agent is looked up,
    not made: a client without one has turned no guard on."""
    if scope.agent_id is not None:
        agent = agent_get(caller=caller, agent_id=scope.agent_id)
    else:
        agent = Agent.objects.filter(client__name=caller.name, is_default=True).first()
    return agent if agent is not None and agent.guard_enabled else None


def _round_state(agent: Agent, session: str) -> GuardCheckResult:
    """The session's guard state for this round: its latest check when it is recent enough,
    else as if nothing were visible (no contract at all: GUARD_CONTRACT_UNAVAILABLE)."""
    since = timezone.now() - timedelta(seconds=settings.GUARD_ROUND_SECONDS)
    state = GuardState.objects.filter(agent=agent, session=session, checked_at__gte=since).first()
    if state is not None:
        return GuardCheckResult(
            state.passed,
            state.missing_anchors,
            state.violated_constraints,
            state.error_code,
            GUARD_ERROR_CODES.get(state.error_code, ""),
        )
    contract = safety_contract_current(agent=agent)
    if contract_is_empty(contract):
        return guard_contract_unavailable()
    return GuardCheckResult(
        False,
        contract_anchors(contract),
        [],
        ANCHOR_MISSING,
        "No guard check in this round: check the context first.",
    )


def guard_gate(
    *,
    caller: Caller,
    scope: GuardScope,
    action: str,
    risk: RiskLevel,
    acting_on: GuardScope | None = None,
) -> None:
    """Before a call (`action`) of `risk` made for `scope`'s agent: nothing when its guard is
    off or its check passed; else a high-risk call is refused (Refused, with the check's code)
    and a low-risk one is let through, each recorded. `acting_on`: the agent a SOUL or agent
    route acts on (`agent_id` None: the default agent), gated the same way in `scope`'s
    session when it is the caller's own, so that naming another of its agents does not get
    past its guard (staff changing another client's agent govern it: not gated by it)."""
    agents = {}
    if (made_for := _guarded_agent(caller, scope)) is not None:
        agents[made_for.pk] = made_for
    acted_on = _guarded_agent(caller, acting_on) if acting_on is not None else None
    if acted_on is not None and acted_on.client is not None and acted_on.client.name == caller.name:
        agents[acted_on.pk] = acted_on
    for agent in agents.values():
        _agent_gate(agent=agent, caller=caller, scope=scope, action=action, risk=risk)


def _agent_gate(
    *, agent: Agent, caller: Caller, scope: GuardScope, action: str, risk: RiskLevel
) -> None:
    result = _round_state(agent, scope.session)
    if result.passed:
        return
    blocked = risk != RiskLevel.LOW
    _event(
        agent=agent,
        session=scope.session,
        kind=GuardEventKind.BLOCKED if blocked else GuardEventKind.DEGRADED,
        caller=caller,
        result=result,
        action=action,
        risk=risk,
    )
    if blocked:
        raise Refused(
            f"Refused by the runtime guardrail: {result.detail} ({action} is high-risk).",
            code=result.error_code,
            agent_id=agent.pk,
            session=scope.session,
            missing_anchors=result.missing_anchors,
            violated_constraints=result.violated_constraints,
        )
