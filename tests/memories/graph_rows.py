"""Memory-graph rows written directly, dated as the test says: for tests of what reads or
erases the graph, not of what writes it."""

from collections.abc import Iterable
from datetime import datetime

from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.models import Memory


def node(
    user_id: str, kind: str = EntityKind.USER, name: str = "", role: str = "", *, at: datetime
) -> GraphNode:
    return GraphNode.objects.create(user_id=user_id, kind=kind, name=name, role=role, created_at=at)


def edge(
    subject: GraphNode,
    relation: str,
    value: str = "",
    *,
    at: datetime,
    memories: Iterable[Memory] = (),
    **fields,
) -> GraphEdge:
    """A single-valued edge unless `single=False`; `memories`: the memories it came from (or
    `memory_ids=` as ids)."""
    fields.setdefault("memory_ids", [memory.id for memory in memories])
    return GraphEdge.objects.create(
        user_id=subject.user_id,
        subject=subject,
        relation=relation,
        object_value=value,
        single=fields.pop("single", True),
        valid_at=at,
        created_at=at,
        **fields,
    )
