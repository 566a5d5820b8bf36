"""What a reading returns: subjects, their attribute values, facts retold about them, and
what a question asks."""

from dataclasses import dataclass, field
from typing import Literal

EntityKind = Literal["user", "person", "pet", "place", "organisation", "thing"]


@dataclass(frozen=True)
class Subject:
    """Who or what something is said about. The user is `Subject()`."""

    name: str = ""  # as said: "Mark", "Whiskers", "Paris, Texas"; "" when unnamed or the user
    role: str = ""  # relation to the user, singular: "brother", "wife", "friend", "cat"
    kind: EntityKind = "user"

    @property
    def is_user(self) -> bool:
        return self.kind == "user"


USER = Subject()


@dataclass(frozen=True)
class Statement:
    """One attribute value of a subject, as said."""

    subject: Subject
    attribute: str  # attribute_key(...) of the phrase: "lives in", "job", "favorite language"
    value: str  # as said: "Denver", "a lawyer", "Rust", "555-0202"
    single: bool  # one value at a time: a new value invalidates the old one
    # The value stopped holding, no successor said ("no longer vegetarian"); with value ""
    # whatever value held stopped ("I quit my job", "我辞职了").
    ended: bool = False
    # The value is itself an entity (a pet named Luna, a brother named Mark, the place
    # "Denver", the organisation "Anthropic"): its subject.
    value_entity: Subject | None = None


@dataclass(frozen=True)
class SubjectFact:
    """The sentences of a message about one subject, retold in the third person ("The user's
    brother Mark is a lawyer in New York"), with the values they state."""

    subject: Subject
    content: str
    statements: tuple[Statement, ...] = ()
    # The message's sentences it retells, as memories.sentences.sentences reads them (the
    # extractor matches them with the sentences its rules read).
    said: tuple[str, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class MessageReading:
    subjects: tuple[Subject, ...]  # every subject the message mentions, in order, the user too
    facts: tuple[SubjectFact, ...]  # one a subject, when the message is about another than
    # the user or about several
    statements: tuple[Statement, ...]  # every value stated, about any subject
    # Each clause of the user's own that states a value, retold on its own ("The user is
    # no longer vegetarian"), with its statements: the facts the extractor writes for the
    # values its rules did not (also when `facts` is empty).
    user_clauses: tuple[SubjectFact, ...] = ()


@dataclass(frozen=True)
class QuestionReading:
    subject: Subject  # whose value is asked for (USER when none other is named)
    names: tuple[str, ...] = ()  # entity names the question uses, as written
    attribute: str | None = None  # attribute_key of what is asked for, when it is a lookup
    focus: tuple[str, ...] = field(default=())  # the words naming what is asked ("salary")
    count: bool = False  # "how many / how old / how much / 几 / 多少": a number answers it
    # Every attribute asked, in order ("What does Mark do and where does he live?": "job",
    # "lives in"); `attribute` is set only when there is exactly one.
    attributes: tuple[str, ...] = ()
    closed: bool = False  # a yes-or-no question ("Does the user play golf?"), `focus` its object
    # An either-or question's alternatives ("Is Toffee male or female?", "公的还是母的"): a memory
    # saying one of them answers it.
    choices: tuple[str, ...] = ()
