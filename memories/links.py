"""Reading links: a memory's links in their order, and the depth-first bulk read (seed 004).

Order: by the combined score weight × target score (a missing score counts as 50), highest
first; ties by weight, highest first, then by the target's key (its id when it has none),
ascending. The combined score is compared at 4 decimals, so float noise in the stored weights
and scores (float4) does not decide ties. `sort_links=False` keeps the order links were made.
Only links to current memories are read: a deleted memory is no one's neighbour.
"""

import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings

from memories.models import Memory, MemoryLink

DEFAULT_SCORE = 50.0


def memory_label(memory: Memory) -> str:
    """How links and paths name a memory: its key, else its id."""
    return memory.key if memory.key is not None else str(memory.id)


@dataclass(frozen=True)
class Link:
    """A link from a memory to `target`, a current memory of the same end user."""

    target: Memory
    weight: float
    created_at: datetime

    @property
    def label(self) -> str:
        return memory_label(self.target)

    @property
    def combined(self) -> float:
        score = DEFAULT_SCORE if self.target.score is None else self.target.score
        return round(self.weight * score, 4)


def link_sort_key(link: Link) -> tuple:
    return (-link.combined, -link.weight, link.label)


def memory_links(*, memory: Memory, sort_links: bool = True) -> list[Link]:
    """`memory`'s outgoing links to current memories, in the order of the module doc."""
    rows = list(
        MemoryLink.objects.filter(source_id=memory.id).values_list(
            "target_id", "weight", "created_at"
        )
    )
    targets = (
        Memory.objects.current()
        .filter(user_id=memory.user_id)
        .in_bulk([target_id for target_id, _, _ in rows])
    )
    links = [
        Link(target=targets[target_id], weight=weight, created_at=created_at)
        for target_id, weight, created_at in rows
        if target_id in targets
    ]
    return sorted(links, key=link_sort_key) if sort_links else links


def link_view(link: MemoryLink) -> Link:
    return Link(
        target=Memory.objects.get(pk=link.target_id), weight=link.weight, created_at=link.created_at
    )


@dataclass(frozen=True)
class Reached:
    """A memory the bulk read reached: how deep, by a link of which weight, along which path
    (the labels from the start to the memory that links to it)."""

    memory: Memory
    depth: int
    weight: float
    path: list[str]


@dataclass
class BulkRead:
    target: Memory
    reached: list[Reached] = field(default_factory=list)
    depth_reached: int = 0
    duplicates_skipped: int = 0
    execution_ms: float = 0.0


@dataclass(frozen=True)
class BulkLimits:
    depth: int = settings.BULK_READ_LIMITS["depth"][0]
    breadth: int = settings.BULK_READ_LIMITS["breadth"][0]
    total: int = settings.BULK_READ_LIMITS["total"][0]


def memory_bulk_read(*, memory: Memory, limits: BulkLimits) -> BulkRead:
    """Depth-first from `memory` along its links in their order: at most `limits.breadth`
    memories reached at each depth, none deeper than `limits.depth`, at most `limits.total`
    in all; it stops as soon as a limit is reached. A memory is read once: a link to one
    already read (or to the start) is counted in `duplicates_skipped`."""
    started = time.perf_counter()
    read = BulkRead(target=memory)
    seen: set[uuid.UUID] = {memory.id}
    per_depth = dict.fromkeys(range(1, limits.depth + 1), 0)

    def visit(node: Memory, depth: int, path: list[str]) -> None:
        for link in memory_links(memory=node):
            if len(read.reached) >= limits.total or per_depth[depth] >= limits.breadth:
                return
            if link.target.id in seen:
                read.duplicates_skipped += 1
                continue
            seen.add(link.target.id)
            per_depth[depth] += 1
            read.reached.append(Reached(link.target, depth, link.weight, path))
            read.depth_reached = max(read.depth_reached, depth)
            if depth < limits.depth:
                visit(link.target, depth + 1, [*path, link.label])

    visit(memory, 1, [memory_label(memory)])
    read.execution_ms = round((time.perf_counter() - started) * 1000, 1)
    return read
