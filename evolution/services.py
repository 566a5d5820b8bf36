"""Writes to the SOUL document: bootstrap, propose → evaluate → apply, veto, rollback, and the
Core Safety Contract (docs/evolution.md).

Every write takes the SOUL lock for its transaction (numbers stay monotonic and gap-free, one
version is active), names its actor and reason for the database's event log, and checks the
transition it makes; the database refuses a forbidden one even if a caller skips the service.
Veto, rollback, bootstrap and contract changes are staff decisions.
"""

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from core.access import Caller
from core.db.actor import audit_actor
from core.db.locks import LockNamespace, xact_lock
from core.errors import Conflict, Forbidden, Invalid, NotFound
from core.tokens import estimated_tokens
from evolution.evaluation import soul_checks, unified_diff
from evolution.models import SafetyContract, SoulAuthor, SoulStatus, SoulVersion
from evolution.selectors import safety_contract_current, soul_active

REASON_MAX_CHARS = 2000
TEXT_MAX_CHARS = 2000


@dataclass(frozen=True)
class SoulProposal:
    new_content: str
    intent: str
    risk_notes: str = ""
    justification: str = ""
    evidence_refs: list[str] = field(default_factory=list)


@contextmanager
def _soul_write(caller: Caller, reason: str = "") -> Iterator[None]:
    """One transaction holding the SOUL lock, with the actor and reason the event log
    records."""
    with transaction.atomic(), audit_actor(caller.name):
        xact_lock(LockNamespace.SOUL, ["soul"])
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
    return reason


def _content(content: str, *, field_name: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise Invalid("The SOUL document cannot be empty.", field=field_name)
    if "\x00" in content:
        raise Invalid("NUL characters are not allowed.", field=field_name)
    if estimated_tokens(content) > 4 * settings.SOUL_MAX_TOKENS:
        raise Invalid("Far above the SOUL size limit.", field=field_name)
    return content


def _locked(version: int) -> SoulVersion:
    found = SoulVersion.objects.select_for_update().filter(version=version).first()
    if found is None:
        raise NotFound(f"SOUL version {version} not found.")
    return found


def _next_version() -> int:
    highest = SoulVersion.objects.aggregate(highest=Max("version"))["highest"]
    return 0 if highest is None else highest + 1


# --- Bootstrap and proposals ---------------------------------------------------------------


def soul_bootstrap(*, caller: Caller, content: str) -> SoulVersion:
    """Import the initial SOUL as version 0 (created_by bootstrap, active), only when no
    version exists; after that every change is a proposal."""
    _staff(caller, "Bootstrapping the SOUL")
    content = _content(content, field_name="content")
    with _soul_write(caller, "bootstrap"):
        if SoulVersion.objects.exists():
            raise Conflict("The SOUL is bootstrapped already; propose a change instead.")
        return SoulVersion.objects.create(
            version=0, content=content, status=SoulStatus.ACTIVE, created_by=SoulAuthor.BOOTSTRAP
        )


def soul_propose(*, caller: Caller, proposal: SoulProposal) -> SoulVersion:
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
    author = SoulAuthor.USER if caller.is_staff else SoulAuthor.AGENT
    with _soul_write(caller, proposal.intent.strip()):
        base = soul_active()
        if base is None:
            raise Conflict("No active SOUL: bootstrap it first.")
        if content == base.content:
            raise Conflict("The proposal changes nothing.", field="new_content")
        version = _next_version()
        return SoulVersion.objects.create(
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


def soul_evaluate(*, caller: Caller, version: int) -> SoulVersion:
    """Run the checks on a proposal against the current contract and record them (once: a
    failed proposal stays failed and can never be applied). The checks run before the SOUL
    lock is taken (a version's content never changes), so a slow constraint pattern holds up
    no other write; the result is recorded under the lock if the proposal is still waiting."""
    proposed = SoulVersion.objects.filter(version=version).first()
    if proposed is None:
        raise NotFound(f"SOUL version {version} not found.")
    _evaluable(proposed)
    base = SoulVersion.objects.get(version=proposed.proposal["base_version"])
    result = soul_checks(
        content=proposed.content,
        base_content=base.content,
        justification=proposed.proposal.get("justification", ""),
        contract=safety_contract_current(),
        now=timezone.now(),
    )
    with _soul_write(caller, "evaluate"):
        proposed = _locked(version)
        _evaluable(proposed)
        proposed.eval_result = result
        proposed.save(update_fields=["eval_result"])
        return proposed


def soul_apply(*, caller: Caller, version: int) -> SoulVersion:
    """Make a proposal whose evaluation passed the active version; the one active before is
    superseded. A proposal made against another version than the active one is stale."""
    with _soul_write(caller, "apply"):
        proposed = _locked(version)
        if proposed.status != SoulStatus.PROPOSED:
            raise Conflict(f"SOUL version {version} is {proposed.status}, not proposed.")
        if not (proposed.eval_result or {}).get("passed"):
            state = (
                "not evaluated" if proposed.eval_result is None else "rejected by its evaluation"
            )
            raise Conflict(f"SOUL version {version} is {state}; it cannot be applied.")
        current = soul_active()
        if current is None or current.version != proposed.proposal["base_version"]:
            raise Conflict(
                f"SOUL version {version} changes v{proposed.proposal['base_version']}, which is "
                "no longer active: propose again.",
                version=version,
            )
        SoulVersion.objects.filter(pk=current.pk).update(status=SoulStatus.SUPERSEDED)
        proposed.status = SoulStatus.ACTIVE
        proposed.save(update_fields=["status"])
        return proposed


@dataclass(frozen=True)
class ProposalOutcome:
    version: SoulVersion
    applied: bool


def soul_propose_and_apply(
    *, caller: Caller, proposal: SoulProposal, auto_apply: bool = True
) -> ProposalOutcome:
    """propose → evaluate → (passed and `auto_apply`) apply, each step its own transaction:
    a rejected proposal stays recorded, with its failing evaluation."""
    proposed = soul_propose(caller=caller, proposal=proposal)
    evaluated = soul_evaluate(caller=caller, version=proposed.version)
    if auto_apply and evaluated.eval_result["passed"]:
        return ProposalOutcome(soul_apply(caller=caller, version=proposed.version), True)
    return ProposalOutcome(evaluated, False)


# --- Veto and rollback -----------------------------------------------------------------------


def _previous_stable(current: SoulVersion) -> SoulVersion | None:
    """The newest version before `current` that was active and replaced normally (superseded)
    and reads differently from it (restoring the same text again would change nothing)."""
    return (
        SoulVersion.objects.filter(version__lt=current.version, status=SoulStatus.SUPERSEDED)
        .exclude(content=current.content)
        .order_by("-version")
        .first()
    )


def _restore(
    *, caller: Caller, target: SoulVersion, author: str, current: SoulVersion
) -> SoulVersion:
    """A new active version with `target`'s content (history is never rewritten)."""
    version = _next_version()
    return SoulVersion.objects.create(
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


def soul_veto(*, caller: Caller, version: int, reason: str) -> SoulVersion:
    """Veto a proposal (it becomes vetoed and can never be applied; answers it) or the active
    version (it becomes vetoed and the previous stable version is restored as a new active
    one, created by `system`; answers that new version)."""
    _staff(caller, "A veto")
    reason = _reason(reason, required=True)
    with _soul_write(caller, reason):
        vetoed = _locked(version)
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
    *, caller: Caller, to_version: int | None = None, reason: str = ""
) -> SoulVersion:
    """Return to the previous stable version, or to `to_version` (any version that was active
    once): a new active version with its content (created by `user`); the current one becomes
    rolled_back."""
    _staff(caller, "A rollback")
    reason = _reason(reason, required=False) or "rollback"
    with _soul_write(caller, reason):
        current = soul_active()
        if current is None:
            raise Conflict("No active SOUL to roll back.")
        if to_version is None:
            target = _previous_stable(current)
            if target is None:
                raise Conflict("No earlier stable version to roll back to.")
        else:
            target = SoulVersion.objects.filter(version=to_version).first()
            if target is None:
                raise NotFound(f"SOUL version {to_version} not found.", field="to_version")
            if target.status not in (SoulStatus.SUPERSEDED, SoulStatus.ROLLED_BACK):
                raise Conflict(
                    f"SOUL version {to_version} is {target.status}: only a version that was "
                    "active once can be restored.",
                    field="to_version",
                )
        SoulVersion.objects.filter(pk=current.pk).update(status=SoulStatus.ROLLED_BACK)
        return _restore(caller=caller, target=target, author=SoulAuthor.USER, current=current)


# --- The Core Safety Contract ----------------------------------------------------------------


def safety_contract_update(
    *, caller: Caller, anchors: list[str], constraints: list[str]
) -> SafetyContract:
    """A new contract version (staff only). Anchors are phrases every SOUL must keep;
    constraints are regular expressions (case-insensitive) no SOUL may match."""
    _staff(caller, "Changing the Core Safety Contract")
    for name, items in (("anchors", anchors), ("constraints", constraints)):
        if not isinstance(items, list) or len(items) > 200:
            raise Invalid("A list of at most 200 strings.", field=name)
        for n, item in enumerate(items):
            if not isinstance(item, str) or not item.strip() or len(item) > 500:
                raise Invalid("A non-empty string of at most 500 characters.", field=f"{name}[{n}]")
    for n, pattern in enumerate(constraints):
        try:
            re.compile(pattern)
        except re.error as error:
            raise Invalid(
                f"Not a regular expression: {error}.", field=f"constraints[{n}]"
            ) from None
    if not (anchors or constraints):
        raise Invalid("An empty contract would fail every evaluation.", field="anchors")
    body = json.dumps({"anchors": anchors, "constraints": constraints}, ensure_ascii=False)
    with _soul_write(caller, "contract"):
        highest = SafetyContract.objects.aggregate(highest=Max("version"))["highest"] or 0
        return SafetyContract.objects.create(
            version=highest + 1,
            anchors=anchors,
            constraints=constraints,
            content_hash=hashlib.sha256(body.encode()).hexdigest(),
            created_by=caller.name,
        )
