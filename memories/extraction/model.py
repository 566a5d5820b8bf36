"""What an extractor returns: `Extraction`s, and the error it raises when it cannot answer."""

from dataclasses import dataclass
from typing import Literal, Protocol

from memories.statements import USER, Statement, Subject


@dataclass(frozen=True)
class Extraction:
    action: Literal["remember", "forget", "sensitive"]
    content: str = ""
    importance: float = 0.5
    slot: str | None = None
    # `forget`: the words naming what to forget ("my home address"; memories/forgetting/), and
    # the user's words that asked, verbatim (the sentence stored as "[forget request]").
    topic: str = ""
    request: str = ""
    # `sensitive` (the LLM extractor only): a secret the rules missed, verbatim, and its kind
    # (memories/redaction.py); it is redacted like the rules' finds.
    kind: str = ""
    # `remember`: whom the fact is about (the user, or a person, pet, place… the message
    # names: "The user's brother Mark is a lawyer in New York"), and the attribute values it
    # states (memories/statements/). A fact about another subject has no slot.
    subject: Subject = USER
    statements: tuple[Statement, ...] = ()


class ExtractionError(Exception):
    """The extractor could not answer; the message is kept, marked `failed`."""


class Extractor(Protocol):
    def extract(self, text: str, *, replying_to: str = "") -> list[Extraction]: ...
