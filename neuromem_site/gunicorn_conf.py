"""gunicorn's configuration for every way NeuroMem is served (`make run`, the Docker image):
`gunicorn -c python:neuromem_site.gunicorn_conf neuromem_site.wsgi:application`.

Command-line flags still override these. Its own error pages (a worker timeout, a malformed
request line, an invalid Content-Length, a request line too long) answer in the API's JSON
error envelope instead of gunicorn's HTML.
"""

import gc
import json
import os
import socket
from typing import Any

from gunicorn import util

# Seconds a request may take before the arbiter aborts its worker (the client then gets
# INTERNAL, the request's open transaction is rolled back).
timeout = int(os.environ.get("WEB_TIMEOUT", "30"))
graceful_timeout = 10
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
# No access log of its own: every request is logged by the app with its id, route, client and
# duration (neuromem_site/metrics.py, RequestMiddleware).
# The longest request line gunicorn takes short of "unlimited": GET /search/ carries its query
# in the URL (longer queries, which non-ASCII ones soon are, answer 414: POST /recall/ takes them).
limit_request_line = 8190


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn.util.write_error, in the error envelope (neuromem_site/api/envelope.py)."""
    # Here, not at the top: the arbiter reads this file before Django is set up; workers
    # load the application (and so the settings) before they serve anything.
    from neuromem_site.api.envelope import STATUS_CODES

    code = STATUS_CODES.get(status_int, "INTERNAL" if status_int >= 500 else "VALIDATION_ERROR")
    message = mesg or reason
    if status_int == 500:
        message = "Internal server error."  # never gunicorn's view of what went wrong
    body = json.dumps({"ok": False, "error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin1")
    util.write_nonblock(sock, head + body)


# gunicorn has no setting for its error pages; its workers all write them through this one
# function (workers/base.py handle_error), looked up at call time. Workers are forked from the
# arbiter, which loads this module, so they all inherit it.
util.write_error = write_json_error


# What a worker builds as it starts and serves its first requests (Django, DRF, the URL
# resolver, the serializers' fields, the embedding model) lives as long as the worker, and a
# full garbage collection walks all of it: a pause many times a request's length, now and then,
# in whichever request it falls. Frozen once the worker is warm, it is left out of every
# collection (docs/benchmarks.md, "Garbage collection in the web workers"); a garbage cycle
# frozen with it is never freed, so the worker collects before it has served anything.
WARM_REQUESTS = 100


def post_worker_init(worker: Any) -> None:
    gc.collect()
    gc.freeze()


def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
    # After the answer is written: the client does not wait for it. (A threaded worker's
    # count may pass WARM_REQUESTS between two of its requests' hooks.)
    if worker.nr >= WARM_REQUESTS and not getattr(worker, "warm_frozen", False):
        worker.warm_frozen = True
        gc.freeze()
