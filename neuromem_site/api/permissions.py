"""What the API checks about who asks, before the domain decides what they may touch
(core/access.py)."""

from __future__ import annotations

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from core.errors import Forbidden
from core.validation import user_id_problem
from neuromem_site.api.envelope import ApiError


def checked_user_id(user_id: str) -> str:
    """`user_id` when it is one to read by (see user_id_problem), else a VALIDATION_ERROR."""
    problem = user_id_problem(user_id, new=False)
    if problem is not None:
        raise ApiError(problem, field="user_id")
    return user_id


def user_ids_agree(request: Request, user_id: str) -> str:
    """`user_id`, the validated value the service will act on (and check access for), when
    every other `user_id` the request names (URL path, query string) is the same value; else
    a VALIDATION_ERROR, or a client could be checked on one and act on the other."""
    checked_user_id(user_id)
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
    return user_id


def user_filter_check(request: Request, user_id: str | None) -> None:
    """An optional `user_id` filter: when given, it agrees with the request (user_ids_agree);
    without it, the answer covers every end user, which only a staff client may read (others:
    FORBIDDEN, as the schema's 403 says: a request without the filter is well formed)."""
    if user_id is not None:
        user_ids_agree(request, user_id)
    elif not getattr(request.user, "is_staff", False):
        raise Forbidden(
            "Only staff clients may read every end user: give `user_id`.", field="user_id"
        )


class IsStaffClient(BasePermission):
    message = "Only staff API clients may do this."

    def has_permission(self, request: Request, view) -> bool:
        return bool(getattr(request.user, "is_staff", False))
