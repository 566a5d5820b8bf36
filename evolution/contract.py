"""The Core Safety Contract as the SOUL document states it: the bullets under its marked
headings. "Core principles" / "Anchors" (核心原则 / 锚点) give anchors, phrases every later
SOUL must keep; "Constraints" (约束) give constraints, rules every later SOUL must keep
stating. `source_hash` names the text they came from, so a stale contract is seen at once."""

import hashlib
import re
from dataclasses import dataclass

ANCHOR_HEADINGS = ("core principles", "anchors", "核心原则", "锚点")
CONSTRAINT_HEADINGS = ("constraints", "约束")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.+?)\s*$")


@dataclass(frozen=True)
class ExtractedContract:
    anchors: list[str]
    constraints: list[str]
    source_hash: str


def source_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def _section_kind(heading: str) -> str | None:
    name = heading.casefold().strip()
    if name.startswith(ANCHOR_HEADINGS):
        return "anchors"
    if name.startswith(CONSTRAINT_HEADINGS):
        return "constraints"
    return None


def contract_extract(content: str) -> ExtractedContract:
    """The bullets of the marked sections, in order, each once. A section runs to the next
    heading; text outside bullets is not part of the contract."""
    found: dict[str, list[str]] = {"anchors": [], "constraints": []}
    kind = None
    in_fence = False
    for line in content.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = HEADING.match(line)
        if heading:
            kind = _section_kind(heading[1])
            continue
        bullet = BULLET.match(line)
        if kind and bullet and bullet[1] not in found[kind]:
            found[kind].append(bullet[1])
    return ExtractedContract(found["anchors"], found["constraints"], source_hash(content))
