"""core/after_response.py: a request's bookkeeping runs once its answer is out, at once
elsewhere; a failing call is logged and the others still run."""

import logging
import uuid

from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started

from core.after_response import after_response
from core.redis_client import app_redis
from memories.access_counts import PENDING_KEY, accesses_record


def request_begins() -> None:
    request_started.send(sender=WSGIHandler, environ={})


def request_ends() -> None:
    request_finished.send(sender=WSGIHandler)


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
    request_begins()
    accesses_record(memory_ids=[memory_id])
    assert client.hget(PENDING_KEY, str(memory_id)) is None
    request_ends()
    assert int(client.hget(PENDING_KEY, str(memory_id))) == 1
    client.hdel(PENDING_KEY, str(memory_id), f"{memory_id}@")
