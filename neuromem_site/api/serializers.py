import copy
import json
import math
import re
import uuid
from collections.abc import Callable
from typing import Any, ClassVar

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser

from core.validation import (
    END,
    NAME_PATTERN,
    NON_BLANK_TEXT_PATTERN,
    TEXT_PATTERN,
    USER_ID_MAX_LENGTH,
    USER_ID_PATTERN,
    float4,
    is_number,
    json_problem,
    user_id_problem,
)
from neuromem_site.api.envelope import checked_range, field_path

# Each JSON Schema type: whether a JSON value is of it, and the message for one that is not.
JSON_VALUE_TYPES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "string": (lambda value: isinstance(value, str), "Must be a string."),
    "boolean": (lambda value: isinstance(value, bool), "Must be true or false."),
    "number": (is_number, "Must be a number."),
    "integer": (lambda value: is_number(value) and isinstance(value, int), "Must be an integer."),
    "array": (lambda value: isinstance(value, list), "Must be a list."),
    "object": (lambda value: isinstance(value, dict), "Must be an object."),
    "null": (lambda value: value is None, "Must be null."),
}
# The JSON type a body field must arrive as: DRF would turn 7 into "7", 0 into false and false
# into 0.0, which a client generated from the schema never sends on purpose.
JSON_TYPES: dict[type[serializers.Field], tuple[Callable[[Any], bool], str]] = {
    serializers.CharField: JSON_VALUE_TYPES["string"],
    serializers.BooleanField: JSON_VALUE_TYPES["boolean"],
    serializers.FloatField: JSON_VALUE_TYPES["number"],
    serializers.IntegerField: JSON_VALUE_TYPES["integer"],
}


def sent_length_check(fields: dict[str, serializers.Field], data: Any) -> None:
    """A string's `max_length` holds for the string as sent (as the schema's maxLength says):
    DRF measures a trimmed string after trimming, so spaces around it would carry it past."""
    if not hasattr(data, "get"):
        return
    for name, field in fields.items():
        value = data.get(name)
        if isinstance(field, serializers.ListField) and isinstance(value, list):
            field, items = field.child, enumerate(value)
        else:
            items = iter([(None, value)])
        limit = getattr(field, "max_length", None)
        if not isinstance(field, serializers.CharField) or limit is None:
            continue
        for index, item in items:
            if isinstance(item, str) and len(item) > limit:
                message = [field.error_messages["max_length"].format(max_length=limit)]
                raise serializers.ValidationError(
                    {name: message if index is None else {index: message}}
                )


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
            sent_length_check(self.fields, data)
        return super().to_internal_value(data)


class QueryInputSerializer(serializers.Serializer):
    """Query-string parameters: one given empty (`?as_of=`) is an error, not "not given" (DRF
    treats form input that way; for a filter it would silently widen the answer). (One given
    twice never gets here: ApiErrorEnvelopeMiddleware refuses it.)"""

    def to_internal_value(self, data):
        blank = [name for name in self.fields if data.get(name) == ""]
        if blank:
            raise serializers.ValidationError({blank[0]: ["Must not be empty."]})
        sent_length_check(self.fields, data)
        return super().to_internal_value(data)


def text_pattern(field: serializers.CharField) -> str:
    """The pattern of the strings `field` takes (the OpenAPI's and the MCP tools'): its own, or
    no NUL (DRF refuses it) and, when it refuses a blank value, not blank once trimmed."""
    own = getattr(field, "pattern", None)
    if own is not None:
        return own
    trimmed = field.trim_whitespace or isinstance(field, TextField)
    return TEXT_PATTERN if field.allow_blank or not trimmed else NON_BLANK_TEXT_PATTERN


class TextField(serializers.CharField):
    """Text kept exactly as sent (no trimming) that must not be blank."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not value.strip():
            raise serializers.ValidationError("Must not be blank.")
        return value


class NameField(serializers.CharField):
    """A name lists show: not blank, no control characters, spaces around it dropped (the
    service checks it as sent: core.validation.name_problem)."""

    pattern = NAME_PATTERN

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)


class ChoiceListField(serializers.CharField):
    """A comma list of `choices` (`active,cold`): each exactly one of them, none blank."""

    def __init__(self, choices: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.choices = choices
        one = "|".join(map(re.escape, choices))
        self.pattern = rf"^(?:{one})(?:,(?:{one}))*{END}"

    def to_internal_value(self, data: Any) -> list[str]:
        items = super().to_internal_value(data).split(",")
        unknown = [item for item in items if item not in self.choices]
        if unknown:
            raise serializers.ValidationError(
                f"Unknown value '{unknown[0]}'; use {', '.join(self.choices)} (comma-separated)."
            )
        return items


class RangedIntegerField(serializers.IntegerField):
    """An integer whose bounds answer the range error (`minAllowed`, `maxAllowed`, `provided`,
    `field` as the route spells it) rather than DRF's message."""

    def __init__(self, *, minimum: int, maximum: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Set after DRF's __init__, so that DRF adds no validators of its own; drf-spectacular
        # publishes them.
        self.min_value, self.max_value = minimum, maximum

    def to_internal_value(self, data: Any) -> int:
        return checked_range(
            self.field_name,
            super().to_internal_value(data),
            min_allowed=self.min_value,
            max_allowed=self.max_value,
        )


HOLDS_FIELDS = (serializers.BaseSerializer, serializers.ListField, serializers.DictField)


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
        # Copies: each instance binds its fields to itself. A plain field binds by setting its
        # own attributes, so a shallow copy will do (deep copies were most of an answer's
        # serialising); a field holding fields (a nested serializer, a list's child) is copied
        # deep, as DRF copies declared fields.
        return {
            name: copy.deepcopy(field) if isinstance(field, HOLDS_FIELDS) else copy.copy(field)
            for name, field in built.items()
        }


class UuidField(serializers.UUIDField):
    """A UUID sent as text, in a body, a query string or a tool's arguments: DRF's own field
    also reads the JSON number 5 as ...0005 and `true` as ...0001, so a client's mistake would
    look up some other id (NOT_FOUND) instead of being named."""

    def to_internal_value(self, data):
        if not isinstance(data, str | uuid.UUID):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": USER_ID_MAX_LENGTH,
        # No surrounding whitespace, control characters or "/" (see user_id_problem).
        "pattern": USER_ID_PATTERN,
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


# An id to read by (user_id_problem with new=False), in a body, a query string or a path.
USER_ID_LOOKUP_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": USER_ID_MAX_LENGTH,
    "pattern": NON_BLANK_TEXT_PATTERN,
}


@extend_schema_field(USER_ID_LOOKUP_SCHEMA)
class UserIdLookupField(UserIdField):
    """An end user's id to read by: also one stored before the rules for new ids."""

    new = False


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        # OpenAPI 3.0 has no `propertyNames`: the rule on keys can only be said in words.
        "description": "A JSON object: no key or string in it may hold NUL (\\u0000), at most "
        f"{settings.METADATA_MAX_BYTES} bytes as JSON, nested at most 32 levels deep.",
    }
)
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


class NotJson(str):
    """NaN, Infinity or -Infinity where a body held one: Python's json reads them, JSON has
    none (RFC 8259)."""


def not_json_refused(value: Any, *, floats: bool = False) -> None:
    """A 400 on the first NaN or Infinity in a parsed body: a NotJson, or with `floats` a float
    that is not finite (arguments parsed by another reader: MCP's)."""
    found = _not_json_found(value, floats=floats)
    if found is not None:
        path, constant = found
        message = f"{constant} is not a number JSON allows."
        raise serializers.ValidationError({path: [message]} if path else [message])


def _not_json_found(value: Any, *, floats: bool = False) -> tuple[str, NotJson] | None:
    """The path (`items[2].importance`, "" for the body itself) and value of the first NotJson
    (with `floats`, or float not finite) in a parsed body, else None."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, NotJson):
            return path, item
        if floats and isinstance(item, float) and not math.isfinite(item):
            return path, NotJson("NaN" if item != item else f"{'-' if item < 0 else ''}Infinity")
        if isinstance(item, dict):
            stack.extend((child, field_path(path, key)) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend(
                (child, field_path(path, n)) for n, child in reversed(list(enumerate(item)))
            )
    return None


class BoundedJSONParser(JSONParser):
    """JSON bodies; one nested too deep for Python's parser is a 400, not a crash, and NaN or
    Infinity (which are not JSON) a 400 on the field that holds one."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(stream.read().decode(encoding), parse_constant=NotJson)
        except LookupError:  # a codec Python knows that is no text encoding: charset=rot13
            raise UnsupportedMediaType(
                media_type, detail=f'Unsupported charset "{encoding}" in request.'
            ) from None
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None
        except ValueError as error:  # UnicodeDecodeError too
            raise ParseError(f"JSON parse error - {error}") from None
        not_json_refused(data)
        return data


def validated_input(serializer_class: type[serializers.Serializer], data) -> dict:
    """`data` (a request's body or query string, a tool's arguments) validated by
    `serializer_class`: its validated data, or a VALIDATION_ERROR naming the field at fault.
    (core.validation.validated is the domain's: it raises the first problem found.)"""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
