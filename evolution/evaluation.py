"""A proposed SOUL's evaluation: one result per check, against the Core Safety Contract current
at evaluation time. No contract (or an empty one) fails closed: GUARD_CONTRACT_UNAVAILABLE.

1. anchor preservation — every anchor of the contract (extracted or staff's) appears in the
   new content;
2. constraint compliance — every extracted constraint is still stated, and no staff
   constraint (a forbidden pattern) matches it;
3. well-formed markdown — not empty, a `# ` title first, code fences closed;
4. size limit — at most SOUL_MAX_TOKENS (estimated);
5. diff sanity — a change above SOUL_DIFF_MAX_SHARE of the document needs a justification.
"""

import difflib
import re
from dataclasses import asdict, dataclass
from datetime import datetime

from django.conf import settings

from core.tokens import estimated_tokens
from evolution.contract import ExtractedContract, contract_extract
from evolution.models import SafetyContract

CONTRACT_UNAVAILABLE = "GUARD_CONTRACT_UNAVAILABLE"
ANCHOR_MISSING = "GUARD_ANCHOR_MISSING"
CONSTRAINT_VIOLATED = "GUARD_CONSTRAINT_VIOLATED"
# Seed 003 §4.0.11: the guardrail's codes, as a client reads them.
GUARD_ERROR_CODES = {
    ANCHOR_MISSING: "Core anchor(s) not visible in the execution context",
    CONSTRAINT_VIOLATED: "Safety constraint violation detected",
    CONTRACT_UNAVAILABLE: "Core Safety Contract could not be loaded",
}
FENCE = re.compile(r"^\s*(```|~~~)", re.M)


@dataclass(frozen=True)
class EvalCheck:
    name: str
    passed: bool
    detail: str


def changed_share(old: str, new: str) -> float:
    """How much of the document a change rewrites: 1 − the lines' similarity ratio."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return 1.0 - matcher.ratio()


def unified_diff(old: str, new: str, *, old_name: str, new_name: str) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_name,
            tofile=new_name,
        )
    )


def contract_anchors(contract: SafetyContract) -> list[str]:
    """The extracted anchors, then the staff's, each once."""
    return list(dict.fromkeys([*contract.extracted_anchors, *contract.anchors]))


def contract_is_empty(contract: SafetyContract | None) -> bool:
    return contract is None or not (
        contract.anchors
        or contract.constraints
        or contract.extracted_anchors
        or contract.extracted_constraints
    )


def _anchors(content: str, contract: SafetyContract, marked: ExtractedContract) -> EvalCheck:
    """A staff anchor anywhere in the content; an extracted one still in a marked section
    (`marked`: what the content's own sections give), or moving it out of the section in one
    change and deleting it in the next would pass both."""
    lowered = content.casefold()
    in_sections = "\n".join(marked.anchors).casefold()
    extracted = set(contract.extracted_anchors)
    anchors = contract_anchors(contract)
    missing = [
        anchor
        for anchor in anchors
        if anchor.casefold() not in (in_sections if anchor in extracted else lowered)
    ]
    if missing:
        return EvalCheck(
            "anchor_preservation", False, f"{ANCHOR_MISSING}: missing {', '.join(missing)}"
        )
    return EvalCheck("anchor_preservation", True, f"all {len(anchors)} anchors kept")


def _constraints(content: str, contract: SafetyContract, marked: ExtractedContract) -> EvalCheck:
    in_sections = "\n".join(marked.constraints).casefold()
    dropped = [
        rule for rule in contract.extracted_constraints if rule.casefold() not in in_sections
    ]
    violated = staff_patterns_matched(content, contract)
    if dropped or violated:
        problems = [f"drops {rule}" for rule in dropped] + [f"matches {p}" for p in violated]
        return EvalCheck(
            "constraint_compliance", False, f"{CONSTRAINT_VIOLATED}: {'; '.join(problems)}"
        )
    count = len(contract.constraints) + len(contract.extracted_constraints)
    return EvalCheck("constraint_compliance", True, f"all {count} constraints kept")


def staff_patterns_matched(text: str, contract: SafetyContract) -> list[str]:
    """The staff constraints (case-insensitive, multi-line regular expressions) `text` matches."""
    return [pattern for pattern in contract.constraints if re.search(pattern, text, re.I | re.M)]


def _markdown(content: str) -> EvalCheck:
    lines = [line for line in content.splitlines() if line.strip()]
    if not lines:
        return EvalCheck("well_formed_markdown", False, "the document is empty")
    if not re.match(r"#\s+\S", lines[0]):
        return EvalCheck("well_formed_markdown", False, "the first line is not a `# ` title")
    if len(FENCE.findall(content)) % 2:
        return EvalCheck("well_formed_markdown", False, "a code fence is not closed")
    return EvalCheck("well_formed_markdown", True, "a title, closed code fences")


def _size(content: str) -> EvalCheck:
    tokens, limit = estimated_tokens(content), settings.SOUL_MAX_TOKENS
    return EvalCheck("size_limit", tokens <= limit, f"~{tokens} tokens (limit {limit})")


def _diff(old: str, new: str, justification: str) -> EvalCheck:
    share, limit = changed_share(old, new), settings.SOUL_DIFF_MAX_SHARE
    if share <= limit:
        return EvalCheck("diff_sanity", True, f"{share:.0%} of the document changed")
    if justification.strip():
        return EvalCheck("diff_sanity", True, f"{share:.0%} changed (over {limit:.0%}), justified")
    return EvalCheck(
        "diff_sanity", False, f"{share:.0%} changed (over {limit:.0%}) without a justification"
    )


def soul_checks(
    *,
    content: str,
    base_content: str,
    justification: str,
    contract: SafetyContract | None,
    now: datetime,
) -> dict:
    """The evaluation as stored in `eval_result`: passed, checks, summary, the contract's
    version and hash (None without one), when."""
    if contract_is_empty(contract):
        checks = [EvalCheck("contract", False, f"{CONTRACT_UNAVAILABLE}: no Core Safety Contract")]
    else:
        marked = contract_extract(content)
        checks = [
            _anchors(content, contract, marked),
            _constraints(content, contract, marked),
            _markdown(content),
            _size(content),
            _diff(base_content, content, justification),
        ]
    failed = [check.name for check in checks if not check.passed]
    return {
        "passed": not failed,
        "checks": [asdict(check) for check in checks],
        "summary": "all checks passed" if not failed else f"failed: {', '.join(failed)}",
        "error_code": CONTRACT_UNAVAILABLE if checks[0].name == "contract" else None,
        "contract_version": contract.version if contract else None,
        "contract_hash": contract.content_hash if contract else None,
        "evaluated_at": now.isoformat(),
    }


@dataclass(frozen=True)
class GuardCheckResult:
    """One guard check of the context an agent is about to send its model (seed 003 §4.0.10):
    `error_code` is "" when it passed."""

    passed: bool
    missing_anchors: list[str]
    violated_constraints: list[str]
    error_code: str
    detail: str


def guard_contract_unavailable() -> GuardCheckResult:
    """The guard's answer for an agent without a contract: nothing to check, failed."""
    return GuardCheckResult(
        False, [], [], CONTRACT_UNAVAILABLE, GUARD_ERROR_CODES[CONTRACT_UNAVAILABLE]
    )


def _visible_form(text: str) -> str:
    """Compared case-insensitively, with any run of whitespace as one space: a prompt
    builder's line wrapping does not hide an anchor."""
    return " ".join(text.split()).casefold()


def guard_context_check(*, context: str, contract: SafetyContract | None) -> GuardCheckResult:
    """Is the contract visible in `context`? Every anchor and every rule the SOUL states
    (extracted constraint) must appear in it, and no staff constraint (a forbidden pattern)
    may match it. No contract, or an empty one: failed, GUARD_CONTRACT_UNAVAILABLE."""
    if contract_is_empty(contract):
        return guard_contract_unavailable()
    seen = _visible_form(context)
    missing = [a for a in contract_anchors(contract) if _visible_form(a) not in seen]
    violated = [
        rule for rule in contract.extracted_constraints if _visible_form(rule) not in seen
    ] + staff_patterns_matched(context, contract)
    code = ANCHOR_MISSING if missing else CONSTRAINT_VIOLATED if violated else ""
    detail = GUARD_ERROR_CODES[code] if code else "every anchor and constraint visible"
    return GuardCheckResult(not code, missing, violated, code, detail)
