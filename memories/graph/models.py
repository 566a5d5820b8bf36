"""The memory graph (seed 002 §4.1): each end user's entities and the values said of them, as
edges with two timelines (docs/graph.md).

- valid time: `valid_at` (the value began to hold: when it was said) and `invalid_at` (it
  stopped holding: when a new value was said, or its end);
- system time: `created_at` (recorded) and `expired_at` (the record was superseded).

Edges are never rewritten: a new value closes the old edge (invalid_at, expired_at) and opens
another, so the table is its own history; only a forget or the user purge removes rows.
Imported here by memories/models.py (the app's models live in one registry).
"""

import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Lower, Now

from core.db.schema import append_only, choice_constraint
from memories.predicates import current_q


class EntityKind(models.TextChoices):
    USER = "user", "the user"
    PERSON = "person", "person"
    PET = "pet", "pet"
    PLACE = "place", "place"
    ORGANISATION = "organisation", "organisation"
    THING = "thing", "thing"


class GraphNode(models.Model):
    """An entity of one end user's world: the user themself (one node, kind `user`), people,
    pets, places, organisations, things; named ("Mark"), or known by their relation to the user
    only ("the user's wife")."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.CharField(max_length=255)
    kind = models.CharField(max_length=20, choices=EntityKind)
    name = models.CharField(max_length=255, blank=True, default="")
    role = models.CharField(max_length=100, blank=True, default="")  # "brother", "wife", "dog"
    aliases = ArrayField(models.CharField(max_length=255), default=list, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "graph_nodes"
        ordering = ["user_id", "kind", "name"]
        verbose_name = "entity"
        verbose_name_plural = "entities"
        indexes = [models.Index(fields=["user_id", "kind"], name="idx_graph_nodes_user")]
        constraints = [
            choice_constraint(name="chk_graph_node_kind", field="kind", choices=EntityKind),
            models.UniqueConstraint(
                "user_id", name="uniq_graph_node_user", condition=Q(kind=EntityKind.USER)
            ),
            # One entity a name, whatever its case; an unnamed one a role.
            models.UniqueConstraint(
                "user_id",
                Lower("name"),
                name="uniq_graph_node_name",
                condition=~Q(name="") & ~Q(kind=EntityKind.USER),
            ),
            models.UniqueConstraint(
                "user_id",
                "role",
                name="uniq_graph_node_role",
                condition=Q(name="") & ~Q(kind=EntityKind.USER),
            ),
        ]

    def __str__(self) -> str:
        if self.kind == EntityKind.USER:
            return "the user"
        if self.name and self.role:
            return f"{self.name} (the user's {self.role})"
        return self.name or f"the user's {self.role}"


# What an update may change on an edge: its end, and the memories it came from. The rest is
# history (pgtrigger below).
EDGE_FIXED = (
    "user_id",
    "subject_id",
    "relation",
    "object_node_id",
    "object_value",
    "single",
    "valid_at",
    "created_at",
)
EDGE_FIXED_COLUMNS = ", ".join(f"@{column}" for column in EDGE_FIXED)


class GraphEdge(models.Model):
    """subject → relation → object: an attribute's value (`object_value`: "Denver") or a relation
    to another entity (`object_node`: the user → brother → Mark)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user_id = models.CharField(max_length=255)
    subject = models.ForeignKey(GraphNode, on_delete=models.CASCADE, related_name="edges")
    relation = models.CharField(max_length=100)  # memories.statements.attribute_key
    object_node = models.ForeignKey(
        GraphNode, on_delete=models.CASCADE, null=True, blank=True, related_name="edges_in"
    )
    object_value = models.TextField(blank=True, default="")
    single = models.BooleanField()  # one value at a time: a new one invalidates this
    valid_at = models.DateTimeField()
    invalid_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    expired_at = models.DateTimeField(null=True, blank=True)
    memory_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    actor = models.CharField(max_length=50, default="system", db_default="system")

    class Meta:
        db_table = "graph_edges"
        ordering = ["valid_at", "id"]
        verbose_name = "edge"
        indexes = [
            models.Index(
                fields=["user_id", "subject", "relation"],
                name="idx_graph_edges_current",
                condition=current_q(),
            ),
            models.Index(fields=["subject", "relation", "valid_at"], name="idx_graph_edges_time"),
            models.Index(fields=["object_node"], name="idx_graph_edges_object"),
            GinIndex(fields=["memory_ids"], name="idx_graph_edges_memories"),
        ]
        constraints = [
            models.CheckConstraint(
                name="chk_graph_edge_object",
                condition=Q(object_node__isnull=False) | ~Q(object_value=""),
            ),
            models.CheckConstraint(
                name="chk_graph_edge_valid_time",
                condition=Q(invalid_at__isnull=True) | Q(invalid_at__gte=F("valid_at")),
            ),
        ]
        triggers = append_only(
            "graph_edges",
            refuse_update_when=f"(ROW({EDGE_FIXED_COLUMNS.replace('@', 'OLD.')}) IS DISTINCT FROM"
            f" ROW({EDGE_FIXED_COLUMNS.replace('@', 'NEW.')}))",
        )

    def __str__(self) -> str:
        target = self.object_value or str(self.object_node_id)
        return f"{self.subject_id} {self.relation} {target}"

    @property
    def value(self) -> str:
        """What the edge says its subject has: the value, or the other entity's name."""
        return self.object_node.name if self.object_node_id else self.object_value
