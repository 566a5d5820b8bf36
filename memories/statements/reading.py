"""What the readers of one message share: its clauses, the subjects met so far (by name and
by role, for "she" and "他"), and how a clause says a value."""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memories.statements.keys import attribute_key, relation_attribute, single_valued
from memories.statements.model import USER, Statement, Subject
from memories.statements.words import SINGLE_RELATIONS


@dataclass(eq=False)
class Clause:
    """One clause of a sentence: the words about one subject."""

    sentence: str  # the sentence as memories.sentences.sentences reads it
    index: int  # which sentence of the message
    text: str  # the clause's words
    chinese: bool
    start: int = 0  # where they start in `cleaned`
    cleaned: str = ""  # the sentence without parentheses, as read
    subject: Subject | None = None
    # Where the words naming the subject stand in `text` ((0, 0) when unsaid) and whether
    # they are a pronoun or a bare name (retold with who it is, in a fact's first clause).
    mention: tuple[int, int] = (0, 0)
    pronoun: bool = False
    possessive: bool = False  # "my wife's car is…": the attribute follows the mention
    unknown: bool = False  # a bare name met nowhere else: its subject only if it states a value
    tentative: Subject | None = None  # that name, when this clause stated nothing of it
    introduced: Subject | None = None  # a pet or person met in passing ("养了一只柴犬叫芝麻")
    inherited: bool = False  # its subject is the clause before's (Chinese leaves it unsaid)
    before: "Clause | None" = None  # the clause before it in the sentence
    naming: "Clause | None" = None  # "Her name is Mochi", said after it of what it met
    implicit: bool = False  # the user's, unsaid ("Just started '1984'", "刚搬到成都")
    continues: bool = False  # follows the clause before it in the same sentence
    statements: list[Statement] = field(default_factory=list)
    # The clause that said "I got a new phone number" when this one says "It's 555-0202".
    asked_in: "Clause | None" = None


class Subjects:
    """The subjects of one message: who is who, and who "she" is."""

    def __init__(self) -> None:
        self.order: list[Subject] = []  # every subject, in the order first mentioned
        self.named: dict[str, Subject] = {}
        self.by_role: dict[str, Subject] = {}
        self.gender: dict[Subject, str] = {}
        self.said_role: dict[
            Subject, str
        ] = {}  # the words naming the role ("其他朋友", "older brother")
        self.related: set[Subject] = set()  # the user's relation to it is stated already
        self.places: set[str] = set()
        self.pets_talked = False  # the message speaks of animals
        self.pending: tuple[Subject, str, Clause] | None = None
        self.activity: dict[Subject, str] = {}  # "reading" after "I'm reading…"
        self.last_value: dict[tuple[Subject, str], str] = {}

    def add(self, subject: Subject) -> Subject:
        if subject not in self.order:
            self.order.append(subject)
        return subject

    def person(
        self, name: str, role: str = "", kind: str = "person", *, gender: str = "", said: str = ""
    ) -> Subject:
        """The subject named `name` (or, unnamed, the one with `role`), made when new."""
        if name and name in self.named:
            return self.named[name]
        if not name and role in self.by_role:
            return self.by_role[role]
        subject = Subject(name=name, role=role, kind=kind)  # type: ignore[arg-type]
        if name:
            self.named[name] = subject
        if role:
            self.by_role[role] = subject
        if gender:
            self.gender[subject] = gender
        if said:
            self.said_role[subject] = said
        return subject

    def known(self, name: str) -> Subject | None:
        return self.named.get(name)

    def answered(self, subject: Subject, attribute: str) -> None:
        """The value awaited (`pending`) was said: it is awaited no longer."""
        if self.pending and self.pending[:2] == (subject, attribute):
            self.pending = None

    def resolve(self, pronoun: str) -> Subject | None:
        """The last named (else the last) person or pet mentioned that `pronoun` may stand
        for: "she" not for a brother, "它" for a pet."""
        gender = {"he": "m", "him": "m", "his": "m", "他": "m", "she": "f", "her": "f", "她": "f"}
        wanted = gender.get(pronoun.lower(), "")
        pets_only = pronoun in ("它", "它们")
        candidates = [
            s
            for s in self.order
            if s.kind in ("person", "pet")
            and (not pets_only or s.kind == "pet")
            and (not wanted or self.gender.get(s, wanted) == wanted)
        ]
        if wanted:  # who is known to be "she" before who might be
            sure = [s for s in candidates if self.gender.get(s) == wanted]
            candidates = sure or candidates
        named = [s for s in candidates if s.name]
        found = (named or candidates or [None])[-1]
        if found is not None and wanted:
            self.gender.setdefault(found, wanted)  # "Pip died. He was old…": Pip is "he"
        return found


def mentioned(
    clause: Clause, subject: Subject | None, start: int, end: int, subjects: Subjects
) -> str:
    """The clause names `subject` at `start:end` of its text; returns the words after it (its
    predicate). A bare name met nowhere else is a subject only once it states a value."""
    clause.subject = subject
    clause.mention = (start, end)
    if subject is not None and not clause.unknown:
        subjects.add(subject)
    return clause.text[end:]


def after_lead(text: str, lead: re.Pattern[str]) -> tuple[int, str]:
    """Where a clause's own words start after what `lead` matches at its start (a connective
    or a time: "so", "yesterday", "但是"), and those words."""
    m = lead.match(text)
    start = m.end() if m else 0
    return start, text[start:]


# --- Values ----------------------------------------------------------------------------------

TRAILING = re.compile(
    r"(?:\s+(?:now|too|also|again|already|anymore|any more|as well|right now|these days"
    r"|currently|fluently|though|lol|haha|for now|at the moment|at this point|yet|today"
    r"|officially|finally))+$"
    r"|[\s.,;:!?…]+$",
    re.I,
)
QUOTES = re.compile(r"^(?:'(.+)'|\"(.+)\"|“(.+)”|‘(.+)’|《(.+)》)$")
ZH_TRAILING = re.compile(r"[了啦呢吧啊呀哦哈嘛的]+$|[，。！？；、\s]+$")


def clean(value: str) -> str:
    """A value as said, without what only frames it: quotes, trailing "now" or "了"."""
    value = " ".join(value.split())
    for _ in range(3):
        before = value
        value = TRAILING.sub("", value).strip()
        if (quoted := QUOTES.match(value)) is not None:
            value = next(g for g in quoted.groups() if g)
        if value and re.search(r"[\u4e00-\u9fff]$", value):
            value = ZH_TRAILING.sub("", value) or value
        if value == before:
            break
    return value


def relation(subject: Subject) -> Statement:
    """The user's relation to a person or pet ("brother" · Mark, "pet" · Luna)."""
    attribute = "pet" if subject.kind == "pet" else relation_attribute(subject.role)
    return Statement(
        USER,
        attribute,
        subject.name or subject.role,
        single=attribute in SINGLE_RELATIONS or attribute == "partner",
        value_entity=subject,
    )


class Context:
    """A clause being read: says values of its subject (or another)."""

    def __init__(self, subjects: Subjects, clause: Clause) -> None:
        self.subjects = subjects
        self.clause = clause
        self.taken: list[tuple[int, int]] = []

    @property
    def subject(self) -> Subject:
        return self.clause.subject or USER

    def free(self, match: re.Match[str], offset: int = 0) -> bool:
        """Whether a match overlaps none taken by an earlier, more specific pattern."""
        start, end = match.start() + offset, match.end() + offset
        return all(end <= s or start >= e for s, e in self.taken)

    def take(self, match: re.Match[str], offset: int = 0) -> None:
        self.taken.append((match.start() + offset, match.end() + offset))

    def say(
        self,
        attribute: str,
        value: str,
        *,
        subject: Subject | None = None,
        ended: bool = False,
        entity: Subject | None = None,
        plural: bool = False,
        single: bool | None = None,
    ) -> Statement | None:
        subject = subject or self.subject
        value = clean(value or "")
        if not value and not ended:
            return None
        key = attribute_key(attribute)
        statement = Statement(
            subject,
            key,
            value,
            single=single_valued(key, plural=plural) if single is None else single,
            ended=ended,
            value_entity=entity,
        )
        if statement not in self.clause.statements:
            self.clause.statements.append(statement)
            if value and not ended:
                self.subjects.last_value[(subject, key)] = value
        if entity is not None:
            self.subjects.add(entity)
        return statement

    def entity(self, value: str, kind: str) -> Subject:
        """The subject a value names (a place, an organisation): met before, or made now."""
        if kind == "place":
            self.subjects.places.add(value)
        return self.subjects.known(value) or self.subjects.person(value, "", kind)

    def relation_ended(self, subject: Subject, attribute: str) -> None:
        """The user's relation to `subject` ended: it died, left, or is theirs no longer."""
        self.say(attribute, subject.name or subject.role, subject=USER, ended=True, entity=subject)
        self.subjects.related.add(subject)

    def relate(self, subject: Subject) -> None:
        """Say the user's relation to `subject`, once a message."""
        self.subjects.add(subject)
        if (
            subject in self.subjects.related
            or subject.is_user
            or subject.kind
            not in (
                "person",
                "pet",
            )
        ):
            return
        if not subject.name:
            return
        self.subjects.related.add(subject)
        statement = relation(subject)
        if statement not in self.clause.statements:
            self.clause.statements.append(statement)


# --- Handlers both languages use -------------------------------------------------------------

# What a pattern's match is read by (english_patterns.py, chinese_patterns.py): it says the
# values the match states; True takes the match's words, so no later pattern reads them again.
Handler = Callable[[Context, re.Match[str], str], bool]


def stating(
    attribute: str, *, value: str | None = None, lower: bool = False, ended: bool = False
) -> Handler:
    """A handler that says `attribute`: the match's value (its group "v", in lower case when
    `lower`), or a fixed `value` ("retired"); `ended` for patterns that say it stopped."""

    def handler(ctx: Context, m: re.Match[str], rest: str) -> bool:
        said = m["v"] if value is None else value
        ctx.say(attribute, said.lower() if lower else said, ended=ended)
        return True

    return handler


def names_the(role: str) -> Handler:
    """A handler for the person a match names as the user's `role`: "married to Ana" (the
    partner), "I report to Sarah Lee", "我现在向李娜汇报" (the manager)."""

    def handler(ctx: Context, m: re.Match[str], rest: str) -> bool:
        name = m["name"]
        subject = ctx.subjects.known(name) or ctx.subjects.person(name, role, "person")
        ctx.subjects.add(subject)
        ctx.say(role, name, entity=subject)
        ctx.subjects.related.add(subject)
        return True

    return handler


def renamed(ctx: Context, m: re.Match[str], rest: str) -> bool:
    """A new name: of the clause's subject ("Mochi is called Bean now", "橘子现在改名叫团长了"),
    or of the one the match names ("we renamed our cat Mochi to Bean", "我把Lucky改名叫旺财"),
    a thing unless the message knows it (the graph finds it by that name)."""
    subject = ctx.subject
    if name := m.groupdict().get("name"):
        subject = ctx.subjects.known(name) or Subject(name, "", "thing")
    elif ctx.clause.unknown and not subject.role:  # "Facebook was renamed to Meta"
        subject = ctx.clause.subject = Subject(subject.name, "", "thing")
    ctx.say("name", m["v"], subject=subject)
    return True


def pending(ctx: Context, m: re.Match[str], rest: str) -> bool:
    """A new number, email or address: its value when said with it ("got a new number:
    555-0101"), else awaited in the next clause ("…, it's 555-0101", "…，是138…")."""
    if m.groupdict().get("v"):
        ctx.say(m["attr"], m["v"])
    else:
        ctx.subjects.pending = (ctx.subject, attribute_key(m["attr"]), ctx.clause)
    return True


def pending_said(clause: Clause, subjects: Subjects, ctx: Context, value: str) -> bool:
    """The value awaited since "I got a new phone number" / "换了新手机号", if `value` can be
    it: a number holds digits, an email an @."""
    assert subjects.pending is not None
    subject, key, asked = subjects.pending
    if key in ("phone", "work phone") and not re.search(r"\d{3}", value):
        return False
    if key == "email" and "@" not in value:
        return False
    clause.subject = subject
    clause.asked_in = asked
    ctx.say(key, value, subject=subject)
    subjects.pending = None
    return True
