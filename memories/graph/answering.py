"""The question rules: recall's hits, read against the memory graph, so that what an agent gets
is the asked subject's current value, or nothing when nothing is known (docs/graph.md).

1. **Subject** (RECALL_SUBJECT_RULE): when the question is about an entity the graph knows
   ("Mark", "the user's wife", "Whiskers", the user), a memory about other subjects does not
   answer it: a fact about another entity, or an episode whose message gave facts about other
   subjects too (those facts stand in for it). Of a named entity, or of one person by role
   (not the kids, a colleague: `MANY_ROLES`),
   a memory the graph knows no subject of answers only if it names the entity (its name, an
   alias, its first name, its role); the user's own words naming it by name do too, though
   they say something of the user. A name the graph does not hold ("Paris, Texas") still
   rules out memories naming only a look-alike of it ("Paris", "Sarah" for "Sara", "Raj Patel"
   for "Rina Patel", "大表哥" for "小表哥"); a person it holds nothing about is answered only by
   memories naming them among those the graph knows to be about others (the user too, once
   the user's name is known to be another).
2. **Current value** (RECALL_CURRENT_RULE): when it asks for an attribute the graph holds for
   that subject, the facts stating its value (as of the question's instant) come first, and no
   other memory naming a value that no longer holds comes back.
3. **Nothing known** (RECALL_EMPTY_RULE): a lookup ("What is the user's salary?", "How many
   children…") that no held value and no hit answers gets no hits at all; a hit answers only
   if it may be about the asked subject (`_may_answer`).
"""

import re
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Q

from core.db.cursors import psycopg_cursor, row_loader
from core.db.replicas import read_connection
from memories import statements
from memories.extraction import EPISODE
from memories.graph.lookalikes import HAN_NAME, HAN_RUN, names_lookalike
from memories.graph.models import EntityKind, GraphEdge, GraphNode
from memories.graph.selectors import edges_valid_q
from memories.models import Memory, MemoryType
from memories.predicates import as_of_q, current_q
from memories.sentences import latin_bounded, mentions
from memories.statements import QuestionReading
from memories.statements.chinese import OTHERS_OWN
from memories.statements.keys import answering_attributes
from memories.statements.places import still_holds
from memories.statements.words import (
    BASE_ROLES,
    FAMILY_STATES,
    PERSON_PLURALS,
    SINGLE_RELATIONS,
    SPECIES,
    SPECIES_PLURALS,
    ZH_SPECIES,
    ZH_SURNAMES,
    ZH_TITLES,
    is_relation,
    kin_of,
    role_words,
)

# Capitalised words (names) in Latin script, and Chinese names, for the look-alike rule.
SURNAME_TITLED = re.compile(f"([{ZH_SURNAMES}]){ZH_TITLES}")
# Roles that name a group, said of each member in a narrower word ("the user's parents": the
# mother, the father; "kids": a son, a daughter).
GROUP_ROLES = frozenset(
    {"parent", "child", "sibling", "grandparent", "grandchild", "in-law", "cousin", "relative"}
)
# A question of having or keeping an animal ("Does the user have a cat?", "用户养猫吗？").
KEEPING = re.compile(r"养|宠物|\b(?:have|has|own|owns|keep|keeps|pets?|adopt(?:ed)?)\b", re.I)
# Roles one often holds several of, each named on its own ("the kids", "a colleague").
MANY_ROLES = frozenset(
    {"child", "grandchild", "parent", "sibling", "friend", "colleague", "classmate", "teammate"}
    | {"cousin", "neighbor", "roommate"}
)
NAME_FOCUS = frozenset({"name", "full name", "名字", "姓名", "全名"})
OBJECT_KINDS = frozenset({EntityKind.PLACE, EntityKind.ORGANISATION, EntityKind.THING})


@dataclass
class Asked:
    """What a question asks, as the graph at its instant knows it."""

    question: QuestionReading
    nodes: list[GraphNode] = field(default_factory=list)  # the user's entities
    query: str = ""  # as asked
    entity: GraphNode | None = None  # the asked subject, when the graph holds it
    unresolved_names: list[str] = field(default_factory=list)
    user_names: list[str] = field(default_factory=list)  # what the user said they are called
    answer_memory_ids: list[uuid.UUID] = field(default_factory=list)  # the held value's facts
    past_values: list[str] = field(default_factory=list)  # values that no longer hold

    @property
    def held(self) -> bool:
        return bool(self.answer_memory_ids)

    @property
    def user(self) -> GraphNode | None:
        return next((node for node in self.nodes if node.kind == EntityKind.USER), None)


def asked(*, user_id: str, query: str, as_of: datetime | None) -> Asked:
    question = statements.question_read(query)
    nodes = _user_nodes(user_id)
    result = Asked(question, nodes, query=query)
    if not nodes:
        return result
    by_name = {name: node for node in nodes for name in (node.name, *node.aliases) if name}
    named = statements.names_in(query, list(by_name))
    surnamed = {name: _by_surname(nodes, name) for name in question.names if name not in named}
    named |= {node.name for node in surnamed.values() if node is not None}
    result.unresolved_names = [
        name for name in question.names if name not in named and surnamed.get(name) is None
    ]
    if result.unresolved_names:  # only a name the graph does not hold is checked against them
        result.user_names = _user_names(result.user)
    subject = question.subject
    # A place or a thing named beside a person asked by role, or beside the user, is not the
    # one asked about ("Which Perth does the user's gran live in?": the gran; "Does the user
    # live in Toronto?": the user).
    beside = subject.role or (subject.is_user and not subject.name)
    if named and not (beside and all(by_name[name].kind in OBJECT_KINDS for name in named)):
        result.entity = by_name[max(named, key=len)]
    elif subject.role:
        result.entity = _by_role(nodes, role=subject.role, user_id=user_id, as_of=as_of)
    elif subject.is_user:
        result.entity = result.user
    if result.entity is not None:
        for attribute in question.attributes or _focus_held(result.entity, question.focus):
            if attribute == "name" and set(question.focus) - NAME_FOCUS:
                continue  # "用户的咖啡馆叫什么名字？": the café's name, not the user's
            _attribute_read(result, attribute=attribute, as_of=as_of)
    # "the user's dog's name": the values are the user's dogs, unless it was renamed (held)
    renamed = question.attributes and result.held
    if (
        subject.role
        and question.attributes in ((), ("name",))
        and not (question.choices or renamed)
    ):
        _role_read(result, role=subject.role, user_id=user_id, as_of=as_of)
    return result


_NODE_FIELDS = GraphNode._meta.concrete_fields
_USER_NODES_SQL = f"""
    SELECT {", ".join(f'"{field.column}"' for field in _NODE_FIELDS)} FROM graph_nodes
    WHERE user_id = %s ORDER BY kind, name
"""
_load_node = row_loader(GraphNode, _NODE_FIELDS)


def _user_nodes(user_id: str) -> list[GraphNode]:
    """The user's entities, in the model's order. Every recall under the question rules asks
    this: prepared, on psycopg's cursor, since compiling and planning it cost more than running
    it (docs/benchmarks.md, "What the HTTP layer costs")."""
    with psycopg_cursor(read_connection()) as cursor:
        cursor.execute(_USER_NODES_SQL, [user_id], prepare=settings.DATABASE_PREPARED_STATEMENTS)
        rows = cursor.fetchall()
    return [_load_node(row) for row in rows]


def _by_surname(nodes: list[GraphNode], name: str) -> GraphNode | None:
    """The one person of a Chinese surname asked with a title ("汪老师": 汪健), if one."""
    if not (m := SURNAME_TITLED.fullmatch(name)):
        return None
    people = [
        node
        for node in nodes
        if node.kind == EntityKind.PERSON and len(node.name) > 1 and node.name[0] == m[1]
    ]
    return people[0] if len(people) == 1 else None


def _user_names(user: GraphNode | None) -> list[str]:
    if user is None:
        return []
    said = GraphEdge.objects.filter(subject=user, relation="name").values_list(
        "object_value", flat=True
    )
    return [name for name in (user.name, *user.aliases, *said) if name]


def _strangers(asked: Asked, memories: list[Memory]) -> list[str]:
    """The names the question asks about of no one the graph holds, the user included: while
    the user's name is unknown the name asked about may be theirs, unless the user spoke of it
    ("Pepper is the ginger one": no one names themself so); a name beside the one asked about
    is not ("Has the user been to Australia?")."""
    own = asked.user_names
    asked_about = asked.question.subject.name
    return [
        name
        for name in asked.unresolved_names
        if not statements.names_in(name, own)
        and not any(mentions(mine, name) for mine in own)
        and (own or name != asked_about or any(_said_by_user(memory, name) for memory in memories))
    ]


def _said_by_user(memory: Memory, name: str) -> bool:
    """Whether the user's own words in the memory name `name`: a fact (retold from them), or the
    user's turn of an episode."""
    if memory.memory_type == MemoryType.FACT:
        return _writes_name(memory.content, name)
    episode = EPISODE.match(memory.content)
    return episode is not None and _writes_name(episode["words"], name)


def _by_role(
    nodes: list[GraphNode], *, role: str, user_id: str, as_of: datetime | None
) -> GraphNode | None:
    """The one entity holding `role` to the user at the instant (the user's current dog, not the
    one who died), else the one entity of that role."""
    # Kin by order of birth: "the user's sister" is any sister; "妹妹" a younger one, or one
    # said only to be a sister, not an older one.
    base = BASE_ROLES.get(role, role)
    fitting = {role, base} if role != base else {role, *kin_of(role)}
    holding = GraphEdge.objects.filter(
        Q(relation__in=fitting) | Q(object_node__role__in=fitting),
        edges_valid_q(as_of),
        user_id=user_id,
        object_node__isnull=False,
    ).values_list("object_node_id", flat=True)
    ids = set(holding)
    others = set(kin_of(base)) - fitting
    of_role = [node for node in nodes if node.id in ids and node.role not in others] or [
        node for node in nodes if node.role in fitting
    ]
    return of_role[0] if len(of_role) == 1 else None


def _focus_held(entity: GraphNode, focus: tuple[str, ...]) -> list[str]:
    """The attributes the question's words name that the graph keeps for the entity, when no
    question form says which is asked ("What breed is Rolo?", "Rolo是什么品种？")."""
    if not focus:
        return []
    kept = set(GraphEdge.objects.filter(subject=entity).values_list("relation", flat=True))
    return [key for word in focus if (key := statements.attribute_key(word)) in kept]


def _visible(as_of: datetime | None) -> Q:
    return current_q() if as_of is None else as_of_q(as_of)


def _attribute_read(result: Asked, *, attribute: str, as_of: datetime | None) -> None:
    edges = GraphEdge.objects.filter(
        subject=result.entity, relation__in=answering_attributes(attribute)
    ).select_related("object_node")
    _values_read(result, edges=edges, as_of=as_of)


def _role_read(result: Asked, *, role: str, user_id: str, as_of: datetime | None) -> None:
    edges = GraphEdge.objects.filter(
        Q(relation=role) | Q(object_node__role=role), user_id=user_id, subject__kind=EntityKind.USER
    ).select_related("object_node")
    _values_read(result, edges=edges, as_of=as_of)


def _values_read(result: Asked, *, edges, as_of: datetime | None) -> None:
    holding = list(edges.filter(edges_valid_q(as_of)))
    ended = edges.exclude(id__in=[edge.id for edge in holding])
    if as_of is not None:
        ended = ended.filter(valid_at__lte=as_of, created_at__lte=as_of)
    memory_ids = {memory_id for edge in holding for memory_id in edge.memory_ids}
    result.answer_memory_ids += list(
        Memory.objects.filter(
            _visible(as_of), id__in=memory_ids, memory_type=MemoryType.FACT
        ).values_list("id", flat=True)
    )
    current = [edge.value for edge in holding]
    ended = list(ended)
    # Not a value a current one still says: "杭州" of where one lives in "杭州滨江".
    result.past_values += [
        value
        for edge in ended
        if (value := edge.value)
        and not any(still_holds(edge.relation, held, value) for held in current)
    ]
    last_ended = max(
        (edge for edge in ended if edge.invalid_at is not None),
        key=lambda edge: edge.invalid_at,
        default=None,
    )
    if not holding and last_ended is not None:
        # No value holds, one ended: what the user said when it ended ("思域卖了，现在骑电动车
        # 上班") is the latest word on it, often the value since in words no rule reads.
        result.answer_memory_ids += list(
            Memory.objects.filter(
                _visible(as_of),
                user_id=last_ended.user_id,
                valid_at=last_ended.invalid_at,
                memory_type__in=[MemoryType.FACT, MemoryType.EPISODIC],
            )
            .exclude(id__in=last_ended.memory_ids)
            .values_list("id", flat=True)
        )


def _subjects(memory_ids: list[uuid.UUID]) -> dict[uuid.UUID, set[uuid.UUID]]:
    """Each memory's subject entities: a fact's own; an episode's, those of the facts its
    message gave. A fact of the user that only introduces others ("用户有只布偶猫叫Tofu": the
    user's pet, Tofu) is about them."""
    subjects: dict[uuid.UUID, set[uuid.UUID]] = defaultdict(set)
    with read_connection().cursor() as cursor:
        cursor.execute(
            """
            WITH facts AS (
                SELECT m.id AS memory_id, m.id AS fact_id, m.subject_entity_id FROM memories m
                WHERE m.id = ANY(%(ids)s) AND m.subject_entity_id IS NOT NULL
                UNION
                SELECT s.memory_id, f.id, f.subject_entity_id
                FROM memory_sources s
                JOIN memory_sources t ON t.conversation_id = s.conversation_id
                JOIN memories f ON f.id = t.memory_id AND f.memory_type = 'fact'
                WHERE s.memory_id = ANY(%(ids)s) AND f.subject_entity_id IS NOT NULL
            ),
            introduced AS (
                SELECT f.fact_id, array_agg(e.object_node_id) AS others
                FROM (SELECT DISTINCT fact_id, subject_entity_id FROM facts) f
                JOIN graph_nodes n ON n.id = f.subject_entity_id AND n.kind = 'user'
                JOIN graph_edges e ON e.subject_id = n.id AND f.fact_id = ANY(e.memory_ids)
                LEFT JOIN graph_nodes o ON o.id = e.object_node_id
                GROUP BY f.fact_id
                HAVING bool_and(o.kind IN ('person', 'pet'))
            )
            SELECT facts.memory_id, unnest(coalesce(i.others, ARRAY[facts.subject_entity_id]))
            FROM facts LEFT JOIN introduced i ON i.fact_id = facts.fact_id
            """,
            {"ids": memory_ids},
        )
        for memory_id, subject_id in cursor.fetchall():
            subjects[memory_id].add(subject_id)
    return subjects


def _names_entity(text: str, entity: GraphNode) -> bool:
    """Whether `text` names the entity: by its name or an alias (a person's first name alone
    too: "Marco" for "Marco Chan"), or by its role ("my brother", "老婆", "the dog"); not a
    named one by a role many hold ("another coworker" is not Jon Park)."""
    names = [entity.name, *entity.aliases]
    if entity.kind == EntityKind.PERSON:
        names += [name.split()[0] for name in names if " " in name.strip()]
    if statements.names_in(text, names):
        return True
    if entity.name and entity.role in MANY_ROLES:
        return False
    return bool(statements.names_in(text.lower(), role_words(entity.role)))


def _first_name_of(name: str, entity: GraphNode | None) -> bool:
    """Whether `name` is a full name of the person the graph holds by its first word."""
    return (
        entity is not None
        and entity.kind == EntityKind.PERSON
        and " " in name.strip()
        and name.split()[0] == entity.name
    )


# Words asking for one detail of something: answerable only by a memory stating it.
DETAIL_WORDS = frozenset(
    {
        *("name", "title", "brand", "make", "model", "colour", "color", "price", "cost"),
        *("salary", "pay", "income", "age", "number"),
        *("名字", "名称", "品牌", "型号", "颜色", "价格", "工资", "收入", "年龄", "岁数", "号码"),
    }
)


def asks_detail(question: QuestionReading) -> bool:
    """A lookup the question rules may answer with nothing: a held attribute ("Where does the
    user live?"), a count ("How many children…"), one detail of a thing ("the title of the
    book", "the brand of the guitar"), or a yes or no about one thing ("Does the user play
    golf?": only a memory about golf answers it). Open questions ("What race is the user
    training for?", "Why…") are left to the relevance floors."""
    return bool(
        question.attributes
        or question.count
        or DETAIL_WORDS.intersection(question.focus)
        or (question.closed and question.focus)
        or question.choices
    )


# Words that speak of someone other than the speaker, who may be the asked subject unnamed.
THIRD_PERSON = re.compile(
    r"\b(?:he|she|him|his|her|hers|they|them|their|it|its)\b|(?<!其)[他她它]", re.I
)


def _may_answer(
    asked: Asked, memory: Memory, *, unnamed: set[uuid.UUID], strangers: list[str]
) -> bool:
    """Whether a kept memory may tell that the asked thing was said: one naming no known subject
    must speak of someone ("他负责数据分析" after "李楠…"), not only of the user; one about a
    name of no one the graph holds, the user included, must name it ("How old is Pepper?"), as
    must one about a thing so named ("the user's Brompton"); and one giving the name of a
    relation the graph knows no one in must name the relation as the user's ("用户的姑姑叫什么
    名字？")."""
    text = memory.content
    if memory.id in unnamed and not THIRD_PERSON.search(text):
        return False
    # The asked person's name when they are one; else one of the names the question gives
    # ("Does the user use Instagram or Twitter?", "What colour is the user's Brompton?").
    subject = asked.question.subject.name
    required = [subject] if subject in strangers else strangers
    if required and not any(_writes_name(text, name) for name in required):
        return False
    role = asked.question.subject.role
    # Kin and pets are named as such ("my aunt Rosa"); a partner or a boss often only through
    # what happened ("张磊跟我求婚了", "I report to Dolores now").
    if (
        asked.entity is None
        and role
        and role not in SINGLE_RELATIONS
        and asked.question.attributes == ("name",)
    ):
        return any(_names_own_relative(text, word) for word in role_words(role))
    return True


def _said_only_in_its_words(word: str, query: str) -> bool:
    """A relative, a family state or, kept, an animal's kind ("kids", "married", "用户养猫吗？"):
    near words in meaning ("the girls", "moved in", "a golden retriever") do not say it. Not
    fish eaten ("用户现在吃鱼吗？")."""
    lower = word.lower()
    if is_relation(word) or lower in PERSON_PLURALS or lower in FAMILY_STATES:
        return True
    animal = lower in SPECIES or lower in SPECIES_PLURALS or word in ZH_SPECIES
    return animal and KEEPING.search(query) is not None


def _names_own_relative(text: str, word: str) -> bool:
    """Whether `text` names the relation `word` as the user's: not "我哥家的闺女", "my brother's
    daughter"."""
    if HAN_RUN.search(word):
        return any(
            not OTHERS_OWN.search(text, 0, m.start()) for m in re.finditer(re.escape(word), text)
        )
    return any(
        not re.search(r"\w['’]\s?s\s+$", text[: m.start()])
        for m in re.finditer(latin_bounded(re.escape(word)), text, re.I)
    )


def _writes_name(text: str, name: str) -> bool:
    """Whether the text names `name`: a Chinese one perhaps spelt out, each of its characters
    written ("王炜" as "王伟，不过是火字旁的炜")."""
    if mentions(text, name):
        return True
    return HAN_NAME.fullmatch(name) is not None and all(character in text for character in name)


@dataclass(frozen=True)
class Ruling:
    """Recall's hits under the question rules: those kept, in order, and the facts stating the
    asked value that recall did not find (they go first)."""

    memory_ids: list[uuid.UUID]
    answers: list[Memory]


def ruling(
    *,
    asked: Asked,
    memories: list[Memory],
    as_of: datetime | None,
    said_by_meaning: Callable[[tuple[str, ...], list[Memory]], bool],
    history: bool = False,
) -> Ruling:
    """`said_by_meaning(words, memories)`: whether one of the memories means what the words
    name, in other words ("alcohol": "a glass of wine with dinner"); `history`: the question
    asks about the past, so the values that no longer hold answer it, first."""
    question = asked.question
    kept = list(memories)
    strangers = _strangers(asked, memories)
    unnamed: set[uuid.UUID] = set()
    set_aside: set[uuid.UUID] = set()
    if settings.RECALL_SUBJECT_RULE:
        # Only an entity the question names ("Mark", "the user's wife"): a question about the
        # user ("Which colleague is picky about coffee?") may be answered by others' facts.
        if asked.entity is not None and asked.entity.kind != EntityKind.USER:
            subjects = _subjects([memory.id for memory in kept])
            allowed = {asked.entity.id}
            with_user = allowed | ({asked.user.id} if asked.user else set())
            kept = [
                memory
                for memory in kept
                if subjects.get(memory.id, allowed) <= allowed
                # The user's words about them that said something of the user too, naming them
                or (
                    memory.memory_type == MemoryType.EPISODIC
                    and asked.entity.id in subjects[memory.id]
                    and subjects[memory.id] <= with_user
                    and asked.entity.name
                    and statements.names_in(memory.content, [asked.entity.name])
                )
            ]
            # A memory of no known subject not naming the entity: set aside for a named entity
            # or one by role (the user's wife, gran; not their kids: those are named one by
            # one); for any, it may not tell alone that the asked thing was said.
            unnamed = {
                memory.id
                for memory in kept
                if memory.id not in subjects and not _names_entity(memory.content, asked.entity)
            }
            if asked.entity.name or asked.entity.role not in MANY_ROLES:
                set_aside = unnamed
        elif asked.entity is not None and asked.held:
            # The user's own value of what is asked is known ("Where does the user live?"): a
            # fact about others ("The user's parents live in Leeds") does not answer it.
            kept = [
                memory
                for memory in kept
                if memory.memory_type != MemoryType.FACT
                or memory.subject_entity_id in (None, asked.entity.id)
            ]
        for name in asked.unresolved_names:
            if _first_name_of(name, asked.entity):
                continue  # "Nadia Costa" of the Nadia the graph holds: her first name is hers
            kept = [memory for memory in kept if not names_lookalike(memory.content, name)]
        if asked.entity is None and question.subject.name in strangers:
            # Someone the graph never held a fact about: a memory the graph knows to be about
            # others (a colleague; the user, once the graph holds the user's name and it is
            # another) answers for them only if it names them. Not on the user's word alone:
            # a speaker the user talks to ("Thanks, Bram!") is spoken of in the memories of
            # what they said to the user.
            subjects = _subjects([memory.id for memory in kept])
            maybe_them = {asked.user.id} if asked.user and not asked.user_names else set()
            kept = [
                memory
                for memory in kept
                if not subjects.get(memory.id)
                or subjects[memory.id] & maybe_them
                or _writes_name(memory.content, question.subject.name)
            ]
        elif (
            asked.entity is None
            and question.subject.role
            and not question.subject.name
            and question.subject.role not in GROUP_ROLES
        ):
            # A relation no one entity holds ("the user's father" of a user who spoke only of
            # their mother; "the user's brother" of two): a memory about others the graph
            # knows in other relations answers only if it names the relation as the user's.
            role = question.subject.role
            kin = {role, *kin_of(role), BASE_ROLES.get(role, role)}
            other_roles = {node.id: node.role for node in asked.nodes if node.role not in kin}
            subjects = _subjects([memory.id for memory in kept])
            words = {word for one in kin for word in role_words(one)}
            user = {asked.user.id} if asked.user else set()
            kept = [
                memory
                for memory in kept
                if not (others := subjects.get(memory.id, set()) - user)
                or not all(other_roles.get(node_id) for node_id in others)
                or any(_names_own_relative(memory.content, word) for word in words)
            ]
    answer_ids = set(asked.answer_memory_ids)

    def names_past_value(memory: Memory) -> bool:
        return any(mentions(memory.content, value) for value in asked.past_values)

    if history:
        answers = []
        kept.sort(key=lambda memory: not names_past_value(memory))
    elif settings.RECALL_CURRENT_RULE:
        kept = [
            memory for memory in kept if memory.id in answer_ids or not names_past_value(memory)
        ]
        found = {memory.id for memory in kept}
        missing = [memory_id for memory_id in asked.answer_memory_ids if memory_id not in found]
        answers = list(Memory.objects.filter(_visible(as_of), id__in=missing)) if missing else []
        kept.sort(key=lambda memory: memory.id not in answer_ids)  # stable: hits' order kept
    else:
        answers = []
    judged = [
        memory
        for memory in kept
        if _may_answer(asked, memory, unnamed=unnamed, strangers=strangers)
    ]
    if (
        settings.RECALL_EMPTY_RULE
        and asks_detail(question)
        and not asked.held
        and not any(statements.answers_focus(question, memory.content) for memory in judged)
        # A yes or no is as often answered in other words ("Does the user drink alcohol?": "a
        # glass of wine with dinner") as in the question's; not a relative, whom near words
        # ("the girls" for "a son") do not say. So is someone's attribute ("What does Ines
        # do?": "she runs the sales team").
        and not (
            question.closed
            and not question.choices
            and not any(_said_only_in_its_words(word, asked.query) for word in question.focus)
            and said_by_meaning(question.focus, judged)
        )
        and not (
            (keys := statements.attributes_of_another(question)) and said_by_meaning(keys, judged)
        )
    ):
        return Ruling([], [])
    # Set aside only now: whether anything is known was judged with those speaking of someone,
    # as one may speak of the subject without naming it ("他负责数据分析" after "李楠…").
    return Ruling([memory.id for memory in kept if memory.id not in set_aside], answers)
