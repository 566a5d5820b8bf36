"""Tool input schemas (JSON Schema) from the DRF serializers the operations validate with, so a
tool's schema says what its validation accepts: types, enums, ranges, defaults, help texts."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from neuromem_site.api.serializers import text_pattern


def field_schema(field: serializers.Field) -> dict[str, Any]:
    """One serializer field as JSON Schema."""
    schema = base_schema(field)
    if getattr(field, "allow_null", False):
        kind = schema.get("type")
        if isinstance(kind, str):
            schema["type"] = [kind, "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    if field.default is not empty and not field.required:
        schema["default"] = field.default() if callable(field.default) else field.default
    if field.help_text:
        schema["description"] = str(field.help_text)
    return schema


def base_schema(field: serializers.Field) -> dict[str, Any]:
    # A field class's own schema (drf-spectacular's extend_schema_field, as the OpenAPI has it).
    annotated = getattr(type(field), "_spectacular_annotation", {}).get("field")
    if isinstance(annotated, dict):
        return dict(annotated)
    if isinstance(field, serializers.BooleanField):
        return {"type": "boolean"}
    if isinstance(field, serializers.ChoiceField):
        return {"type": "string", "enum": [str(choice) for choice in field.choices]}
    if isinstance(field, serializers.IntegerField | serializers.FloatField):
        schema: dict[str, Any] = {
            "type": "integer" if isinstance(field, serializers.IntegerField) else "number"
        }
        if field.min_value is not None:
            schema["minimum"] = field.min_value
        if field.max_value is not None:
            schema["maximum"] = field.max_value
        return schema
    if isinstance(field, serializers.DateTimeField):
        return {"type": "string", "format": "date-time"}
    if isinstance(field, serializers.UUIDField):
        return {"type": "string", "format": "uuid"}
    if isinstance(field, serializers.ListField):
        schema = {"type": "array", "items": field_schema(field.child)}
        if field.min_length is not None:
            schema["minItems"] = field.min_length
        if field.max_length is not None:
            schema["maxItems"] = field.max_length
        return schema
    if isinstance(field, serializers.DictField | serializers.JSONField):
        return {"type": "object"}
    if isinstance(field, serializers.CharField):
        schema = {"type": "string", "pattern": text_pattern(field)}
        if not field.allow_blank:
            schema["minLength"] = max(field.min_length or 0, 1)
        elif field.min_length is not None:
            schema["minLength"] = field.min_length
        if field.max_length is not None:
            schema["maxLength"] = field.max_length
        return schema
    return {}


def serializer_schema(
    serializer_class: type[serializers.Serializer], overrides: Mapping[str, str | dict[str, Any]]
) -> dict[str, Any]:
    """An object schema with one property per input field; `overrides` update single
    properties: a string is the property's description, a dict is merged (what a
    `validate_<field>` method checks that the field does not say)."""
    fields = serializer_class().fields
    properties = {
        name: field_schema(field) for name, field in fields.items() if not field.read_only
    }
    unknown = [name for name in overrides if name not in properties]
    if unknown:
        raise ValueError(f"No such fields in {serializer_class.__name__}: {', '.join(unknown)}")
    for name, override in overrides.items():
        properties[name] |= {"description": override} if isinstance(override, str) else override
    return object_schema(
        properties, required=[name for name, field in fields.items() if field.required]
    )


def object_schema(
    properties: dict[str, dict[str, Any]], *, required: list[str] | None = None
) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


# Seed 004's `output_format`: the only format it names is the one every tool answers.
OUTPUT_FORMAT = "output_format"


def with_seed_names(schema: dict[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """`schema` also taking seed 004's names: each alias (seed name → ours) as the property it
    stands for, and `output_format`, whose one value is json. Listed, not just tolerated, so a
    client that checks its arguments against the schema can send them."""
    properties = dict(schema["properties"])
    for alias, name in aliases.items():
        properties[alias] = properties[name] | {
            "description": f"Seed 004's name for `{name}` (give one of the two): "
            + properties[name]["description"]
        }
    properties[OUTPUT_FORMAT] = {
        "type": "string",
        "enum": ["json"],
        "default": "json",
        "description": "Seed 004's answer format: only json, what every tool answers.",
    }
    return {**schema, "properties": properties}
