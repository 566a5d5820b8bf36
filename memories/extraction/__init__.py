"""Memories from conversation: what a user message says that is worth keeping.

An extractor turns one user message (and the assistant turn it answers, for context) into
`Extraction`s:
- `remember`: a fact about the user, written in the third person ("The user lives in
  Hangzhou", "用户住在杭州"). A `slot` (e.g. `profile:home_city`) marks facts of which a person
  holds one value at a time: a new value for the slot supersedes the current one ("I moved to
  Austin", "Correction: I'm a product manager now", "不对，我是产品经理"), so the old fact stays
  in history and leaves recall. One sentence may state several facts, each in its own slot or
  none ("I live in Shanghai with my wife and daughter": the city, and who the user lives with).
- `forget`: the user asks to forget something ("please forget my address", "forget that I love
  spicy food"): the current memories in that slot, or about the topic, are soft-deleted. A
  forget request is never a fact.

A `remember` item names its subject (the user, or a person, pet, place… the message speaks
of) and carries the attribute values it states (memories/statements/): a message about
several subjects gives one fact each ("The user's brother Mark is a lawyer in New York",
no slot), and every value the message states is carried by exactly one fact — a rule's,
or one written for it ("The user is no longer vegetarian", slotted by its attribute when
it holds one value at a time).

Events, plans and small talk are not extracted: the turn itself is kept as an episode in the
user's own words (`episode_content`), unless it carries no content (`content_free`).

`RuleBasedExtractor` is the offline default (English and Chinese patterns: rule_based.py,
rules.py); `LLMExtractor` asks an OpenAI-compatible chat endpoint for the same structure
(llm.py). `extractor()` is the one the EXTRACTOR setting names.
"""

from functools import cache

from django.conf import settings

from core.openai_compat import openai_settings
from memories.extraction.episodes import EPISODE, content_free, episode_content, only_asks
from memories.extraction.llm import LLMExtractor
from memories.extraction.model import Extraction, ExtractionError, Extractor
from memories.extraction.rule_based import RuleBasedExtractor, forget_requests

__all__ = [
    "EPISODE",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "LLMExtractor",
    "RuleBasedExtractor",
    "content_free",
    "episode_content",
    "extractor",
    "forget_requests",
    "only_asks",
]


@cache
def extractor() -> Extractor:
    if settings.EXTRACTOR == "llm":
        return LLMExtractor(**openai_settings("LLM"))
    return RuleBasedExtractor()
