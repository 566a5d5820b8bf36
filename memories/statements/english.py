"""English clauses: who each is about, and the values it states.

A clause starts with its subject ("I", "my brother Mark", "she", "Whiskers", "my wife's …")
after words that only lead in ("Sadly,", "Then", "Big update —"); the rest is read by
patterns of meaning (living somewhere, working somewhere or as something, an age, a car, a
diet, what one is reading, languages, pets and relatives, ends and changes) and by generic
forms that name the attribute themselves ("my X is Y", "Y is my X", "my X changed to Y").
"""

import re

from memories.statements.keys import SYNONYMS, attribute_key, plural_phrase, relation_attribute
from memories.statements.model import USER, Subject
from memories.statements.reading import Clause, Context, Subjects, after_lead, clean, mentioned
from memories.statements.words import (
    BREEDS,
    CAR_MAKES,
    JOBS,
    LANGUAGES,
    NOT_NAMES,
    NUMBER,
    ORDERED_ROLES,
    PERSON_PLURALS,
    PERSON_ROLES,
    REGIONS,
    SPECIES,
    SPECIES_PLURALS,
    alternation,
    word_set,
)

I = re.I  # noqa: E741

# --- Pieces ----------------------------------------------------------------------------------

ROLE = alternation(PERSON_ROLES)
PLURAL_ROLE = alternation(PERSON_PLURALS)
ANIMAL = alternation([*BREEDS, *SPECIES])
BREED = alternation(BREEDS)
ANIMALS = alternation(SPECIES_PLURALS)
# Words said before a role that do not tell who it is ("my old uni friend Raj"); an order of
# birth does ("my older brother"): the role is then the whole phrase (ORDERED_ROLES).
MODS = (
    rf"(?:(?!(?:{alternation(ORDERED_ROLES)})\b)"
    r"(?:other|older|younger|little|big|baby|twin|best|oldest|youngest|eldest|elder|middle"
    r"|new|old|late|dear|step|half|former|current|lovely|amazing|beloved|sweet"
    # Where they are the user's: "my old uni friend Raj", "my work colleague Tom".
    r"|uni|university|college|school|high[- ]school|childhood|work|office|gym|running"
    r"|climbing|hiking|book[- ]club|church|army|lab|team"
    r"|\d{1,2}[- ](?:year|month|week)[- ]old)[\s-]+)*"
)
# A relative clause on someone else ("a friend who is a lawyer"): said of them, not the user.
OTHERS_RELATIVE = re.compile(
    rf"\b(?P<who>{ROLE}|{PLURAL_ROLE}|someone|somebody|people|a guy|a girl|a woman|a man)"
    r",?\s+(?:who|whom|whose|that)\b.*?(?=\s+(?:and|but)\s+(?:i|i'm|my|we)\b|$)",
    re.I,
)


def others_relative_left_out(text: str) -> str:
    """`text` without a relative clause on someone else, its noun kept ("I have a friend who
    is a lawyer" → "I have a friend")."""
    return OTHERS_RELATIVE.sub(r"\g<who>", text)


NOT_NAME = alternation(NOT_NAMES)
NAMEWORD = rf"(?!(?:{NOT_NAME})\b)[A-Z][a-zà-ÿ]+(?:'[A-Z][a-zà-ÿ]+|-[A-Za-zà-ÿ]+)?"
NAME = rf"(?-i:{NAMEWORD}(?:\s+{NAMEWORD}){{0,2}})"
REGION = alternation(REGIONS)
CAPWORD = r"(?:[A-Z0-9][\w&.'’+-]*|[\u4e00-\u9fff]+)"
CONNECT = r"(?:of|de|del|da|la|le|von|van|and|&|on|upon|am|the|y|du|des)"
CAP = (
    rf"(?-i:(?:[Tt]he\s+)?(?!(?:I|I'm|I've|{NOT_NAME})\b){CAPWORD}"
    rf"(?:\s+(?:{CONNECT}\s+)?(?!(?:I|I'm|I've|I'd|I'll|{NOT_NAME})\b){CAPWORD})*"
    rf"(?:,\s*(?:{REGION})\b)?)"
)
ADV = (
    r"(?:(?:now|currently|still|also|just|actually|really|officially|finally|already|both|all"
    r"|fully|happily|recently|basically|mostly|even|only|definitely|technically|proudly"
    r"|newly|totally|pretty much|kind of|sort of)\s+)*"
)
BE = rf"\b(?:am|is|are)\s+{ADV}"
END = (
    r"(?=\s*(?:[,;:!?()\"“”—–]|\s-\s|\.(?:\s|$)|$)|\s+(?:and|but|because|since|so|for|with"
    r"|while|when|although|though|which|who|where|after|before|until|now|nowadays|currently"
    r"|these days|at the moment|right now|anymore|any more|again|too|as well|last|this|next"
    r"|ago|today|yesterday|tonight|tomorrow|every|already|at|in|from|by|on|to|as|if|or|than"
    r"|about|near|during|lol|haha|full[- ]time|part[- ]time|remotely|fluently|well)\b)"
)
LOOSE_END = (
    r"(?=\s*(?:[;:!?()\"“”—–]|,\s*(?:and|but|so)\b|\s-\s|\.(?:\s|$)|$)"
    r"|\s+(?:and|but)\s+(?:i|he|she|they|we)\b)"
)
JOB_WORD = alternation(JOBS)
JOB = (
    rf"(?:(?:an?|the)\s+)?(?:(?!(?:and|at|for|in|with|but|who)\b)[\w-]+\s+){{0,3}}?"
    rf"(?:{JOB_WORD})s?(?![\w'-])"
)
ORG = (
    rf"(?:{CAP}|(?:an?|the)\s+(?:(?!(?:and|in|at|but|with|for|as)\b)[\w-]+\s+){{0,3}}?"
    rf"(?:[\w-]+)(?:\s+(?:called|named)\s+{CAP})?)"
)
QUOTED = r"(?:'[^']+'|\"[^\"]+\"|“[^”]+”|‘[^’]+’)"
TITLE = (
    rf"(?:{QUOTED}|(?-i:(?:The\s+|A\s+)?[A-Z0-9][\w'’:-]*"
    rf"(?:\s+(?:(?:of|the|and|a|in|on|to|for|with|at)\s+)?[A-Z0-9][\w'’:-]*)*))"
)
LANG = alternation(LANGUAGES)
LANGS = rf"(?-i:(?:{LANG})(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+or\s+)(?:{LANG}))*)"
PHONE = r"\+?\d[\d\s().-]{5,}\d"
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
DIETS = (
    r"vegetarian|vegan|pescatarian|pescetarian|keto|paleo|gluten[- ]free|dairy[- ]free"
    r"|lactose[- ]intolerant|kosher|halal|flexitarian|carnivore|plant[- ]based|celiac"
)
CAR = alternation(CAR_MAKES)

LEAD = re.compile(
    r"^(?:(?:so|but|and|yeah|yes|yep|oh|well|sadly|unfortunately|luckily|fortunately|anyway"
    r"|anyways|also|plus|btw|by the way|honestly|basically|guess what|good news|bad news"
    r"|big news|great news|big update|quick update|update|fun fact|finally|meanwhile|ok|okay"
    r"|hey|hi|hmm|haha|lol|wow|alright|actually|then|now|though|still|interestingly"
    r"|apparently|as for me|as you know|you know what|news|thanks|thank you|in fact"
    r"|to be honest|tbh|oh and|also|however|besides|otherwise|by now|at last|phew"
    r"|which means|that means|meaning|turns out|it turns out|long story short"
    r"|(?P<when>yesterday|today|tonight|this (?:morning|afternoon|evening|week|weekend|month"
    r"|year)|last (?:night|week|weekend|month|year|summer|winter|spring|fall|\w+day)"
    r"|recently|lately|nowadays|these days|earlier today|a while ago|since then|after that"
    r"|in \w+ \d{4}|in \d{4}|(?:a|one|two|three|a few|\d+) (?:days?|weeks?|months?|years?)"
    r" ago|over the weekend|on \w+day))\b[\s,:!.—–-]*)+",
    I,
)

# --- Who a clause is about -------------------------------------------------------------------

USER_START = re.compile(
    r"^(?:(?:my|our)\s+(?:\w+\s+){0,2}?and\s+i|me\s+and\s+my\s+\w+|i|we|(?:both\s+)?my\s+"
    r"(?:wife|husband|partner)\s+and\s+i|(?:the\s+)?user(?!'s))(?![\w])",
    I,
)
# "The user's …" said of the user, as facts are written.
USER_POSSESSIVE = re.compile(r"^(?:the\s+)?user's\s+(?=\w)", I)
# "Mum", "Dad", "Gran" said as names.
KIN_START = re.compile(
    r"^(?P<role>(?-i:Mum|Mom|Mommy|Mummy|Mama|Dad|Daddy|Papa|Gran|Granny|Grandma|Grandpa|Nana"
    r"|Grandad|Granddad))(?![\w])"
)
# A clause whose first word is a determiner has a subject of its own, not an unsaid "I".
DETERMINER_START = re.compile(
    r"^(?:the|a|an|this|that|these|those|it|its|it's|there|here|some|any|every|each|no|all"
    r"|both|one|what|which|who|how|why|when|where|if|everything|nothing|someone|everyone"
    r"|people)\b",
    I,
)
ROLE_START = re.compile(
    rf"^(?P<owner>my|our)\s+(?P<mods>{MODS})(?P<role>{ROLE}|{PLURAL_ROLE}|{ANIMAL}|{ANIMALS})"
    rf"(?P<poss>'s?(?=\s))?(?:\s*,?\s+(?P<name>{NAME})(?P<nposs>'s)?(?![\w-]))?(?![\w-])",
    I,
)
MY = re.compile(r"^(?:my|our)\s+(?=\w)", I)
PRONOUN_START = re.compile(r"^(?P<p>he|she|they)(?![\w])", I)
PRONOUN_POSSESSIVE = re.compile(r"^(?P<p>his|her|their)\s+(?=\w)", I)
NAME_START = re.compile(rf"^(?P<name>{NAME}(?:,\s*(?:{REGION})\b)?)(?P<nposs>'s)?(?=\s|$|,)")
VERBISH = re.compile(
    r"^\s*(?:'s\s|is|was|has|had|just|also|still|now|finally|recently|lives|lived|works"
    r"|worked|moved|passed|died|got|turned|became|loves|likes|hates|speaks|drives|plays"
    r"|studies|started|joined|left|quit|retired|married|can|will|would|teaches|owns)\b",
    I,
)
POSSESSIVE_S = re.compile(r"^'s\s+(?:[\w-]+\s+){0,3}?(?:is|are|was|:|has\s+changed|changed)\b", I)
PARTICIPLES = (
    r"been|gone|got|gotten|had|done|made|taken|become|started|finished|left|moved|lived|worked"
    r"|passed|died|decided|found|bought|sold|joined|quit|retired|switched|changed|adopted|lost"
)
CONTRACTIONS = (
    (re.compile(r"^'m\b"), " am"),
    (re.compile(r"^'re\b"), " are"),
    (
        re.compile(
            rf"^'s(?=\s+(?:(?:just|already|finally|recently|also|never|since)\s+)?(?:{PARTICIPLES})\b)"
        ),
        " has",
    ),
    (re.compile(r"^'s\b"), " is"),
    (re.compile(r"^'ve\b"), " have"),
    (re.compile(r"^'d\b"), " would"),
    (re.compile(r"^'ll\b"), " will"),
)


def role_of(word: str) -> tuple[str, str, str]:
    """(role, gender, kind) of a relation or animal word."""
    word = " ".join(word.lower().split())
    if word in PERSON_ROLES:
        return (*PERSON_ROLES[word], "person")
    if word in PERSON_PLURALS:
        return PERSON_PLURALS[word], "", "person"
    if word in BREEDS:
        return BREEDS[word], "", "pet"
    if word in SPECIES:
        return SPECIES[word], "", "pet"
    if word in SPECIES_PLURALS:
        return SPECIES_PLURALS[word], "", "pet"
    return word, "", "person"


# --- Introductions: who is who, before any clause is read -----------------------------------

INTRODUCTIONS = tuple(
    re.compile(p, I)
    for p in (
        rf"\b(?:my|our)\s+(?P<mods>{MODS})(?P<role>{ROLE}|{ANIMAL})(?:'s\s+name\s+is|\s+is\s+"
        rf"(?:called|named)|'s\s+called|\s+goes\s+by)\s+(?P<name>{NAME})",
        rf"\b(?:my|our)\s+(?P<mods>{MODS})(?P<role>{ROLE}|{ANIMAL})\s*,?\s+(?P<name>{NAME})",
        rf"\b(?:an?|my|our|the)\s+(?:(?:new|little|young|old|rescue|sweet|[a-z]+)\s+){{0,2}}"
        rf"(?P<role>{ANIMAL}|{ROLE})\s*,?\s+(?:named|called)\s+(?P<name>{NAME})",
        rf"\b(?:my|our)\s+(?P<mods>{MODS})(?P<role>{ROLE}|{ANIMAL})\s+is\s+(?P<name>{NAME})"
        rf"(?=\s*(?:[,.;!]|$|\s+and\b))",
        rf"(?P<name>{NAME})\s*,\s*(?:my|our)\s+(?P<mods>{MODS})(?P<role>{ROLE}|{ANIMAL})\b",
        rf"(?P<name>{NAME})\s+(?:is|'s)\s+(?:(?:now|also|still)\s+)?(?:my|our)\s+"
        rf"(?P<mods>{MODS})(?P<role>{ROLE}|{ANIMAL})\b(?!'s|\s+of\b)",
        rf"(?P<name>{NAME})\s+(?:is|'s)\s+(?:an?\s+)?(?:(?:[a-z]+|\d+[- ]year[- ]old)\s+){{0,2}}"
        rf"(?P<role>{ANIMAL})\b",
    )
)
# "We adopted a grey cat. Her name is Mochi.": across two sentences.
NAMED_AFTER = re.compile(
    rf"\b(?:an?|my|our|the)\s+(?:[a-z-]+\s+){{0,2}}?(?P<role>{ROLE}|{ANIMAL})\b[^.!?]*[.!?]\s+"
    rf"(?:her|his|its|their)\s+name\s+is\s+(?P<name>{NAME})",
    I,
)
# The words each introduction needs (every group, one of its words): most messages name no
# one, and these patterns are the reader's dearest.
INTRODUCTION_NEEDS = (
    (("name", "called", "named", "goes by"),),
    (("my ", "our "),),
    (("named", "called"),),
    (("my ", "our "), (" is ",)),
    ((", my", ", our"),),
    (("my ", "our "), (" is ", "'s ")),
    ((" is ", "'s "),),
)
RELATED_WORDS = frozenset(
    w
    for name in (*PERSON_ROLES, *BREEDS, *SPECIES)
    for w in name.split()
    if len(w) > 2 or name == w
)
PET_WORDS = frozenset(
    w
    for name in (*BREEDS, *SPECIES, *SPECIES_PLURALS, "vet", "leash", "litter", "adopted")
    for w in name.split()
    if w not in ("golden", "german", "french", "great", "border", "british", "russian", "pit")
)


def introduce(sentence: str, subjects: Subjects) -> None:
    """Learn who the sentence's names are ("my brother Mark", "a labrador named Luna",
    "Whiskers is a tabby")."""
    lower = sentence.lower()
    words = set(re.findall(r"[a-z-]+", lower))
    pets = not PET_WORDS.isdisjoint(words)
    subjects.pets_talked = subjects.pets_talked or pets
    if not re.search(r"[A-Z]", sentence) or RELATED_WORDS.isdisjoint(words):
        return
    for n, (pattern, needs) in enumerate(zip(INTRODUCTIONS, INTRODUCTION_NEEDS, strict=True)):
        if not all(any(word in lower for word in group) for group in needs):
            continue
        if n == len(INTRODUCTIONS) - 1 and not pets:
            continue  # "Whiskers is a tabby": an animal must be said
        for m in pattern.finditer(sentence):
            name = m["name"]
            if name in LANGUAGES or name in REGIONS or subjects.known(name):
                continue
            role, gender, kind = role_of(m["role"])
            said = " ".join(((m.groupdict().get("mods") or "") + m["role"]).split())
            subjects.person(name, role, kind, gender=gender, said=said)


def introduce_across(text: str, subjects: Subjects) -> None:
    """Names said in the sentence after the one that met them ("… a grey cat. Her name is
    Mochi.")."""
    if " name is " not in text.lower():
        return
    for m in NAMED_AFTER.finditer(text):
        if subjects.known(m["name"]) is None and m["name"] not in LANGUAGES:
            role, gender, kind = role_of(m["role"])
            subjects.person(m["name"], role, kind, gender=gender)


def mention(clause: Clause, subjects: Subjects) -> str:
    """Find the clause's subject; returns the words after it (its predicate)."""
    start, t = after_lead(clause.text, LEAD)
    if m := USER_POSSESSIVE.match(t):
        clause.possessive = True
        return _said(clause, USER, start, start + m.end(), subjects)
    if m := USER_START.match(t):
        return _said(clause, USER, start, start + m.end(), subjects)
    if m := KIN_START.match(t):
        role, gender, kind = role_of(m["role"])
        subject = subjects.person("", role, kind, gender=gender, said=m["role"].lower())
        clause.pronoun = True  # "Mum" → "the user's mum"
        return _said(clause, subject, start, start + m.end(), subjects)
    if m := ROLE_START.match(t):
        role, gender, kind = role_of(m["role"])
        if m["name"] and m["name"] not in LANGUAGES:
            subject = subjects.person(m["name"], role, kind, gender=gender)
            clause.possessive = bool(m["nposs"])
        else:
            subject = subjects.person("", role, kind, gender=gender, said=m["role"])
            clause.possessive = bool(m["poss"])
            if m["name"]:  # "my wife Japanese…": not a name, read it in the predicate
                return _said(clause, subject, start, start + m.start("name") - 1, subjects)
        return _said(clause, subject, start, start + m.end(), subjects)
    if m := MY.match(t):
        clause.possessive = True
        return _said(clause, USER, start, start + m.end(), subjects)
    if m := PRONOUN_START.match(t):
        clause.pronoun = True
        return _said(clause, subjects.resolve(m["p"]), start, start + m.end(), subjects)
    if m := PRONOUN_POSSESSIVE.match(t):
        clause.pronoun = clause.possessive = True
        return _said(clause, subjects.resolve(m["p"]), start, start + m.end(), subjects)
    if (m := NAME_START.match(t)) and not DETERMINER_START.match(t):
        name = m["name"]
        rest = t[m.end() :]
        possessive = bool(m["nposs"]) and POSSESSIVE_S.match(t[m.end("name") :]) is not None
        if not possessive and m["nposs"]:
            rest = t[m.end("name") :]
        subject = subjects.known(name)
        if subject is None and name not in LANGUAGES and VERBISH.match(rest):
            kind = "place" if name in subjects.places or name in REGIONS else "person"
            if kind == "person" and subjects.pets_talked:
                kind = "pet"  # "Max passed away … we adopted a new puppy"
            subject = Subject(name, "", kind)  # type: ignore[arg-type]
            clause.pronoun = True  # a bare name: who it is is said in the fact
            clause.unknown = True  # a subject only if the clause states something of it
        if subject is not None:
            clause.pronoun = clause.pronoun or not subject.is_user
            clause.possessive = possessive
            end = m.end() if possessive else m.end("name")
            return _said(clause, subject, start, start + end, subjects)
    clause.mention = (start, start)
    return " " + t


# The present perfect of a state that still holds, read as the present: "I've been living in
# Leeds", "I've been an architect for 12 years", "We've lived in Porto since 2019". Without a
# duration a perfect is what once happened ("I've been a waiter", "I've lived in Lyon"); a
# passive is an event ("I've been laid off", "been promoted"), not a state.
HAVE = r"^\s+(?:have|has)\s+(?P<adv>(?:(?:just|already|always|also|now|both|all)\s+)*)"
PERFECT_ONGOING = re.compile(
    rf"{HAVE}been\s+(?=(?:living|working|studying|teaching|renting|commuting)\b)", I
)
STATES_IN_ED = "married|engaged|divorced|separated|retired|employed|unemployed|based"
PERFECT_STATE = re.compile(
    rf"{HAVE}been\s+(?!(?:to|through|there|here|in\s+touch|laid|fired|let|made|told|given|taken"
    rf"|done|gone|known|shown|seen|\w+ing)\b)(?!(?!(?:{STATES_IN_ED})\b)[a-z]+ed\b)",
    I,
)
PERFECT_ACTION = re.compile(rf"{HAVE}(?P<verb>lived|worked|studied|taught|stayed)\b", I)
PRESENT_OF = {
    "lived": "live",
    "worked": "work",
    "studied": "study",
    "taught": "teach",
    "stayed": "stay",
}
# How long it has held: "for 12 years", "for a couple of months", "since 2019", "since the
# divorce"; not a reason ("since it was the only job in town").
DURATION = re.compile(
    r"\s*,?\s*\b(?:for\s+(?:[\w-]+\s+){0,3}?(?:years?|months?|weeks?|decades?|ages)\b"
    r"|since\s+(?!(?:it|that|this|there|you)\b|(?:it|that|they)'(?:s|re)\b)[^,;:.!?]*)",
    I,
)


def _present(rest: str) -> str:
    """`rest` with a present perfect of what still holds said in the present, how long it has
    held left out (it names no employer: "a nurse for a few months")."""
    if m := PERFECT_ONGOING.match(rest):
        return f" is {m['adv']}{DURATION.sub('', rest[m.end() :])}"
    if not DURATION.search(rest):
        return rest
    if m := PERFECT_STATE.match(rest):
        return f" is {m['adv']}{DURATION.sub('', rest[m.end() :])}"
    if m := PERFECT_ACTION.match(rest):
        verb = PRESENT_OF[m["verb"].lower()]
        return f" {m['adv']}{verb}{DURATION.sub('', rest[m.end() :])}"
    return rest


def _said(clause: Clause, subject, start: int, end: int, subjects: Subjects) -> str:
    rest = mentioned(clause, subject, start, end, subjects)
    if rest.startswith("'"):
        for pattern, replacement in CONTRACTIONS:
            rest = pattern.sub(replacement, rest, count=1)
    rest = rest if rest.startswith(" ") else " " + rest
    return _present(rest)


# --- Generic forms: the attribute named by the words -------------------------------------------

STATE_WORDS = word_set(
    """good great fine ok okay bad terrible awful busy sick ill tired broken stressful hard
    easy nice amazing beautiful done over late early big small huge long short crazy boring
    fun interesting happy sad angry upset worried excited here there away home back out open
    closed full empty ready gone better worse fixed expensive cheap weird perfect awesome
    cool so very too really pretty quite kinda a bit not also always never usually still
    getting being going gonna killing driving making taking coming in at on from to with for
    about over under near by like that this it what how why when where one same different
    new old lovely hectic insane wild messy tough rough"""
)
ATTR_WORD = (
    r"(?-i:(?!(?:is|are|was|were|has|have|from|with|at|in|on|to|for|about|of|and)\b)[a-z][\w'-]*)"
)
POSSESSED = re.compile(
    rf"^\s*(?P<attr>{ATTR_WORD}(?:\s+{ATTR_WORD}){{0,3}}?)"
    r"(?:(?:\s+(?:is|are)\b|'s\b|\s*=)\s+(?P<adv>(?:now|currently|still|also|officially"
    r"|actually|finally|no longer)\s+)*(?P<neg>not\s+)?|\s*:\s*|\s+(?:has\s+|have\s+)?"
    r"(?:been\s+)?(?:changed|switched|moved|updated|gone)\s+(?:from\s+.+?\s+)?to\s+)"
    r"(?P<v>.+?)\s*$",
    I,
)
# Secrets are no attribute values to keep (memories/redaction.py removes them anyway).
SECRET = re.compile(
    r"\b(?:password|passcode|passphrase|pin|ssn|social security|passport|card|account|iban"
    r"|api key|token|secret|code|cvv|routing|licen[cs]e number|tax id|national id|security"
    r"|login|credentials?|pw|pwd|wifi)\b|\[redacted",
    I,
)
INVERSION = re.compile(
    rf"^(?P<v>{QUOTED}|{CAP}|\d[\w.:/-]*|{EMAIL})\s+(?:is|are|'s)\s+(?:(?:now|currently|still"
    rf"|also|officially|definitely|easily|probably|actually|really|by far|hands down|always)\s+)*"
    rf"(?P<owner>my|our|his|her|their|(?P<oname>{NAME})'s)\s+(?P<attr>[a-z][\w\s'-]*?)"
    rf"(?:\s+(?:now|these days|of all time|right now|currently|ever|too|though|lately))?\s*$",
    I,
)
CHANGED_MY = re.compile(
    r"\b(?:changed|switched|updated)\s+my\s+(?P<attr>[\w\s-]+?)\s+(?:from\s+.+?\s+)?to\s+"
    r"(?P<v>.+?)\s*$",
    I,
)
LABEL = re.compile(r"^(?P<attr>[A-Za-z][\w' -]{0,30}?)\s*:\s*(?P<v>[^:]+)$")
NOT_LABELS = re.compile(
    r"^(?:update|big update|quick update|news|good news|bad news|fun fact|note|ps|fyi|btw"
    r"|correction|edit|question|reminder|also|anyway|summary|context|background|oh|wait)$",
    I,
)


ADDRESS = {"email": re.compile(EMAIL), "phone": re.compile(PHONE)}
AT_EMPLOYER = re.compile(rf"(?:at|with)\s+(?P<org>{CAP})\W*$")


def _value_fits(key: str, value: str) -> bool:
    """Whether a value said in a generic form can be a value of `key`: a state ("my job is
    stressful", "my back is killing me") is not."""
    words = value.split()
    if not words or len(words) > 9:
        return False
    first = words[0].lower()
    if key == "phone":
        return re.search(r"\d{3}", value) is not None
    if key == "email":
        return "@" in value
    if key == "age":
        return re.match(rf"(?:{NUMBER})\b", value, I) is not None
    if key in ("lives in", "works at", "hometown", "birthplace", "school"):
        return value[0].isupper() or value[0].isdigit() or first in ("a", "an", "the")
    if key == "job":
        return (
            first in ("a", "an", "the") or re.search(rf"\b(?:{JOB_WORD})s?\b", value, I) is not None
        )
    return first not in STATE_WORDS and not (len(words) == 1 and re.search(r"(?:ing|ed)$", first))


def _generic(ctx: Context, owner: Subject, attr: str, value: str, *, ended: bool = False) -> bool:
    attr = attr.strip()
    if not attr or (attr.lower() in ("name",) and not value[:1].isupper()):
        return False
    if SECRET.search(attr) or SECRET.search(value):
        return True  # said, and kept by no one
    last = attr.split()[-1].lower()
    if last in PERSON_ROLES or last in PERSON_PLURALS or last in SPECIES:
        return False  # "my brother's wife" — a person, not an attribute
    if (named := re.match(rf"(?:named|called)\s+(?P<n>{NAME})", value)) and owner.is_user:
        person = ctx.subjects.known(named["n"]) or ctx.subjects.person(
            named["n"], attr.lower(), "person"
        )
        ctx.relate(person)  # "my accountant is named Priya"
        return True
    key = attribute_key(attr)
    if key == "job" and (employer := AT_EMPLOYER.match(value)):
        key, value = "works at", employer["org"]  # "my new job is at Figma"
    if key == "address" and ADDRESS["email"].fullmatch(value.strip(" .!")):
        key = "email"  # "jo@fastmail.com is my address now"
    if key in ("email", "phone") and (address := ADDRESS[key].search(value)):
        value = address[0]  # not what the clause goes on to say ("…, text me anytime")
    if not _value_fits(key, value):
        return False
    plural = plural_phrase(attr)
    values = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", value) if plural else [value]
    for one in values:
        ctx.say(key, one, subject=owner, plural=plural, ended=ended)
        ctx.subjects.answered(owner, key)
    return True


def generic(ctx: Context, rest: str) -> bool:
    """The generic forms: "my X is Y", "my wife's X is Y", "X: Y" after a possessive
    mention; "I changed my X to Y"."""
    clause = ctx.clause
    if clause.possessive and clause.subject is not None and (m := POSSESSED.match(rest)):
        if m["neg"]:
            return True  # "my X is not Y" states no value
        ended = bool(m["adv"] and "no longer" in m["adv"].lower())
        return _generic(ctx, clause.subject, m["attr"], m["v"], ended=ended)
    if m := CHANGED_MY.search(rest):
        return _generic(ctx, USER, m["attr"], m["v"])
    return False


NO_LONGER_MY = re.compile(
    rf"^(?P<name>{NAME})\s+(?:isn't|is\s+not|is\s+no\s+longer|'s\s+no\s+longer)\s+(?:my|our)\s+"
    rf"(?:{MODS})(?P<role>{ROLE}|{ANIMAL})\b",
    I,
)


def inversion(clause: Clause, subjects: Subjects, ctx: Context) -> bool:
    """A value before its attribute: "Rust is now my favorite language", "Sarah Lee is my
    manager"; a relation that ended: "Jon isn't my boss any more"."""
    text = LEAD.sub("", clause.text)
    if ended := NO_LONGER_MY.match(text):
        role, gender, kind = role_of(ended["role"])
        person = subjects.known(ended["name"]) or subjects.person(
            ended["name"], role, kind, gender=gender
        )
        clause.subject = person
        subjects.add(person)
        ctx.relation_ended(person, "pet" if kind == "pet" else relation_attribute(role))
        return True
    m = INVERSION.match(text)
    if m is None:
        return False
    value, attr = m["v"], m["attr"]
    owner_word = m["owner"].lower()
    if m["oname"]:
        owner = subjects.known(m["oname"]) or Subject(m["oname"], "", "person")
    elif owner_word in ("my", "our"):
        owner = USER
    else:
        owner = subjects.resolve(owner_word)
        if owner is None:
            return False
    named = subjects.known(clean(value))
    if named is not None and attribute_key(attr) in (named.role, "pet", "partner"):
        clause.subject = named
        clause.mention = (0, 0)
        ctx.relate(named)
        return True
    clause.subject = owner
    subjects.add(owner)
    return _generic(ctx, owner, attr, value)


# Labels read as the user's attributes ("Blood type: O+"); others ("Update: …", "Note: …",
# "Mark: …") are not.
LABELLED = frozenset(SYNONYMS.values()) | {
    "blood type", "shoe size", "star sign", "zodiac sign", "nickname", "pronoun", "height",
    "weight", "major", "nationality", "religion", "timezone", "time zone", "dietary restriction",
}  # fmt: skip


def label(sentence: str, ctx: Context) -> bool:
    """A labelled value: "Favorite color: blue", "Phone: 555-0101"."""
    m = LABEL.match(sentence)
    if m is None or NOT_LABELS.match(m["attr"].strip()) or len(m["attr"].split()) > 4:
        return False
    attr = re.sub(r"^(?:my|our)\s+", "", m["attr"].strip(), flags=I)
    key = attribute_key(attr)
    if key not in LABELLED and not key.startswith("favorite "):
        return False
    ctx.clause.subject = USER
    return _generic(ctx, USER, attr, m["v"])
