"""The values an English predicate states: the handlers of the patterns in english_patterns.py
(a place lived in, a job, an age, a car, a pet or a relative, what ended …), and whether a
clause is about the future or negated."""

import re

from memories.statements.english import LANG, role_of
from memories.statements.keys import relation_attribute
from memories.statements.model import USER
from memories.statements.reading import Context, Handler
from memories.statements.words import (
    BASE_ROLES,
    LANGUAGES,
    NUMBER_WORDS,
    REGIONS,
    VEHICLES,
    word_set,
)

I = re.I  # noqa: E741

FUTURE = re.compile(
    r"\b(?:will|going to|gonna|plan(?:ning)? to|about to|want to|wanna|hope to|hoping to"
    r"|thinking (?:about|of)|(?-i:might|may)|would|soon|tomorrow|next (?:week|month|year"
    r"|weekend|spring|summer|fall|autumn|winter|semester|\w+day)|in (?:a|two|three|a few|few"
    r"|\d+) (?:days?|weeks?|months?|years?)|starting (?:next|in|on|from|tomorrow|\w+day)"
    r"|(?:am|is|are|'m|'re|'s) (?:moving|relocating|starting|joining|switching|changing"
    r"|leaving|quitting|transferring|getting|buying|adopting|heading)|if|wish|once i|after i"
    r"|accepted (?:a|an|the) (?:job|offer|position|role)|job offer|offer from)\b",
    I,
)
FUTURE_WORDS = word_set(
    """will going gonna plan planning about want wanna hope hoping thinking might may would
    soon tomorrow next days weeks months years day week month year starting moving
    relocating joining switching changing leaving quitting transferring getting buying
    adopting heading if wish once after accepted offer ll"""
)


def future(text: str, words: frozenset[str]) -> bool:
    """A clause about the future ("I'm moving there next week") or a wish: no value yet."""
    return not FUTURE_WORDS.isdisjoint(words) and FUTURE.search(text) is not None


NEG_BEFORE = re.compile(r"(?:\b(?:not|never|no longer)|n't)\s+(?:\w+\s+){0,2}$", I)
ANYMORE = re.compile(r"^[^,;.]*?\b(?:anymore|any more|no more)\b", I)


# What may open a request of the assistant before its verb
ASKING = frozenset(("", "please", "just", "please just", "so", "and", "oh and"))


def negated(rest: str, m: re.Match[str]) -> str:
    """How a match is negated: "ended" ("no longer …", "not … anymore"), "not", or ""."""
    before = NEG_BEFORE.search(rest[max(0, m.start() - 40) : m.start()])
    if before is None:
        return ""
    if "no longer" in before.group().lower() or ANYMORE.match(rest[m.end() :]):
        return "ended"
    return "not"


def _place(ctx: Context, value: str | None) -> None:
    """A place said after a job or an employer ("a lawyer in New York"): where they live."""
    if value and value[:1].isupper() and value.split(",")[0] not in NOT_PLACES:
        ctx.say("lives in", value, entity=_entity(ctx, value, "place"))


def breed(ctx: Context, m, rest: str) -> bool:
    if ctx.clause.subject is None or ctx.clause.subject.kind != "pet":
        return False
    ctx.say("breed", m["b"].lower())
    return True


HAN_START = re.compile(r"[\u4e00-\u9fff]")
NOT_PLACES = frozenset(("Python", "Java", "Go", "Rust", "English", "Spanish", "French"))


def _entity(ctx: Context, value: str, kind: str):
    value = re.sub(r"^(?:[Tt]he)\s+", "", value.strip().rstrip("."))
    if not value[:1].isupper() and not value[:1].isdigit():
        return None
    return ctx.entity(value, kind)


def _org(value: str) -> str:
    return re.sub(r"^.*?\b(?:called|named)\s+", "", value.strip(), flags=I)


# --- Handlers --------------------------------------------------------------------------------


def lives(ctx: Context, m, rest: str) -> bool:
    neg = negated(rest, m)
    if neg == "not":
        return True
    value = m["v"]
    if (
        m.groupdict().get("verb")
        and m["verb"].lower().startswith("mov")
        and not (value[:1].isupper() or HAN_START.match(value))
    ):
        return False  # "moved to a new team"
    if value[:1].isdigit():
        ctx.say("address", value, ended=neg == "ended")  # "I live at 18 Willow Crescent"
        return True
    ctx.say("lives in", value, ended=neg == "ended", entity=_entity(ctx, value, "place"))
    return True


# Said after "left X", where one lives now: X was a place ("We left Seattle — we live in
# Tacoma now"), not an employer ("I left Acme but I live in Leeds", "… and moved to Microsoft").
LIVING_NOW = re.compile(r"\b(?:now\s+(?:live|living)\s+in\b|(?:live|living)\s+in\s+.+?\s+now\b)", I)


def left_place(ctx: Context, m, rest: str) -> bool:
    value = clean_value(m["v"])
    verb = m["verb"].lower()
    place = (
        value in ctx.subjects.places
        or value.split(",")[0] in REGIONS
        or LIVING_NOW.search(_after(ctx.clause.sentence, value)) is not None
    )
    if verb == "left" and not place:
        ctx.say("works at", value, ended=True, entity=_entity(ctx, value, "organisation"))
        return True
    ctx.say("lives in", value, ended=True, entity=_entity(ctx, value, "place"))
    return True


def _after(sentence: str, value: str) -> str:
    """What the sentence says after `value` (all of it when it does not hold it as said)."""
    at = sentence.find(value)
    return sentence if at < 0 else sentence[at + len(value) :]


def clean_value(value: str) -> str:
    return value.strip().rstrip(".")


def origin(ctx: Context, m, rest: str) -> bool:
    key = "birthplace" if "born" in m["verb"].lower() else "hometown"
    if key == "birthplace" and re.fullmatch(r"\d{4}", m["v"]):
        ctx.say("birth year", m["v"])
        return True
    ctx.say(key, m["v"], entity=_entity(ctx, m["v"], "place"))
    return True


def job(ctx: Context, m, rest: str) -> bool:
    neg = negated(rest, m) or ("ended" if (m.groupdict().get("neg") or "").strip() else "")
    if neg == "not" or (m.groupdict().get("neg") or "").strip().lower() in ("not", "never"):
        return True
    title = m["job"]
    if re.search(r"\b(?:fan|lover|believer|member|user|owner|supporter|friend)s?$", title, I):
        return False
    ended = neg == "ended"
    ctx.say("job", title, ended=ended)
    org = m.groupdict().get("org") or m.groupdict().get("org2")
    if org:
        org = _org(org)
        key = "school" if re.search(r"\bstudent\b", title, I) else "works at"
        ctx.say(key, org, ended=ended, entity=_entity(ctx, org, "organisation"))
    if not ended:
        _place(ctx, m.groupdict().get("place"))
    return True


# Not what one does now: "don't do this", "never wanted to sing", "used to drive trucks".
NOT_DONE_NOW = re.compile(
    r"n't\b|\b(?:not|never|would|want|wanted|love|wish|used|quit|imagine|dream|gave|do|does"
    r"|doing|did|that|this|it|what)\b",
    I,
)


def for_a_living(ctx: Context, m, rest: str) -> bool:
    if not NOT_DONE_NOW.search(m["v"]):
        ctx.say("job", m["v"])
    return True


def works(ctx: Context, m, rest: str) -> bool:
    neg = negated(rest, m)
    if neg == "not":
        return True
    org = _org(m.groupdict().get("org") or "")
    if org.lower() in ("home", "the moment", "night", "nights", "weekends"):
        return False
    ended = neg == "ended"
    title = m.groupdict().get("job") or m.groupdict().get("job0")
    if title:
        ctx.say("job", title, ended=ended)
    if (
        org
        and BASE_ROLES.get(ctx.subject.role, ctx.subject.role) in CHILDREN
        and SCHOOL_NAME.search(org)
        and STARTED_AT.search(m.group(0))
    ):
        # "My daughter Chloe started at Westfield Elementary": a child's school, not a job
        # ("My son works at / got a job at / teaches at Westfield High" is his job)
        ctx.say("school", org, ended=ended, entity=_entity(ctx, org, "organisation"))
    elif org:
        ctx.say("works at", org, ended=ended, entity=_entity(ctx, org, "organisation"))
    if not ended:
        _place(ctx, m.groupdict().get("place"))
    return True


CHILDREN = frozenset(
    {"son", "daughter", "child", "kid", "grandson", "granddaughter", "stepson", "stepdaughter"}
)
# A school by the last word of its name ("Westfield Elementary", "Marsh Lane Primary"; not
# "Academy Sports", "Prep Kitchen").
SCHOOL_NAME = re.compile(
    r"\b(?:Elementary|Primary|School|Academy|High|Kindergarten|Nursery|Preschool|Montessori)$"
)
STARTED_AT = re.compile(r"\bstart(?:ed|s|ing)?\s+at\b", I)


def student(ctx: Context, m, rest: str) -> bool:
    ctx.say("job", "student")
    org = _org(m["org"])
    ctx.say("school", org, entity=_entity(ctx, org, "organisation"))
    return True


def quit_job(ctx: Context, m, rest: str) -> bool:
    org = m.groupdict().get("org") or ""
    if org.lower().startswith(("my ", "the ", "work", "job")):
        org = ""
    ctx.say(
        "works at", _org(org), ended=True, entity=_entity(ctx, org, "organisation") if org else None
    )
    return True


def study(ctx: Context, m, rest: str) -> bool:
    verb = m["verb"].lower()
    if verb.startswith("stud") and m["org"] in LANGUAGES:
        ctx.say("learning", m["org"])  # "I study French": a language, not a school
        return True
    key = "graduated from" if verb.startswith("graduat") else "school"
    ctx.say(key, m["org"], entity=_entity(ctx, m["org"], "organisation"))
    return True


def age(ctx: Context, m, rest: str) -> bool:
    number = m["n"].lower()
    value = str(NUMBER_WORDS.get(number, number))
    unit = (m.groupdict().get("unit") or "").lower()
    if unit.startswith(("month", "week")):
        value = f"{value} {unit}"
    ctx.say("age", value)
    return True


def car(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m):
        return True
    value = re.sub(
        r"^(?:an?|the|my|our|his|her|their)\s+(?:(?:new|used|brand[- ]new)\s+)?",
        "",
        m["v"],
        flags=I,
    )
    if re.fullmatch(rf"(?:{VEHICLES})", value, I):
        return False  # "I have a car": which, unsaid
    ctx.say("car", value)
    return True


def car_gone(ctx: Context, m, rest: str) -> bool:
    ctx.say("car", re.sub(r"^(?:my|our|the)\s+", "", m["v"], flags=I), ended=True)
    return True


def diet(ctx: Context, m, rest: str) -> bool:
    neg = (m.groupdict().get("neg") or "").strip().lower()
    after = ANYMORE.match(rest[m.end() :]) is not None
    if neg == "no longer" or (neg == "not" and after):
        ctx.say("diet", m["v"].lower(), ended=True)
    elif not neg:
        ctx.say("diet", m["v"].lower())
    return True


ACTIVITIES = {
    "read": "reading", "reread": "reading", "re-read": "reading", "watch": "watching",
    "rewatch": "watching", "re-watch": "watching", "binge": "watching", "play": "playing",
    "listen": "listening to",
}  # fmt: skip


def _activity(word: str | None, ctx: Context) -> str:
    word = (word or "").lower()
    for stem, key in ACTIVITIES.items():
        if word.startswith(stem):
            return key
    return ctx.subjects.activity.get(ctx.subject, "reading")


def doing(ctx: Context, m, rest: str) -> bool:
    key = _activity(m["act"], ctx)
    title = m["title"]
    if key == "playing" and not (title[:1].isupper() or title[:1] in "'\"“‘"):
        return False  # "playing tennis": a pastime, not a current game
    ctx.subjects.activity[ctx.subject] = key
    ctx.say(key, title)
    return True


def started(ctx: Context, m, rest: str) -> bool:
    key = _activity(m["act"], ctx)
    ctx.subjects.activity[ctx.subject] = key
    ctx.say(key, m["title"])
    return True


def finished(ctx: Context, m, rest: str) -> bool:
    key = _activity(m["act"], ctx)
    title = m["title"]
    if title.lower() in ("it", "the book", "the series", "the show", "the game", "that"):
        title = ctx.subjects.last_value.get((ctx.subject, key), "")
    ctx.say(key, title, ended=True)
    return True


def _languages(value: str) -> list[str]:
    return [v for v in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+or\s+", value) if v]


def speaks(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m) == "not":
        return True
    for language in _languages(m["v"]):
        ctx.say("speaks", language)
    if m.groupdict().get("native"):
        ctx.say("native language", m["v"])
    return True


def learning(ctx: Context, m, rest: str) -> bool:
    value = m["v"]
    if re.match(r"(?:a lot|so much|something|that|it|this|how|more|about)\b", value, I):
        return False
    if negated(rest, m) == "not":
        return True
    for one in _languages(value) if re.match(rf"(?-i:{LANG})", value) else [value]:
        ctx.say("learning", re.sub(r"^(?:to|how to)\s+", "", one, flags=I))
    return True


def pet(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m):
        return True
    species, _, _ = role_of(m["sp"])
    if m.groupdict().get("breed"):
        species, _, _ = role_of(m["breed"])
    count = (m.groupdict().get("count") or "").lower()
    number = NUMBER_WORDS.get(count, int(count) if count.isdigit() else 1)
    name = m.groupdict().get("name")
    if number > 1 and not name:
        plural = "pets" if species == "pet" else f"{species}s"
        ctx.say(f"number of {plural}", str(number))
        return True
    subjects = ctx.subjects
    pet_subject = subjects.known(name) if name else None
    if name and pet_subject is None:
        pet_subject = subjects.person(name, species, "pet")
    if pet_subject is None:
        pet_subject = subjects.person("", species, "pet")
    subjects.add(pet_subject)
    if pet_subject.name:
        ctx.relate(pet_subject)
    else:
        ctx.say("pet", species, entity=pet_subject)
    breed = m.groupdict().get("breed") or (m["sp"] if m["sp"].lower() not in _SPECIES_WORDS else "")
    if breed:
        ctx.say("breed", breed.lower(), subject=pet_subject)
    return True


_SPECIES_WORDS = frozenset(
    ("dog", "puppy", "pup", "doggy", "doggo", "pooch", "cat", "kitten", "kitty", "pet", "bird",
     "fish", "rabbit", "bunny", "hamster", "turtle", "horse", "pony")
)  # fmt: skip


def relative(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m):
        return True
    role, gender, kind = role_of(m["role"])
    count = (m.groupdict().get("count") or "").lower()
    number = NUMBER_WORDS.get(count, int(count) if count.isdigit() else 1)
    plural = m["role"].lower() in _PLURALS
    if plural and not m.groupdict().get("name"):
        if number > 1 or count in ("two", "both"):
            word = {"child": "children", "person": "people"}.get(role, role + "s")
            ctx.say(f"number of {word}", str(number))
        return True
    name = m.groupdict().get("name") or ""
    subject = ctx.subjects.person(name, role, kind, gender=gender)
    ctx.subjects.add(subject)
    if name:
        ctx.relate(subject)
    else:
        ctx.say(role, role, subject=USER, entity=subject)
    return True


_PLURALS = word_set(
    """brothers sisters siblings parents sons daughters kids children babies grandkids
    grandchildren cousins friends roommates colleagues coworkers nieces nephews"""
)


def gone(ctx: Context, m, rest: str) -> bool:
    """A person or pet who died or left: the user's relation to them ended."""
    subject = ctx.clause.subject
    if subject is None or subject.is_user:
        return False
    key = "pet" if subject.kind == "pet" else _relation_key(subject.role)
    value = subject.name or subject.role
    ctx.clause.statements = [
        s for s in ctx.clause.statements if not (s.attribute == key and s.value == value)
    ]
    ctx.relation_ended(subject, key)
    return True


def _relation_key(role: str) -> str:
    return relation_attribute(role) if role else "knows"


def email_address(ctx: Context, m, rest: str) -> bool:
    """An address changing: "(my) work address changes to …" — the user's when they say "my",
    though the sentence opened with someone else ("Brightwell is rebranding, so my …")."""
    ctx.say("email", m["v"], subject=USER if m["my"] else None)
    return True


def mail_to(ctx: Context, m, rest: str) -> bool:
    """Asked to send mail somewhere, no one else named as saying so ("Send anything
    work-related to …"): the user's address; not "Don't send …", "Mark says send …", "I send
    everything to …"."""
    if ctx.clause.mention != (0, 0) or rest[: m.start()].strip(" ,").lower() not in ASKING:
        return True
    ctx.say("email", m["v"], subject=USER)
    return True


def lost(ctx: Context, m, rest: str) -> bool:
    subject = ctx.subjects.known(m["name"])
    if subject is None or subject.kind not in ("pet", "person"):
        return False
    ctx.relation_ended(subject, "pet" if subject.kind == "pet" else _relation_key(subject.role))
    return True


def broke_up(ctx: Context, m, rest: str) -> bool:
    who = m["who"]
    subject = ctx.subjects.known(who)
    ctx.say(
        "partner",
        who if subject else re.sub(r"^my\s+", "", who, flags=I),
        ended=True,
        entity=subject,
    )
    return True


def likes(ctx: Context, m, rest: str) -> bool:
    value = m["v"].strip()
    if re.fullmatch(
        r"(?:it|that|this|them|you|him|her|it here|it there|it so much|both)", value, I
    ):
        return False
    verb = m["verb"].lower()
    key = (
        "dislikes"
        if re.match(r"(?:hate|dislike|don't|doesn't|do not|does not|can't|cannot)", verb)
        else "likes"
    )
    ctx.say(key, value)
    return True


def allergy(ctx: Context, m, rest: str) -> bool:
    for one in re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m["v"]):
        ctx.say("allergy", one)
    return True


def household_after(ctx: Context, m, rest: str) -> bool:
    """Who the user lives with, said after where: "I live in Shanghai with my wife"."""
    if not re.search(r"\blives?\s+(?:in|at|near)\b", rest[: m.start()], I):
        return False
    ctx.say("lives with", m["v"])
    return True


def unless_negated(handler: Handler) -> Handler:
    """`handler`, but a negated match ("I don't own a car", "I'm not married") states nothing
    and takes its words."""

    def unless(ctx: Context, m: re.Match[str], rest: str) -> bool:
        return True if negated(rest, m) else handler(ctx, m, rest)

    return unless
