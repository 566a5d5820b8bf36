"""Reads of the SOUL document: the active version, the audit trail, one version with its
events and its diff against the version it changed."""

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from core.errors import NotFound
from evolution.evaluation import unified_diff
from evolution.models import SafetyContract, SoulEvent, SoulStatus, SoulVersion


def soul_active() -> SoulVersion | None:
    return SoulVersion.objects.filter(status=SoulStatus.ACTIVE).first()


def soul_markdown(version: SoulVersion) -> str:
    """The version as the `SOUL.md` file an agent loads: a comment naming it, then the text."""
    return f"<!-- SOUL.md v{version.version} ({version.status}) -->\n{version.content}"


def soul_versions() -> QuerySet[SoulVersion]:
    """Every version, newest first (the audit trail)."""
    return SoulVersion.objects.order_by("-version")


def soul_proposals_pending() -> QuerySet[SoulVersion]:
    """Proposals still waiting: not evaluated yet, or passed and not applied (a rejected one
    stays `proposed` for the record but waits for nothing)."""
    return (
        SoulVersion.objects.filter(status=SoulStatus.PROPOSED)
        .filter(Q(eval_result__isnull=True) | Q(eval_result__passed=True))
        .order_by("version")
    )


def soul_predecessor(version: SoulVersion) -> SoulVersion | None:
    """The version this one changed: a proposal's base, a restore's replaced version."""
    proposal = version.proposal or {}
    number = proposal.get("base_version", proposal.get("replaces"))
    return None if number is None else SoulVersion.objects.filter(version=number).first()


@dataclass(frozen=True)
class SoulVersionDetail:
    version: SoulVersion
    predecessor: SoulVersion | None
    diff: str  # unified diff against the predecessor ("" for the bootstrap)
    events: list[SoulEvent]


def soul_version_detail(*, version: int) -> SoulVersionDetail:
    found = SoulVersion.objects.filter(version=version).first()
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
    events = list(SoulEvent.objects.filter(version=found.version).order_by("id"))
    return SoulVersionDetail(found, predecessor, diff, events)


def safety_contract_current() -> SafetyContract | None:
    return SafetyContract.objects.order_by("-version").first()
