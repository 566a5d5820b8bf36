"""Who may touch which end users and which agents: the one place that decides.

Every client-facing selector and service takes the `Caller` it acts for and asks
`user_access_check`; the API, the MCP server and the admin only say who is calling.
"""

from dataclasses import dataclass

from django.db.models import Q

from core.db.replicas import write_noted
from core.errors import Forbidden, NotFound


@dataclass(frozen=True)
class Caller:
    """An API client, a staff member in the admin, or NeuroMem itself. `name` is the actor the
    audit log records; a non-staff caller reaches only user_ids under its `user_prefixes`."""

    name: str
    user_prefixes: tuple[str, ...] = ()
    is_staff: bool = False

    def may_access_user(self, user_id: str) -> bool:
        return self.is_staff or any(user_id.startswith(p) for p in self.user_prefixes)

    def users_q(self) -> Q:
        """The rows of the end users it may touch, as a filter on `user_id` (the SQL twin of
        may_access_user)."""
        if self.is_staff:
            return Q()
        condition = Q(pk__in=[])
        for prefix in self.user_prefixes:
            condition |= Q(user_id__startswith=prefix)
        return condition

    def may_access_agent(self, owner: str | None) -> bool:
        """An agent is its API client's (`owner`, by name); one without a client is the
        deployment's own, reached by staff only."""
        return self.is_staff or (owner is not None and owner == self.name)

    def agents_q(self) -> Q:
        """The agents it may touch, as a filter on an agent's `client` (the SQL twin of
        may_access_agent)."""
        return Q() if self.is_staff else Q(client__name=self.name)


# NeuroMem's own jobs (beat, the worker, reflection): every end user.
SYSTEM = Caller(name="system", is_staff=True)


def user_access_check(*, caller: Caller, user_id: str, write: bool) -> None:
    """Raise unless `caller` may use `user_id`. Reading outside its prefixes is NotFound (never
    a hint that the user exists); writing there is Forbidden. A write let through is noted for
    the read replicas: the caller reads its own writes from the primary."""
    if caller.may_access_user(user_id):
        if write:
            write_noted(caller.name)
        return
    if write:
        raise Forbidden(f"This API client may not write data for user_id '{user_id}'.")
    raise NotFound(f"User '{user_id}' not found.")


def every_user_check(*, caller: Caller) -> None:
    """Raise Forbidden unless `caller` may read every end user at once (a read without the
    `user_id` filter): staff only."""
    if not caller.is_staff:
        raise Forbidden(
            "Only staff clients may read every end user: give `user_id`.", field="user_id"
        )


def agent_access_check(*, caller: Caller, owner: str | None) -> None:
    """Raise NotFound unless `caller` may use the agent `owner` (its client's name) owns:
    another client's agent is never hinted at."""
    if not caller.may_access_agent(owner):
        raise NotFound("Agent not found.")
