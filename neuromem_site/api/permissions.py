"""The per-client `user_id` prefix rule, for every view that names an end user."""

from __future__ import annotations

from rest_framework import exceptions
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from neuromem_site.api.envelope import ApiError
from neuromem_site.api.models import ApiClient
from neuromem_site.validation import user_id_problem


def user_access_check(*, client: ApiClient, user_id: str, write: bool) -> None:
    """Raise unless `client` may use `user_id`.

    Reading outside one's prefixes is NOT_FOUND (never a hint that the user exists);
    writing there is FORBIDDEN.
    """
    if client.may_access_user(user_id):
        return
    if write:
        raise exceptions.PermissionDenied(
            f"This API client may not write data for user_id '{user_id}'."
        )
    raise exceptions.NotFound(f"User '{user_id}' not found.")


def user_id_checked(request: Request, user_id: str, *, write: bool) -> str:
    """The access check of a request about one end user, on `user_id`: the validated value
    the service will act on. Any other `user_id` the request names (URL path, query string)
    must be the same value, or a client could pass the check on one and act on the other."""
    problem = user_id_problem(user_id)
    if problem is not None:
        raise ApiError(problem, field="user_id")
    named = {
        "URL path": (request.parser_context or {}).get("kwargs", {}).get("user_id"),
        "query string": request.query_params.get("user_id"),
    }
    for where, value in named.items():
        if value is not None and value != user_id:
            raise ApiError(
                f"user_id '{value}' in the {where} differs from user_id '{user_id}'.",
                field="user_id",
            )
    user_access_check(client=request.user, user_id=user_id, write=write)
    return user_id


class IsStaffClient(BasePermission):
    message = "Only staff API clients may do this."

    def has_permission(self, request: Request, view) -> bool:
        return bool(getattr(request.user, "is_staff", False))
