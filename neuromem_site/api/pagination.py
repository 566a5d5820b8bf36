import re
from base64 import b64decode
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.core.signing import BadSignature, Signer
from django.db.models import Field, QuerySet
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.utils.urls import replace_query_param

from core.db.replicas import lagging_read
from neuromem_site.api.envelope import ApiError, Envelope, checked_range

# Cursors are signed with SECRET_KEY: one from before a key rotation is refused like any other
# the server did not give.
CURSOR_SIGNER = Signer(salt="neuromem.api.cursor")


def invalid_cursor() -> ApiError:
    return ApiError("Invalid cursor; pass back a `page.next` as it was given.", field="cursor")


class EnvelopeCursorPagination(CursorPagination):
    """Cursor pagination answering `{"ok", "data": [...], "page": {"next": <cursor|null>}}`.

    `limit` (1–API_MAX_PAGE_SIZE) sets the page size; out of range is a VALIDATION_ERROR with
    `minAllowed`/`maxAllowed`/`provided` rather than a silent clamp. `next` is the opaque
    cursor to pass back as `?cursor=`, signed; one the server did not give (empty, unsigned,
    tampered with), or whose position is no value of the ordering field, is a VALIDATION_ERROR
    on `cursor` (DRF answers 404, which says the list does not exist).
    """

    page_size = settings.API_PAGE_SIZE
    page_size_query_param = "limit"
    max_page_size = settings.API_MAX_PAGE_SIZE
    ordering = "-created_at"
    queryset: QuerySet | None = None

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            # In ASCII digits: int() also reads "1_0", " 5", "٥" and "５".
            if not re.fullmatch(r"-?[0-9]+", raw):
                raise ValueError(raw)
            limit = int(raw)
        except ValueError:
            raise ApiError("'limit' must be an integer.", field="limit") from None
        return checked_range("limit", limit, min_allowed=1, max_allowed=self.max_page_size)

    def paginate_queryset(
        self, queryset: QuerySet, request: Request, view: Any = None
    ) -> list | None:
        self.queryset = queryset  # decode_cursor checks the position against its field
        return super().paginate_queryset(queryset, request, view)

    def encode_cursor(self, cursor: Cursor) -> str:
        """DRF's link, its cursor signed: a cursor the server did not give is refused, not
        read as a page (an empty one would be the first)."""
        link = super().encode_cursor(cursor)
        encoded = parse_qs(urlsplit(link).query)[self.cursor_query_param][0]
        return replace_query_param(link, self.cursor_query_param, CURSOR_SIGNER.sign(encoded))

    def decode_cursor(self, request: Request) -> Cursor | None:
        signed = request.query_params.get(self.cursor_query_param)
        if signed is None:
            return None
        try:
            encoded = CURSOR_SIGNER.unsign(signed)
            tokens = parse_qs(b64decode(encoded, validate=True).decode("ascii"))
            offset = int(tokens.get("o", ["0"])[0])
            reverse = bool(int(tokens.get("r", ["0"])[0]))
        except (BadSignature, ValueError):
            raise invalid_cursor() from None
        if not 0 <= offset <= self.offset_cutoff:
            raise invalid_cursor()
        cursor = Cursor(offset=offset, reverse=reverse, position=tokens.get("p", [None])[0])
        field = self.ordering_field()
        if cursor.position is not None and field is not None:
            # The position goes into a filter on the ordering field: a forged one that is no
            # value of that field would fail in the query (a float field: a crash).
            try:
                field.to_python(cursor.position)
            except (ValidationError, ValueError, TypeError):
                raise invalid_cursor() from None
        return cursor

    def ordering_field(self) -> Field | None:
        """The model field or annotation the first ordering names."""
        if self.queryset is None:
            return None
        name = self.ordering[0].lstrip("-")
        annotation = self.queryset.query.annotations.get(name)
        if annotation is not None:
            return annotation.output_field
        try:
            return self.queryset.model._meta.get_field(name)
        except FieldDoesNotExist:
            return None

    def next_cursor(self) -> str | None:
        link = self.get_next_link()
        return parse_qs(urlsplit(link).query)[self.cursor_query_param][0] if link else None

    def get_paginated_response(self, data) -> Response:
        return Response(Envelope(ok=True, data=data, page={"next": self.next_cursor()}))

    def get_schema_operation_parameters(self, view: Any) -> list[dict]:
        return [
            {
                "name": self.cursor_query_param,
                "required": False,
                "in": "query",
                "description": "`page.next` of the previous page, as given; any other value "
                "is a VALIDATION_ERROR on `cursor`.",
                "schema": {"type": "string"},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": f"Page size (default {self.page_size}).",
                "schema": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_page_size,
                    "default": self.page_size,
                },
            },
        ]

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["ok", "data", "page"],
            "properties": {
                "ok": {"type": "boolean", "enum": [True]},
                "data": schema,
                "page": {
                    "type": "object",
                    "required": ["next"],
                    "properties": {"next": {"type": "string", "nullable": True}},
                },
            },
        }


def page_response(
    request: Request,
    view: Any,
    queryset: QuerySet,
    *,
    ordering: tuple[str, ...],
    item_output: type[Serializer],
    context: dict[str, Any] | None = None,
    may_lag_for: str | None = None,
) -> Response:
    """The page of `queryset` (in `ordering`, whose last field breaks ties) that `request`
    asks for, each item as `item_output` with `context`, in the page envelope. `may_lag_for`:
    the caller for whom the page may come from a read replica (core/db/replicas.py)."""
    paginator = EnvelopeCursorPagination()
    paginator.ordering = ordering

    def read() -> list:
        return paginator.paginate_queryset(queryset, request, view=view)

    page = read() if may_lag_for is None else lagging_read(caller_name=may_lag_for, read=read)
    items = item_output(page, many=True, context=context or {}).data
    return paginator.get_paginated_response(items)
