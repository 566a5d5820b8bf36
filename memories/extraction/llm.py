"""The LLM extractor: an OpenAI-compatible chat endpoint asked for the rule-based extractor's
structure (`LLM_PROMPT`), its JSON answer read into `Extraction`s."""

import json

from core.openai_compat import OpenAICompatibleClient, OpenAICompatibleError
from memories.extraction.model import Extraction, ExtractionError
from memories.redaction import KINDS as REDACTION_KINDS
from memories.statements import USER, Statement, Subject, attribute_key, single_valued

SLOTS = (
    "profile:name, profile:home_city, profile:household, profile:address, profile:phone, "
    "profile:email, profile:job, profile:birthday, plan:deadline"
)
LLM_PROMPT = f"""You extract long-term memories about the user from the user's latest message.
The assistant message before it, when there is one, is context only.
Answer with JSON: {{"items": [...]}}, each item one of
  {{"action": "remember", "content": "...", "importance": 0..1, "slot": "<slot>" | null}}
  {{"action": "forget", "topic": "...", "request": "..."}}
  {{"action": "sensitive", "kind": "<kind>", "text": "..."}}
Rules:
- A "remember" item is one fact about the user, written in the third person in the user's
  language ("The user lives in Hangzhou", "用户住在杭州"). A sentence stating several details
  gives one item each: "I live in Shanghai with my wife" is "The user lives in Shanghai"
  (profile:home_city) and "The user lives with their wife" (profile:household).
- slot, for facts a person holds one value of at a time: {SLOTS}.
- A correction or change ("Oh wait, I got that wrong: I actually live in Hangzhou now",
  "不对，我是产品经理") is a "remember" item with the slot: the new value replaces the old one.
- When the user asks you to forget, delete or stop keeping something (in any wording or
  language: "please remove my home address from your memory", "别记我的病史了"), give a
  "forget" item, never a "remember" item: topic is what to forget in the user's own words
  ("my home address", "everything about that relationship", "我的病史"), request is the
  user's sentence that asks, copied exactly. Saying they forgot something themselves ("I
  always forget my keys") is no request.
- A credential or identifier the user states (a password, a PIN or door code, a card number,
  a social security or national id number, an IBAN, an API key or token, a private key) is a
  "sensitive" item: kind one of {", ".join(REDACTION_KINDS)}, text the secret exactly as written.
  Never put a secret into a "remember" item. "[redacted: …]" marks a secret already removed.
- Facts about someone or something other than the user (a relative, a friend, a colleague,
  a pet; a place or an organisation the message is about) are "remember" items too, one item
  per subject, never two subjects in one item, with
  "subject": {{"name": "Mark" or "", "role": "<relation to the user, singular, in English:
  brother, wife, friend, manager, dog, cat…>", "kind": "person" | "pet" | "place" |
  "organisation" | "thing"}} and slot null, the content in the third person about them:
  "My brother Mike is a doctor in Chicago. My brother Mark is a lawyer in New York." gives two
  items, "The user's brother Mike is a doctor in Chicago" and "The user's brother Mark is a
  lawyer in New York". An item about the user has no subject.
- Each "remember" item lists the values it states of its subject:
  "statements": [{{"attribute": "...", "value": "...", "single": true|false, "ended": true|false}}]
  attribute: a short phrase, the common ones as "lives in", "works at", "job", "phone",
  "email", "age", "car", "diet", "favorite <thing>", "reading", "speaks", "learning", "pet",
  or the relation ("brother", "friend", "partner", "manager"); value as said ("Denver",
  "a lawyer", "Rust"); single: true when one value holds at a time (lives in, job, phone,
  manager, partner, favorite X, diet, car, what one is reading), false when many do
  (languages, pets, children, friends, hobbies); ended: true when the value stopped holding
  with no new one said ("I'm no longer vegetarian", "Max passed away": the user's "pet" Max
  ended, "I quit Google"). A plan or a future change ("I'm moving there next week") states no
  value yet.
- Events, plans, questions and small talk give no item: the message itself is kept.
- No items when nothing is worth keeping."""


class LLMExtractor:
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float) -> None:
        self.model = model
        self.client = OpenAICompatibleClient(base_url=base_url, api_key=api_key, timeout=timeout)

    def extract(self, text: str, *, replying_to: str = "") -> list[Extraction]:
        context = [{"role": "assistant", "content": replying_to}] if replying_to else []
        try:
            answer = self.client.chat_json(
                model=self.model,
                messages=[
                    {"role": "system", "content": LLM_PROMPT},
                    *context,
                    {"role": "user", "content": text},
                ],
            )
            items = json.loads(answer).get("items", [])
            return [extraction for item in items if (extraction := _from_llm(item))]
        except (OpenAICompatibleError, ValueError, AttributeError, TypeError) as error:
            raise ExtractionError(f"LLM extractor failed: {error}") from error


def _from_llm(item: dict) -> Extraction | None:
    """The item as an Extraction; None for one that says nothing (no content, no topic, an
    unknown kind of secret)."""
    slot = str(item.get("slot") or "") or None
    if item.get("action") == "forget":
        topic, request = str(item.get("topic") or "").strip(), str(item.get("request") or "")
        return Extraction("forget", topic=topic, request=request.strip())
    if item.get("action") == "sensitive":
        kind, secret = str(item.get("kind") or ""), str(item.get("text") or "").strip()
        return (
            Extraction("sensitive", kind=kind, content=secret)
            if kind in REDACTION_KINDS and secret
            else None
        )
    content = str(item.get("content") or "").strip()
    if not content:
        return None
    importance = min(1.0, max(0.0, float(item.get("importance") or 0.5)))
    subject = _llm_subject(item.get("subject"))
    raw = item.get("statements")
    statements = tuple(
        statement
        for one in (raw if isinstance(raw, list) else [])
        if (statement := _llm_statement(one, subject)) is not None
    )
    if not subject.is_user:
        slot = None  # a slot holds the user's own values
    return Extraction("remember", content, importance, slot, subject=subject, statements=statements)


ENTITY_KINDS = {"person", "pet", "place", "organisation", "thing"}


def _llm_subject(raw: object) -> Subject:
    """The item's subject; the user for none, or for one that names no one."""
    if not isinstance(raw, dict):
        return USER
    name = str(raw.get("name") or "").strip()
    role = str(raw.get("role") or "").strip().lower()
    kind = str(raw.get("kind") or "").strip().lower().replace("organization", "organisation")
    if kind == "user" or role in ("user", "self", "me", "the user") or not (name or role):
        return USER
    if kind not in ENTITY_KINDS:
        kind = "person"
    return Subject(name=name, role=role, kind=kind)  # type: ignore[arg-type]


def _llm_statement(raw: object, subject: Subject) -> Statement | None:
    """One statement of an item, its attribute normalised; None for one that says nothing."""
    if not isinstance(raw, dict):
        return None
    attribute = raw.get("attribute")
    value = raw.get("value")
    if not isinstance(attribute, str) or not attribute.strip():
        return None
    value = "" if value is None or isinstance(value, (dict, list)) else str(value).strip()
    ended = raw.get("ended") is True or str(raw.get("ended")).lower() == "true"
    if not value and not ended:
        return None
    key = attribute_key(attribute)
    single = raw.get("single")
    single = single if isinstance(single, bool) else single_valued(key)
    owner = _llm_subject(raw["subject"]) if isinstance(raw.get("subject"), dict) else subject
    return Statement(owner, key, value, single=single, ended=ended)
