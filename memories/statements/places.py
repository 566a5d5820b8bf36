"""A place named as part of another: the user's answer to the assistant asking where in a city
they live ("在杭州住哪边？" "住在滨江"; "Which part of Denver do you live in?" "Capitol
Hill") says where within it, not a move away from it. The value is written whole ("杭州滨江",
"Capitol Hill, Denver"), so that the city still answers, and it ends no memory saying the
city."""

import re

from memories.sentences import HAN as HAN_RE
from memories.statements.words import HAN

ZH_ASKED_WITHIN = re.compile(
    rf"(?:在|住|搬到|到)(?![你您我他她这那哪])(?P<place>[{HAN}]{{2,6}}?)的?住?"
    r"(?:哪边|哪里|哪儿|哪个区|哪一区|哪个片区|哪一片|哪一带|哪块|什么地方|什么位置)"
)
EN_ASKED_WITHIN = re.compile(
    r"\b(?i:where(?:abouts)?|what\s+part|which\s+(?:part|area|side|end|neighbou?rhood"
    r"|district|borough|suburb))\s+(?i:of|in)\s+(?P<place>[A-Z][\w'.-]*(?:\s+[A-Z][\w'.-]*){0,2})"
)
# A move elsewhere, though said in answer ("我们搬到苏州了", "we moved to Austin"): no part of it.
MOVED = re.compile(r"搬|迁|\bmov(?:e|ed|es|ing)\b|\brelocat", re.I)


def said_within(fact: str) -> bool:
    """Whether a fact stating where the user lives may be where within the place asked: not a
    move."""
    return MOVED.search(fact) is None


# The question is about where one lives ("Where in Japan did you travel?" is not).
LIVING = re.compile(
    r"住|家|\b(?:live|living|lives|based|stay|staying|settled?|home|moved?)\b", re.I
)


def place_asked_within(question: str) -> str | None:
    """The place the assistant asks where within one lives ("在杭州住哪边？": 杭州), if it
    asks that."""
    if not LIVING.search(question):
        return None
    found = ZH_ASKED_WITHIN.search(question) or EN_ASKED_WITHIN.search(question)
    return found["place"] if found else None


def place_within(value: str, place: str) -> str:
    """`value` named within `place`, as the value is written: "杭州滨江", "Capitol Hill, Denver"."""
    return place + value if HAN_RE.search(place) and HAN_RE.search(value) else f"{value}, {place}"


def still_holds(attribute: str, current: str, earlier: str) -> bool:
    """Whether a current value of `attribute` still says an earlier one: the same, or, of
    where one lives, a place within it ("杭州滨江" says "杭州"). Ended, such a value is made
    finer, not replaced."""
    if attribute == "lives in":
        return holds_value(current, earlier)
    return current.casefold() == earlier.casefold()


def holds_value(current: str, earlier: str) -> bool:
    """Whether the current value still says the earlier one: the same, or a place within it
    (place_within's form)."""
    current, earlier = current.casefold(), earlier.casefold()
    return current == earlier or (
        current.startswith(earlier) if HAN_RE.search(earlier) else current.endswith(", " + earlier)
    )
