"""Reads of the memory graph: an end user's entities and their edges, now or as they were known
at an instant (docs/graph.md)."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet

from core.access import Caller, user_access_check
from core.errors import NotFound
from memories.graph.models import GraphEdge, GraphNode
from memories.predicates import current_q, valid_as_of_q


def edges_valid_q(instant: datetime | None) -> Q:
    """Edges holding at `instant` as the service knew it then (seed 002 §6.3); now: current."""
    return current_q() if instant is None else valid_as_of_q(instant)


def edges_known(edges: QuerySet[GraphEdge], instant: datetime | None) -> list[GraphEdge]:
    """The edges recorded by `instant`, each as it was known then: an end recorded later is not
    shown yet."""
    if instant is None:
        return list(edges)
    return [
        edge if edge.expired_at is None or edge.expired_at <= instant else _unended(edge)
        for edge in edges.filter(created_at__lte=instant)
    ]


def _unended(edge: GraphEdge) -> GraphEdge:
    edge.invalid_at = edge.expired_at = None
    return edge


# The order of a user's entities, in the REST list's pages and in MCP's answer alike: as they
# became known. A cursor page stays put while entities are added (they come last).
ENTITY_ORDERING = ("created_at", "id")


def entities_list(
    *, caller: Caller, user_id: str, as_of: datetime | None = None
) -> QuerySet[GraphNode]:
    """The user's entities (known at `as_of`), in ENTITY_ORDERING."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    nodes = GraphNode.objects.filter(user_id=user_id)
    if as_of is not None:
        nodes = nodes.filter(created_at__lte=as_of)
    return nodes.order_by(*ENTITY_ORDERING)


def entity_get(
    *, caller: Caller, user_id: str, entity_id: uuid.UUID, as_of: datetime | None = None
) -> GraphNode:
    """The entity (known at `as_of`, as `entities_list` lists it), or NotFound — also when it
    belongs to another end user."""
    user_access_check(caller=caller, user_id=user_id, write=False)
    nodes = GraphNode.objects.filter(pk=entity_id, user_id=user_id)
    if as_of is not None:
        nodes = nodes.filter(created_at__lte=as_of)
    node = nodes.first()
    if node is None:
        raise NotFound(f"Entity '{entity_id}' not found.")
    return node


@dataclass(frozen=True)
class EntityEdges:
    """An entity's edges, current and past (as known at `as_of`): from it (its attributes and
    relations) and to it (who relates to it)."""

    outgoing: list[GraphEdge]
    incoming: list[GraphEdge]


def entity_edges(*, node: GraphNode, as_of: datetime | None = None) -> EntityEdges:
    edges = GraphEdge.objects.select_related("object_node", "subject").order_by("valid_at", "id")
    return EntityEdges(
        outgoing=edges_known(edges.filter(subject=node), as_of),
        incoming=edges_known(edges.filter(object_node=node), as_of),
    )


@dataclass(frozen=True)
class Attribute:
    """One current value of an entity's attribute, for a prompt."""

    entity: str
    relation: str
    value: str
    valid_at: datetime


def current_attributes(
    *, user_id: str, as_of: datetime | None = None, limit: int = 50
) -> list[Attribute]:
    """What holds now (or at `as_of`) about the user and the entities around them, most recently
    said first: the prompt context's "what is true" part."""
    edges = (
        GraphEdge.objects.filter(edges_valid_q(as_of), user_id=user_id)
        .select_related("subject", "object_node")
        .order_by("-valid_at", "id")[:limit]
    )
    return [
        Attribute(
            entity=str(edge.subject),
            relation=edge.relation,
            value=str(edge.object_node) if edge.object_node_id else edge.object_value,
            valid_at=edge.valid_at,
        )
        for edge in edges
    ]
