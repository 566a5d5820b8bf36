"""The memory graph's writes and time travel (memories/graph/services.py, selectors.py): a new
value of a single-valued attribute closes the old edge when it was said, the memories that
stated the old value leave current recall, and `as_of` reads the graph as it was."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, ProgrammingError, transaction

from core.access import SYSTEM
from memories.graph.answering import asked
from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.graph.selectors import current_attributes, edges_valid_q
from memories.graph.services import entity_node, graph_statements_record, memories_subject_set
from memories.models import Memory
from memories.sentences import mentions
from memories.services import MemoryInput, memory_add
from memories.statements import USER, Statement, Subject

pytestmark = pytest.mark.django_db

T0 = datetime(2025, 3, 1, 9, tzinfo=UTC)
DAY = timedelta(days=1)
USER_ID = "graph:ana"
MARK = Subject(name="Mark", role="brother", kind="person")


def memory(content: str, at: datetime, memory_type: str = "fact") -> Memory:
    item = MemoryInput(
        user_id=USER_ID, content=content, memory_type=memory_type, valid_at=at, recorded_at=at
    )
    return memory_add(item=item, caller=SYSTEM).memory


def say(statement: Statement, at: datetime, *memories: Memory):
    return graph_statements_record(
        user_id=USER_ID,
        statements=[(statement, [m.id for m in memories])],
        at=at,
        actor="test",
    )


def lives_in(city: str, *, ended: bool = False) -> Statement:
    return Statement(USER, "lives in", city, single=True, ended=ended)


def values(instant: datetime | None, relation: str = "lives in") -> list[str]:
    edges = GraphEdge.objects.filter(edges_valid_q(instant), user_id=USER_ID, relation=relation)
    return sorted(edge.object_value or edge.object_node.name for edge in edges)


def is_current(m: Memory) -> bool:
    return Memory.objects.current().filter(pk=m.pk).exists()


def test_a_new_value_closes_the_old_edge_when_it_was_said_and_time_travel_reads_both():
    austin = memory("The user lives in Austin", T0)
    say(lives_in("Austin"), T0, austin)
    denver = memory("The user lives in Denver", T0 + 10 * DAY)
    change = say(lives_in("Denver"), T0 + 10 * DAY, denver)

    old = GraphEdge.objects.get(object_value="Austin")
    assert (old.invalid_at, old.expired_at) == (T0 + 10 * DAY, T0 + 10 * DAY)
    assert [edge.object_value for edge in change.closed] == ["Austin"]
    assert values(None) == ["Denver"]
    assert values(T0 + DAY) == ["Austin"]
    assert values(T0 - DAY) == []
    # The fact that stated Austin is no longer current, but as of then it was.
    assert not is_current(austin) and is_current(denver)
    austin.refresh_from_db()
    assert austin.invalid_at == T0 + 10 * DAY and austin.expired_at is None
    assert Memory.objects.as_of(T0 + DAY).filter(pk=austin.pk).exists()


def test_memories_naming_the_closed_value_while_it_held_leave_recall_the_new_statement_stays():
    say(lives_in("Austin"), T0, memory("The user lives in Austin", T0))
    chat = memory(
        "Assistant: Austin is great! → User: The weather is perfect.", T0 + DAY, "episodic"
    )
    unrelated = memory("User: I found a nice apartment downtown.", T0 + DAY, "episodic")
    earlier = memory("User: I visited Austin once as a kid.", T0 - DAY, "episodic")
    moved = memory("User: We left Austin for Denver.", T0 + 5 * DAY, "episodic")
    change = say(lives_in("Denver"), T0 + 5 * DAY, moved)

    assert chat.id in change.stale_memory_ids
    assert not is_current(chat)
    assert is_current(unrelated)  # names no old value
    assert is_current(earlier)  # said before Austin held
    assert is_current(moved)  # states the new value


def test_a_closed_latin_value_written_against_chinese_is_named_but_not_inside_a_longer_word():
    say(lives_in("Austin"), T0, memory("The user lives in Austin", T0))
    chinese = memory("用户：Austin的夏天太热了。", T0 + DAY, "episodic")
    longer = memory("User: Austinite humour is an acquired taste.", T0 + DAY, "episodic")
    change = say(lives_in("Denver"), T0 + 5 * DAY, memory("The user lives in Denver", T0 + 5 * DAY))

    assert chinese.id in change.stale_memory_ids and not is_current(chinese)
    assert is_current(longer)
    assert mentions("用户：Austin的夏天太热了。", "austin") and not mentions(
        longer.content, "Austin"
    )


def test_the_same_value_again_adds_its_memories_to_the_edge_and_opens_nothing():
    first, again = memory("The user lives in Lisbon", T0), memory("Still in Lisbon", T0 + DAY)
    say(lives_in("Lisbon"), T0, first)
    change = say(lives_in("lisbon"), T0 + DAY, again)
    assert change.opened == [] and len(change.reinforced) == 1
    edge = GraphEdge.objects.get()
    assert set(edge.memory_ids) == {first.id, again.id} and edge.valid_at == T0


def test_many_valued_relations_stay_many_and_an_end_closes_only_its_value():
    def pet(name: str, *, ended: bool = False) -> Statement:
        luna = Subject(name=name, role="dog", kind="pet")
        return Statement(USER, "dog", name, single=False, ended=ended, value_entity=luna)

    say(pet("Max"), T0, memory("The user has a dog named Max", T0))
    say(pet("Luna"), T0 + DAY, memory("The user adopted a puppy named Luna", T0 + DAY))
    assert values(None, "dog") == ["Luna", "Max"]
    say(pet("Max", ended=True), T0 + 2 * DAY, memory("Max passed away", T0 + 2 * DAY))
    assert values(None, "dog") == ["Luna"]
    assert values(T0 + DAY, "dog") == ["Luna", "Max"]
    assert GraphNode.objects.filter(user_id=USER_ID, kind=EntityKind.PET).count() == 2


def test_what_still_holds_of_a_former_partner_stays_current_when_the_relation_ends():
    ewan = Subject(name="Ewan", role="boyfriend", kind="person")

    def partner(*, ended: bool = False) -> Statement:
        return Statement(USER, "partner", "Ewan", single=True, ended=ended, value_entity=ewan)

    episode = memory("User: My boyfriend is Ewan.", T0, "episodic")
    relation = memory("The user's boyfriend is Ewan", T0)
    school = memory("Ewan, the user's boyfriend, studies at Strathclyde", T0)
    change = say(partner(), T0, episode, relation, school)
    say(Statement(ewan, "school", "Strathclyde", single=True), T0, school)
    memories_subject_set(subjects={m.id: change.entities[ewan].id for m in (relation, school)})
    say(partner(ended=True), T0 + DAY, memory("User: Ewan and I split up.", T0 + DAY, "episodic"))

    assert values(None, "partner") == []
    assert not is_current(episode) and not is_current(relation)  # they state the relation
    assert is_current(school)  # where he studies still holds


def test_an_end_without_a_successor_closes_a_single_value():
    say(
        Statement(USER, "diet", "vegetarian", single=True), T0, memory("The user is vegetarian", T0)
    )
    say(
        Statement(USER, "diet", "vegetarian", single=True, ended=True),
        T0 + DAY,
        memory("The user is no longer vegetarian", T0 + DAY),
    )
    assert values(None, "diet") == [] and values(T0, "diet") == ["vegetarian"]


def test_an_end_naming_no_value_closes_whatever_single_value_held():
    say(Statement(USER, "job", "baker", single=True), T0, memory("The user is a baker", T0))
    say(Statement(USER, "job", "", single=True, ended=True), T0 + DAY, memory("I quit", T0 + DAY))
    assert values(None, "job") == [] and values(T0, "job") == ["baker"]


def test_a_value_said_out_of_order_ends_where_the_later_one_begins():
    say(lives_in("Oslo"), T0 + 5 * DAY, memory("The user lives in Oslo", T0 + 5 * DAY))
    say(lives_in("Bergen"), T0, memory("The user lives in Bergen", T0))
    assert values(None) == ["Oslo"]
    assert values(T0 + DAY) == ["Bergen"]


def test_two_values_said_at_the_same_instant_both_stay_current_for_review():
    say(lives_in("Rome"), T0, memory("The user lives in Rome", T0))
    say(lives_in("Milan"), T0, memory("The user lives in Milan", T0))
    assert values(None) == ["Milan", "Rome"]


def test_entities_are_found_by_name_in_any_case_or_named_after_their_role():
    wife = entity_node(user_id=USER_ID, subject=Subject(role="wife", kind="person"))
    named = entity_node(user_id=USER_ID, subject=Subject(name="Ana", role="wife", kind="person"))
    assert named.pk == wife.pk and named.name == "Ana"
    assert entity_node(user_id=USER_ID, subject=Subject(name="ana", kind="person")).pk == wife.pk
    assert entity_node(user_id=USER_ID, subject=Subject(role="wife", kind="person")).pk == wife.pk
    assert entity_node(user_id=USER_ID, subject=USER).kind == EntityKind.USER
    assert GraphNode.objects.filter(user_id=USER_ID).count() == 2
    # Another end user's world is another graph.
    other = entity_node(user_id="graph:bob", subject=Subject(name="Ana", kind="person"))
    assert other.pk != wife.pk


def test_a_first_name_alone_is_the_one_person_of_that_first_name():
    def node(name: str) -> GraphNode:
        return entity_node(user_id=USER_ID, subject=Subject(name=name, kind="person"))

    def node_as(name: str, role: str) -> GraphNode:
        return entity_node(user_id=USER_ID, subject=Subject(name=name, role=role, kind="person"))

    dana = node_as("Dana Koh", "manager")
    assert node("Dana").pk == dana.pk
    node("Ray Park")
    node("Ray Sato")
    # Of another role: someone else
    assert node_as("Dana", "sister").pk != dana.pk
    # Two of that first name: neither is taken for the other
    assert node("Ray").name == "Ray"
    # Nor a look-alike
    assert node("Dan").name == "Dan"


def test_an_edge_is_history_its_value_cannot_be_rewritten_nor_the_row_deleted():
    say(Statement(MARK, "job", "lawyer", single=True), T0, memory("Mark is a lawyer", T0))
    edge = GraphEdge.objects.get(relation="job")
    with pytest.raises(ProgrammingError, match="Cannot update rows"), transaction.atomic():
        GraphEdge.objects.filter(pk=edge.pk).update(object_value="doctor")
    with pytest.raises(ProgrammingError, match="Cannot delete rows"), transaction.atomic():
        GraphEdge.objects.filter(pk=edge.pk).delete()
    with pytest.raises(IntegrityError), transaction.atomic():
        GraphEdge.objects.filter(pk=edge.pk).update(invalid_at=T0 - DAY)  # before it held
    GraphEdge.objects.filter(pk=edge.pk).update(invalid_at=T0 + DAY, expired_at=T0 + DAY)


def test_current_attributes_name_the_entity_and_its_value_most_recent_first():
    say(Statement(MARK, "job", "lawyer", single=True), T0, memory("Mark is a lawyer", T0))
    say(lives_in("Denver"), T0 + DAY, memory("The user lives in Denver", T0 + DAY))
    assert [(a.entity, a.relation, a.value) for a in current_attributes(user_id=USER_ID)] == [
        ("the user", "lives in", "Denver"),
        ("Mark (the user's brother)", "job", "lawyer"),
    ]
    assert [a.value for a in current_attributes(user_id=USER_ID, as_of=T0)] == ["lawyer"]


def test_the_question_rules_read_the_user_s_entities_as_the_orm_does():
    """Read by a statement of their own on psycopg's cursor (every recall asks): the same
    entities, in the model's order, every field as the ORM loads it."""
    for kind, name, role, aliases in [
        (EntityKind.USER, "", "", ["Ruth"]),
        (EntityKind.PERSON, "Mark", "brother", ["Marky"]),
        (EntityKind.PET, "Luna", "dog", []),
        (EntityKind.PLACE, "Paris, Texas", "", []),
        (EntityKind.PERSON, "", "wife", []),
    ]:
        GraphNode.objects.create(
            user_id="nodes:1", kind=kind, name=name, role=role, aliases=aliases
        )
    GraphNode.objects.create(user_id="nodes:2", kind=EntityKind.PERSON, name="Mike")
    columns = [field.attname for field in GraphNode._meta.concrete_fields]

    def rows(nodes) -> list[tuple]:
        return [tuple(getattr(node, column) for column in columns) for node in nodes]

    read = asked(user_id="nodes:1", query="What does Mark do?", as_of=None).nodes
    assert rows(read) == rows(GraphNode.objects.filter(user_id="nodes:1"))
    # By kind, then name: the wife, unnamed, before Mark.
    assert [node.name or node.role or node.kind for node in read] == [
        "wife",
        "Mark",
        "Luna",
        "Paris, Texas",
        "user",
    ]


def test_an_end_said_before_the_value_began_does_not_close_it():
    # An import out of order: "no longer vegetarian" (day 0) arrives after "vegetarian" (day 10).
    say(
        Statement(USER, "diet", "vegetarian", single=True),
        T0 + 10 * DAY,
        memory("The user is vegetarian", T0 + 10 * DAY),
    )
    change = say(
        Statement(USER, "diet", "vegetarian", single=True, ended=True),
        T0,
        memory("The user is no longer vegetarian", T0),
    )
    assert change.closed == []
    edge = GraphEdge.objects.get(user_id=USER_ID, relation="diet")
    assert (edge.invalid_at, edge.expired_at) == (None, None)
    assert values(None, "diet") == ["vegetarian"]


def test_an_entity_spoken_of_in_an_older_message_imported_later_is_known_from_then():
    say(lives_in("Denver"), T0 + 10 * DAY, memory("The user lives in Denver", T0 + 10 * DAY))
    say(lives_in("Austin"), T0, memory("The user lives in Austin", T0))
    me = GraphNode.objects.get(user_id=USER_ID, kind=EntityKind.USER)
    assert me.created_at == T0
    # Later news of a known entity does not move it forward.
    say(lives_in("Boston"), T0 + 20 * DAY, memory("The user lives in Boston", T0 + 20 * DAY))
    assert GraphNode.objects.get(pk=me.pk).created_at == T0
