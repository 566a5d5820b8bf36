"""The values an English predicate states, pattern by pattern (most specific first; a match
overlapping an earlier one is skipped)."""

import re
from collections.abc import Callable

from memories.statements.english import (
    ADV,
    ANIMAL,
    ANIMALS,
    BE,
    BREED,
    CAP,
    CAR,
    DIETS,
    EMAIL,
    END,
    JOB,
    LANG,
    LANGS,
    LOOSE_END,
    NAME,
    ORG,
    PHONE,
    PLURAL_ROLE,
    QUOTED,
    ROLE,
    TITLE,
    role_of,
)
from memories.statements.keys import attribute_key, relation_attribute
from memories.statements.model import USER
from memories.statements.reading import Context
from memories.statements.words import (
    BREEDS,
    CAR_MAKES,
    JOB_SUFFIX,
    NUMBER,
    NUMBER_WORDS,
    PERSON_PLURALS,
    PERSON_ROLES,
    REGIONS,
    SPECIES,
    SPECIES_PLURALS,
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
    if kind == "place":
        ctx.subjects.places.add(value)
    return ctx.subjects.known(value) or ctx.subjects.person(value, "", kind)


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


def left_place(ctx: Context, m, rest: str) -> bool:
    value = clean_value(m["v"])
    verb = m["verb"].lower()
    if verb == "left" and value not in ctx.subjects.places and value.split(",")[0] not in REGIONS:
        ctx.say("works at", value, ended=True, entity=_entity(ctx, value, "organisation"))
        return True
    ctx.say("lives in", value, ended=True, entity=_entity(ctx, value, "place"))
    return True


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


def works(ctx: Context, m, rest: str) -> bool:
    neg = negated(rest, m)
    if neg == "not":
        return True
    org = _org(m.groupdict().get("org") or "")
    if org.lower() in ("home", "the moment", "night", "nights", "weekends"):
        return False
    ended = neg == "ended"
    if m.groupdict().get("job"):
        ctx.say("job", m["job"], ended=ended)
    if org:
        ctx.say("works at", org, ended=ended, entity=_entity(ctx, org, "organisation"))
    if not ended:
        _place(ctx, m.groupdict().get("place"))
    return True


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


def retired(ctx: Context, m, rest: str) -> bool:
    ctx.say("job", "retired")
    return True


def study(ctx: Context, m, rest: str) -> bool:
    key = "graduated from" if m["verb"].lower().startswith("graduat") else "school"
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


def pending(ctx: Context, m, rest: str) -> bool:
    attr = m["attr"]
    if m.groupdict().get("v"):
        ctx.say(attr, m["v"])
    else:
        ctx.subjects.pending = (ctx.subject, attribute_key(attr), ctx.clause)
    return True


def phone(ctx: Context, m, rest: str) -> bool:
    ctx.say("phone", m["v"])
    return True


def email(ctx: Context, m, rest: str) -> bool:
    ctx.say("email", m["v"])
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


def diet_ended(ctx: Context, m, rest: str) -> bool:
    ctx.say("diet", m["v"].lower(), ended=True)
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


def stopped_learning(ctx: Context, m, rest: str) -> bool:
    ctx.say("learning", m["v"], ended=True)
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
    ctx.say(key, value, subject=USER, ended=True, entity=subject)
    ctx.subjects.related.add(subject)
    return True


def _relation_key(role: str) -> str:
    return relation_attribute(role) if role else "knows"


def lost(ctx: Context, m, rest: str) -> bool:
    subject = ctx.subjects.known(m["name"])
    if subject is None or subject.kind not in ("pet", "person"):
        return False
    ctx.say(
        "pet" if subject.kind == "pet" else _relation_key(subject.role),
        subject.name,
        subject=USER,
        ended=True,
        entity=subject,
    )
    ctx.subjects.related.add(subject)
    return True


def married(ctx: Context, m, rest: str) -> bool:
    name = m["name"]
    subject = ctx.subjects.known(name) or ctx.subjects.person(name, "partner", "person")
    ctx.subjects.add(subject)
    ctx.say("partner", name, entity=subject)
    ctx.subjects.related.add(subject)
    return True


def status(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m):
        return True
    ctx.say("relationship status", m["v"].lower())
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


def reports_to(ctx: Context, m, rest: str) -> bool:
    name = m["name"]
    subject = ctx.subjects.known(name) or ctx.subjects.person(name, "manager", "person")
    ctx.subjects.add(subject)
    ctx.say("manager", name, entity=subject)
    ctx.subjects.related.add(subject)
    return True


def commute(ctx: Context, m, rest: str) -> bool:
    ctx.say("commute", m["v"].lower())
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


def household(ctx: Context, m, rest: str) -> bool:
    ctx.say("lives with", m["v"])
    return True


def household_after(ctx: Context, m, rest: str) -> bool:
    """Who the user lives with, said after where: "I live in Shanghai with my wife"."""
    if not re.search(r"\blives?\s+(?:in|at|near)\b", rest[: m.start()], I):
        return False
    ctx.say("lives with", m["v"])
    return True


def name(ctx: Context, m, rest: str) -> bool:
    ctx.say("name", m["v"])
    return True


def birthday(ctx: Context, m, rest: str) -> bool:
    ctx.say("birthday", m["v"])
    return True


def salary(ctx: Context, m, rest: str) -> bool:
    ctx.say("salary", m["v"])
    return True


def owns(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m):
        return True
    ctx.say("owns", m["v"])
    return True


def plays(ctx: Context, m, rest: str) -> bool:
    if negated(rest, m):
        return True
    ctx.say("plays", m["v"].lower())
    return True


# --- The table -------------------------------------------------------------------------------

PLACE = rf"(?:{CAP}|(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}?[\w-]+{END})"
IN_PLACE = rf"(?:\s+(?:in|based in|out of)\s+(?P<place>{CAP}))?"

Handler = Callable[[Context, re.Match[str], str], bool]
# What a clause must hold for a pattern to be tried (its third element): one of some strings
# (lower case), or one of a set of words. Cheap tests first: the reader runs on every message.
BE_WORDS = ("am ", "is ", "are ")
DIET_WORDS = tuple(
    word_set(
        """vegetarian vegan pesc keto paleo gluten dairy lactose kosher halal flexitarian carnivore
    plant celiac"""
    )
)


def _words(*names) -> frozenset[str]:
    return frozenset(w for name in names for w in re.findall(r"[a-z0-9-]+", name.lower()))


VEHICLE_GATE = _words(*CAR_MAKES, *VEHICLES.split("|"))
ANIMAL_GATE = _words(*BREEDS, *SPECIES, *SPECIES_PLURALS)
ROLE_GATE = _words(*PERSON_ROLES, *PERSON_PLURALS)
WORD = re.compile(r"[a-z0-9-]+")


def _trigger(trigger: tuple[str, ...] | frozenset[str]) -> re.Pattern[str] | frozenset[str]:
    return (
        trigger if isinstance(trigger, frozenset) else re.compile("|".join(map(re.escape, trigger)))
    )


def triggered(trigger, lower: str, words: frozenset[str]) -> bool:
    """Whether a clause (`lower`: its text in lower case; `words`: its words) may match a
    pattern: it holds one of the trigger's strings, or one of its words."""
    if isinstance(trigger, frozenset):
        return not trigger.isdisjoint(words)
    return trigger.search(lower) is not None


PATTERNS: list[tuple[re.Pattern[str], Handler, re.Pattern[str] | frozenset[str]]] = [
    (re.compile(p, I), h, _trigger(trigger))
    for p, h, trigger in (
        # Living somewhere
        (
            rf"\b(?:moved|relocated)\s+from\s+{CAP}\s+to\s+(?P<v>{CAP})",
            lives,
            ("moved", "relocated"),
        ),
        (
            rf"\b(?P<verb>live|lives|living|reside|resides|residing)\s+(?:(?!with\b)\w+\s+){{0,3}}?"
            rf"(?:in|at)\s+(?P<v>{PLACE})",
            lives,
            ("liv", "resid"),
        ),
        (
            rf"\b(?:am|is|are)\s+{ADV}(?:based|located|settled|living|staying|residing|settling)"
            rf"\s+(?:down\s+)?(?:in|into|out in|over in)\s+(?P<v>{CAP})",
            lives,
            ("based", "located", "settl", "living", "staying", "resid"),
        ),
        (rf"\b(?:got\s+)?settled\s+(?:in|into)\s+(?P<v>{CAP})", lives, ("settled",)),
        (
            rf"\b(?P<verb>moved|relocated|emigrated|immigrated)\s+(?:back\s+|over\s+|out\s+|down\s+|up\s+|here\s+)?"
            rf"(?:to|into)\s+(?P<v>{CAP})",
            lives,
            ("moved", "relocated", "emigrated", "immigrated"),
        ),
        (rf"\bcalls?\s+(?P<v>{CAP})\s+home\b", lives, ("home",)),
        (rf"\bleft\s+{CAP}\s+for\s+(?P<v>{CAP})", lives, ("left",)),
        (
            rf"\b(?P<verb>moved\s+(?:away\s+)?from|moved\s+out\s+of|left)\s+(?P<v>{CAP})",
            left_place,
            ("moved", "left"),
        ),
        (
            rf"\b(?P<verb>(?:am|is|are)\s+(?:originally\s+)?from|grew\s+up\s+in|was\s+born\s+in)"
            rf"\s+(?P<v>{CAP}|\d{{4}})",
            origin,
            ("from", "grew up", "born"),
        ),
        # Working somewhere, as something
        (
            rf"\bwork(?:s|ing)?\s+as\s+(?P<job>{JOB}|(?:an?\s+)?[\w-]+(?:\s+[\w-]+)?{END})"
            rf"(?:\s+(?:at|for|with)\s+(?P<org>{ORG}))?{IN_PLACE}",
            works,
            ("work",),
        ),
        (
            rf"\b(?:am|is|are)\s+(?:a\s+)?(?:\w+\s+){{0,2}}?student\s+at\s+(?P<org>{ORG})",
            student,
            ("student",),
        ),
        (
            rf"{BE}(?P<neg>not\s+|no\s+longer\s+|never\s+)?(?P<job>{JOB})(?:\s+(?:at|for|with)"
            rf"\s+(?P<org>{ORG}){END})?(?:,?\s+(?:working|employed)\s+(?:at|for)\s+(?P<org2>{ORG}))?"
            rf"{IN_PLACE}",
            job,
            BE_WORDS,
        ),
        (
            rf"{BE}(?P<job>(?:an?|the)\s+(?:[\w-]+\s+){{0,2}}?{JOB_SUFFIX})\s+(?:at|for)\s+"
            rf"(?P<org>{ORG}){END}{IN_PLACE}",
            job,
            (" at ", " for "),
        ),
        (
            rf"\b(?:work(?:s|ing)?|employed|teach(?:es|ing)?)\s+(?:(?:full|part)[- ]time\s+)?"
            rf"(?:at|for|by)\s+(?P<org>{ORG}){END}{IN_PLACE}",
            works,
            ("work", "employ", "teach"),
        ),
        (rf"\b(?:work(?:s|ing)?)\s+with\s+(?P<org>{CAP}){END}", works, ("work",)),
        (
            rf"\b(?:became|become|got\s+promoted\s+to|was\s+promoted\s+to|been\s+promoted\s+to)"
            rf"\s+(?P<job>{JOB}|(?:an?\s+)?(?:senior|lead|head|chief|principal|staff)\s+[\w\s-]+?{END})",
            job,
            ("becam", "become", "promot"),
        ),
        (
            rf"\b(?:(?:have|has)\s+)?{ADV}(?:started|begun|began|joined|start)\s+(?:working\s+|work\s+"
            rf"|(?:a|my|the)\s+new\s+(?:job|position|role)\s+)?(?:at|with|for)\s+(?P<org>{CAP})",
            works,
            ("start", "began", "begun", "joined"),
        ),
        (
            rf"\b(?:joined|got\s+(?:a\s+)?(?:job|position|role)\s+(?:at|with)|landed\s+a\s+"
            rf"(?:job|position|role)\s+(?:at|with))\s+(?P<org>{CAP})(?:\s+as\s+(?P<job>{JOB}))?",
            works,
            ("joined", "job", "position", "role"),
        ),
        (
            rf"\b(?:quit|left|resigned\s+from|retired\s+from|(?:was|got)\s+(?:laid\s+off|fired|let\s+go)"
            rf"\s+from|stopped\s+working\s+(?:at|for))\s+(?:my\s+job\s+at\s+)?(?P<org>{CAP}|my\s+job"
            rf"|my\s+position|the\s+company|work)",
            quit_job,
            ("quit", "left", "resign", "retired", "laid off", "fired", "let go", "stopped working"),
        ),
        (
            r"\b(?:quit|left)\s+my\s+job\b|\b(?:got|was|been)\s+(?:laid\s+off|fired|let\s+go)\b"
            r"|\bresigned\b",
            quit_job,
            ("quit", "left", "laid off", "fired", "let go", "resigned"),
        ),
        (rf"{BE}retired\b|\b(?:just\s+)?retired\b(?!\s+from)", retired, ("retired",)),
        (
            rf"\b(?P<verb>study|studies|studying|attend|attends|attending|graduated\s+from)\s+"
            rf"(?:[a-z]+\s+){{0,2}}?(?:at\s+)?(?P<org>{CAP}(?:University|College|School|Institute"
            rf"|Academy|MIT|UCLA|NYU|Tech)?)",
            study,
            ("stud", "attend", "graduat"),
        ),
        # A pet's breed: "Whiskers is a tabby"
        (rf"{BE}(?:an?\s+)?(?:[a-z]+\s+)?(?P<b>{BREED})\b", breed, BE_WORDS),
        # Age
        (
            rf"{BE}(?P<n>{NUMBER})(?:\s+(?P<unit>years?|yrs?|months?|weeks?)\s+old|\s*(?:yo|y/o)\b"
            rf"|(?=\s*(?:[,.;!?]|$|\s+(?:and|but|now|this|next|years?|today|already|soon)\b)))",
            age,
            BE_WORDS,
        ),
        (rf"\b(?:just\s+)?turned\s+(?P<n>{NUMBER})\b", age, ("turned",)),
        # Phone, email: a new one, said now or in the next sentence
        (
            rf"\b(?:got|have|has|changed|switched\s+to|set\s+up)\s+(?:a|an|my)\s+new\s+(?P<attr>"
            rf"phone\s+number|number|phone|cell(?:\s+number)?|mobile(?:\s+number)?|email(?:\s+address)?"
            rf"|home\s+address|address)\b(?:\s*[:,—–-]?\s*(?:it's\s+|it\s+is\s+|which\s+is\s+)?"
            rf"(?P<v>{PHONE}|{EMAIL}))?",
            pending,
            ("new",),
        ),
        (rf"\b(?:reach|call|text)\s+me\s+(?:at|on)\s+(?P<v>{PHONE})", phone, ("me ",)),
        (rf"\b(?:email|mail|reach)\s+me\s+at\s+(?P<v>{EMAIL})", email, ("me ",)),
        # Car
        (
            rf"\b(?:sold|got\s+rid\s+of|totaled|totalled|wrecked)\s+(?P<v>(?:my|our|the)\s+"
            rf"(?:[\w-]+\s+){{0,2}}?(?:{VEHICLES}|{CAR})"
            rf"(?:\s+(?!(?:and|but|so|to|for|with|because|last|this|yesterday)\b)[\w-]+)?)",
            car_gone,
            ("sold", "rid of", "totaled", "totalled", "wrecked"),
        ),
        (
            rf"\bdrives?\s+(?!(?:to|me|us|him|her|them|home|around|back|there)\b)(?P<v>(?:an?|the|my"
            rf"|our|his|her)\s+(?:[\w-]+\s+){{0,4}}?[\w-]+|{CAP}){END}",
            car,
            ("driv",),
        ),
        (
            rf"\b(?:bought|got|purchased|leased|own|owns|have|has|picked\s+up|drive)\s+(?:(?:a|an|my"
            rf"|our)\s+)?(?:new\s+|used\s+|brand[- ]new\s+)?(?P<v>(?:[\w-]+\s+){{0,2}}?(?:{CAR})"
            rf"(?:\s+(?:[\w-]+|\d+)){{0,2}}?|(?:[\w-]+\s+){{0,2}}?(?:{VEHICLES})){END}",
            car,
            VEHICLE_GATE,
        ),
        # Diet
        (
            rf"{BE}(?P<neg>no\s+longer\s+|not\s+)?(?:an?\s+)?(?:strict\s+|full\s+|fully\s+|mostly\s+)?"
            rf"(?P<v>{DIETS})\b",
            diet,
            DIET_WORDS,
        ),
        (
            rf"\b(?:went|gone|turned|became|become|switched\s+to)\s+(?:a\s+)?(?P<v>{DIETS})\b",
            diet,
            DIET_WORDS,
        ),
        (
            rf"\b(?:stopped|quit|gave\s+up)\s+being\s+(?:a\s+)?(?P<v>{DIETS})\b",
            diet_ended,
            DIET_WORDS,
        ),
        # Reading, watching, playing
        (
            rf"\b(?:am|is|are)\s+{ADV}(?P<act>reading|re-?reading|watching|re-?watching|binge[- ]?"
            rf"watching|bingeing|playing|listening\s+to)\s+(?:(?:the|a|an)\s+(?:book|novel|series"
            rf"|show|game|album|podcast)\s+(?:called\s+)?)?(?P<title>{TITLE})",
            doing,
            ("reading", "watching", "playing", "listening", "binge"),
        ),
        (
            rf"\b(?:started|began|begun|picked\s+up|cracked\s+open|dove\s+into|dived\s+into)\s+"
            rf"(?P<act>reading|watching|playing|to\s+read|to\s+watch)?\s*(?P<title>{QUOTED}|(?-i:[A-Z]"
            rf"[\w'’:-]*(?:\s+[A-Z][\w'’:-]*)*)(?=\s+by\s+[A-Z]))",
            started,
            ("start", "began", "begun", "picked up", "cracked", "dove", "dived"),
        ),
        (
            rf"\b(?:started|began)\s+(?P<act>reading|watching|playing)\s+(?P<title>{TITLE})",
            started,
            ("start", "began"),
        ),
        (
            rf"^\s*(?:(?:currently|now|still|also)\s+)?(?P<act>reading|re-?reading|watching|re-?watching"
            rf"|binge[- ]?watching|playing)\s+(?P<title>{TITLE})",
            doing,
            ("reading", "watching", "playing", "binge"),
        ),
        (
            rf"\b(?:finished|completed|done\s+with)\s+(?P<act>reading|watching|playing)?\s*"
            rf"(?P<title>{QUOTED}|(?-i:[A-Z][\w'’:-]*(?:\s+[A-Z][\w'’:-]*)*)|it|the\s+book|the\s+series"
            rf"|the\s+show)",
            finished,
            ("finish", "complet", "done with"),
        ),
        (
            rf"\b(?:halfway|half\s+way)\s+through\s+(?P<act>)(?P<title>{TITLE})",
            doing,
            ("halfway", "half way"),
        ),
        # Languages
        (rf"\bnative\s+(?P<v>(?-i:{LANG}))\s+speaker(?P<native>)", speaks, ("native",)),
        (
            rf"\b(?:speak|speaks|speaking)\s+(?:(?:some|a\s+little|a\s+bit\s+of|basic|fluent"
            rf"|conversational|decent|good|broken|native|fluently)\s+)?(?P<v>{LANGS})",
            speaks,
            ("speak",),
        ),
        (rf"\bfluent\s+in\s+(?P<v>{LANGS})", speaks, ("fluent",)),
        (
            rf"\b(?:stopped|quit|gave\s+up)\s+(?:learning\s+)?(?P<v>(?-i:{LANG})|(?<=learning\s)[\w\s]+?{END})",
            stopped_learning,
            ("stopped", "quit", "gave up"),
        ),
        (
            rf"\b(?:learning|studying|picking\s+up|taking)\s+(?:(?:some|a\s+little|a\s+bit\s+of|basic"
            rf"|more)\s+)?(?P<v>{LANGS})",
            learning,
            ("learning", "studying", "picking up", "taking"),
        ),
        (
            rf"\b(?:am|is|are|been|started|start)\s+{ADV}(?:learning)\s+(?:how\s+to\s+|to\s+)?"
            rf"(?P<v>[\w-]+(?:\s+[\w-]+){{0,3}}?){END}",
            learning,
            ("learning",),
        ),
        # Pets and people: had, adopted, gone
        (
            rf"\b(?:have|has|got|adopted|rescued|bought|brought\s+home|own|owns|took\s+in|welcomed"
            rf"|fostering|are\s+fostering)\s+(?:(?P<count>{NUMBER}|a|an|another)\s+)?(?:new\s+|little"
            rf"\s+|young\s+|old\s+|(?:\d+|{NUMBER})[- ](?:year|month|week)[- ]old\s+"
            rf"|(?!(?:{ANIMAL})\b)[a-z]+\s+)?"
            rf"(?P<sp>{ANIMAL}|{ANIMALS})(?:\s*(?:[—–-]|,)\s*(?:an?\s+)?(?P<breed>{ANIMAL}))?"
            rf"(?:\s*,?\s*(?:named|called|whose\s+name\s+is)\s+(?P<name>{NAME}))?",
            pet,
            ANIMAL_GATE,
        ),
        (
            rf"\b(?:an?|my|our|the)\s+(?:new\s+|little\s+)?(?P<sp>{ANIMAL})\s*,?\s+(?:named|called)"
            rf"\s+(?P<name>{NAME})",
            pet,
            ("named", "called"),
        ),
        (
            rf"\b(?:have|has|got)\s+(?:(?P<count>{NUMBER}|a|an)\s+)?(?:(?:older|younger|little|big"
            rf"|twin|baby|half|step|new)[\s-]+)?(?P<role>{ROLE}|{PLURAL_ROLE})(?:\s*,?\s+(?:named"
            rf"|called)\s+(?P<name>{NAME}))?\b",
            relative,
            ROLE_GATE,
        ),
        (
            r"\b(?:passed\s+away|died|passed\s+on|was\s+put\s+down|was\s+put\s+to\s+sleep|had\s+to"
            r"\s+be\s+put\s+down|ran\s+away|went\s+missing|is\s+no\s+longer\s+with\s+us|crossed\s+the"
            r"\s+rainbow\s+bridge|is\s+gone(?=\s*(?:[,.;!]|$|\s+now\b)))\b",
            gone,
            (
                "passed",
                "died",
                "put down",
                "put to sleep",
                "ran away",
                "missing",
                "no longer with",
                "rainbow",
                "gone",
            ),
        ),
        (
            rf"\b(?:lost|put\s+down|had\s+to\s+put\s+down|said\s+goodbye\s+to|rehomed|gave\s+away)"
            rf"\s+(?:(?:our|my)\s+(?:[\w-]+\s+)?)?(?P<name>{NAME})",
            lost,
            ("lost", "put down", "said goodbye", "rehomed", "gave away"),
        ),
        (
            rf"\b(?:married\s+to|married|engaged\s+to)\s+(?P<name>{NAME})",
            married,
            ("married", "engaged"),
        ),
        (
            rf"{BE}(?:happily\s+)?(?P<v>married|single|divorced|engaged|widowed|separated)\b",
            status,
            ("married", "single", "divorced", "engaged", "widowed", "separated"),
        ),
        (r"\bgot\s+(?P<v>married|divorced|engaged)\b", status, ("married", "divorced", "engaged")),
        (
            rf"\b(?:broke\s+up\s+with|split\s+up\s+with|split\s+from|divorced|separated\s+from)\s+"
            rf"(?P<who>{NAME}|my\s+(?:wife|husband|girlfriend|boyfriend|partner|fiancée?))",
            broke_up,
            ("broke up", "split", "divorced", "separated"),
        ),
        (rf"\breport(?:s|ing)?\s+(?:directly\s+)?to\s+(?P<name>{NAME})", reports_to, ("report",)),
        # Commute
        (
            rf"\bcommutes?\s+(?:to\s+(?:work|the\s+office)\s+)?(?:by|on|via)\s+(?P<v>[\w\s-]+?){END}",
            commute,
            ("commut",),
        ),
        (
            r"\b(?P<v>bikes?|cycles?|walks?|drives?|runs?|skates?|scooters?)\s+to\s+(?:work|the\s+office"
            r"|school|campus)\b",
            commute,
            (" to work", " to the office", " to school", " to campus"),
        ),
        (
            r"\b(?:take|takes|ride|rides|catch|catches)\s+(?:the\s+)?(?P<v>train|bus|subway|metro|tube"
            r"|ferry|light\s+rail|tram|shuttle)\s+to\s+(?:work|the\s+office|school)",
            commute,
            (" to work", " to the office", " to school"),
        ),
        # Likes, allergies, household, name, birthday, pay, things owned, played
        (
            rf"^\s*(?:{ADV})?(?P<verb>like|likes|love|loves|prefer|prefers|enjoy|enjoys|adore|adores"
            rf"|hate|hates|dislike|dislikes|don't\s+like|doesn't\s+like|do\s+not\s+like|does\s+not"
            rf"\s+like|can't\s+stand|cannot\s+stand)\s+(?P<v>[^;:!?()]+?)(?=\s*[;:!?()]|\s*$|,?\s+"
            rf"(?:and|but)\s+(?:i|he|she|they|we)\b)",
            likes,
            ("like", "love", "prefer", "enjoy", "ador", "hate", "dislike", "stand"),
        ),
        (rf"{BE}allergic\s+to\s+(?P<v>[^;:!?()]+?){LOOSE_END}", allergy, ("allergic",)),
        (
            r"\blives?\s+with\s+(?P<v>[^,;:!?()]+?)(?=\s*[,;:!?()]|\s*$|\s+in\b)",
            household,
            ("with",),
        ),
        (
            r"\bwith\s+(?P<v>(?:my|our)\s+[^,;:!?()]+?)(?=\s*[,;:!?()]|\s*$|\s+in\b)",
            household_after,
            ("with my", "with our"),
        ),
        (rf"^\s*(?:am|is)\s+called\s+(?P<v>{NAME})", name, ("called",)),
        (rf"\bwas\s+born\s+on\s+(?P<v>[\w\s,]+?){END}", birthday, ("born",)),
        (
            r"\b(?:make|makes|earn|earns|am\s+paid|get\s+paid|gets\s+paid)\s+(?P<v>(?:about\s+"
            r"|around\s+|roughly\s+|over\s+|under\s+)?[$€£¥]?\s?\d[\d,.]*\s*(?:k|K|thousand|million"
            r"|m)?(?:\s*(?:dollars|euros|pounds|yuan|usd|rmb))?(?:\s+(?:a|an|per)\s+(?:year|month"
            r"|hour|week)|\s+annually|\s+yearly)?)",
            salary,
            ("make", "earn", "paid"),
        ),
        (
            rf"\b(?:own|owns)\s+(?P<v>(?:an?|two|three|\d+)\s+(?:[\w-]+\s+){{0,3}}?[\w-]+){END}",
            owns,
            ("own",),
        ),
        (
            r"\bplays?\s+(?:the\s+)?(?P<v>guitar|piano|drums|violin|cello|bass|ukulele|saxophone|flute"
            r"|trumpet|tennis|soccer|football|basketball|baseball|golf|chess|volleyball|hockey"
            r"|badminton|squash|pickleball|cricket|rugby|poker|table\s+tennis|ping\s+pong)\b",
            plays,
            ("play",),
        ),
    )
]
CALL_ME = re.compile(rf"(?:^|\bcan\s+|\bplease\s+|\bjust\s+)call\s+me\s+(?P<v>{NAME})", I)
