"""Memory statistics over HTTP: `GET /api/v1/memories/stats/` (snake_case) and
`GET /api/memories/stats` (camelCase, for the clients of the key-addressed routes), one
validation and one selector (memories/stats.py).

Parameters (the camelCase route spells them `fromTimestamp`, `toTimestamp`, `histogramBinSize`,
`cacheTtlMs`, `exportFormat`; `user_id` on both):

- `user_id`: one end user (NOT_FOUND outside the client's prefixes); without it, every end
  user, which only a staff client may read (others: FORBIDDEN).
- `from_timestamp`, `to_timestamp`: epoch milliseconds (0 to the end of year 9999), the window
  on created_at, both ends included; from ≤ to.
- `histogram_bin_size`: 1–100 (default STATS_HISTOGRAM_BIN_SIZE).
- `cache_ttl_ms`: 0–86,400,000 (default STATS_CACHE_TTL_MS), the oldest cached answer
  accepted; 0 computes afresh and caches nothing.
- `export_format`: `json` (default), `csv` (text/csv, the layout of `stats_csv`), `both` (the
  JSON with the CSV text in `csv`).

A number out of range is a range error (`field`, `minAllowed`, `maxAllowed`,
`provided`); an unknown parameter, one given twice or empty, or a bad value is a
VALIDATION_ERROR on that parameter, as the route spells it. Every answer carries
`X-Cache: HIT` or `MISS`.
"""

import csv
import io
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.access import Caller
from memories.predicates import STATE_THRESHOLDS
from memories.stats import BIN_SIZE_MAX, CACHE_TTL_MS_MAX, SCORE_MAX, memory_stats
from neuromem_site.api.permissions import user_filter_check
from neuromem_site.api.schema import ALL_USERS_STAFF_ONLY, OUTSIDE_PREFIXES, EnvelopeAutoSchema
from neuromem_site.api.serializers import (
    QueryInputSerializer,
    RangedIntegerField,
    UserIdLookupField,
    validated_input,
)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
TIMESTAMP_MS_MAX = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, the last instant Python holds
EXPORT_FORMATS = ("json", "csv", "both")


def ms_datetime(ms: int | None) -> datetime | None:
    return None if ms is None else EPOCH + timedelta(milliseconds=ms)


def datetime_ms(instant: datetime) -> int:
    return (instant - EPOCH) // timedelta(milliseconds=1)


# --- Input -----------------------------------------------------------------------------------


class KnownQueryInput(QueryInputSerializer):
    """Query parameters, each known: a misspelt one is a VALIDATION_ERROR on it, not silently
    ignored (it would widen the answer)."""

    def to_internal_value(self, data):
        for name in data:
            if name not in self.fields:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {name: [f"Unknown parameter; this route takes {known}."]}
                )
        return super().to_internal_value(data)


SNAKE_CASE = {
    name: name
    for name in (
        "user_id",
        "from_timestamp",
        "to_timestamp",
        "histogram_bin_size",
        "cache_ttl_ms",
        "export_format",
    )
}
# The camelCase route's spelling; `user_id` as on every route.
CAMEL_CASE = {
    "user_id": "user_id",
    "from_timestamp": "fromTimestamp",
    "to_timestamp": "toTimestamp",
    "histogram_bin_size": "histogramBinSize",
    "cache_ttl_ms": "cacheTtlMs",
    "export_format": "exportFormat",
}


def stats_param_fields(spelling: dict[str, str]) -> dict[str, serializers.Field]:
    """The parameters, named as a route spells them (`spelling`: snake_case → its name); the
    validated data is keyed by the snake_case names whatever the spelling."""

    def named(name: str) -> dict[str, str]:
        return {} if spelling[name] == name else {"source": name}

    def timestamp(name: str, what: str) -> RangedIntegerField:
        return RangedIntegerField(
            minimum=0,
            maximum=TIMESTAMP_MS_MAX,
            required=False,
            help_text=f"Epoch milliseconds: {what} (included).",
            **named(name),
        )

    return {
        spelling["user_id"]: UserIdLookupField(
            required=False,
            help_text="One end user; without it, every end user (staff clients only: others "
            "are FORBIDDEN).",
        ),
        spelling["from_timestamp"]: timestamp("from_timestamp", "memories created from"),
        spelling["to_timestamp"]: timestamp("to_timestamp", "memories created until"),
        spelling["histogram_bin_size"]: RangedIntegerField(
            minimum=1,
            maximum=BIN_SIZE_MAX,
            required=False,
            default=settings.STATS_HISTOGRAM_BIN_SIZE,
            help_text="Width of the score histogram's bins (the last one ends at 100, included).",
            **named("histogram_bin_size"),
        ),
        spelling["cache_ttl_ms"]: RangedIntegerField(
            minimum=0,
            maximum=CACHE_TTL_MS_MAX,
            required=False,
            default=settings.STATS_CACHE_TTL_MS,
            help_text="The oldest cached answer accepted, in milliseconds; 0: computed afresh, "
            "not cached.",
            **named("cache_ttl_ms"),
        ),
        spelling["export_format"]: serializers.ChoiceField(
            EXPORT_FORMATS,
            required=False,
            default="json",
            help_text="`csv`: text/csv; `both`: the JSON with the CSV text in `csv`.",
            **named("export_format"),
        ),
    }


class MemoryStatsInput(KnownQueryInput):
    spelling = SNAKE_CASE

    def get_fields(self) -> dict[str, serializers.Field]:
        return stats_param_fields(self.spelling)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("from_timestamp"), attrs.get("to_timestamp")
        if start is not None and end is not None and start > end:
            to_name = self.spelling["to_timestamp"]
            raise serializers.ValidationError(
                {self.spelling["from_timestamp"]: [f"Must not be after {to_name} ({end})."]}
            )
        return attrs


class SeedMemoryStatsInput(MemoryStatsInput):
    spelling = CAMEL_CASE


# --- Output ----------------------------------------------------------------------------------


@extend_schema_field({"type": "integer", "format": "int64", "description": "Epoch milliseconds"})
class EpochMsField(serializers.Field):
    def to_representation(self, value: datetime) -> int:
        return datetime_ms(value)


class MemoryStatsCountsOutput(serializers.Serializer):
    total = serializers.IntegerField(help_text="Not deleted: active + cold + deprecated.")
    active = serializers.IntegerField(help_text=f"score ≥ {settings.SCORE_ACTIVE_FROM:g}")
    cold = serializers.IntegerField(
        help_text=f"{settings.SCORE_COLD_FROM:g} ≤ score < {settings.SCORE_ACTIVE_FROM:g}"
    )
    deprecated = serializers.IntegerField(help_text=f"score < {settings.SCORE_COLD_FROM:g}")
    deleted = serializers.IntegerField(help_text="Expired: deleted, superseded or invalidated.")


class MemoryStatsBinOutput(serializers.Serializer):
    """A bin of the histogram: scores from `from` (included) to `to` (excluded; included for
    the last bin, which ends at 100)."""

    def get_fields(self) -> dict[str, serializers.Field]:
        return {  # `from` is a Python keyword: no class attribute can carry the name
            "from": serializers.IntegerField(),
            "to": serializers.IntegerField(),
            "count": serializers.IntegerField(),
        }


class MemoryStatsHistogramOutput(serializers.Serializer):
    bin_size = serializers.IntegerField()
    bins = MemoryStatsBinOutput(
        many=True,
        source="histogram",
        help_text="Their counts add up to `counts.total`; deleted memories are in no bin.",
    )


class RedactionCountsOutput(serializers.Serializer):
    memories = serializers.DictField(
        child=serializers.IntegerField(), help_text="kind → secrets redacted from memories"
    )
    messages = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="kind → secrets redacted from conversation messages",
    )


class MemoryStatsOutput(serializers.Serializer):
    generated_at = serializers.DateTimeField(help_text="When the statistics were computed.")
    cached = serializers.BooleanField(help_text="Answered from the cache.")
    user_id = serializers.CharField(allow_null=True)
    from_timestamp = serializers.IntegerField(allow_null=True)
    to_timestamp = serializers.IntegerField(allow_null=True)
    counts = MemoryStatsCountsOutput()
    histogram = MemoryStatsHistogramOutput(source="*")
    redactions = RedactionCountsOutput(help_text="What was redacted (docs/privacy.md).")
    query_duration_ms = serializers.FloatField(
        help_text="The statistics query's own duration (of the query that made a cached answer)."
    )
    csv = serializers.CharField(required=False, help_text="Only with export_format `both`.")


# The camelCase route's spelling of the same answer.
class SeedMemoryStatsHistogramOutput(serializers.Serializer):
    binSize = serializers.IntegerField(source="bin_size")
    bins = MemoryStatsBinOutput(many=True, source="histogram")


class SeedMemoryStatsOutput(serializers.Serializer):
    generatedAt = EpochMsField(source="generated_at")
    cached = serializers.BooleanField()
    userId = serializers.CharField(source="user_id", allow_null=True)
    fromTimestamp = serializers.IntegerField(source="from_timestamp", allow_null=True)
    toTimestamp = serializers.IntegerField(source="to_timestamp", allow_null=True)
    counts = MemoryStatsCountsOutput()
    histogram = SeedMemoryStatsHistogramOutput(source="*")
    redactions = RedactionCountsOutput()
    queryDurationMs = serializers.FloatField(source="query_duration_ms")
    csv = serializers.CharField(required=False, help_text="Only with exportFormat `both`.")


CSV_HEADER = ("kind", "name", "score_from", "score_to", "count")


def stats_csv(stats: dict[str, Any]) -> str:
    """The statistics as CSV (RFC 4180, CRLF), a header row `kind,name,score_from,score_to,count`
    and then:

    - one `state` row each for `total`, `active`, `cold`, `deprecated`, `deleted`, with the
      state's scores from (included) and to (excluded; 100 included); empty for `deleted`;
    - one `bin` row per histogram bin in order, named `from-to`;
    - one `redacted_memories` and one `redacted_messages` row per kind redacted, named by the
      kind, scores empty.
    """
    ceilings = [SCORE_MAX, *(floor for _, floor in STATE_THRESHOLDS[:-1])]
    ranges = {
        "total": ("0", f"{SCORE_MAX:g}"),
        **{
            state: (f"{floor:g}", f"{ceiling:g}")
            for (state, floor), ceiling in zip(STATE_THRESHOLDS, ceilings, strict=True)
        },
        "deleted": ("", ""),
    }
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_HEADER)
    for state, (low, high) in ranges.items():
        writer.writerow(("state", state, low, high, stats["counts"][state]))
    for bin_ in stats["histogram"]:
        name = f"{bin_['from']}-{bin_['to']}"
        writer.writerow(("bin", name, bin_["from"], bin_["to"], bin_["count"]))
    for where, counts in stats["redactions"].items():
        for kind, count in counts.items():
            writer.writerow((f"redacted_{where}", kind, "", "", count))
    return out.getvalue()


# --- Views -----------------------------------------------------------------------------------


class StatsSchema(EnvelopeAutoSchema):
    """A CSV answer is the CSV text itself, not inside the JSON envelope."""

    def _get_response_for_code(
        self, serializer, status_code, media_types=None, direction="response"
    ):
        response = super()._get_response_for_code(serializer, status_code, media_types, direction)
        body = response.get("content", {}).get("text/csv")
        if body is not None:
            body["schema"] = {"type": "string"}
        return response


def stats_computed(*, caller: Caller, params: Mapping[str, Any]) -> dict[str, Any]:
    """memory_stats for `params` validated by MemoryStatsInput (either spelling)."""
    return memory_stats(
        caller=caller,
        user_id=params.get("user_id"),
        created_from=ms_datetime(params.get("from_timestamp")),
        created_to=ms_datetime(params.get("to_timestamp")),
        bin_size=params["histogram_bin_size"],
        cache_ttl_ms=params["cache_ttl_ms"],
    )


def stats_data(stats: dict[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON answer, for its output serializer: the statistics, the user and window asked,
    and with export format `both` the CSV text (the REST routes' and MCP's memory_stats)."""
    data = {
        **stats,
        "user_id": params.get("user_id"),
        "from_timestamp": params.get("from_timestamp"),
        "to_timestamp": params.get("to_timestamp"),
    }
    if params["export_format"] == "both":
        data["csv"] = stats_csv(stats)
    return data


def stats_response(
    request: Request,
    input_class: type[MemoryStatsInput],
    output_class: type[serializers.Serializer],
) -> HttpResponse:
    params = validated_input(input_class, request.query_params)
    user_filter_check(request, params.get("user_id"))
    stats = stats_computed(caller=request.user.caller, params=params)
    if params["export_format"] == "csv":
        response = HttpResponse(stats_csv(stats), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="memory-stats.csv"'
    else:
        response = Response(output_class(stats_data(stats, params)).data)
    response["X-Cache"] = "HIT" if stats["cached"] else "MISS"
    return response


STATS_DESCRIPTION = (
    "Counts per state and a score histogram of the memories created in the window. "
    "`export_format=csv` answers text/csv: a header row `kind,name,score_from,score_to,count`, "
    "then `state` rows (total, active, cold, deprecated, deleted) and one `bin` row per bin. "
    "`X-Cache` says HIT or MISS."
)
CSV_RESPONSE = OpenApiResponse(OpenApiTypes.STR, "export_format csv")


def stats_schema(
    *, operation_id: str, description: str, parameters: type, output: type, format_param: str
) -> Any:
    return extend_schema(
        operation_id=operation_id,
        description=description,
        parameters=[parameters],
        responses={
            (200, "application/json"): OpenApiResponse(
                output, f"{format_param} json, or both (adds `csv`); or csv: text/csv"
            ),
            (200, "text/csv"): CSV_RESPONSE,
            403: ALL_USERS_STAFF_ONLY,
            404: OUTSIDE_PREFIXES,
        },
    )


class MemoryStatsApi(APIView):
    schema = StatsSchema()

    @stats_schema(
        operation_id="memories_stats",
        description=STATS_DESCRIPTION,
        parameters=MemoryStatsInput,
        output=MemoryStatsOutput,
        format_param="export_format",
    )
    def get(self, request: Request) -> HttpResponse:
        return stats_response(request, MemoryStatsInput, MemoryStatsOutput)


class SeedMemoryStatsApi(APIView):
    schema = StatsSchema()

    @stats_schema(
        operation_id="seed_memories_stats",
        description=(
            f"For the clients of the key-addressed routes, camelCase. {STATS_DESCRIPTION}"
        ).replace("export_format=csv", "exportFormat=csv"),
        parameters=SeedMemoryStatsInput,
        output=SeedMemoryStatsOutput,
        format_param="exportFormat",
    )
    def get(self, request: Request) -> HttpResponse:
        return stats_response(request, SeedMemoryStatsInput, SeedMemoryStatsOutput)
