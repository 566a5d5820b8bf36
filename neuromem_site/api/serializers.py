import copy
import json
from collections.abc import Callable
from typing import Any, ClassVar

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from core.validation import USER_ID_MAX_LENGTH, float4, json_problem, user_id_problem


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# The JSON type a body field must arrive as: DRF would turn 7 into "7", 0 into false and false
# into 0.0, which a client generated from the schema never sends on purpose.
JSON_TYPES: dict[type[serializers.Field], tuple[Callable[[Any], bool], str]] = {
    serializers.CharField: (lambda value: isinstance(value, str), "Must be a string."),
    serializers.BooleanField: (lambda value: isinstance(value, bool), "Must be true or false."),
    serializers.FloatField: (is_number, "Must be a number."),
    serializers.IntegerField: (
        lambda value: is_number(value) and isinstance(value, int),
        "Must be an integer.",
    ),
}


class StrictInputSerializer(serializers.Serializer):
    """A JSON body: unknown fields are rejected (docs/api.md; e.g. the removed `domain`/`type`), and
    strings and booleans must be JSON strings and booleans."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = [key for key in data if key not in self.fields]
            if unknown:
                raise serializers.ValidationError({unknown[0]: ["Unknown field."]})
            for name, field in self.fields.items():
                value = data.get(name)
                for field_class, (has_type, message) in JSON_TYPES.items():
                    if value is not None and isinstance(field, field_class) and not has_type(value):
                        raise serializers.ValidationError({name: [message]})
        return super().to_internal_value(data)


class QueryInputSerializer(serializers.Serializer):
    """Query-string parameters: one given empty (`?as_of=`) is an error, not "not given" (DRF
    treats form input that way; for a filter it would silently widen the answer)."""

    def to_internal_value(self, data):
        blank = [name for name in self.fields if data.get(name) == ""]
        if blank:
            raise serializers.ValidationError({blank[0]: ["Must not be empty."]})
        return super().to_internal_value(data)


# A ModelSerializer that builds its fields from the model once per class, not once per
# instance: the build was a large share of every answer's time (docs/benchmarks.md, "Recall"). (A
# comment, not a docstring: drf-spectacular would publish a docstring as every subclass's
# description.)
class OutputModelSerializer(serializers.ModelSerializer):
    _fields_by_class: ClassVar[dict[type, dict[str, serializers.Field]]] = {}

    def get_fields(self) -> dict[str, serializers.Field]:
        built = self._fields_by_class.get(type(self))
        if built is None:
            built = self._fields_by_class[type(self)] = super().get_fields()
        # Copies (as DRF copies declared fields): each instance binds its fields to itself.
        return copy.deepcopy(built)


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": USER_ID_MAX_LENGTH,
        # No surrounding whitespace, control characters or "/" (see user_id_problem).
        "pattern": r"^[^\s/\x00-\x1f\x7f](?:[^/\x00-\x1f\x7f]*[^\s/\x00-\x1f\x7f])?$",
    }
)
class UserIdField(serializers.CharField):
    """An end user's id, exactly as every route will act on it: a string (a number is not an
    id), no surrounding whitespace, nothing a URL path segment cannot carry."""

    new = True  # see user_id_problem

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        problem = user_id_problem(data, new=self.new)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return data


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": USER_ID_MAX_LENGTH})
class UserIdLookupField(UserIdField):
    """An end user's id to read by: also one stored before the rules for new ids."""

    new = False


@extend_schema_field({"type": "object", "additionalProperties": True})
class JsonObjectField(serializers.JSONField):
    """A JSON object that PostgreSQL's jsonb can store, within METADATA_MAX_BYTES."""

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("Must be a JSON object.")
        problem = json_problem(value)
        if problem is not None:
            raise serializers.ValidationError(problem)
        size = len(json.dumps(value, ensure_ascii=False).encode())
        if size > settings.METADATA_MAX_BYTES:
            raise serializers.ValidationError(
                f"Must be at most {settings.METADATA_MAX_BYTES} bytes as JSON (got {size})."
            )
        return value


class Float4Field(serializers.FloatField):
    """A float for a `real` column: finite, rounded as PostgreSQL will store it."""

    def to_internal_value(self, data: Any) -> float:
        value = super().to_internal_value(data)
        try:
            return float4(value)
        except ValueError as error:
            raise serializers.ValidationError(f"A valid number is required: {error}.") from None


class BoundedJSONParser(JSONParser):
    """JSON bodies; one nested too deep for Python's parser is a 400, not a crash."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None


def validated_input(serializer_class: type[serializers.Serializer], data) -> dict:
    """`data` (a request's body or query string, a tool's arguments) validated by
    `serializer_class`: its validated data, or a VALIDATION_ERROR naming the field at fault.
    (core.validation.validated is the domain's: it raises the first problem found.)"""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
