"""Names easily taken for one another: "Sarah" for "Sara", "Paris" for "Paris, Texas", "Raj
Patel" for "Rina Patel", "张婷" for "张霆", "大表哥" for "小表哥", "老李" for "小李" (the subject
rule, memories/graph/answering.py)."""

import re
from functools import cache

from pypinyin import lazy_pinyin

from memories import statements
from memories.sentences import latin_bounded
from memories.statements.words import HAN, NOT_NAMES, TITLES, ZH_PERSON_ROLES, alternation

NAME_WORD = re.compile(latin_bounded("[A-Z][a-z]+"))
HAN_NAME = re.compile(rf"[{HAN}]{{2,4}}")
PERSON_NAME = re.compile(r"(?P<given>[A-Z][a-z]+) (?P<family>[A-Z][a-z]+)")
HAN_RUN = re.compile(rf"[{HAN}]+")
RANKS = "大|小|二|三|四"
FAMILIAR = re.compile(rf"([小老阿])([{HAN}])")
# Relatives named in two characters or more: "小哥", "小姐" are other words.
RANKED_RELATIVE = re.compile(
    rf"(?P<rank>{RANKS})(?P<role>{alternation(word for word in ZH_PERSON_ROLES if len(word) > 1)})"
)


def _edits(a: str, b: str) -> int:
    """Levenshtein distance, for short names."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        row = [i]
        for j, y in enumerate(b, 1):
            row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = row
    return previous[-1]


def names_lookalike(text: str, name: str) -> bool:
    """`text` names something easily taken for `name` but not `name` itself: the first word of a
    longer name alone ("Paris" for "Paris, Texas"), another given name with a person's surname
    ("Raj Patel" for "Rina Patel"; not "Dr Patel"), a name a letter or two away ("Sarah"), or,
    for a Chinese name, one that sounds the same ("老王" for "老汪")."""
    if statements.names_in(text, [name]):
        return False
    if HAN_NAME.fullmatch(name):
        return _sounds_alike(text, name) or _other_rank(text, name) or _other_familiar(text, name)
    words = re.findall(r"\w+", name)
    if len(words) > 1:
        return words[0] in NAME_WORD.findall(text) or _other_given_name(text, name)
    near = (
        word
        for word in NAME_WORD.findall(text)
        if word != name and word[0] == name[0] and min(len(word), len(name)) >= 3
    )
    # A letter apart ("Sara", "Sarah"; "Jon", "John"); two for long names ("Marco", "Marcus").
    return any(
        _edits(word.lower(), name.lower()) <= (2 if min(len(word), len(name)) >= 5 else 1)
        for word in near
    )


def _other_given_name(text: str, name: str) -> bool:
    """Whether `text` names someone else of the person's family name: "Raj Patel" for "Rina
    Patel". Only a name of two capitalised words ("Paris, Texas" is a place)."""
    if (person := PERSON_NAME.fullmatch(name)) is None:
        return False
    return any(
        given not in NOT_NAMES and given not in TITLES and given != person["given"]
        for given in re.findall(rf"([A-Z][a-z]+)\s+{re.escape(person['family'])}\b", text)
    )


def _sounds_alike(text: str, name: str) -> bool:
    """Whether `text` writes, in Han characters, something read as `name` is but written
    otherwise ("王伟" for "王炜", "张婷" for "张霆"): Chinese names are told apart by ear less
    than by the character, as Latin ones are by a letter. Read without tones, each character
    by its usual reading. Not when the text also writes the name's own characters ("也叫王伟，
    不过是火字旁的炜": telling the two apart); one of them alone says little ("子" of "子轩" is in
    every "儿子")."""
    sound = [_pinyin(character) for character in name]
    for run in HAN_RUN.findall(text):
        sounds = [_pinyin(character) for character in run]
        for start in range(len(run) - len(name) + 1):
            written = run[start : start + len(name)]
            if sounds[start : start + len(name)] == sound and written != name:
                return not all(character in text for character in set(name) - set(written))
    return False


def _other_rank(text: str, name: str) -> bool:
    """Whether `text` names a relative of the same kind but another rank: "大表哥" for "小表哥",
    "大女儿" for "小女儿"."""
    if (m := RANKED_RELATIVE.fullmatch(name)) is None:
        return False
    return any(rank != m["rank"] for rank in re.findall(rf"({RANKS}){m['role']}", text))


def _other_familiar(text: str, name: str) -> bool:
    """Whether `text` names another person of the surname by another familiar prefix: "老李"
    for "小李" (an elder and a younger colleague)."""
    if (m := FAMILIAR.fullmatch(name)) is None:
        return False
    return any(prefix != m[1] for prefix in re.findall(rf"([小老阿]){m[2]}", text))


@cache
def _pinyin(character: str) -> str:
    return lazy_pinyin(character)[0]
