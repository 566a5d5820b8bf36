"""kombu's Redis transport, with acknowledgements that cannot stall a worker.

kombu frees a message's place in the worker's prefetch window only once Redis has answered its
acknowledgement. When Redis hangs at that moment the ack times out (REDIS_SOCKET_TIMEOUT),
the place is never freed, and with the window full (prefetch 1 a pool process) the worker
stops taking messages for good while looking alive: seen in tests/test_outages.py, every
write after a 20 s hang left pending. Here the place is freed whatever Redis answered. The
message stays in Redis's unacknowledged set and is handed out again after the visibility
timeout; every task is safe to run twice (docs/security.md).
"""

from kombu.transport import redis as kombu_redis
from kombu.transport import virtual


class QoS(kombu_redis.QoS):
    def ack(self, delivery_tag) -> None:
        try:
            self._remove_from_indices(delivery_tag).execute()
        finally:
            virtual.QoS.ack(self, delivery_tag)

    def reject(self, delivery_tag, requeue: bool = False) -> None:
        try:
            if requeue:
                self.restore_by_tag(delivery_tag, leftmost=True)
            else:
                self._remove_from_indices(delivery_tag).execute()
        finally:
            virtual.QoS.ack(self, delivery_tag)


def install() -> None:
    """Every Redis channel made from now on uses this QoS (the Celery app calls it)."""
    kombu_redis.Channel.QoS = QoS
