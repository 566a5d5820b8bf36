"""Cue rules, English and Chinese: what a memory's wording says beyond its meaning.

- polarity: does it say the user does / likes something (+1) or not (−1)? Negation and
  aversion words flip it ("I don't like meetings", "我不喜欢开会", "I hate meetings").
- explicit: a statement about the user's habits or tastes ("I always…", "I prefer…",
  "我习惯…"), evidence of quality B, and a pattern on its own (a trend).
- context: work, personal, social or learning, from topic words; None when nothing says.
- emotional: feelings drive it ("so stressed", "焦虑"): its trend gets the shorter window.
- profile: it states a profile slot's value ("I moved to Austin", "我叫陈明"), as the offline
  extractor reads it: an attribute, not a habit.
"""

import re
from typing import Any

from memories.extraction import RuleBasedExtractor
from memories.models import TraitContext
from memories.sentences import HAN


def _words(*words: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(words) + r")\b", re.IGNORECASE)


NEGATIVE = _words(
    r"not",
    r"no longer",
    r"never",
    r"don'?t",
    r"doesn'?t",
    r"didn'?t",
    r"won'?t",
    r"can'?t stand",
    r"hate[sd]?",
    r"dislike[sd]?",
    r"avoid(?:s|ed)?",
    r"stopp?(?:ed|s)?",
    r"quit",
    r"draining",
    r"annoy(?:ed|ing|s)?",
    r"boring",
    r"tired of",
    r"drives? me crazy",
    r"waste of time",
)
# Negations that say yes: "I never miss my run", "can't do without", "not a day without",
# and "not even" stressing what was just said ("…, not even on holidays").
AFFIRMATIVE_NOT = _words(
    r"never (?:miss|skip|fail)(?:e?s|p?ed)?",
    r"(?:don'?t|do not|doesn'?t) (?:ever )?skip",  # not "I don't miss smoking"
    r"(?:can'?t|cannot|couldn'?t) (?:live|do|go|imagine (?:a|my) \w+) without",
    r"not a (?:day|week|morning) (?:goes by )?without",
    r"not even (?:on|at|in|when|once)",
    r"not bad",
)
ZH_NEGATIVE = re.compile(r"不|没|讨厌|从不|别|戒了|受不了|避免|烦|浪费时间|无聊")
# Words with 不 that say yes: "can't do without", "not bad", "can't help", "has to", "not one
# day without", "come rain or shine".
ZH_AFFIRMATIVE_NOT = re.compile(
    r"离不开|少不了|不错|忍不住|不得不|不停|不少|没有?一天不|从不(?:缺|落下|间断)|从没(?:缺|落下|间断)"
    r"|雷打不动|风雨无阻|不可或缺"
)
EXPLICIT = _words(
    r"always",
    r"usually",
    r"often",
    r"never",
    r"every (?:day|morning|evening|night|week|weekend)",
    r"daily",
    r"tends? to",
    r"prefers?",
    r"loves?",
    r"likes?",
    r"enjoys?",
    r"hates?",
    r"dislikes?",
    r"habit",
    r"(?:i'm|i am|is) (?:a|an) \w+ person",
)
ZH_EXPLICIT = re.compile(
    r"总是|经常|通常|一直|每天|每周|每晚|每个周末|习惯|喜欢|爱|讨厌|偏好|从不|最爱"
)
CONTEXT_CUES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    TraitContext.WORK: (
        _words(
            r"work(?:ing)?",
            r"office",
            r"job",
            r"meetings?",
            r"boss",
            r"colleagues?",
            r"coworkers?",
            r"deadlines?",
            r"projects?",
            r"clients?",
            r"code",
            r"coding",
            r"debug(?:ging)?",
            r"standup",
        ),
        re.compile(r"工作|上班|公司|同事|老板|开会|会议|加班|项目|客户|代码|写代码|调试"),
    ),
    TraitContext.PERSONAL: (
        _words(
            r"home",
            r"family",
            r"wife",
            r"husband",
            r"kids?",
            r"daughter",
            r"son",
            r"weekends?",
            r"cook(?:ing)?",
            r"sleep",
            r"run(?:ning)?",
            r"ran",
            r"gym",
            r"workout",
            r"health",
        ),
        re.compile(r"家|家人|老婆|老公|孩子|女儿|儿子|周末|做饭|睡觉|跑步|健身|锻炼|身体"),
    ),
    TraitContext.SOCIAL: (
        _words(r"friends?", r"party", r"parties", r"dinner with", r"hang(?:ing)? out", r"social"),
        re.compile(r"朋友|聚会|聚餐|社交|约饭"),
    ),
    TraitContext.LEARNING: (
        _words(
            r"learn(?:ing|ed)?",
            r"study(?:ing)?",
            r"course",
            r"class(?:es)?",
            r"practi[cs]e[ds]?",
            r"reading",
            r"books?",
            r"vocabulary",
            r"lessons?",
        ),
        re.compile(r"学习|学|课程|上课|练习|读书|看书|单词|课"),
    ),
}
EMOTIONAL = _words(
    r"stress(?:ed|ful)?",
    r"anxious",
    r"anxiety",
    r"angry",
    r"upset",
    r"sad",
    r"depressed",
    r"exhausted",
    r"frustrat(?:ed|ing)",
    r"overwhelmed",
    r"excited",
    r"thrilled",
    r"lonely",
    r"draining",
)
ZH_EMOTIONAL = re.compile(r"焦虑|压力|生气|难过|沮丧|崩溃|烦|累死|兴奋|孤独|郁闷")


def is_chinese(text: str) -> bool:
    return HAN.search(text) is not None


def polarity(text: str) -> int:
    if is_chinese(text):
        return -1 if ZH_NEGATIVE.search(ZH_AFFIRMATIVE_NOT.sub("", text)) else 1
    return -1 if NEGATIVE.search(AFFIRMATIVE_NOT.sub("", text)) else 1


def explicit(text: str) -> bool:
    return (ZH_EXPLICIT if is_chinese(text) else EXPLICIT).search(text) is not None


def context(text: str) -> str | None:
    """The first context whose topic words the text holds, in the order of CONTEXT_CUES."""
    chinese = is_chinese(text)
    for name, (english, zh) in CONTEXT_CUES.items():
        if (zh if chinese else english).search(text):
            return name
    return None


def emotional(text: str, metadata: dict[str, Any] | None = None) -> bool:
    emotion = (metadata or {}).get("emotion")
    if isinstance(emotion, dict) and emotion:
        return True
    return (ZH_EMOTIONAL if is_chinese(text) else EMOTIONAL).search(text) is not None


def profile(text: str) -> bool:
    found = RuleBasedExtractor().extract(text)
    return any(item.slot for item in found if item.action == "remember")


def contexts_merged(contexts: set[str]) -> str:
    """A trait observed in one context has it; in several (or none known), `general`."""
    known = contexts - {TraitContext.GENERAL, TraitContext.CONTEXTUAL}
    return next(iter(known)) if len(known) == 1 else TraitContext.GENERAL
