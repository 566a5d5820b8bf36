"""The per-client `user_id` prefix rule, reusable by every view that names an end user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import exceptions
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from neuromem_site.api.models import ApiClient

if TYPE_CHECKING:  # DRF imports this module while defining APIView
    from rest_framework.views import APIView


def requested_user_id(request: Request, view: APIView) -> str | None:
    """The end user a request is about: URL, then query string, then JSON body."""
    for source in (view.kwargs, request.query_params):
        if source.get("user_id"):
            return str(source["user_id"])
    if isinstance(request.data, dict) and request.data.get("user_id"):
        return str(request.data["user_id"])
    return None


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


class UserIdInClientScope(BasePermission):
    """Allow a request only for end users under the client's `user_prefixes` (staff: all)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        user_id = requested_user_id(request, view)
        if user_id is not None:
            user_access_check(
                client=request.user, user_id=user_id, write=request.method not in SAFE_METHODS
            )
        return True


class IsStaffClient(BasePermission):
    message = "Only staff API clients may do this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(getattr(request.user, "is_staff", False))
