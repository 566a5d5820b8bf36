"""Advisory locks: a transaction lock refuses to run outside a transaction; a beat job runs
once at a time, the second run skips and says so, and a crashed holder blocks no one."""

import threading

import pytest
from django.db import connection, transaction

from core.db.locks import LockNamespace, single_flight, xact_lock
from memories.tasks import SKIPPED, flush_accesses, refresh_user_indexes

pytestmark = pytest.mark.django_db(transaction=True)


def hold(namespace: LockNamespace, *, release: threading.Event, held: threading.Event, crash=False):
    """In a thread (its own database connection): hold the job's lock until `release`; with
    `crash`, drop the connection instead of finishing, as a killed worker would."""
    try:
        with single_flight(namespace) as running:
            assert running
            held.set()
            release.wait(10)
            if crash:
                connection.close()
    finally:
        connection.close()


def test_a_transaction_lock_refuses_to_run_outside_a_transaction():
    with pytest.raises(RuntimeError, match="outside a transaction"):
        xact_lock(LockNamespace.MEMORY_WRITES, ["u\x1ffact"])
    with transaction.atomic():
        xact_lock(LockNamespace.MEMORY_WRITES, ["u\x1ffact", "v\x1ffact"])


@pytest.mark.parametrize(
    ("namespace", "job"),
    [
        (LockNamespace.ACCESS_FLUSH, flush_accesses),
        (LockNamespace.USER_INDEXES, refresh_user_indexes),
    ],
)
def test_two_concurrent_runs_of_a_job_one_runs_one_skips(namespace, job, caplog):
    release, held = threading.Event(), threading.Event()
    holder = threading.Thread(
        target=hold, args=(namespace,), kwargs={"release": release, "held": held}
    )
    holder.start()
    assert held.wait(10)
    try:
        assert job() == SKIPPED
        assert f"{namespace.name}: skipped, another run is in flight" in caplog.text
    finally:
        release.set()
        holder.join(10)
    assert job() != SKIPPED  # the lock went with the first run


def test_a_crashed_holder_never_blocks_the_next_run():
    release, held = threading.Event(), threading.Event()
    holder = threading.Thread(
        target=hold,
        args=(LockNamespace.ACCESS_FLUSH,),
        kwargs={"release": release, "held": held, "crash": True},
    )
    holder.start()
    assert held.wait(10)
    release.set()
    holder.join(10)
    with single_flight(LockNamespace.ACCESS_FLUSH) as running:
        assert running
