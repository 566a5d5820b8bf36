"""gunicorn's configuration for bench/gc_pauses.py: the project's, each full garbage collection
in a worker timed into the file GC_PAUSES_FILE (its pause in ms, the objects left in the oldest
generation after it);
GC_FREEZE=off leaves out the hooks that freeze the worker's objects."""

import gc
import os
import time
from typing import Any

from neuromem_site import gunicorn_conf
from neuromem_site.gunicorn_conf import *  # noqa: F403  every other setting as served

FREEZE = os.environ.get("GC_FREEZE") != "off"


def _time_full_collections() -> None:
    started = [0.0]

    def timed(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif info["generation"] == 2:
            pause = (time.perf_counter() - started[0]) * 1000
            with open(os.environ["GC_PAUSES_FILE"], "a") as pauses:
                pauses.write(f"{pause:.2f} {len(gc.get_objects(generation=2))}\n")

    gc.callbacks.append(timed)


def post_worker_init(worker: Any) -> None:
    if FREEZE:
        gunicorn_conf.post_worker_init(worker)
    _time_full_collections()


def post_request(worker: Any, req: Any, environ: Any, resp: Any) -> None:
    if FREEZE:
        gunicorn_conf.post_request(worker, req, environ, resp)
