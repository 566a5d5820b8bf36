"""gunicorn's hooks (neuromem_site/gunicorn_conf.py) freeze what a web worker built as it
started, and again once warm, so that no garbage collection walks it; tests/test_faults.py
serves requests through gunicorn with this configuration."""

import gc
from types import SimpleNamespace

from gunicorn.config import Config

from neuromem_site import gunicorn_conf
from neuromem_site.gunicorn_conf import WARM_REQUESTS, post_request, post_worker_init


def served(worker: SimpleNamespace) -> None:
    """One more request answered, as gunicorn counts it before calling the hook."""
    worker.nr += 1
    post_request(worker, None, None, None)


def test_a_worker_freezes_what_it_built_at_start_and_once_warm():
    worker = SimpleNamespace(nr=0)
    try:
        post_worker_init(worker)
        at_start = gc.get_freeze_count()
        assert at_start > 0
        # (Frozen objects that die leave the count: it only falls between freezes.)
        built_while_warming = [[n] for n in range(1000)]
        for _ in range(WARM_REQUESTS - 1):
            served(worker)
        assert gc.get_freeze_count() < at_start + len(built_while_warming)
        served(worker)
        warm = gc.get_freeze_count()
        assert warm >= at_start + len(built_while_warming)
        built_after = [[n] for n in range(1000)]
        for _ in range(3):
            served(worker)
        # Once: what is made later is collected as usual.
        assert gc.get_freeze_count() < warm + len(built_after)
    finally:
        gc.unfreeze()


def test_a_threaded_worker_whose_count_passed_the_mark_still_freezes_once():
    worker = SimpleNamespace(nr=WARM_REQUESTS + 1)  # two threads' requests counted before
    try:
        post_request(worker, None, None, None)
        frozen = gc.get_freeze_count()
        assert frozen > 0 and worker.warm_frozen
        built_after = [[n] for n in range(1000)]
        served(worker)
        assert gc.get_freeze_count() < frozen + len(built_after)
    finally:
        gc.unfreeze()


def test_gunicorn_takes_them_as_its_hooks():
    """Loaded as gunicorn loads the configuration's names (its validators check each hook's
    arguments), and called through it."""
    config = Config()
    for name in ("post_worker_init", "post_request"):
        config.set(name, getattr(gunicorn_conf, name))
    worker = SimpleNamespace(nr=WARM_REQUESTS)
    try:
        config.post_request(worker, None, None, None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
