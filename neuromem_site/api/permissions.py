"""What the API checks about who asks, before the domain decides what they may touch
(core/access.py)."""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from core.access import every_user_check
from core.risk import RiskLevel
from core.validation import user_id_problem
from evolution.services import GuardScope, guard_gate, guard_scope_parsed
from neuromem_site.api.envelope import ApiError

AGENT_HEADER = "X-NeuroMem-Agent"
SESSION_HEADER = "X-NeuroMem-Session"


def checked_user_id(user_id: str) -> str:
    """`user_id` when it is one to read by (see user_id_problem), else a VALIDATION_ERROR."""
    problem = user_id_problem(user_id, new=False)
    if problem is not None:
        raise ApiError(problem, field="user_id")
    return user_id


def user_ids_agree(request: Request, user_id: str) -> str:
    """`user_id`, the validated value the service will act on (and check access for), when
    every other `user_id` the request names (URL path, query string) is the same value; else
    a VALIDATION_ERROR, or a client could be checked on one and act on the other."""
    checked_user_id(user_id)
    named = {
        "URL path": (request.parser_context or {}).get("kwargs", {}).get("user_id"),
        "query string": request.query_params.get("user_id"),
    }
    for where, value in named.items():
        if value is not None and value != user_id:
            raise ApiError(
                f"user_id '{value}' in the {where} differs from user_id '{user_id}'.",
                field="user_id",
            )
    return user_id


def user_filter_check(request: Request, user_id: str | None) -> None:
    """An optional `user_id` filter: when given, it agrees with the request (user_ids_agree);
    without it, the answer covers every end user, which only a staff client may read (others:
    FORBIDDEN, as the schema's 403 says: a request without the filter is well formed)."""
    if user_id is not None:
        user_ids_agree(request, user_id)
    else:
        every_user_check(caller=request.user.caller)


class IsStaffClient(BasePermission):
    message = "Only staff API clients may do this."

    def has_permission(self, request: Request, view) -> bool:
        return bool(getattr(request.user, "is_staff", False))


def guard_scope(request: Request) -> GuardScope:
    """The agent a request is made for (AGENT_HEADER, an id of one of the caller's agents;
    default: its default agent) and that agent's session (SESSION_HEADER; default "")."""
    return guard_scope_parsed(
        agent=request.headers.get(AGENT_HEADER),
        session=request.headers.get(SESSION_HEADER, ""),
        agent_field=AGENT_HEADER,
        session_field=SESSION_HEADER,
    )


def view_risk(view, method: str) -> RiskLevel:
    """What a route declares for `method` (its view's `risk_levels`); a read is low, and an
    undeclared write high (fail-closed)."""
    declared = getattr(view, "risk_levels", {}).get(method.lower())
    if declared is not None:
        return declared
    return RiskLevel.LOW if method in SAFE_METHODS else RiskLevel.HIGH


class GuardGate(BasePermission):
    """The runtime guardrail before every route a client calls (evolution.services.guard): for
    an agent whose guard is on and whose latest check failed, a high-risk route is refused and a
    low-risk one goes through, each recorded. Routes that are the guard itself, or that gate
    each of their own calls (MCP's tools), set `guard_exempt`."""

    def has_permission(self, request: Request, view) -> bool:
        caller = getattr(request.user, "caller", None)
        if caller is None or getattr(view, "guard_exempt", False):
            return True
        # A method the route does not take: nothing to gate, DRF answers 405 after this.
        if not hasattr(view, request.method.lower()):
            return True
        scope = guard_scope(request)
        acting_on = None
        if getattr(view, "acts_on_agent", False):
            acting_on = GuardScope(agent_id=view.kwargs.get("agent_id"), session=scope.session)
        # No guard on for any of its agents (read with the token): nothing to gate. A named
        # agent is still looked up: another client's is NOT_FOUND, and its guard may be on.
        named = {scope.agent_id, acting_on.agent_id if acting_on else None} != {None}
        if not named and not getattr(request.user, "guards_on", True):
            return True
        route = request.resolver_match.route if request.resolver_match else request.path
        guard_gate(
            caller=caller,
            scope=scope,
            action=f"{request.method} /{route}",
            risk=view_risk(view, request.method),
            acting_on=acting_on,
        )
        return True
