"""Memory keys: a key names at most one current memory of an end user (of any type)."""

from core.db.locks import LockNamespace, xact_lock
from core.errors import Conflict
from core.validation import text_problem
from memories.models import Memory
from memories.redaction import spans_found


def key_problem(key: str | None) -> str | None:
    """What is wrong with a memory's key, if anything. A key is an address, stored and shown
    as given: one holding a secret is refused, as a placeholder would change the address."""
    if key is None:
        return None
    if (problem := text_problem(key)) is not None:
        return problem
    if spans_found(key):
        return "A key may not hold a secret (a password, a token, a card number…)."
    return None


def lock_keys(pairs: set[tuple[str, str]]) -> None:
    """Serialise the use of these (user, key) pairs until commit."""
    xact_lock(LockNamespace.MEMORY_KEYS, (f"{user}\x1f{key}" for user, key in pairs))


def keys_taken(rows: dict[int, Memory]) -> dict[int, Conflict]:
    """The rows whose key a current memory of their end user (of any type), or an earlier
    row, already holds: index → error. Holding the same content as the same type is no
    conflict (the write is a NOOP). Keys are locked until commit, after the memory-write
    locks (one order everywhere)."""
    keyed = {index: row for index, row in rows.items() if row.key is not None}
    if not keyed:
        return {}
    lock_keys({(row.user_id, row.key) for row in keyed.values()})
    holders = {
        (held.user_id, held.key): held
        for held in Memory.objects.current().filter(
            user_id__in={row.user_id for row in keyed.values()},
            key__in={row.key for row in keyed.values()},
        )
    }
    errors = {}
    for index, row in keyed.items():
        holder = holders.setdefault((row.user_id, row.key), row)
        if (holder.memory_type, holder.content_hash) != (row.memory_type, row.content_hash):
            errors[index] = key_conflict(row.key, holder)
    return errors


def key_conflict(key: str, holder: Memory) -> Conflict:
    return Conflict(
        f"Key '{key}' is held by the current memory '{holder.id}'.",
        field="key",
        memory_id=str(holder.id),
    )
