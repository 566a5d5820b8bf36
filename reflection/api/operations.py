"""The traits operations both the HTTP views and the MCP tools run (one code path): each takes
the `Caller` and the request's parameters, validates them, and answers the JSON data the HTTP
route puts in the envelope's `data`, or raises the error the envelope reports
(neuromem_site/api/envelope.py)."""

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from core.access import Caller
from neuromem_site.api.permissions import checked_user_id
from reflection.api.serializers import TRAIT_GROUPS, BelievedTraitOutput
from reflection.selectors import traits_believed


def user_id_param(params: Mapping[str, Any]) -> str:
    """The `user_id` to read by, checked as `user_ids_agree` checks the one in a URL path."""
    user_id = params.get("user_id")
    if user_id is None:
        raise serializers.ValidationError({"user_id": ["This field is required."]})
    return checked_user_id(user_id)


def traits_get_result(*, caller: Caller, params: Mapping[str, Any]) -> dict[str, list]:
    """GET /users/{user_id}/traits/: the believed traits grouped core → preference → behavior
    (then `other`), each group in the selector's order."""
    user_id = user_id_param(params)
    groups: dict[str, list] = {group: [] for group in (*TRAIT_GROUPS, "other")}
    for trait in traits_believed(caller=caller, user_id=user_id):
        groups.get(trait.trait_subtype, groups["other"]).append(trait)
    return {group: BelievedTraitOutput(traits, many=True).data for group, traits in groups.items()}
