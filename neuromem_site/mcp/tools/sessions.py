"""The conversation tools: open a session for an end user, add its messages (NeuroMem mines them
for memories), end it. Each runs the operation of its REST route (`/sessions/…`)."""

import uuid
from collections.abc import Mapping
from typing import Any

from core.access import Caller
from memories.api import operations as memory_ops
from memories.api.serializers.users import MessageInput, SessionCreateInput
from neuromem_site.api.serializers import QueryInputSerializer, UuidField, validated_input
from neuromem_site.mcp.schema import field_schema, object_schema, serializer_schema
from neuromem_site.mcp.tools.base import (
    USER_ID,
    split,
    validating,
    with_properties,
    writing_tool,
)


class SessionIdInput(QueryInputSerializer):
    """The session a route's path names (`/sessions/{id}/…`)."""

    session_id = UuidField(help_text="The session's id, as session_open answered it.")


SESSION_ID = {"session_id": field_schema(SessionIdInput().fields["session_id"])}


def session_id_of(params: Mapping[str, Any]) -> uuid.UUID:
    return validated_input(SessionIdInput, params)["session_id"]


def session_message(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    """session_message's operation: the session `session_id` names, the rest the message."""
    _, message = split(params, ["session_id"])
    return memory_ops.session_message_result(
        caller=caller, session_id=session_id_of(params), params=message
    )


def session_end(*, caller: Caller, params: Mapping[str, Any]) -> dict:
    return memory_ops.session_end_result(caller=caller, session_id=session_id_of(params))


SESSION_TOOLS = [
    writing_tool(
        name="session_open",
        title="Open a conversation",
        description=(
            "Open a conversation session for an end user, to add its messages with "
            "session_message. Answers the session: id, user_id, started_at, ended_at, "
            "last_reflected_at, metadata. Opening one for a user_id outside this client's "
            "prefixes is FORBIDDEN."
        ),
        operation=validating(SessionCreateInput, memory_ops.session_open_result),
        input_schema=serializer_schema(
            SessionCreateInput,
            {"user_id": USER_ID, "metadata": "Free JSON object kept with the session."},
        ),
    ),
    writing_tool(
        name="session_message",
        title="Add a message to a conversation",
        description=(
            "Store one message of the conversation. A `user` message is mined: the facts it "
            "states are remembered about the user (a new value for a one-at-a-time fact, or a "
            "correction, supersedes the old memory), the turn is kept as an episodic memory, "
            'and a request to forget ("please forget my address") erases what it names, as '
            "memory_forget does. Secrets are redacted first. Answers `message`, `memories` "
            "(each write as memory_add answers it: operation, memory, superseded?, "
            "redactions), `forget` (one outcome per request to forget, as memory_forget "
            "answers it) and `redactions` (kind → count). An ended session is a CONFLICT on "
            "`session_id`; another client's session, NOT_FOUND."
        ),
        operation=session_message,
        input_schema=with_properties(
            serializer_schema(
                MessageInput,
                {
                    "role": "Who said it: user, assistant or system.",
                    "content": "The message, as said.",
                },
            ),
            SESSION_ID,
            required=["session_id"],
        ),
        # A request to forget in the message erases; a correction supersedes.
        destructive=True,
    ),
    writing_tool(
        name="session_end",
        title="End a conversation",
        description=(
            "End the session: `ended_at` is set and a reflection cycle is queued for its end "
            "user (traits are built from what was said). Ending it again changes nothing. "
            "Answers the session; another client's session is NOT_FOUND."
        ),
        operation=session_end,
        input_schema=object_schema(SESSION_ID, required=["session_id"]),
        idempotent=True,
    ),
]
