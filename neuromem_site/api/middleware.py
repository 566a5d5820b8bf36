from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from neuromem_site.api.envelope import STATUS_CODES, error_body

DEFAULT_MESSAGES = {
    404: "No API route matches {method} {path}.",
    405: "Method {method} is not allowed on {path}.",
    500: "Internal server error.",
}


class ApiErrorEnvelopeMiddleware:
    """Under /api/, turn any non-JSON error page into the error envelope.

    DRF views already answer in the envelope; this catches what happens outside them: unknown
    routes (Django's 404, also its DEBUG page), crashes before a view runs, oversized bodies.
    It is the outermost middleware so it sees every response.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            request.path.startswith("/api/")
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
