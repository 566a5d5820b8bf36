"""A user's message read into subjects, the values it states of them, and one fact a subject.

The message is cut into sentences (memories.sentences) and each sentence into clauses where a
new subject starts ("I speak Spanish | and I'm learning Mandarin", "我买了特斯拉 | 我老婆开丰田").
Names are learnt first ("my brother Mark", "a labrador named Luna", "我哥哥马克"), so "Mark",
"he" and "他" later in the message find their subject. Questions state nothing; a clause about
the future ("I'm moving there next week", "下个月搬") states no current value.
"""

import re
from collections import defaultdict

from memories.sentences import HAN, sentence_spans, sentences
from memories.statements import (
    chinese,
    chinese_patterns,
    english,
    english_patterns,
    english_values,
)
from memories.statements.keys import relation_attribute
from memories.statements.model import USER, MessageReading, Statement, Subject, SubjectFact
from memories.statements.reading import Clause, Context, Subjects, pending_said
from memories.statements.retell import retell
from memories.statements.words import LANGUAGES, word_set

# Said after "I'm" with a capital, and no one's name.
NOT_A_NAME = LANGUAGES | word_set(
    """American British Canadian Australian Scottish Mexican Brazilian Indian Catholic
    Christian Jewish Muslim Buddhist Hindu Vegan Vegetarian Fine Good Great Okay Back Home Here
    Done Ready"""
)

I = re.I  # noqa: E741

# Remarks in parentheses ("Sara (with no H)"), not area codes ("+1 (415) 555-0199").
PARENTHESES = re.compile(r"\s*[(（][^()（）]*[A-Za-z\u4e00-\u9fff][^()（）]*[)）]")
VERB_AHEAD = (
    r"(?:is|are|was|were|has|have|had|lives|works|just|also|still|now|passed|died|loves|likes"
    r"|got|turned|speaks|drives|'s|'re|keeps|teaches|plays|moved|started|left|joined|can|will"
    r"|does|doesn't|isn't|went)\b"
)
SUBJECT_AHEAD = (
    rf"(?:(?:i|i'm|i've|i'd|i'll|we|we're|we've|he|she|they|he's|she's|they're)(?![\w])"
    rf"|(?:my|our|his|her|their)\s+(?:[\w'-]+\s+){{0,3}}?[\w-]+(?:'s)?\s+{VERB_AHEAD}"
    rf"|(?-i:{english.NAMEWORD})(?:'s)?\s+(?:is|was|has|had|lives|works|just|also|passed"
    rf"|died|loves|got|turned|speaks|drives|is\s+now)\b)"
)
EN_SPLIT = re.compile(
    rf"\s*;\s*|\s+[—–]\s+(?={SUBJECT_AHEAD})|\s+-\s+(?={SUBJECT_AHEAD})|:\s+(?={SUBJECT_AHEAD})"
    rf"|,\s*(?:(?:and|but|so|because|though|although|while|whereas|plus)\s+)?(?={SUBJECT_AHEAD})"
    rf"|\s+(?:and|but|so|because|while|whereas|though|although|since|then|plus|that)\s+"
    rf"(?={SUBJECT_AHEAD})",
    I,
)
ZH_SPLIT = re.compile(r"[，,；;：:]\s*")
FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|my|me|we|our|us)\b|我", I)
FIRST_PERSON_SUBJECT = re.compile(r"\b(?:i|we)\b|我", I)
MOVEMENT = re.compile(
    rf"\b(?:went|been|go|going|flew|drove|travel(?:l)?ed|trip|visit(?:ed|ing)?|back\s+from"
    rf"|vacation\s+in|holiday\s+in|honeymoon\s+in)\s+(?:to\s+)?(?P<v>{english.CAP})",
    I,
)
RESOLVE = re.compile(
    r"^(?:it's|it\s+is|that's|that\s+is|the\s+new\s+(?:one|number|address|email)\s+is"
    r"|which\s+is|now\s+it's)\s+(?:now\s+)?(?P<v>.+?)\s*$",
    I,
)


def message_read(text: str) -> MessageReading:
    """The subjects, per-subject facts and statements of a user's message (English, Chinese
    or mixed). Plain regular expressions and dictionaries: it runs on every user message."""
    subjects = Subjects()
    read: list[tuple[str, str, bool]] = []  # (as `sentences` reads it, cleaned, a question)
    for start, end in sentence_spans(text):
        piece = text[start:end]
        question = piece.rstrip().endswith(("?", "？"))
        for sentence in sentences(piece):
            read.append((sentence, PARENTHESES.sub("", sentence), question))
    for _, cleaned, _ in read:
        (chinese.introduce if CHINESE_GRAMMAR.search(cleaned) else english.introduce)(
            cleaned, subjects
        )
    english.introduce_across(PARENTHESES.sub("", text), subjects)
    clauses: list[Clause] = []
    for index, (sentence, cleaned, question) in enumerate(read):
        if question:
            continue
        previous: Clause | None = None
        for clause in _clauses(sentence, cleaned, index):
            clause.before = previous
            _read(clause, subjects, previous, clauses[-1] if clauses else None)
            clauses.append(clause)
            previous = clause
    statements = _settled(clauses)
    return MessageReading(
        subjects=tuple(subjects.order),
        facts=_facts(clauses, subjects),
        statements=statements,
        user_clauses=tuple(
            _fact(USER, [[c]], subjects)
            for c in clauses
            if c.subject is not None and c.subject.is_user and c.statements
        ),
    )


# Chinese function words: a clause holding one is read as Chinese, even with English names
# in it ("我哥哥Mark在Google工作"); "I live in 杭州 now" is English.
CHINESE_GRAMMAR = re.compile(r"[我你他她它们是在的了住和有叫个不也都很]")


def _clauses(sentence: str, cleaned: str, index: int) -> list[Clause]:
    chinese_words = CHINESE_GRAMMAR.search(cleaned) is not None
    splitter = ZH_SPLIT if chinese_words else EN_SPLIT
    spans, start = [], 0
    for cut in splitter.finditer(cleaned):
        spans.append((start, cut.start()))
        start = cut.end()
    spans.append((start, len(cleaned)))
    clauses = []
    for a, b in spans:
        words = cleaned[a:b]
        if not words.strip():
            continue
        a += len(words) - len(words.lstrip())
        clauses.append(
            Clause(
                sentence, index, words.strip(), chinese_words, a, cleaned, continues=bool(clauses)
            )
        )
    return clauses


NAMING = re.compile(r"^\s*names?\s+(?:is|are)\s+(?P<v>.+)$", I)


def _read(
    clause: Clause, subjects: Subjects, previous: Clause | None, before_clause: Clause | None
) -> None:
    ctx = Context(subjects, clause)
    zh = clause.chinese
    if FIRST_PERSON.search(clause.text):
        subjects.add(USER)
    for name, subject in list(subjects.named.items()):
        if name in clause.text:
            subjects.add(subject)
    if not zh:
        for m in MOVEMENT.finditer(clause.text):
            place = english_values.clean_value(m["v"])
            if subjects.known(place) is None and place not in english.LANGUAGES:
                subjects.places.add(place)
                subjects.add(subjects.person(place, "", "place"))
    if _resolved(clause, subjects, ctx):
        return
    if (chinese.inversion if zh else english.inversion)(clause, subjects, ctx):
        return
    if not zh and not clause.continues and english.label(clause.text, ctx):
        return
    rest = (chinese.mention if zh else english.mention)(clause, subjects)
    if clause.subject is None and clause.pronoun:
        return  # "she" with no one to be: said of someone this message does not name
    if (
        clause.possessive
        and before_clause is not None
        and clause.subject is not None
        and clause.subject.name
        and (naming := NAMING.match(rest))
        and naming["v"].strip(" .!") == clause.subject.name
    ):
        # "Her name is Mochi" after "we adopted a grey cat": part of that clause's telling
        # (alone, "My wife's name is Sarah" is read as what it says)
        clause.subject = None
        clause.pronoun = clause.possessive = False
        before_clause.naming = clause
        return
    if clause.subject is None and zh:
        _inherit(clause, previous)
    if (chinese.future if zh else _future)(clause.text):
        _relate(ctx)
        return
    if zh and chinese.resolve(clause, subjects, ctx, rest):
        return
    if (chinese.question if zh else _question)(clause.text):
        clause.subject = None  # asked, not said
        return
    _relate(ctx)
    if (chinese.generic if zh else english.generic)(ctx, rest):
        ctx.taken.append((0, len(rest)))  # "my shoe size is 10" is no age
    if zh:
        for pattern, handler in chinese_patterns.PATTERNS:
            for m in pattern.finditer(rest):
                if handler not in chinese_patterns.READS_PAST and chinese.PAST.search(
                    rest[: m.start()]
                ):
                    continue  # "之前说五岁": said of before
                if ctx.free(m) and handler(ctx, m, rest):
                    ctx.take(m)
    else:
        if clause.subject == USER or clause.subject is None:
            rest = english.others_relative_left_out(rest)
        lower = rest.lower()
        words = frozenset(english_patterns.WORD.findall(lower))
        for pattern, handler, trigger in english_patterns.PATTERNS:
            if not english_patterns.triggered(trigger, lower, words):
                continue
            for m in pattern.finditer(rest):
                if ctx.free(m) and handler(ctx, m, rest):
                    ctx.take(m)
    if zh:
        _named_in_passing(clause, subjects)
    if not zh and (
        (m := english_patterns.CALL_ME.search(clause.text))
        or ((m := english_patterns.I_AM_NAME.match(clause.text)) and m["v"] not in NOT_A_NAME)
    ):
        ctx.say("name", m["v"], subject=USER)
        clause.subject = clause.subject or USER
    if clause.unknown:
        if clause.statements:
            subjects.add(clause.subject)
        else:  # "Dune was great": no one this message speaks of (yet: "Ethan是…，在华为…")
            clause.tentative, clause.subject = clause.subject, None
    _related_in(clause, ctx)
    if clause.unknown and clause.statements and clause.inherited and previous is not None:
        previous.subject = clause.subject  # "Ethan是做硬件的，在华为当射频工程师"
    if clause.subject is None and clause.statements:
        if english.DETERMINER_START.match(english.LEAD.sub("", clause.text)) and not zh:
            clause.statements = []  # "The access check lives in the domain"
            return
        if zh and not chinese.IMPLICIT_START.match(chinese.LEAD.sub("", clause.text)):
            clause.statements = []  # "合租的室友也养了只狗": someone else's
            return
        clause.subject = USER
        clause.implicit = not FIRST_PERSON_SUBJECT.search(clause.text)
        subjects.add(USER)


def _inherit(clause: Clause, previous: Clause | None) -> None:
    """A Chinese clause that does not say its subject: "我" when it holds one further on
    ("跟她开会我就…"), else who the clauses before it met ("养了一只柴犬叫芝麻，两岁") or were
    about."""
    if "我" in clause.text:
        return
    while previous is not None and clause.subject is None:
        if previous.introduced is not None:
            clause.subject = previous.introduced
        elif previous.subject is not None:
            clause.subject = previous.subject
        elif previous.tentative is not None:
            clause.subject, clause.unknown = previous.tentative, True
        previous = previous.before
    clause.inherited = clause.subject is not None


def _named_in_passing(clause: Clause, subjects: Subjects) -> None:
    """A person met by name in passing ("…的闺女叫高梓萱"): the clauses after speak of her."""
    for m in re.finditer(r"叫(?:做)?([A-Z][a-zA-Z]+|[\u4e00-\u9fff]{1,4})", clause.text):
        for name, subject in subjects.named.items():
            if m[1].startswith(name) and subject != clause.subject:
                clause.introduced = subject
                subjects.add(subject)


QUESTION_START = re.compile(
    r"^(?:what|where|who|when|why|how|which|do|does|did|can|could|would|should|is|are|am)\b", I
)


def _question(text: str) -> bool:
    return QUESTION_START.match(english.LEAD.sub("", text)) is not None


def _future(text: str) -> bool:
    return english_values.future(text, frozenset(english_patterns.WORD.findall(text.lower())))


# Whose kin named beside them are the user's too: a partner's, a parent's.
HOUSEHOLD = frozenset({"partner", "mother", "father", "parent"})


def _related_in(clause: Clause, ctx: Context) -> None:
    """The user's relation to the people and pets a clause introduces by name in passing
    ("We live in Shanghai, my wife Ana, our daughter Lily and me")."""
    if clause.subject is None or not any(name in clause.text for name in ctx.subjects.named):
        return
    if clause.chinese and not (
        clause.subject.is_user or relation_attribute(clause.subject.role) in HOUSEHOLD
    ):
        return  # "我同事张伟和老婆小丽…": 张伟's wife; "我老婆和儿子乐乐…": the user's son
    for pattern in (chinese.AMONG,) if clause.chinese else english.INTRODUCTIONS[1:3]:
        for m in pattern.finditer(clause.text):
            subject = ctx.subjects.known(m["name"])
            if subject is not None and subject != clause.subject:
                ctx.relate(subject)


def _relate(ctx: Context) -> None:
    if ctx.clause.unknown:
        return
    subject = ctx.clause.subject
    if (
        subject is not None
        and subject.name
        and subject.kind in ("person", "pet")
        and (subject.role or subject.kind == "pet")
    ):
        ctx.relate(subject)


def _resolved(clause: Clause, subjects: Subjects, ctx: Context) -> bool:
    """The value announced before: "It's 555-0202 now" after "I got a new phone number"."""
    if subjects.pending is None or clause.chinese:
        return False
    m = RESOLVE.match(english.LEAD.sub("", clause.text))
    if m is None:
        return False
    return pending_said(clause, subjects, ctx, m["v"])


def _settled(clauses: list[Clause]) -> tuple[Statement, ...]:
    """Every statement once, in order; an end with no value said ("I finished it") is
    dropped when the same message goes on to the new value."""
    seen: set[Statement] = set()
    ordered: list[Statement] = []
    for clause in clauses:
        kept = []
        for statement in clause.statements:
            if statement in seen:
                continue
            seen.add(statement)
            kept.append(statement)
        clause.statements = kept
        ordered += kept
    later_values = defaultdict(int)
    for statement in ordered:
        if statement.single and not statement.ended:
            later_values[(statement.subject, statement.attribute)] += 1
    result = []
    for statement in ordered:
        key = (statement.subject, statement.attribute)
        if statement.single and not statement.ended:
            later_values[key] -= 1
        if statement.ended and not statement.value and later_values[key] > 0:
            for clause in clauses:
                if statement in clause.statements:
                    clause.statements.remove(statement)
            continue
        result.append(statement)
    return tuple(result)


def _facts(clauses: list[Clause], subjects: Subjects) -> tuple[SubjectFact, ...]:
    """One fact a subject, when the message speaks of another subject than the user."""
    by_subject: dict[Subject, list[Clause]] = {}
    for clause in clauses:
        if clause.subject is not None:
            if (
                clause.subject.is_user
                and not clause.statements
                and (len(clause.text.split()) < 3 or clause.possessive)
            ):
                continue  # "I mean", "our names are almost the same"
            by_subject.setdefault(clause.subject, []).append(clause)
    if all(s.is_user for s in by_subject):
        return ()
    facts = []
    for subject, own in by_subject.items():
        runs: list[list[Clause]] = []
        for clause in own:
            last = runs[-1][-1] if runs else None
            if (
                last is not None
                and last.index == clause.index
                and clause.continues
                and _next(clauses, last) is clause
            ):
                runs[-1].append(clause)
            else:
                runs.append([clause])
        facts.append(_fact(subject, runs, subjects))
    return tuple(facts)


def _next(clauses: list[Clause], clause: Clause) -> Clause | None:
    at = clauses.index(clause)
    return clauses[at + 1] if at + 1 < len(clauses) else None


def _fact(subject: Subject, runs: list[list[Clause]], subjects: Subjects) -> SubjectFact:
    told: list[str] = []
    statements: list[Statement] = []
    said: list[str] = []
    for n, run in enumerate(runs):
        first = run[0]
        if first.asked_in is not None:
            told.append(_told(first.asked_in, subjects, describe=False))
        last = run[-1]
        text = first.cleaned[first.start : last.start + len(last.text)]
        joined = Clause(first.sentence, first.index, text, first.chinese, subject=first.subject)
        joined.mention, joined.pronoun, joined.implicit = (
            first.mention,
            first.pronoun,
            first.implicit,
        )
        joined.inherited = first.inherited
        told.append(_told(joined, subjects, describe=n == 0))
        if last.naming is not None:  # "…adopted a beagle. His name is Pickle", "…柯基，叫豆豆"
            naming = _told(last.naming, subjects, describe=False)
            told[-1] = told[-1].rstrip("。.") + ("，" if last.chinese else ". ") + naming
        for clause in run:
            statements += clause.statements
            if clause.sentence not in said:
                said.append(clause.sentence)
    separator = "。" if runs[0][0].chinese else ". "
    content = separator.join(t.rstrip("。.") for t in told if t)
    return SubjectFact(subject, content, tuple(statements), tuple(said))


def _told(clause: Clause, subjects: Subjects, *, describe: bool) -> str:
    """A clause retold in the third person; in a fact's first clause, a pronoun or a bare
    name becomes who it is ("She" → "The user's friend Sarah")."""
    text = clause.text
    start, end = clause.mention
    subject = clause.subject
    if clause.chinese:
        if describe and clause.pronoun and subject is not None and not subject.is_user:
            text = text[:start] + _zh_description(subject, subjects) + text[end:]
        elif clause.implicit or (describe and clause.inherited and subject is not None):
            who = "我" if subject is None or subject.is_user else _zh_description(subject, subjects)
            text = text[:start] + who + text[start:]
        return retell(text, chinese=True)
    lead = english.LEAD.match(text)
    keep = 0
    if lead is not None:
        keep = lead.start("when") if lead["when"] else lead.end()
        keep = min(keep, start)
    if clause.implicit and (call := CALL_ME.match(text[start:])):
        return "The user can be reached " + text[start + call.end() :].strip()
    appositive = re.match(r"\s*,\s*(?:my|our)\s", text[end:], I) is not None
    if (
        describe
        and clause.pronoun
        and subject is not None
        and not subject.is_user
        and not appositive
    ):
        described = _description(subject, subjects)
        after = text[end:]
        if clause.possessive and not described.endswith("'s"):
            described += "'s "
        elif m := re.match(r"'(s|re|ll|d|ve)\b", after):
            after = {"s": " is", "re": " is", "ll": " will", "d": " would", "ve": " has"}[
                m[1]
            ] + after[m.end() :]
        text = text[:start] + described + after
    elif clause.implicit:
        first = text[start:].split(" ", 1)[0].lower()
        said = "I'm " if first.endswith("ing") and first not in ("bring", "sing", "ring") else "I "
        text = text[:start] + said + text[start : start + 1].lower() + text[start + 1 :]
    return retell(text[keep:])


CALL_ME = re.compile(
    r"(?:you\s+can\s+|please\s+|just\s+)?(?:call|text|email|e-mail|reach|contact|ping)\s+me\s+", I
)


def _description(subject: Subject, subjects: Subjects) -> str:
    if subject.kind in ("place", "organisation", "thing") or not (
        subject.role or subject.kind == "pet"
    ):
        return subject.name
    if not subject.name:
        return f"the user's {subjects.said_role.get(subject) or subject.role}"
    role = subjects.said_role.get(subject) or subject.role or "pet"
    if HAN.search(role):
        role = subject.role or "pet"
    return " ".join(f"the user's {role} {subject.name}".split())


def _zh_description(subject: Subject, subjects: Subjects) -> str:
    if subject.kind in ("place", "organisation", "thing") or not (
        subject.role or subject.kind == "pet"
    ):
        return subject.name
    role = subjects.said_role.get(subject) or subject.role or "宠物"
    # Two Latin words apart ("用户的manager Rachel Lim")
    between = " " if role[-1:].isascii() and subject.name[:1].isascii() and subject.name else ""
    return f"用户的{role}{between}{subject.name}"
