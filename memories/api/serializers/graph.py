"""An end user's memory graph as the API answers it: their entities, and an entity's edges
(subject → relation → a value or another entity, with both timelines; docs/graph.md)."""

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memories.graph.models import EntityKind, GraphEdge, GraphNode
from neuromem_site.api.serializers import (
    OutputModelSerializer,
    QueryInputSerializer,
    RangedIntegerField,
    UserIdLookupField,
    UuidField,
)


class EntitiesParams(QueryInputSerializer):
    as_of = serializers.DateTimeField(
        required=False,
        help_text="Read the graph as NeuroMem knew it at this instant: the entities recorded "
        "by then, and each edge as it stood (an end recorded later is not shown yet). "
        "Default: now.",
    )


class EntityLookupInput(EntitiesParams):
    """One entity of one end user (the REST route has both in its path)."""

    user_id = UserIdLookupField()
    entity_id = UuidField()


class UserEntitiesInput(EntitiesParams):
    """MCP's memory_entities: the user's entities, or (`entity_id`) one with its edges."""

    user_id = UserIdLookupField()
    entity_id = UuidField(
        required=False,
        help_text="An entity of the user: answer it with its edges instead of the list.",
    )
    # As the REST list's `limit` (its page size): a range error, not a silent clamp.
    limit = RangedIntegerField(
        minimum=1,
        maximum=settings.API_MAX_PAGE_SIZE,
        required=False,
        default=settings.API_PAGE_SIZE,
    )


class EntityRefOutput(serializers.Serializer):
    """Another entity, as an edge names it."""

    id = serializers.UUIDField()
    kind = serializers.ChoiceField(EntityKind.choices)
    name = serializers.CharField(help_text='"" when known only by its role ("the user\'s wife").')
    role = serializers.CharField(help_text='Its relation to the user ("brother", "dog"), or "".')


class EntityOutput(OutputModelSerializer):
    class Meta:
        model = GraphNode
        fields = ["id", "kind", "name", "role", "aliases", "created_at"]


# An edge's object: the value said, or the other entity.
EDGE_OBJECT_SCHEMA = {
    "oneOf": [
        {"type": "string", "description": 'The value ("Denver", "555-0202").'},
        {"$ref": "#/components/schemas/EntityRefOutput"},
    ]
}


class EdgeOutput(serializers.Serializer):
    """subject → relation → object, with its valid time (`valid_at`, `invalid_at`) and when
    NeuroMem stopped holding it current (`expired_at`)."""

    id = serializers.UUIDField()
    subject = EntityRefOutput()
    relation = serializers.CharField(help_text='The attribute or relation ("lives in", "brother").')
    object = serializers.SerializerMethodField()
    valid_at = serializers.DateTimeField(help_text="Since when it holds (when it was said).")
    invalid_at = serializers.DateTimeField(
        allow_null=True, help_text="When it stopped holding (a new value said, or its end)."
    )
    expired_at = serializers.DateTimeField(
        allow_null=True, help_text="When NeuroMem recorded its end; null while current."
    )
    memory_ids = serializers.ListField(
        child=serializers.UUIDField(), help_text="The memories that state it."
    )

    @extend_schema_field(EDGE_OBJECT_SCHEMA)
    def get_object(self, edge: GraphEdge) -> Any:
        if edge.object_node_id is None:
            return edge.object_value
        return EntityRefOutput(edge.object_node).data


class EntityDetailOutput(EntityOutput):
    """An entity with its edges, current and past, oldest first (by `valid_at`): `outgoing`
    (its attributes and relations) and `incoming` (the entities relating to it)."""

    # The edges come in the `edges` context (memories.graph.selectors.EntityEdges).
    outgoing = serializers.SerializerMethodField()
    incoming = serializers.SerializerMethodField()

    class Meta(EntityOutput.Meta):
        fields = [*EntityOutput.Meta.fields, "outgoing", "incoming"]

    @extend_schema_field(EdgeOutput(many=True))
    def get_outgoing(self, node: GraphNode) -> list:
        return EdgeOutput(self.context["edges"].outgoing, many=True).data

    @extend_schema_field(EdgeOutput(many=True))
    def get_incoming(self, node: GraphNode) -> list:
        return EdgeOutput(self.context["edges"].incoming, many=True).data


class EdgeRecordOutput(OutputModelSerializer):
    """An edge as it is held (the export): every column."""

    subject_id = serializers.UUIDField()
    object_node_id = serializers.UUIDField(allow_null=True)

    class Meta:
        model = GraphEdge
        # In the table's order; not `user_id`: the export is one user's, and says whose.
        fields = [f.attname for f in GraphEdge._meta.concrete_fields if f.name != "user_id"]
