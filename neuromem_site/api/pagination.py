from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response

from neuromem_site.api.envelope import ApiError, Envelope, checked_range


class EnvelopeCursorPagination(CursorPagination):
    """Cursor pagination answering `{"ok", "data": [...], "page": {"next": <cursor|null>}}`.

    `limit` (1–API_MAX_PAGE_SIZE) sets the page size; out of range is a VALIDATION_ERROR with
    seed 004's limits rather than a silent clamp. `next` is the opaque cursor to pass back as
    `?cursor=`.
    """

    page_size = settings.API_PAGE_SIZE
    page_size_query_param = "limit"
    max_page_size = settings.API_MAX_PAGE_SIZE
    ordering = "-created_at"

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            limit = int(raw)
        except ValueError:
            raise ApiError("'limit' must be an integer.", field="limit") from None
        return checked_range("limit", limit, min_allowed=1, max_allowed=self.max_page_size)

    def next_cursor(self) -> str | None:
        link = self.get_next_link()
        return parse_qs(urlsplit(link).query)[self.cursor_query_param][0] if link else None

    def get_paginated_response(self, data) -> Response:
        return Response(Envelope(ok=True, data=data, page={"next": self.next_cursor()}))

    def get_paginated_response_schema(self, schema: dict) -> dict:
        return {
            "type": "object",
            "required": ["ok", "data", "page"],
            "properties": {
                "ok": {"type": "boolean", "enum": [True]},
                "data": schema,
                "page": {
                    "type": "object",
                    "properties": {"next": {"type": "string", "nullable": True}},
                },
            },
        }
