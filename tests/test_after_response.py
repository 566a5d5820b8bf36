"""core/after_response.py: a request's bookkeeping runs once its answer is out, at once
elsewhere, in the context it was asked in; a failing call is logged and the others still run."""

import logging
import uuid

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from core import after_response as module
from core.after_response import after_response
from core.logs import REQUEST_ID
from core.redis_client import app_redis
from memories.access_counts import PENDING_KEY, accesses_record


@pytest.fixture(autouse=True)
def no_request_left_open():
    yield
    module._requests.pending = None  # a failed test must not defer the next one's calls


def send(signal, **kwargs) -> None:
    """As the server sends it, without closing the test's database connection (Django's test
    client leaves close_old_connections out the same way)."""
    signal.disconnect(close_old_connections)
    try:
        signal.send(sender=WSGIHandler, **kwargs)
    finally:
        signal.connect(close_old_connections)


def request_begins() -> None:
    send(request_started, environ={})


def request_ends() -> None:
    send(request_finished)


def test_outside_a_request_it_runs_at_once():
    done = []
    after_response(lambda: done.append("counted"))
    assert done == ["counted"]


def test_inside_a_request_it_runs_when_the_response_is_closed():
    done = []
    request_begins()
    after_response(lambda: done.append("first"))
    after_response(lambda: done.append("second"))
    assert done == []
    request_ends()
    assert done == ["first", "second"]
    after_response(lambda: done.append("after the request"))
    assert done[-1] == "after the request"


def test_a_call_runs_in_the_context_it_was_made_in():
    """The request's id stays on what the call logs, though the middleware has reset it."""
    seen = []
    request_begins()
    token = REQUEST_ID.set("req-1")
    after_response(lambda: seen.append(REQUEST_ID.get()))
    REQUEST_ID.reset(token)
    request_ends()
    assert seen == ["req-1"]


def test_a_failing_call_is_logged_and_the_next_still_runs(caplog):
    done = []
    request_begins()
    after_response(lambda: 1 / 0)
    after_response(lambda: done.append("still"))
    with caplog.at_level(logging.ERROR, logger="neuromem.after_response"):
        request_ends()
    assert done == ["still"]
    assert "ZeroDivisionError" in caplog.text


def test_calls_of_a_response_nobody_closed_run_when_the_next_request_begins():
    done = []
    request_begins()
    after_response(lambda: done.append("left behind"))
    request_begins()
    assert done == ["left behind"]
    request_ends()
    assert done == ["left behind"]


def test_accesses_are_counted_in_redis_once_the_response_is_closed():
    client = app_redis()
    memory_id = uuid.uuid4()
    try:
        request_begins()
        accesses_record(memory_ids=[memory_id])
        assert client.hget(PENDING_KEY, str(memory_id)) is None
        request_ends()
        assert int(client.hget(PENDING_KEY, str(memory_id))) == 1
    finally:
        client.hdel(PENDING_KEY, str(memory_id), f"{memory_id}@")
