"""The memory graph, read-only (docs/graph.md): each end user's entities, an entity's page with
its edges over time and the memories behind each, and the edges. Nothing is edited here: the
graph changes only through what end users say, a forget and the purge. The graph is its own
history (a new value closes the old edge and opens another), so the history pages show edges:
an entity's over time, an edge's relation with its earlier and later values."""

import uuid
from collections.abc import Iterable

from django.contrib import admin
from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.text import Truncator

from core.admin_base import AuditTrail, ConditionFilter, ExactSearch, ReadOnlyAdmin
from memories.admin.display import HEAVY_COLUMNS, memory_url
from memories.admin.filters import UserIdFilter
from memories.graph.models import GraphEdge, GraphNode
from memories.graph.selectors import edges_valid_q
from memories.models import Memory
from neuromem_site.backoffice.links import EndUserColumn

# An entity's page shows its newest edges each way, oldest first; the rest is a click away.
EDGE_ROWS = 200
GRAPH_HISTORY = "admin/memories/graph_history.html"


def entity_url(node_id) -> str:
    return reverse("admin:memories_graphnode_change", args=[node_id])


def edge_url(edge_id) -> str:
    return reverse("admin:memories_graphedge_change", args=[edge_id])


def edges_of_url(node_id) -> str:
    """The edge list searched by the entity's id: its edges either way."""
    return reverse("admin:memories_graphedge_changelist") + "?" + urlencode({"q": node_id})


def when(value) -> str:
    return "–" if value is None else date_format(timezone.localtime(value), "Y-m-d H:i:s")


def entity_link(node: GraphNode) -> str:
    return format_html('<a href="{}">{}</a>', entity_url(node.pk), node)


def edge_object(edge: GraphEdge) -> str:
    """The value, or a link to the other entity's page."""
    if edge.object_node_id is None:
        return edge.object_value
    return entity_link(edge.object_node)


def edge_state(edge: GraphEdge) -> str:
    if edge.expired_at is None and edge.invalid_at is None:
        return "current"
    return "ended"


def current_edges_count(field: str) -> Coalesce:
    """How many current edges name the row's entity as `field` (one subquery a row shown)."""
    edges = (
        GraphEdge.objects.filter(edges_valid_q(None), **{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(number=Count("id"))
        .values("number")
    )
    return Coalesce(Subquery(edges, output_field=IntegerField()), Value(0))


def memories_shown(memory_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, Memory]:
    return Memory.objects.defer(*HEAVY_COLUMNS).in_bulk(list(set(memory_ids)))


def memory_links(memory_ids: list[uuid.UUID], memories: dict[uuid.UUID, Memory]) -> str:
    """Each memory behind an edge, linking to its page: its content, short."""
    if not memory_ids:
        return "–"
    shown = []
    for memory_id in memory_ids:
        memory = memories.get(memory_id)
        if memory is None:
            label = str(memory_id)
        elif memory.forgotten_at is not None:
            label = "(forgotten)"
        else:
            label = f"{memory.memory_type}: {Truncator(memory.content).chars(60)}"
        shown.append((memory_url(memory_id), label))
    return format_html_join(mark_safe("<br>"), '<a href="{}">{}</a>', shown)


def edges_table(edges: list[GraphEdge], *, incoming: bool) -> str:
    """Edges over time, a row each: the other end (the object, or for edges to the entity the
    subject), the relation, both timelines and the memories behind it."""
    if not edges:
        return "–"
    memories = memories_shown(memory_id for edge in edges for memory_id in edge.memory_ids)
    other = "subject" if incoming else "object"
    head = format_html(
        "<thead><tr><th>relation</th><th>{}</th><th>valid_at</th><th>invalid_at</th>"
        "<th>expired_at</th><th>now</th><th>memories</th></tr></thead>",
        other,
    )
    rows = format_html_join(
        "",
        '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>'
        "<td>{}</td><td>{}</td></tr>",
        (
            (
                edge_url(edge.pk),
                edge.relation,
                entity_link(edge.subject) if incoming else edge_object(edge),
                when(edge.valid_at),
                when(edge.invalid_at),
                when(edge.expired_at),
                edge_state(edge),
                memory_links(edge.memory_ids, memories),
            )
            for edge in edges
        ),
    )
    return format_html('<table class="graph-edges">{}<tbody>{}</tbody></table>', head, rows)


def newest_edges(edges: QuerySet[GraphEdge]) -> tuple[list[GraphEdge], bool]:
    """The newest EDGE_ROWS of `edges`, oldest first, and whether there are more."""
    newest = list(
        edges.select_related("subject", "object_node").order_by("-valid_at", "-id")[: EDGE_ROWS + 1]
    )
    return list(reversed(newest[:EDGE_ROWS])), len(newest) > EDGE_ROWS


class CurrentEdgeFilter(ConditionFilter):
    title = "current"
    parameter_name = "current"

    def conditions(self) -> dict[str, tuple[str, Q]]:
        return {
            "current": ("Current", edges_valid_q(None)),
            "ended": ("Ended (invalidated or expired)", ~edges_valid_q(None)),
        }


@admin.register(GraphNode)
class GraphNodeAdmin(EndUserColumn, ExactSearch, ReadOnlyAdmin):
    """Entities, read-only, by end user; an entity's page shows its edges over time."""

    list_display = ["entity", "end_user", "kind", "name", "role", "current_edges"]
    list_display_links = ["entity"]
    list_filter = [UserIdFilter, "kind"]  # the kind's choices: no query for them
    ordering = ["user_id", "kind", "name", "id"]  # idx_graph_nodes_user
    sortable_by: list[str] = []
    search_fields = ["user_id"]  # for the search box to show; ExactSearch searches
    search_help_text = "An exact user_id, or an entity's id."
    exact_text = ("user_id",)
    exact_ids = ("id",)
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "id",
                    "end_user",
                    ("kind", "name", "role"),
                    "aliases_text",
                    ("created_at", "updated_at"),
                    "current_edges",
                ]
            },
        ),
        ("Edges over time", {"fields": ["outgoing_edges", "incoming_edges"]}),
    ]

    def get_queryset(self, request) -> QuerySet[GraphNode]:
        return (
            super()
            .get_queryset(request)
            .annotate(
                current_out=current_edges_count("subject"),
                current_in=current_edges_count("object_node"),
            )
        )

    @admin.display(description="entity")
    def entity(self, obj: GraphNode) -> str:
        return str(obj)

    @admin.display(description="current edges")
    def current_edges(self, obj: GraphNode) -> int:
        return obj.current_out + obj.current_in

    @admin.display(description="aliases")
    def aliases_text(self, obj: GraphNode) -> str:
        return ", ".join(obj.aliases) or "–"

    def edges_field(self, obj: GraphNode, edges: QuerySet[GraphEdge], *, incoming: bool) -> str:
        shown, more = newest_edges(edges)
        table = edges_table(shown, incoming=incoming)
        if not more:
            return table
        return format_html(
            '{}<p>The newest {} are shown: <a href="{}">all of its edges</a>.</p>',
            table,
            EDGE_ROWS,
            edges_of_url(obj.pk),
        )

    @admin.display(description="edges from it (its attributes and relations), over time")
    def outgoing_edges(self, obj: GraphNode) -> str:
        return self.edges_field(obj, GraphEdge.objects.filter(subject=obj), incoming=False)

    @admin.display(description="edges to it, over time")
    def incoming_edges(self, obj: GraphNode) -> str:
        return self.edges_field(obj, GraphEdge.objects.filter(object_node=obj), incoming=True)

    def audit_trail(self, request: HttpRequest, obj: GraphNode) -> AuditTrail:
        return AuditTrail(
            GRAPH_HISTORY,
            {
                "graph_tables": [
                    (self.outgoing_edges.short_description, self.outgoing_edges(obj)),
                    (self.incoming_edges.short_description, self.incoming_edges(obj)),
                ]
            },
        )


@admin.register(GraphEdge)
class GraphEdgeAdmin(EndUserColumn, ExactSearch, ReadOnlyAdmin):
    """Edges, read-only, by entity, relation and time."""

    list_display = [
        "relation",
        "subject_link",
        "object_shown",
        "valid_at",
        "invalid_at",
        "expired_at",
        "end_user",
    ]
    list_display_links = ["relation"]
    list_filter = [UserIdFilter, CurrentEdgeFilter, "single"]
    list_select_related = ["subject", "object_node"]
    ordering = ["subject_id", "relation", "valid_at", "id"]  # idx_graph_edges_time
    sortable_by: list[str] = []
    search_fields = ["user_id"]
    search_help_text = "An exact user_id, an edge's id, or an entity's id (its edges either way)."
    exact_text = ("user_id",)
    exact_ids = ("id", "subject_id", "object_node_id")
    fields = [
        "id",
        "end_user",
        "subject_link",
        "relation",
        "object_shown",
        "single",
        "valid_at",
        "invalid_at",
        "created_at",
        "expired_at",
        "memories",
        "actor",
    ]

    @admin.display(description="subject")
    def subject_link(self, obj: GraphEdge) -> str:
        return entity_link(obj.subject)

    @admin.display(description="object")
    def object_shown(self, obj: GraphEdge) -> str:
        return edge_object(obj)

    @admin.display(description="memories stating it")
    def memories(self, obj: GraphEdge) -> str:
        return memory_links(obj.memory_ids, memories_shown(obj.memory_ids))

    def audit_trail(self, request: HttpRequest, obj: GraphEdge) -> AuditTrail:
        """The values of the edge's relation for its subject over time, this edge among them."""
        shown, more = newest_edges(
            GraphEdge.objects.filter(subject_id=obj.subject_id, relation=obj.relation)
        )
        title = f"{obj.subject} → {obj.relation}, over time"
        if more:
            title += f" (the newest {EDGE_ROWS})"
        return AuditTrail(
            GRAPH_HISTORY, {"graph_tables": [(title, edges_table(shown, incoming=False))]}
        )
