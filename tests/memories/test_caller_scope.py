"""The access check lives in the domain: a caller that is not a DRF view (a beat job, an admin
action, the planned MCP server) reaches only its own end users through every client-facing
selector and service."""

import pytest

from core.access import SYSTEM, Caller
from core.errors import Forbidden, NotFound
from memories.ingest import session_get, session_open
from memories.models import ConversationSession, Memory
from memories.recall import RecallQuery, memories_recall
from memories.selectors import (
    memory_get,
    memory_history,
    memory_list,
    memory_versions,
    user_export,
)
from memories.services import (
    MemoryInput,
    memory_add,
    memory_add_many,
    memory_delete,
    memory_supersede,
    user_purge,
)
from reflection.selectors import traits_believed_memories

pytestmark = pytest.mark.django_db

AGENT = Caller(name="agent-b", user_prefixes=("b:",))
VICTIM = "a:victim"


@pytest.fixture
def victims_memory() -> Memory:
    item = MemoryInput(user_id=VICTIM, content="Victim likes green tea", memory_type="fact")
    return memory_add(item=item, caller=SYSTEM).memory


def test_writes_for_another_callers_user_are_forbidden(victims_memory):
    item = MemoryInput(user_id=VICTIM, content="planted", memory_type="fact")
    with pytest.raises(Forbidden):
        memory_add(item=item, caller=AGENT)
    [outcome] = memory_add_many(items=[item], caller=AGENT)
    assert isinstance(outcome, Forbidden)
    with pytest.raises(Forbidden):
        memory_supersede(memory=victims_memory, content="overwritten", caller=AGENT)
    with pytest.raises(Forbidden):
        memory_delete(memory=victims_memory, caller=AGENT)
    with pytest.raises(Forbidden):
        session_open(caller=AGENT, user_id=VICTIM)
    with pytest.raises(Forbidden):
        user_purge(caller=AGENT, user_id=VICTIM)
    assert list(Memory.objects.values_list("user_id", "content", "expired_at")) == [
        (VICTIM, "Victim likes green tea", None)
    ]


def test_reads_of_another_callers_user_are_not_found(victims_memory):
    session = ConversationSession.objects.create(user_id=VICTIM)
    reads = [
        lambda: memory_get(caller=AGENT, memory_id=victims_memory.id),
        lambda: memory_list(caller=AGENT, filters={"user_id": VICTIM}),
        lambda: user_export(caller=AGENT, user_id=VICTIM),
        lambda: memories_recall(caller=AGENT, request=RecallQuery(user_id=VICTIM, query="tea")),
        lambda: traits_believed_memories(caller=AGENT, user_id=VICTIM),
        lambda: session_get(caller=AGENT, session_id=session.id),
        lambda: memory_history(caller=AGENT, memory=victims_memory),
        lambda: memory_versions(caller=AGENT, memory=victims_memory),
    ]
    for read in reads:
        with pytest.raises(NotFound):
            read()
    assert not memory_list(caller=AGENT, filters={}).exists()  # nothing of a:'s in a listing


def test_a_write_is_checked_on_the_stored_row_not_the_object_handed_in(victims_memory):
    """A stale or hand-built object naming the caller's own user must not reach another's row."""
    disguised = Memory(pk=victims_memory.pk, user_id="b:x", memory_type="fact", version=1)
    for write in (
        lambda: memory_supersede(memory=disguised, content="overwritten", caller=AGENT),
        lambda: memory_delete(memory=disguised, caller=AGENT),
    ):
        with pytest.raises(Forbidden):
            write()
    victims_memory.refresh_from_db()
    assert (victims_memory.content, victims_memory.expired_at) == ("Victim likes green tea", None)


def test_its_own_users_are_reachable():
    item = MemoryInput(user_id="b:bob", content="Bob keeps bees", memory_type="fact")
    memory = memory_add(item=item, caller=AGENT).memory
    assert memory_get(caller=AGENT, memory_id=memory.id) == memory
    hits = memories_recall(caller=AGENT, request=RecallQuery(user_id="b:bob", query="bees"))
    assert [hit.memory.id for hit in hits] == [memory.id]
