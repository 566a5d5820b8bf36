"""OutputModelSerializer builds a class's fields once and gives each instance its own copies:
what one instance binds (its parent, its context) must never show through another."""

import uuid

import pytest
from django.utils import timezone

from memories.api.serializers.memories import MemoryOutput, MemoryWithLinksOutput
from memories.api.serializers.recall import RecallHitOutput
from memories.models import Memory


def unsaved_memory() -> Memory:
    now = timezone.now()
    return Memory(
        id=uuid.uuid4(),
        user_id="reader",
        memory_type="fact",
        content="The user keeps bees",
        metadata={},
        importance=0.5,
        valid_at=now,
        created_at=now,
        updated_at=now,
        version=1,
        embedding=[0.5] * 4,
        source_episode_ids=[uuid.uuid4()],
    )


@pytest.mark.parametrize("output", [MemoryOutput, MemoryWithLinksOutput, RecallHitOutput])
def test_each_instance_binds_fields_of_its_own(output: type) -> None:
    first, second = output(), output()
    for name, field in first.fields.items():
        assert field is not second.fields[name], name
        assert field.parent is first and second.fields[name].parent is second, name
        if hasattr(field, "child"):  # a list's item field, a nested serializer's many
            assert field.child is not second.fields[name].child, name


def test_context_stays_with_its_instance() -> None:
    memory = unsaved_memory()
    with_vector = MemoryOutput(memory, context={"include_embedding": True})
    plain = MemoryOutput(memory)
    assert with_vector.data["embedding"] == [0.5] * 4
    assert "embedding" not in plain.data
    assert with_vector.data["source_episode_ids"] == [str(memory.source_episode_ids[0])]
    assert with_vector.data["state"] == plain.data["state"]
