"""Memories from conversation: what a user message says that is worth keeping.

An extractor turns one user message into `Extraction`s:
- `remember`: a fact or episode to write (through the ordinary operation model). A `slot`
  (e.g. `profile:home_city`) marks facts of which a person holds one value at a time: a new
  value for the slot supersedes the current one ("I moved to Austin", "actually the deadline
  is April 1"), so the old fact stays in history and leaves recall.
- `forget`: the user asks to forget something ("please forget my address"): the current
  memories in that slot, or mentioning the topic, are soft-deleted.

`RuleBasedExtractor` is the offline default (English and Chinese patterns);
`LLMExtractor` asks an OpenAI-compatible chat endpoint for the same structure.
"""

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Literal, Protocol

from django.conf import settings

from neuromem_site.openai_compat import OpenAICompatibleClient, OpenAICompatibleError


@dataclass(frozen=True)
class Extraction:
    action: Literal["remember", "forget"]
    content: str = ""
    memory_type: str = "fact"
    importance: float = 0.5
    slot: str | None = None
    # For `forget`: words that identify the memories to forget.
    topic_words: tuple[str, ...] = ()


class ExtractionError(Exception):
    """The extractor could not answer; the message is kept, marked `failed`."""


class Extractor(Protocol):
    def extract(self, text: str) -> list[Extraction]: ...


# Topics a user may ask to forget → the slot holding them and the words that mention them.
FORGET_TOPICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "address": ("profile:address", ("address", "地址", "住址")),
    "地址": ("profile:address", ("address", "地址", "住址")),
    "住址": ("profile:address", ("address", "地址", "住址")),
    "name": ("profile:name", ("name", "名字", "我叫")),
    "名字": ("profile:name", ("name", "名字", "我叫")),
    "city": ("profile:home_city", ("live in", "moved to", "住在", "搬到")),
    "location": ("profile:home_city", ("live in", "moved to", "住在", "搬到")),
    "phone": ("profile:phone", ("phone", "电话", "手机")),
    "phone number": ("profile:phone", ("phone", "电话", "手机")),
    "电话": ("profile:phone", ("phone", "电话", "手机")),
    "手机号": ("profile:phone", ("phone", "电话", "手机")),
    "email": ("profile:email", ("email", "邮箱")),
    "邮箱": ("profile:email", ("email", "邮箱")),
    "job": ("profile:job", ("work as", "work at", "work for", "工作")),
    "工作": ("profile:job", ("work as", "work at", "work for", "工作")),
    "birthday": ("profile:birthday", ("birthday", "生日")),
    "生日": ("profile:birthday", ("birthday", "生日")),
}

# (pattern, memory type, importance, slot); slot may use {1} for a captured group.
REMEMBER_RULES: list[tuple[re.Pattern, str, float, str | None]] = [
    (re.compile(r"\bmy name is\b|\bcall me\b", re.I), "fact", 0.9, "profile:name"),
    (
        re.compile(
            r"\bi(?:'ve| have)? (?:just )?moved to\b|\bi(?: now)? live in\b|"
            r"\bi'm based in\b|\bi am based in\b",
            re.I,
        ),
        "fact",
        0.8,
        "profile:home_city",
    ),
    (re.compile(r"\bmy (?:home )?address is\b", re.I), "fact", 0.8, "profile:address"),
    (re.compile(r"\bmy (?:phone|phone number|mobile) is\b", re.I), "fact", 0.8, "profile:phone"),
    (re.compile(r"\bmy email is\b", re.I), "fact", 0.8, "profile:email"),
    (re.compile(r"\bmy birthday is\b", re.I), "fact", 0.8, "profile:birthday"),
    (
        re.compile(r"\bi work (?:as|at|for)\b|\bi'm an? \w+ (?:at|for)\b", re.I),
        "fact",
        0.8,
        "profile:job",
    ),
    (
        re.compile(r"\b(?:the )?(\w+ )?deadline\b.*\b(?:is|moved to|changed to)\b", re.I),
        "fact",
        0.8,
        "plan:deadline",
    ),
    (re.compile(r"\bi(?:'m| am) allergic to\b", re.I), "fact", 0.9, None),
    (
        re.compile(
            r"\bi (?:really )?(?:like|love|prefer|enjoy|hate|dislike|don't like|"
            r"can't stand)\b",
            re.I,
        ),
        "fact",
        0.6,
        None,
    ),
    (
        re.compile(
            r"\bi(?:'m| am) (?:going to|planning to)\b|\bi plan to\b|\bi will\b|"
            r"\bi'll\b",
            re.I,
        ),
        "episodic",
        0.6,
        None,
    ),
    (
        re.compile(
            r"\b(?:yesterday|today|last (?:week|night|month|year)|this morning)\b.*\bi\b|"
            r"\bi (?:went|visited|met|started|finished|bought|saw)\b",
            re.I,
        ),
        "episodic",
        0.5,
        None,
    ),
    # Chinese
    (re.compile(r"我叫|我的名字是"), "fact", 0.9, "profile:name"),
    (
        re.compile(r"我(?:已经)?(?:搬到了?|搬去了?)|我(?:现在)?住在"),
        "fact",
        0.8,
        "profile:home_city",
    ),
    (re.compile(r"我的(?:家庭)?(?:地址|住址)是"), "fact", 0.8, "profile:address"),
    (re.compile(r"我的(?:电话|手机号?)(?:号码)?是"), "fact", 0.8, "profile:phone"),
    (re.compile(r"我的邮箱是"), "fact", 0.8, "profile:email"),
    (re.compile(r"我的生日是"), "fact", 0.8, "profile:birthday"),
    (re.compile(r"我在.+(?:工作|上班)|我是一名"), "fact", 0.8, "profile:job"),
    (
        re.compile(r"(?:截止日期|截止时间|deadline|期限).*(?:是|改为|改到|推迟到|提前到)"),
        "fact",
        0.8,
        "plan:deadline",
    ),
    (re.compile(r"我对.+过敏"), "fact", 0.9, None),
    (re.compile(r"我(?:很|非常|特别|最)?(?:喜欢|爱|讨厌|不喜欢|偏好)"), "fact", 0.6, None),
    (re.compile(r"我(?:打算|计划|准备|将要|明天要|下周要)"), "episodic", 0.6, None),
    (
        re.compile(r"(?:昨天|今天|上周|上个月|今早)我|我(?:去了|见了|开始了|完成了|买了)"),
        "episodic",
        0.5,
        None,
    ),
]

FORGET_PATTERNS = [
    re.compile(
        r"\b(?:please )?(?:forget|delete|erase|remove)(?: about)? my ([\w ]+?)\b"
        r"(?:[.!?,]|$)",
        re.I,
    ),
    re.compile(r"(?:请)?(?:忘记|忘掉|删除|删掉)我的(\w+?)(?:吧|。|！|，|$)"),
]
SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")


class RuleBasedExtractor:
    def extract(self, text: str) -> list[Extraction]:
        extractions = []
        for sentence in (s.strip() for s in SENTENCE_BREAK.split(text)):
            if not sentence:
                continue
            forget = self._forget(sentence)
            if forget is not None:
                extractions.append(forget)
                continue
            for pattern, memory_type, importance, slot in REMEMBER_RULES:
                match = pattern.search(sentence)
                if match:
                    if slot == "plan:deadline" and match.lastindex and match.group(1):
                        slot = f"plan:deadline:{match.group(1).strip().lower()}"
                    extractions.append(
                        Extraction("remember", sentence, memory_type, importance, slot)
                    )
                    break
        return extractions

    def _forget(self, sentence: str) -> Extraction | None:
        for pattern in FORGET_PATTERNS:
            match = pattern.search(sentence)
            if match:
                topic = match.group(1).strip().lower()
                slot, words = FORGET_TOPICS.get(topic, (None, (topic,)))
                return Extraction("forget", slot=slot, topic_words=words)
        return None


LLM_PROMPT = """Extract what is worth remembering about the user from their message.
Answer with JSON: {"items": [{"action": "remember" | "forget", "content": "...",
"memory_type": "fact" | "episodic", "importance": 0..1, "slot": "profile:home_city" | null,
"topic_words": ["..."]}]}. Use a slot (profile:name, profile:home_city, profile:address,
profile:phone, profile:email, profile:job, profile:birthday, plan:deadline) when the fact has one
current value; "forget" when the user asks to forget something (topic_words identify it).
Write content in the user's language. No items when nothing is worth keeping."""


class LLMExtractor:
    def __init__(self, *, base_url: str, api_key: str, model: str, timeout: float) -> None:
        self.model = model
        self.client = OpenAICompatibleClient(base_url=base_url, api_key=api_key, timeout=timeout)

    def extract(self, text: str) -> list[Extraction]:
        try:
            answer = self.client.chat_json(
                model=self.model,
                messages=[
                    {"role": "system", "content": LLM_PROMPT},
                    {"role": "user", "content": text},
                ],
            )
            items = json.loads(answer).get("items", [])
        except (OpenAICompatibleError, ValueError, AttributeError) as error:
            raise ExtractionError(f"LLM extractor failed: {error}") from error
        return [
            Extraction(
                action="forget" if item.get("action") == "forget" else "remember",
                content=str(item.get("content") or ""),
                memory_type="episodic" if item.get("memory_type") == "episodic" else "fact",
                importance=min(1.0, max(0.0, float(item.get("importance") or 0.5))),
                slot=item.get("slot") or None,
                topic_words=tuple(str(word) for word in item.get("topic_words") or ()),
            )
            for item in items
            if item.get("action") == "forget" or item.get("content")
        ]


@cache
def extractor() -> Extractor:
    if settings.EXTRACTOR == "llm":
        return LLMExtractor(
            base_url=settings.LLM_API_BASE,
            api_key=settings.LLM_API_KEY,
            model=settings.LLM_MODEL,
            timeout=settings.LLM_TIMEOUT,
        )
    return RuleBasedExtractor()
