"""The offline extractor: the rules' facts about the user (memories/extraction/rules.py),
sentence by sentence, each carrying the values it states (memories/statements/); a fact for
each other subject the message speaks of, and one for each value of the user's no rule wrote;
and the forget requests (memories/forgetting/asks.py)."""

import re
from dataclasses import replace

from memories.extraction.model import Extraction
from memories.extraction.rules import RULES, Rule, rule_fact
from memories.forgetting.asks import forget_asks
from memories.sentences import sentence_spans, sentences
from memories.statements import USER, MessageReading, Statement, message_read, single_valued
from memories.statements.mood import code_left_out, stated
from memories.statements.places import (
    holds_value,
    place_asked_within,
    place_within,
    said_within,
)
from memories.statements.reading import clean


def forget_requests(text: str) -> list[Extraction]:
    """The forget requests the rules find in `text`, each with the sentence that asks."""
    return [
        Extraction("forget", topic=ask.topic, request=text[ask.start : ask.end])
        for ask in forget_asks(text)
    ]


class RuleBasedExtractor:
    """The rules' facts about the user, sentence by sentence, each carrying the values it
    states; one fact for each other subject the message speaks of ("The user's brother Mark
    is a lawyer in New York"); and a fact for each value of the user's no rule wrote ("The
    user is no longer vegetarian"). Every value the message states (memories/statements/) is
    carried by exactly one fact."""

    def extract(self, text: str, *, replying_to: str = "") -> list[Extraction]:
        # A sentence asking to forget states no fact (forget_asks places each on a sentence);
        # nor does code, a question, a supposition or another's words (memories/statements/mood.py).
        text = code_left_out(text)
        forgets = {forget.request: forget for forget in forget_requests(text)}
        spans = [text[start:end] for start, end in sentence_spans(text)]
        said = {span: stated(span) for span in spans if span not in forgets}
        reading = message_read("\n".join(said.values()))
        written = _Written(reading)
        for piece in spans:
            if (forget := forgets.get(piece)) is not None:
                written.add(forget)
                written.number += 1
                continue
            for sentence in sentences(said[piece]):
                written.at[sentence] = written.number
                for rule, match, fact in self._rule_facts(sentence):
                    written.add(fact, statements=written.rule_statements(rule, match, sentence))
                    written.covered.add(sentence)
                written.number += 1
        written.subject_facts()
        written.user_values()
        extractions = written.extractions()
        if place := place_asked_within(replying_to):
            extractions = [_placed_within(extraction, place) for extraction in extractions]
        return extractions

    def _rule_facts(self, sentence: str) -> list[tuple[Rule, re.Match[str], Extraction]]:
        found: list[tuple[int, Rule, re.Match[str], Extraction]] = []
        slots: set[str] = set()
        for rule in RULES:
            for match in rule.pattern.finditer(sentence):
                fact = rule_fact(rule, match, sentence)
                if fact.slot in slots:
                    continue  # one value a slot a sentence: the first rule's
                if fact.slot:
                    slots.add(fact.slot)
                found.append((match.start(), rule, match, fact))
        found.sort(key=lambda entry: entry[0])  # stable: same start keeps the rules' order
        return [(rule, match, fact) for _, rule, match, fact in found]


def _placed_within(extraction: Extraction, place: str) -> Extraction:
    """Where the user lives, said in answer to where in `place` they live: within it
    (memories/statements/places.py)."""
    content, statements = extraction.content, []
    if not said_within(content):
        return extraction
    for statement in extraction.statements:
        value = statement.value
        if (
            statement.attribute == "lives in"
            and statement.subject.is_user
            and not statement.ended
            and value
            and value in content
            and not holds_value(value, place)
            and not holds_value(place, value)
        ):
            whole = place_within(value, place)
            content = content.replace(value, whole, 1)
            entity = statement.value_entity
            statement = replace(
                statement,
                value=whole,
                value_entity=None if entity is None else replace(entity, name=whole),
            )
        statements.append(statement)
    return replace(extraction, content=content, statements=tuple(statements))


# Importance of a fact about another subject, and of a value of the user's no rule wrote.
SUBJECT_FACT_IMPORTANCE = 0.7
USER_VALUE_IMPORTANCE = 0.7

# The slots of the user's values that rules also write; any other single value of the
# user's is slotted by its attribute ("profile:favorite_language", "profile:diet"), so a new
# value supersedes the fact of the old one.
ATTRIBUTE_SLOTS = {
    "name": "profile:name",
    "lives in": "profile:home_city",
    "lives with": "profile:household",
    "address": "profile:address",
    "phone": "profile:phone",
    "email": "profile:email",
    "birthday": "profile:birthday",
    "job": "profile:job",
    "works at": "profile:job",
    "deadline": "plan:deadline",
}

# A rule's value when the statements missed it: (attribute, the groups that may hold it).
RULE_VALUES = {
    "profile:name": (("name", ("name", "name2")),),
    "profile:home_city": (("lives in", ("city", "city2", "city3")),),
    "profile:household": (("lives with", ("who",)),),
    "profile:address": (("address", ("address",)),),
    "profile:phone": (("phone", ("phone",)),),
    "profile:email": (("email", ("email",)),),
    "profile:birthday": (("birthday", ("birthday",)),),
    "profile:job": (("job", ("role",)), ("works at", ("org",))),
}


def value_slot(statements: tuple[Statement, ...] | list[Statement]) -> str | None:
    """The slot of a fact stating the user's values: one single-valued attribute's (both of
    job and works at are "profile:job"); None for many values, another subject's, or more
    than one slot."""
    if not statements or not all(s.single and s.subject.is_user for s in statements):
        return None
    slots = {
        ATTRIBUTE_SLOTS.get(s.attribute, "profile:" + s.attribute.replace(" ", "_"))
        for s in statements
    }
    return slots.pop() if len(slots) == 1 else None


def _values(extraction: Extraction) -> frozenset[tuple[str, str]]:
    return frozenset((s.attribute, s.value.casefold()) for s in extraction.statements)


class _Written:
    """The extractions of one message, in the order said, and which statements they carry."""

    def __init__(self, reading: MessageReading) -> None:
        self.reading = reading
        self.number = 0  # the sentence being read
        self.at: dict[str, int] = {}  # a sentence's number
        self.covered: set[str] = set()  # sentences a rule wrote a fact from
        self.carried: set[int] = set()  # ids of the statements carried
        self.written: list[tuple[int, Extraction]] = []
        self.added: set[int] = set()  # ids of the facts of values no rule wrote
        self.user_statements: dict[str, list[Statement]] = {}
        for fact in reading.user_clauses:
            for sentence in fact.said:
                self.user_statements.setdefault(sentence, []).extend(fact.statements)

    def add(self, extraction: Extraction, *, statements=(), number: int | None = None) -> None:
        self.carried.update(id(s) for s in statements)
        if statements:
            extraction = replace(extraction, statements=tuple(statements))
        self.written.append((self.number if number is None else number, extraction))

    def rule_statements(self, rule: Rule, match: re.Match[str], sentence: str) -> list[Statement]:
        found = [
            s
            for s in self.user_statements.get(sentence, ())
            if id(s) not in self.carried and s.subject.is_user and s.attribute in rule.attributes
        ]
        if found:
            return found
        fallback = []
        for attribute, groups in RULE_VALUES.get(rule.slot or "", ()):
            value = next((match.groupdict().get(g) for g in groups if match.groupdict().get(g)), "")
            value = re.sub(r"^\s*(?:at|for|in)\s+", "", value or "", flags=re.I)
            if value := clean(value):
                fallback.append(Statement(USER, attribute, value, single_valued(attribute)))
        return fallback

    def _number(self, said: tuple[str, ...], *, last: bool = False) -> int:
        numbers = [self.at[s] for s in said if s in self.at] or [self.number]
        return max(numbers) if last else min(numbers)

    def subject_facts(self) -> None:
        contents = {e.content for _, e in self.written}
        for fact in self.reading.facts:
            if not fact.subject.is_user:
                self.add(
                    Extraction(
                        "remember", fact.content, SUBJECT_FACT_IMPORTANCE, subject=fact.subject
                    ),
                    statements=fact.statements,
                    number=self._number(fact.said),
                )
                continue
            # The user's part of a message about several subjects, unless the rules wrote it;
            # like every subject's fact, slotless (the graph's edges say what it changed).
            left = [s for s in fact.statements if id(s) not in self.carried]
            if fact.content in contents or (not left and all(s in self.covered for s in fact.said)):
                continue
            self.add(
                Extraction("remember", fact.content, USER_VALUE_IMPORTANCE),
                statements=left,
                number=self._number(fact.said),
            )

    def user_values(self) -> None:
        """A fact for each clause of the user's whose values no fact carries yet."""
        added: list[tuple[int, Extraction]] = []
        for fact in self.reading.user_clauses:
            left = [s for s in fact.statements if id(s) not in self.carried]
            if not left:
                continue
            self.carried.update(id(s) for s in left)
            slot = value_slot(left)
            extraction = Extraction(
                "remember", fact.content, USER_VALUE_IMPORTANCE, slot, statements=tuple(left)
            )
            added.append((self._number(fact.said, last=True), extraction))
        self.added = {id(e) for _, e in added}
        self.written += added

    def extractions(self) -> list[Extraction]:
        merged: dict[str, int] = {}
        result: list[Extraction] = []
        ordered = [e for _, e in sorted(self.written, key=lambda pair: pair[0])]
        # One value a slot a message, the last, in the fullest words a rule said it in: its
        # other rule facts (a pasted list of cities) are no versions of their own; a fact this
        # extractor added for an end said before the new value ("I left Freightly. I'm a staff
        # engineer at Lumen Pay now") stays a fact of its own, slotless.
        last_of_slot = {e.slot: i for i, e in enumerate(ordered) if e.slot}
        kept_of_slot = {
            slot: next(
                i
                for i, e in enumerate(ordered)
                if e.slot == slot
                and (
                    i == last or (id(e) not in self.added and _values(e) >= _values(ordered[last]))
                )
            )
            for slot, last in last_of_slot.items()
        }
        ordered = [
            replace(e, slot=None)
            if id(e) in self.added and e.slot and last_of_slot[e.slot] != i
            else e
            for i, e in enumerate(ordered)
            if not (e.slot and id(e) not in self.added and kept_of_slot[e.slot] != i)
        ]
        for extraction in ordered:
            if extraction.action == "remember" and extraction.content in merged:
                at = merged[extraction.content]  # the same fact twice: one, with both's values
                result[at] = replace(
                    result[at], statements=result[at].statements + extraction.statements
                )
                continue
            if extraction.action == "remember":
                merged[extraction.content] = len(result)
            result.append(extraction)
        return result
