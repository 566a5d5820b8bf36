"""How the SOUL admin shows a version: its address by agent and number, its evaluation and
intent in a line, its diff and its proposal as rows."""

import re

from evolution.models import SoulVersion

# How the admin's URLs name a version: "a", its agent's id, "-v" and its number.
VERSION_URL_ID = re.compile(r"a(\d+)-v(\d+)")


def version_url_id(agent_id: int, number: int) -> str:
    return f"a{agent_id}-v{number}"


def eval_summary(version: SoulVersion) -> str:
    result = version.eval_result
    if result is None:
        return "not evaluated"
    verdict = "passed" if result.get("passed") else "failed"
    summary = result.get("summary") or ""
    return f"{verdict} — {summary}" if summary else verdict


def intent_of(version: SoulVersion) -> str:
    """What a version is for: a proposal's intent, what a restore brings back, the bootstrap."""
    proposal = version.proposal or {}
    if proposal.get("intent"):
        return proposal["intent"]
    if "restores" in proposal:
        return f"restores v{proposal['restores']} (replacing v{proposal.get('replaces')})"
    if version.created_by == "bootstrap":
        return "bootstrap"
    return ""


def diff_lines(diff: str) -> list[tuple[str, str]]:
    """A unified diff's lines with the CSS class each is shown with."""
    lines = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            css = "diff-file"
        elif line.startswith("@@"):
            css = "diff-hunk"
        elif line.startswith("+"):
            css = "diff-add"
        elif line.startswith("-"):
            css = "diff-del"
        else:
            css = "diff-context"
        lines.append((css, line))
    return lines


PROPOSAL_LABELS = {
    "intent": "intent",
    "risk_notes": "risk notes",
    "justification": "justification",
    "evidence_refs": "evidence refs",
    "base_version": "changes version",
    "restores": "restores version",
    "replaces": "replaces version",
    "requested_by": "requested by",
}


def proposal_rows(proposal: dict) -> list[tuple[str, str]]:
    """The proposal's fields as (label, text) rows: the known ones first, in order."""
    rows = []
    for key in [*PROPOSAL_LABELS, *sorted(set(proposal) - set(PROPOSAL_LABELS))]:
        if key not in proposal:
            continue
        value = proposal[key]
        if isinstance(value, list):
            value = ", ".join(str(item) for item in value)
        rows.append((PROPOSAL_LABELS.get(key, key), "" if value is None else str(value)))
    return rows
