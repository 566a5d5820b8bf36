from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from core.db.outages import database_unavailable
from memories.api.compat_urls import ROOT_API_PATHS
from neuromem_site.api.envelope import STATUS_CODES, database_unavailable_error, error_body

DEFAULT_MESSAGES = {
    404: "No API route matches {method} {path}.",
    405: "Method {method} is not allowed on {path}.",
    500: "Internal server error.",
}


def is_api_path(path: str) -> bool:
    """Under /api/, one of seed 004's routes at the root, or the MCP endpoint."""
    return path.startswith("/api/") or path.rstrip("/") in {*ROOT_API_PATHS, "/mcp"}


class ApiErrorEnvelopeMiddleware:
    """Under /api/ (and seed 004's routes), turn any non-JSON error page into the envelope.

    DRF views already answer in the envelope; this catches what happens outside them: unknown
    routes (Django's 404, also its DEBUG page), crashes before a view runs, oversized bodies.
    It is the outermost middleware so it sees every response.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            is_api_path(request.path)
            and response.status_code >= 400
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            status = response.status_code
            message = DEFAULT_MESSAGES.get(status, response.reason_phrase or "Error.").format(
                method=request.method, path=request.path
            )
            code = STATUS_CODES.get(status, "INTERNAL" if status >= 500 else "VALIDATION_ERROR")
            return JsonResponse(error_body(code, message), status=status)
        return response

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: Any, view_kwargs: Any
    ) -> HttpResponse | None:
        """400 for an API query parameter given more than once (each takes one value: answering
        for one of them would pick silently); 413 for a body over the route's cap (a view's
        `max_body_bytes`, else API_BODY_MAX_BYTES under /api/ and FORM_BODY_MAX_BYTES
        elsewhere), judged by its Content-Length before anything reads it."""
        api = is_api_path(request.path)
        repeated = next((name for name, values in request.GET.lists() if len(values) > 1), None)
        if api and repeated is not None:
            message = f"'{repeated}' is given more than once; give it once."
            body = error_body(
                "VALIDATION_ERROR", message, field=repeated, details={repeated: [message]}
            )
            return JsonResponse(body, status=400)
        default_cap = settings.API_BODY_MAX_BYTES if api else settings.FORM_BODY_MAX_BYTES
        cap = getattr(getattr(view_func, "view_class", None), "max_body_bytes", default_cap)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0  # gunicorn refuses such a request before it gets here
        if length <= cap:
            return None
        if not api:
            return HttpResponse("Request body too large.", status=413, content_type="text/plain")
        body = error_body(
            "PAYLOAD_TOO_LARGE",
            f"The request body is {length} bytes; this route takes at most {cap}.",
            maxAllowed=cap,
            provided=length,
        )
        return JsonResponse(body, status=413)


class DatabaseUnavailableMiddleware:
    """503 with Retry-After when the database is away (core/db/outages.py) in a view outside
    DRF, which answers through exception_handler: the admin, Django's own views. The envelope
    on API paths, plain text elsewhere; instead of Django's 500 page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_unavailable(exception):
            return None
        error = database_unavailable_error(exception)
        if is_api_path(request.path):
            body = error_body("UNAVAILABLE", error.message, **error.extra)
            response: HttpResponse = JsonResponse(body, status=503)
        else:
            response = HttpResponse(error.message, status=503, content_type="text/plain")
        response["Retry-After"] = str(error.retry_after)
        return response
