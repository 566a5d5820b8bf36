"""Writes to an agent's SOUL document: its agents, bootstrap, propose → evaluate → apply,
veto, rollback, and the Core Safety Contract (docs/evolution.md).

Every write takes the agent's SOUL lock for its transaction (numbers stay monotonic and
gap-free, one version is active), names its actor and reason for the database's event log, and
checks the transition it makes; the database refuses a forbidden one even if a caller skips the
service. Which agent a caller may touch is decided by core.access (the views and tools resolve
the agent first); a client bootstraps, changes, vetoes and rolls back its own agents' SOULs,
and only staff write a contract's additions.
"""

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from core.access import SYSTEM, Caller
from core.db.actor import audit_actor
from core.db.locks import LockNamespace, xact_lock
from core.errors import Conflict, Forbidden, Invalid, NotFound
from core.metrics import SOUL_PROPOSALS
from core.tokens import estimated_tokens
from core.validation import name_problem, regex_problem, text_problem, validated
from evolution.contract import contract_extract, source_hash
from evolution.evaluation import soul_checks, unified_diff
from evolution.models import Agent, SafetyContract, SoulAuthor, SoulStatus, SoulVersion
from evolution.selectors import agent_get, safety_contract_current, soul_active, soul_version_find

AGENT_NAME_MAX_CHARS = 100
REASON_MAX_CHARS = 2000
TEXT_MAX_CHARS = 2000
# The API client model, reached through the relation: domain code does not import the site.
ApiClient = Agent._meta.get_field("client").related_model


# --- Agents ----------------------------------------------------------------------------------


def agent_default(*, caller: Caller) -> Agent:
    """The API client's default agent (made with the client, `agent_default_create`). A staff
    caller that is no API client (NeuroMem itself, a staff member in the admin) gets the first
    agent, made as the deployment's own when there is none."""
    client = ApiClient.objects.filter(name=caller.name).first()
    if client is not None:
        found = Agent.objects.filter(client=client, is_default=True).first()
        if found is None:
            raise NotFound("Agent not found.")
        return found
    if not caller.is_staff:
        raise NotFound("Agent not found.")  # no client, no agent of its own
    with transaction.atomic():
        xact_lock(LockNamespace.SOUL, ["agents:"])
        found = Agent.objects.order_by("id").first()
        return found or Agent.objects.create(client=None, name="default", is_default=True)


def agent_default_create(*, client: ApiClient) -> Agent:
    """A new API client's default agent, named after it. Made in the client's own transaction,
    so that no later call, refused or not, has to make it."""
    return Agent.objects.create(client=client, name=client.name, is_default=True)


def agent_for(*, caller: Caller, agent_id: int | None) -> Agent:
    """The agent a SOUL route acts on: `agent_id` when `caller` may touch it (NotFound
    otherwise), else the caller's default agent."""
    if agent_id is None:
        return agent_default(caller=caller)
    return agent_get(caller=caller, agent_id=agent_id)


def agent_create(*, caller: Caller, name: str) -> Agent:
    """Another agent of the calling API client, with no SOUL yet."""
    name = name or ""
    validated(name=name_problem(name, most=AGENT_NAME_MAX_CHARS))
    name = name.strip()
    client = ApiClient.objects.filter(name=caller.name).first()
    if client is None:
        raise Forbidden("Only an API client owns agents.")
    with transaction.atomic():
        xact_lock(LockNamespace.SOUL, [f"agents:{client.pk}"])
        if Agent.objects.filter(client=client, name=name).exists():
            raise Conflict(f"This client has an agent named '{name}' already.", field="name")
        return Agent.objects.create(client=client, name=name, is_default=False)


def agent_update(*, caller: Caller, agent: Agent, guard_enabled: bool) -> Agent:
    """Turn the agent's runtime guardrail on or off (its client, or staff)."""
    with transaction.atomic(), audit_actor(caller.name):
        Agent.objects.filter(pk=agent.pk).update(guard_enabled=guard_enabled)
    agent.guard_enabled = guard_enabled
    return agent


@dataclass(frozen=True)
class SoulProposal:
    new_content: str
    intent: str
    risk_notes: str = ""
    justification: str = ""
    evidence_refs: list[str] = field(default_factory=list)


@contextmanager
def _soul_write(agent: Agent, caller: Caller, reason: str = "") -> Iterator[None]:
    """One transaction holding the agent's SOUL lock, with the actor and reason the event log
    records."""
    with transaction.atomic(), audit_actor(caller.name):
        xact_lock(LockNamespace.SOUL, [f"soul:{agent.pk}"])
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('neuromem.reason', %s, true)", [reason])
        yield


def _staff(caller: Caller, what: str) -> None:
    if not caller.is_staff:
        raise Forbidden(f"{what} needs a staff client.")


def _reason(reason: str, *, required: bool) -> str:
    reason = (reason or "").strip()
    if required and not reason:
        raise Invalid("Say why.", field="reason")
    if len(reason) > REASON_MAX_CHARS:
        raise Invalid(f"At most {REASON_MAX_CHARS} characters.", field="reason")
    validated(reason=text_problem(reason))
    return reason


def _content(content: str, *, field_name: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise Invalid("The SOUL document cannot be empty.", field=field_name)
    if "\x00" in content:
        raise Invalid("NUL characters are not allowed.", field=field_name)
    if estimated_tokens(content) > 4 * settings.SOUL_MAX_TOKENS:
        raise Invalid("Far above the SOUL size limit.", field=field_name)
    return content


def _locked(agent: Agent, version: int) -> SoulVersion:
    found = SoulVersion.objects.select_for_update().filter(agent=agent, version=version).first()
    if found is None:
        raise NotFound(f"SOUL version {version} not found.")
    return found


def _next_version(agent: Agent) -> int:
    highest = SoulVersion.objects.filter(agent=agent).aggregate(highest=Max("version"))["highest"]
    return 0 if highest is None else highest + 1


# --- Bootstrap and proposals ---------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapOutcome:
    version: SoulVersion  # version 0, or the active version when skipped
    skipped: bool


def soul_bootstrap(*, agent: Agent, caller: Caller, content: str) -> BootstrapOutcome:
    """Import the agent's initial SOUL as version 0 (created_by bootstrap, active) with the
    contract its marked sections state, so its proposals are judged at once. When the agent
    has a SOUL already nothing changes (skipped): a deploy hook may run it at every start."""
    content = _content(content, field_name="content")
    with _soul_write(agent, caller, "bootstrap"):
        if SoulVersion.objects.filter(agent=agent).exists():
            return BootstrapOutcome(soul_active(agent=agent), skipped=True)
        created = SoulVersion.objects.create(
            agent=agent,
            version=0,
            content=content,
            status=SoulStatus.ACTIVE,
            created_by=SoulAuthor.BOOTSTRAP,
        )
        _contract_refresh(agent, caller)
        return BootstrapOutcome(created, skipped=False)


def _proposal_author(agent: Agent, caller: Caller) -> str:
    """Seed 003's rule: a SOUL changes through its agent's own proposals (its client's), and
    staff govern it (veto, rollback, contract). Staff write another client's agent's SOUL only
    where SOUL_STAFF_PROPOSALS allows it, as `user`; the deployment's own agent (no client) is
    the staff's to propose to."""
    own = agent.client is not None and agent.client.name == caller.name
    if own or not caller.is_staff:  # a client reaches only its own agents (core.access)
        return SoulAuthor.AGENT
    if agent.client is not None and not settings.SOUL_STAFF_PROPOSALS:
        raise Forbidden(
            "An agent's SOUL changes through its own proposals; staff govern it (veto, "
            "rollback, contract). SOUL_STAFF_PROPOSALS=true lets staff propose."
        )
    return SoulAuthor.USER


def soul_propose(*, agent: Agent, caller: Caller, proposal: SoulProposal) -> SoulVersion:
    """Record a proposed change as the next version (status proposed); nothing takes effect.
    Its `proposal` keeps the intent, risks, justification, evidence, the active version it
    changes (`base_version`) and the unified diff against it."""
    content = _content(proposal.new_content, field_name="new_content")
    texts = {
        "intent": proposal.intent,
        "risk_notes": proposal.risk_notes,
        "justification": proposal.justification,
    }
    for name, text in texts.items():
        if not isinstance(text, str) or len(text) > TEXT_MAX_CHARS:
            raise Invalid(f"At most {TEXT_MAX_CHARS} characters.", field=name)
    if not proposal.intent.strip():
        raise Invalid("Say what the change is for.", field="intent")
    refs = proposal.evidence_refs
    if len(refs) > 100 or not all(isinstance(ref, str) and len(ref) <= 255 for ref in refs):
        raise Invalid("At most 100 strings of at most 255 characters.", field="evidence_refs")
    author = _proposal_author(agent, caller)
    with _soul_write(agent, caller, proposal.intent.strip()):
        base = soul_active(agent=agent)
        if base is None:
            raise Conflict("No active SOUL: bootstrap it first.")
        if content == base.content:
            raise Conflict("The proposal changes nothing.", field="new_content")
        version = _next_version(agent)
        return SoulVersion.objects.create(
            agent=agent,
            version=version,
            content=content,
            status=SoulStatus.PROPOSED,
            created_by=author,
            proposal={
                **{name: text.strip() for name, text in texts.items()},
                "evidence_refs": list(proposal.evidence_refs),
                "base_version": base.version,
                "diff": unified_diff(
                    base.content,
                    content,
                    old_name=f"SOUL.md@v{base.version}",
                    new_name=f"SOUL.md@v{version}",
                ),
            },
        )


def _evaluable(proposed: SoulVersion) -> None:
    if proposed.status != SoulStatus.PROPOSED:
        raise Conflict(f"SOUL version {proposed.version} is {proposed.status}, not proposed.")
    if proposed.eval_result is not None:
        raise Conflict(f"SOUL version {proposed.version} is evaluated already.")


def soul_evaluate(*, agent: Agent, caller: Caller, version: int) -> SoulVersion:
    """Run the checks on a proposal against the agent's contract (refreshed first when the
    active SOUL no longer reads as its source) and record them (once: a failed proposal stays
    failed and can never be applied). The checks run before the SOUL lock is taken (a
    version's content never changes), so a slow constraint pattern holds up no other write;
    the result is recorded under the lock if the proposal is still waiting."""
    proposed = soul_version_find(agent=agent, version=version)
    if proposed is None:
        raise NotFound(f"SOUL version {version} not found.")
    _evaluable(proposed)
    base = soul_version_find(agent=agent, version=proposed.proposal["base_version"])
    result = soul_checks(
        content=proposed.content,
        base_content=base.content,
        justification=proposed.proposal.get("justification", ""),
        contract=safety_contract_fresh(agent=agent),
        now=timezone.now(),
    )
    with _soul_write(agent, caller, "evaluate"):
        proposed = _locked(agent, version)
        _evaluable(proposed)
        proposed.eval_result = result
        proposed.save(update_fields=["eval_result"])
        return proposed


def soul_apply(*, agent: Agent, caller: Caller, version: int) -> SoulVersion:
    """Make a proposal whose evaluation passed the active version; the one active before is
    superseded, and the contract follows the new text. A proposal made against another
    version than the active one is stale."""
    with _soul_write(agent, caller, "apply"):
        proposed = _locked(agent, version)
        if proposed.status != SoulStatus.PROPOSED:
            raise Conflict(f"SOUL version {version} is {proposed.status}, not proposed.")
        if not (proposed.eval_result or {}).get("passed"):
            state = (
                "not evaluated" if proposed.eval_result is None else "rejected by its evaluation"
            )
            raise Conflict(f"SOUL version {version} is {state}; it cannot be applied.")
        current = soul_active(agent=agent)
        if current is None or current.version != proposed.proposal["base_version"]:
            raise Conflict(
                f"SOUL version {version} changes v{proposed.proposal['base_version']}, which is "
                "no longer active: propose again.",
                version=version,
            )
        SoulVersion.objects.filter(pk=current.pk).update(status=SoulStatus.SUPERSEDED)
        proposed.status = SoulStatus.ACTIVE
        proposed.save(update_fields=["status"])
        _contract_refresh(agent, caller)
        return proposed


@dataclass(frozen=True)
class ProposalOutcome:
    version: SoulVersion
    applied: bool


def soul_propose_and_apply(
    *, agent: Agent, caller: Caller, proposal: SoulProposal, auto_apply: bool = True
) -> ProposalOutcome:
    """propose → evaluate → (passed and `auto_apply`) apply, each step its own transaction:
    a rejected proposal stays recorded, with its failing evaluation."""
    proposed = soul_propose(agent=agent, caller=caller, proposal=proposal)
    evaluated = soul_evaluate(agent=agent, caller=caller, version=proposed.version)
    if auto_apply and evaluated.eval_result["passed"]:
        applied = soul_apply(agent=agent, caller=caller, version=proposed.version)
        SOUL_PROPOSALS.labels("applied").inc()
        return ProposalOutcome(applied, True)
    SOUL_PROPOSALS.labels("proposed" if evaluated.eval_result["passed"] else "rejected").inc()
    return ProposalOutcome(evaluated, False)


# --- Veto and rollback -----------------------------------------------------------------------


def _previous_stable(current: SoulVersion) -> SoulVersion | None:
    """The newest version before `current` that was active and replaced normally (superseded)
    and reads differently from it (restoring the same text again would change nothing)."""
    return (
        SoulVersion.objects.filter(
            agent=current.agent_id, version__lt=current.version, status=SoulStatus.SUPERSEDED
        )
        .exclude(content=current.content)
        .order_by("-version")
        .first()
    )


def _restore(
    *, caller: Caller, target: SoulVersion, author: str, current: SoulVersion
) -> SoulVersion:
    """A new active version with `target`'s content (history is never rewritten); the
    contract follows it."""
    version = _next_version(current.agent)
    restored = SoulVersion.objects.create(
        agent=current.agent,
        version=version,
        content=target.content,
        status=SoulStatus.ACTIVE,
        created_by=author,
        proposal={
            "restores": target.version,
            "replaces": current.version,
            "requested_by": caller.name,
            "diff": unified_diff(
                current.content,
                target.content,
                old_name=f"SOUL.md@v{current.version}",
                new_name=f"SOUL.md@v{version}",
            ),
        },
    )
    _contract_refresh(current.agent, caller)
    return restored


def soul_veto(*, agent: Agent, caller: Caller, version: int | None, reason: str) -> SoulVersion:
    """Veto a proposal (it becomes vetoed and can never be applied; answers it) or the active
    version, the default (it becomes vetoed and the previous stable version is restored as a
    new active one, created by `system`; answers that new version). The user's word through
    their agent is enough: the log records who asked and why."""
    reason = _reason(reason, required=True)
    with _soul_write(agent, caller, reason):
        if version is None:
            active = soul_active(agent=agent)
            if active is None:
                raise Conflict("No active SOUL to veto.")
            version = active.version
        vetoed = _locked(agent, version)
        if vetoed.status == SoulStatus.PROPOSED:
            vetoed.status = SoulStatus.VETOED
            vetoed.save(update_fields=["status"])
            return vetoed
        if vetoed.status != SoulStatus.ACTIVE:
            raise Conflict(f"SOUL version {version} is {vetoed.status}: nothing to veto.")
        target = _previous_stable(vetoed)
        if target is None:
            raise Conflict("No earlier stable version to return to; propose a change instead.")
        SoulVersion.objects.filter(pk=vetoed.pk).update(status=SoulStatus.VETOED)
        return _restore(caller=caller, target=target, author=SoulAuthor.SYSTEM, current=vetoed)


def soul_rollback(
    *, agent: Agent, caller: Caller, to_version: int | None = None, reason: str = ""
) -> SoulVersion:
    """Return to the previous stable version, or to `to_version` (any version that was active
    once): a new active version with its content (created by `user`); the current one becomes
    rolled_back."""
    reason = _reason(reason, required=False) or "rollback"
    with _soul_write(agent, caller, reason):
        current = soul_active(agent=agent)
        if current is None:
            raise Conflict("No active SOUL to roll back.")
        if to_version is None:
            target = _previous_stable(current)
            if target is None:
                raise Conflict("No earlier stable version to roll back to.")
        else:
            target = soul_version_find(agent=agent, version=to_version)
            if target is None:
                raise NotFound(f"SOUL version {to_version} not found.", field="to_version")
            if target.status not in (SoulStatus.SUPERSEDED, SoulStatus.ROLLED_BACK):
                raise Conflict(
                    f"SOUL version {to_version} is {target.status}: only a version that was "
                    "active once can be restored.",
                    field="to_version",
                )
            if target.content == current.content:
                # As a proposal that changes nothing is refused: a version identical to the
                # active one would be history without a change.
                raise Conflict(
                    f"SOUL version {to_version} says what the active version says: nothing to "
                    "roll back.",
                    field="to_version",
                )
        SoulVersion.objects.filter(pk=current.pk).update(status=SoulStatus.ROLLED_BACK)
        return _restore(caller=caller, target=target, author=SoulAuthor.USER, current=current)


# --- The Core Safety Contract ----------------------------------------------------------------


def _contract_hash(
    anchors: list[str], constraints: list[str], extracted: tuple[list[str], list[str]]
) -> str:
    body = json.dumps(
        {
            "anchors": anchors,
            "constraints": constraints,
            "extracted_anchors": extracted[0],
            "extracted_constraints": extracted[1],
        },
        ensure_ascii=False,
    )
    return hashlib.sha256(body.encode()).hexdigest()


def _contract_create(
    agent: Agent,
    caller: Caller,
    *,
    anchors: list[str],
    constraints: list[str],
    extracted: tuple[list[str], list[str]],
    source: str,
) -> SafetyContract:
    """The agent's next contract version (under its SOUL lock)."""
    highest = safety_contract_current(agent=agent)
    return SafetyContract.objects.create(
        agent=agent,
        version=(highest.version if highest else 0) + 1,
        anchors=anchors,
        constraints=constraints,
        extracted_anchors=extracted[0],
        extracted_constraints=extracted[1],
        source_hash=source,
        content_hash=_contract_hash(anchors, constraints, extracted),
        created_by=caller.name,
    )


def _contract_refresh(agent: Agent, caller: Caller) -> SafetyContract | None:
    """Under the agent's SOUL lock: a new contract version extracted from the active SOUL
    when that text is not the current contract's source (staff additions carried over)."""
    active = soul_active(agent=agent)
    current = safety_contract_current(agent=agent)
    if active is None or (
        current is not None and current.source_hash == source_hash(active.content)
    ):
        return current
    extracted = contract_extract(active.content)
    if current is None and not (extracted.anchors or extracted.constraints):
        return None  # nothing stated, nothing added: no contract (evaluations fail closed)
    return _contract_create(
        agent,
        caller,
        anchors=current.anchors if current else [],
        constraints=current.constraints if current else [],
        extracted=(extracted.anchors, extracted.constraints),
        source=extracted.source_hash,
    )


def safety_contract_fresh(*, agent: Agent) -> SafetyContract | None:
    """The agent's current contract, re-extracted first when the active SOUL's hash is not
    its `source_hash` (a lazy refresh: a contract from before this rule, or a SOUL changed by
    a path that did not refresh it)."""
    active = soul_active(agent=agent)
    current = safety_contract_current(agent=agent)
    if active is None or (
        current is not None and current.source_hash == source_hash(active.content)
    ):
        return current
    with _soul_write(agent, SYSTEM, "contract refresh"):
        return _contract_refresh(agent, SYSTEM)


def safety_contract_update(
    *, agent: Agent, caller: Caller, anchors: list[str], constraints: list[str]
) -> SafetyContract:
    """A new contract version with these staff additions (staff only), beside what the
    agent's SOUL states. Anchors are phrases every SOUL must keep; constraints are regular
    expressions (case-insensitive) no SOUL may match."""
    _staff(caller, "Changing the Core Safety Contract")
    for name, items in (("anchors", anchors), ("constraints", constraints)):
        if not isinstance(items, list) or len(items) > 200:
            raise Invalid("A list of at most 200 strings.", field=name)
        for n, item in enumerate(items):
            if not isinstance(item, str) or not item.strip() or len(item) > 500:
                raise Invalid("A non-empty string of at most 500 characters.", field=f"{name}[{n}]")
    for n, pattern in enumerate(constraints):
        validated(**{f"constraints[{n}]": regex_problem(pattern)})
    if not (anchors or constraints):  # as the schema says (SafetyContractInputSchema)
        raise Invalid("Name at least one anchor or constraint.", field="anchors")
    with _soul_write(agent, caller, "contract"):
        current = _contract_refresh(agent, caller)
        extracted = (
            (current.extracted_anchors, current.extracted_constraints) if current else ([], [])
        )
        return _contract_create(
            agent,
            caller,
            anchors=anchors,
            constraints=constraints,
            extracted=extracted,
            source=current.source_hash if current else "",
        )
