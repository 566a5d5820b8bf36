"""Who and what a message or a question is about: subjects, and the attribute values said of
them (docs/graph.md).

A message names subjects (the user; people, pets, places, organisations and things, by name
or by their relation to the user: "my brother Mark", "my wife", "Whiskers") and states values
of their attributes ("Mark" · job · "lawyer"; the user · lives in · "Denver"). The memory
graph (memories/graph/) keeps them as entities and edges; recall reads a question the same
way to know whose value is asked for.

Attributes are an open vocabulary: `attribute_key` normalises a phrase ("favourite programming
language", "favorite language" → "favorite language"; "home city", "lives in" → "lives in").

- `message_read(text)`: the subjects, one fact a subject, and the values a user message
  states (memories/statements/message.py, english*.py, chinese*.py).
- `question_read(text)`: whose value a recall query asks for, which attribute, the words
  naming what is asked (questions.py); `asks_about_the_past(text)`: whether it asks what held
  before, or how something changed (`asks_what_held_before(text)`: in so many words, not by
  its tense alone); `asks_about_the_present(text)`: whether it says it asks what holds now
  (tense.py).
- `names_in(text, names)`, `answers_focus(question, text)` and
  `speaks_to_attribute(question, text)`: for recall, which entities a memory names, whether
  it says anything about what is asked, and whether it speaks to the asked attribute in that
  attribute's words (focus.py).
"""

from memories.statements.focus import answers_focus, attributes_of_another, speaks_to_attribute
from memories.statements.keys import attribute_key, relation_attribute, single_valued
from memories.statements.message import message_read
from memories.statements.model import (
    USER,
    EntityKind,
    MessageReading,
    QuestionReading,
    Statement,
    Subject,
    SubjectFact,
)
from memories.statements.questions import names_in, question_read
from memories.statements.tense import (
    asks_about_the_past,
    asks_about_the_present,
    asks_what_held_before,
)

__all__ = [
    "USER",
    "EntityKind",
    "MessageReading",
    "QuestionReading",
    "Statement",
    "Subject",
    "SubjectFact",
    "answers_focus",
    "asks_about_the_past",
    "asks_about_the_present",
    "asks_what_held_before",
    "attribute_key",
    "attributes_of_another",
    "message_read",
    "names_in",
    "question_read",
    "relation_attribute",
    "single_valued",
    "speaks_to_attribute",
]
