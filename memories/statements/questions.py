"""A recall query read: whose value it asks for, which attribute, the words naming what is
asked; and which entity names a text mentions. Whether a memory says anything about what is
asked is memories/statements/focus.py."""

import re
from functools import lru_cache

from memories.sentences import latin_bounded
from memories.statements.english import ANIMAL, ANIMALS, MODS, NAMEWORD, PLURAL_ROLE, REGION, ROLE
from memories.statements.english import role_of as english_role
from memories.statements.keys import attribute_key, noun_key
from memories.statements.model import USER, QuestionReading, Subject
from memories.statements.words import (
    CONCEPT_PHRASES,
    HAN,
    ZH_CONCEPT_WORDS,
    ZH_PERSON_ROLES,
    ZH_SPECIES,
    ZH_SURNAMES,
    ZH_TITLES,
    alternation,
    word_set,
)

I = re.I  # noqa: E741
HAN_RE = re.compile(f"[{HAN}]")
PARENTHESES = re.compile(r"\s*[(（][^()（）]*[)）]")

# --- English ---------------------------------------------------------------------------------

COUNT = re.compile(r"^\s*how\s+(?:many|much|old|long|often|tall|far|big)\b|\bnumber\s+of\b", I)
ROLE_SUBJECT = re.compile(
    rf"\b(?:the\s+)?user's\s+(?P<mods>{MODS})(?P<role>{ROLE}|{PLURAL_ROLE}|{ANIMAL}|{ANIMALS})"
    rf"(?:'s?)?(?:\s+(?P<name>(?-i:{NAMEWORD}))(?:'s)?)?(?![\w-])",
    I,
)
QUESTION_WORDS = word_set(
    """What Why How Where When Who Whom Whose Which Is Are Was Were Does Do Did Can Could
    Should Would Will Has Have Had Tell Describe List Name Give Remind"""
)
NAMES = re.compile(rf"(?-i:{NAMEWORD}(?:\s+{NAMEWORD})*(?:,\s*(?:{REGION})\b)?)")
NOT_SUBJECT_BEFORE = re.compile(
    r"(?:\b(?:to|in|at|from|for|with|about|near|of|visit|visited|into|on|and|than|like)\s+)$", I
)
# "Does the user speak French?": a name after the user is the object, not who is asked about.
AFTER_USER = re.compile(
    r"\bthe\s+user\s+(?:(?!(?:say|said|think|thought|tell|told|mention|mentioned|hear|heard|know"
    r"|knew)\b)[\w'-]+\s+)+$",
    I,
)
LOOKUPS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, I), key)
    for p, key in (
        (
            r"\bwhere\s+(?:does|do|did)\s+.+?\s+(?:live|stay|reside)\b|\bwhere\s+(?:is|are)\s+.+?\s+"
            r"(?:living|based|located|staying)\b|\bwhat\s+(?:city|town|country|state)\s+(?:does|do|is"
            r"|are)\b.*\b(?:live|in|based|living)\b|\bwhere\s+.+?\s+(?:lives|moved)\b",
            "lives in",
        ),
        (
            # Not "work out" (exercise)
            r"\bwhere\s+(?:does|do|did)\s+.+?\s+work\b(?!\s+out\b(?!\s+of))|\bwho\s+(?:does|do|did)\s+.+?"
            r"\s+work\s+for\b|\b(?:what|which)\s+(?:company|firm|organi[sz]ation|employer)\b"
            r"|\bemployer\b|\bwhere\s+(?:is|are)\s+.+?\s+(?:working(?!\s+out\b(?!\s+of))|employed)\b",
            "works at",
        ),
        (
            r"\bwhat\s+(?:does|do)\s+.+?\s+do(?:\s+for\s+(?:work|a\s+living))?(?:\s|$)|\bwhat\s+is\s+.+?"
            r"(?:job|occupation|profession|career)\b|\bwhat\s+(?:does|do)\s+.+?\s+work\s+as\b|\bwhat"
            r"\s+kind\s+of\s+work\b|\bwhat\s+(?:job|profession|occupation)\b",
            "job",
        ),
        (r"\bhow\s+old\b|\bwhat\s+age\b|\bage\s+of\b|'s\s+age\b", "age"),
        (
            r"\bwhat\s+(?:kind\s+of\s+|type\s+of\s+|make\s+of\s+|brand\s+of\s+|model\s+of\s+)?(?:car"
            r"|vehicle)\b|\bwhat\s+(?:does|do)\s+.+?\s+drive\b",
            "car",
        ),
        (r"\b(?:work|office)\s+(?:phone|number|mobile)\b", "work phone"),
        (r"(?<!work\s)(?<!office\s)\bphone\b|\bcell\s+number\b|\bmobile\s+number\b", "phone"),
        (r"\be-?mail\b", "email"),
        (
            r"\bwhat\s+(?:language|languages)\s+(?:is|are|does|do)\s+.+?\s+(?:learning|learn|studying"
            r"|study)\b|\bwhat\s+is\s+.+?\s+learning\b",
            "learning",
        ),
        (
            r"\bwhat\s+(?:language|languages)\s+(?:does|do|can)\s+.+?\s+speak\b|\blanguages?\s+(?:does"
            r"|do|can)\s+.+?\s+speak\b",
            "speaks",
        ),
        (
            r"\bwhat\s+(?:book|novel)\b.*\breading\b|\bwhat\s+is\s+.+?\s+(?:currently\s+)?reading\b"
            r"|\bcurrent\s+book\b",
            "reading",
        ),
        (
            r"\bwhat\s+(?:show|series|movie|film)\b.*\bwatching\b|\bwhat\s+is\s+.+?\s+watching\b",
            "watching",
        ),
        (r"\bwhat\s+game\b.*\bplaying\b", "playing"),
        (
            r"\b(?:is|are)\s+.+?\s+(?:still\s+)?(?:a\s+)?(?:vegetarian|vegan|pescatarian|keto)\b"
            r"|\bdiet\b|\beats?\s+meat\b",
            "diet",
        ),
        (
            r"\bwho\s+is\s+.+?(?:manager|boss|supervisor)\b|\bwho\s+does\s+.+?\s+report\s+to\b",
            "manager",
        ),
        (
            r"\bwhich\s+(?:university|college|school)\b|\bwhere\s+did\s+.+?\s+(?:study|go\s+to"
            r"\s+(?:school|college|university))\b|\bwhat\s+(?:school|university|college)\b",
            "school",
        ),
        (r"\bhow\s+(?:does|do)\s+.+?\s+(?:get\s+to\s+work|commute)\b|\bcommute\b", "commute"),
        (r"\bname\b|\bwhat\s+(?:is|are)\s+.+?\s+called\b|\bwho\s+is\s+the\s+user's\s+\w+$", "name"),
        (r"\bbirthday\b|\bwhen\s+was\s+.+?\s+born\b", "birthday"),
        (r"\baddress\b", "address"),
        (r"\bsmok(?:e|es|ing|er)\b|\bcigarettes?\b|\bvap(?:e|es|ing)\b", "smoking"),
        (
            r"\b(?:drink|drinks|drinking)\s+(?:alcohol|booze|beer|wine)\b|\balcohol\b"
            r"|^(?:does|do|did)\s+.+?\s+drink$",
            "drinking",
        ),
        (r"\bsalary\b|\bhow\s+much\s+(?:does|do)\s+.+?\s+(?:make|earn)\b|\bincome\b", "salary"),
        (r"\bwhere\s+is\s+.+?\s+from\b|\bhometown\b|\bwhere\s+did\s+.+?\s+grow\s+up\b", "hometown"),
    )
)
# Habits a yes or no asks about as an attribute: one given up is an end the graph keeps.
HABITS = frozenset({"smoking", "drinking"})
WHAT_IS = re.compile(r"^(?:what|what's|which)\s+(?:is|are|was|were)?\s*(?P<np>.+)$", I)
AUX = r"(?:does|do|did|is|are|was|were|has|have|had|can|will|would|should)"
WHAT_NP = re.compile(
    rf"^(?:what|which)\s+(?P<np>(?:(?!{AUX}\b)[a-z-]+\s+){{0,4}}?(?!{AUX}\b)[a-z-]+)\s+{AUX}\s+",
    I,
)
COPULA_END = re.compile(r"\b(?:is|are|was|were)\s+$", I)
OWNED = re.compile(r"(?:the\s+)?[\w-]+'s\s+(?P<np>[a-z-]+(?:\s+[a-z-]+)?)$", I)
WHO_IS_ROLE = re.compile(r"^who\s+(?:is|are|was)\s+(?:the\s+)?user's\s+", I)
HOW_MANY = re.compile(rf"^how\s+(?:many|much)\s+(?!{AUX}\b)(?P<np>[a-z-]+(?:\s+[a-z-]+)?)", I)
# "How much does the library job pay?", "How much is the rent?": what is asked follows the verb.
HOW_MUCH_IS = re.compile(rf"^how\s+(?:many|much)\s+{AUX}\s+(?P<np>.+)$", I)
IS_DIET = re.compile(
    r"^(?:is|are)\s+.+?\s+(?:still\s+)?(?:a\s+)?(?P<d>vegetarian|vegan|pescatarian|keto)\b", I
)
# "Does the user play golf?", "Has Mark got a dog?": what the yes or no is about is the object
# of the verb ("golf", "dog"), or the verb itself when it has none ("Does the user smoke?").
YES_NO = re.compile(
    rf"^{AUX}\s+(?:the\s+user|he|she|they|[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)\s+"
    r"(?:still\s+|ever\s+|currently\s+|now\s+|already\s+|really\s+)*"
    r"(?P<verb>[a-z-]+)(?:\s+(?:got\s+)?(?P<np>[\w\s'-]+?))?(?:\s+(?:now|anymore|any\s+more))?$",
    I,
)
NOT_LOOKUP = re.compile(
    r"^(?:why|how\s+come|tell\s+me|describe|does|do|did|has|have|can|could|should|would|will"
    r"|was|were)\b",
    I,
)
RELATIVE = re.compile(
    r"\s+(?:the\s+user(?!'s)|he|she|they|that|which|who|whom|(?-i:[A-Z][a-z]+))\b.*$|\s+(?:does|do|did"
    r"|is|was|has)\b.*$",
    I,
)
DETERMINERS = re.compile(r"^(?:(?:the|a|an|his|her|their|its|the\s+user's|user's)\s+)+", I)
LIGHT = frozenset(
    {"kind", "type", "sort", "thing", "things", "one", "ones", "exact", "specific"}
    # "opinion on working remotely": what it is about says what is asked
    | {"opinion", "opinions", "thoughts", "view", "views", "feelings", "feeling", "take"}
    | {"stance", "attitude"}
)
GENERIC_HEADS = frozenset(
    {
        "number",
        "type",
        "size",
        "date",
        "code",
        "level",
        "status",
        "day",
        "time",
        "year",
        "id",
        "group",
    }
)
PREPOSITIONS = frozenset(
    {"of", "in", "at", "on", "for", "from", "with", "to", "by", "about", "near", "into", "over"}
    | {"under", "around", "behind", "beside", "outside", "inside", "off", "across"}
)
CONJUNCTIONS = frozenset({"or", "and", "nor"})
MODIFIER_AFTER = re.compile(rf"\s+(?:{'|'.join(sorted(PREPOSITIONS - {'of'}))})\s.*$", I)
LEADING_PREPOSITION = re.compile(rf"^(?:{'|'.join(sorted(PREPOSITIONS - {'of'}))})\s+", I)
VERBISH_END = re.compile(r"\s+(?:called|named|like|about)$", I)
TRAILING_TIME = re.compile(
    r"\s+(?:right\s+now|now|nowadays|currently|these\s+days|at\s+the\s+moment|at\s+present"
    r"|any\s*more|lately|today)$",
    I,
)


def _focus_of(np: str) -> list[str]:
    """The words of a noun phrase that name what is asked: "brand of guitar" → brand,
    guitar; "favorite programming language" → favorite, language; "social security number"
    stays whole (its head says little alone)."""
    # "been to Japan": the object of a leading preposition is what is asked, named or not
    np = RELATIVE.sub("", LEADING_PREPOSITION.sub("", np.strip()))
    np = VERBISH_END.sub("", np)
    words: list[str] = []
    for part in re.split(r"\s+of\s+", np):
        part = DETERMINERS.sub("", part.strip().lower())
        part = part.split("'s ")[-1]
        tokens = [t for t in part.split() if t not in LIGHT]
        # The head comes before what modifies it: "role at school": role; "the bakery in
        # [Cork]": bakery; "[Lisbon] or [Porto]"
        while tokens and tokens[0] in PREPOSITIONS:
            tokens.pop(0)
        cut = next((n for n, t in enumerate(tokens) if t in PREPOSITIONS | CONJUNCTIONS), None)
        tokens = tokens[:cut]
        if not tokens:
            continue
        if tokens[0] in ("favorite", "favourite", "fav") and len(tokens) > 1:
            words += ["favorite", tokens[-1]]
        elif tokens[-1] in GENERIC_HEADS and len(tokens) > 1:
            words.append(" ".join(tokens))
        elif " ".join(tokens[-2:]) in CONCEPT_PHRASES:
            words.append(" ".join(tokens[-2:]))  # "email address" is no street address
        else:
            words.append(tokens[-1])
    return words


def _english(text: str) -> QuestionReading:
    text = TRAILING_TIME.sub("", text)  # "What is the user's job now?" asks the job
    count = COUNT.search(text) is not None
    closed = False
    subject = USER
    names: list[str] = []
    for m in NAMES.finditer(text):
        name = m.group()
        if m.start() == 0 and name.split()[0] in QUESTION_WORDS:
            name = name.split(None, 1)[1] if " " in name else ""
        if not name or name in QUESTION_WORDS:
            continue
        names.append(name)
        before = text[: m.start()]
        if (
            subject is USER
            and NOT_SUBJECT_BEFORE.search(before) is None
            and not AFTER_USER.search(before)
        ):
            subject = Subject(name, "", "person")
    if m := ROLE_SUBJECT.search(text):
        role, _, kind = english_role(m["role"])
        name = m["name"] or (subject.name if not subject.is_user else "")
        subject = Subject(name, role, kind)  # type: ignore[arg-type]
    found: list[tuple[int, str]] = []
    for pattern, key in LOOKUPS:
        if m := pattern.search(text):
            found.append((m.start(), key))
    if m := re.search(
        r"\bfavou?rite\s+(?P<x>[a-z][\w\s-]*?)(?=\s+(?:of|does|is|do|did|for)\b|$)", text, I
    ):
        found.append((m.start(), "favorite " + noun_key(m["x"])))
    if not found and (
        m := re.search(r"\bwhat\s+(?:is|are)\s+(?:.*?'s\s+)(?P<attr>[a-z][\w\s-]*?)$", text, I)
    ):
        head = MODIFIER_AFTER.sub("", m["attr"])  # "role at school": role
        if set(head.lower().split()) <= LIGHT:
            head = m["attr"]  # "opinion on working remotely" is about remote work
        found.append((m.start(), attribute_key(head)))
    focus: list[str] = []
    if (m := HOW_MANY.match(text)) or (m := WHAT_NP.match(text)) or (m := HOW_MUCH_IS.match(text)):
        focus += _focus_of(m["np"])
        if (
            m.re is WHAT_NP
            and COPULA_END.search(m.group())
            and (owned := OWNED.match(text, m.end()))
        ):
            focus += _focus_of(owned["np"])  # "What make is the user's bike?": make, bike
    elif m := WHAT_IS.match(text):
        np = m["np"]
        if ROLE_SUBJECT.search(np) or re.search(r"'s\s", np) or re.match(r"the\s+\w", np, I):
            focus += _focus_of(np)
    elif m := IS_DIET.match(text):
        focus.append(m["d"].lower())
    elif m := YES_NO.match(text):
        focus += _focus_of(m["np"]) if m["np"] else [m["verb"].lower()]
        closed = True
    focus = [
        f
        for f in focus
        if f not in ("user", subject.role, subject.name.lower(), "name") or f == "name"
    ]
    if not subject.is_user and subject.role and subject.role in focus:
        focus.remove(subject.role)
    attributes = _ordered(found)
    if WHO_IS_ROLE.match(text) and not subject.is_user:
        attributes = ("name",)  # "Who is the user's manager?": the manager, by name
    if NOT_LOOKUP.match(text) and not IS_DIET.match(text):
        attributes = tuple(a for a in attributes if a in HABITS)  # "Does the user smoke?"
    choices = ()
    if (m := EITHER_OR.search(text)) and m["b"].lower() not in NOT_A_CHOICE:
        choices = (m["a"].lower(), m["b"].lower())
        focus = []  # "Is Toffee male or female?" asks neither word alone
    return _reading(subject, names, focus, count, attributes, closed=closed, choices=choices)


EITHER_OR = re.compile(
    r"(?:^|\s)(?:an?\s+|the\s+)?(?P<a>[\w'-]+),?\s+or\s+(?:an?\s+|the\s+)?(?P<b>[\w'-]+)$", I
)
NOT_A_CHOICE = frozenset({"not", "no", "else", "anything", "something", "so", "both", "neither"})


def _ordered(found: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(key for _, key in sorted(found, key=lambda pair: pair[0])))


# --- Chinese ---------------------------------------------------------------------------------

ZH_ROLE_SUBJECT = re.compile(
    rf"用户的?(?:双胞胎|龙凤胎)?(?P<role>{alternation([*ZH_PERSON_ROLES, *ZH_SPECIES])})"
)
ZH_NAME_SUBJECT = re.compile(
    # A full name with its title: "王建华老师" is 王建华 (shorter, "汪健老师", "汪老师", "高中老师",
    # it is read whole, and the graph finds whom it names)
    rf"^(?:(?P<titled>(?=[{ZH_SURNAMES}])[{HAN}]{{3}}){ZH_TITLES}"
    rf"|(?P<name>[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)?|[{HAN}]{{1,4}}?))(?=是|在|住|做|的|今年|多大|几"
    r"|开|有|叫|姓|喜欢|会|去|现在|目前|最|养|平时|一般|还|都|为什么|怎么|从事|干|主要|负责|工作|上班"
    r"|学|读)"
)
ZH_NOT_NAMES = frozenset(
    (
        *("用户", "他", "她", "它", "谁", "什么", "哪", "哪里", "为什么", "怎么", "他们", "她们"),
        *("我", "我们", "你", "您", "你们", "咱们"),
    )
)
ZH_COUNT = re.compile(r"多少|几|多大|多久|多长时间|多高")
ZH_DEMONSTRATIVES = "那个|这个|那位|这位|那些|这些"
ZH_DEMONSTRATIVE = re.compile(rf"^(?:{ZH_DEMONSTRATIVES})")
# A question opening with a preposition or a demonstrative ("在杭州开花店的…", "那个…") does
# not open with a name.
ZH_NOT_NAME_START = re.compile(rf"^(?:[在从跟给对把被]|{ZH_DEMONSTRATIVES})")
ZH_SURNAME = re.compile(r"姓什么|什么姓")
ZH_LOOKUPS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), key)
    for p, key in (
        (r"住在哪|住哪|在哪(?:里|儿)?住|住在什么地方|哪个城市|住在什么城市", "lives in"),
        (r"在哪(?:里|儿|家公司)?(?:工作|上班)|在什么公司|哪家公司|为谁工作|公司是", "works at"),
        (r"是做什么的|是干什么的|做什么工作|干什么工作|从事什么|职业|什么工作|是干嘛的", "job"),
        (r"几岁|多大|年龄|多少岁", "age"),
        (r"开什么车|什么车|开的是什么|车是什么", "car"),
        (r"(?:工作|办公室?)(?:电话|号|手机)", "work phone"),
        (r"(?<!工作)(?<!办公)(?<!办公室)(?:手机|电话|号码)", "phone"),
        (r"邮箱|邮件", "email"),
        (r"(?:说|讲)什么语言|会什么语言|会说什么|会讲什么", "speaks"),
        (r"在学什么|学什么语言|在学哪|(?:周末|平时|现在|目前|最近|课后)学什么", "learning"),
        (r"在读什么|在看什么书|读什么书|在读哪", "reading"),
        (r"在追什么|在看什么剧", "watching"),
        (r"吃素|素食|饮食", "diet"),
        (
            r"怎么(?:去|来)?(?:上班|通勤)|通勤方式|靠什么通勤|(?:坐|开|骑)什么(?:车)?(?:去)?上班",
            "commute",
        ),
        (r"(?:老板|上司|领导|主管|boss|manager)是谁|向谁汇报|汇报给谁|report给谁", "manager"),
        (r"哪个大学|什么学校|哪所|哪个学校", "school"),
        (r"叫什么|名字", "name"),
        (ZH_SURNAME.pattern, "surname"),
        (r"生日", "birthday"),
        (r"地址|住址", "address"),
        (r"抽烟|吸烟|烟瘾|戒烟", "smoking"),
        (r"喝酒|饮酒|酒瘾|戒酒", "drinking"),
        (r"工资|薪水|收入|月薪|年薪|挣多少|赚多少", "salary"),
    )
)
ZH_FAVORITE = re.compile(
    rf"最(?:喜欢|爱)的?(?:是)?(?:什么|哪个|哪种)?(?P<x>[{HAN}A-Za-z]{{1,6}}?)(?:是|$|呢|？)"
)
# Not "…的猫是什么品种": what follows 什么 is what is asked (the focus), the cat its subject.
WHAT_ENDS = r"(?=$|[呢呀啊吗嘛哦？?。！!]|时候|样)"
ZH_GENERIC = re.compile(rf"的(?P<attr>[{HAN}]{{1,6}}?)是(?:什么{WHAT_ENDS}|多少|哪|谁)")
ZH_FOCUS = re.compile(rf"(?P<f>[{HAN}]{{1,6}}?)(?:是什么|是多少|是哪|叫什么|有多少|是谁)")
# "用户的猫现在叫什么名字？": when, said after what is asked about, is no part of it.
ZH_WHEN_AFTER = re.compile(r"(?:现在|目前|如今|当前)$")
# A count of someone's thing ("…的房租一个月多少", "…的房子花了多少钱"): the thing, before the
# period or the verb.
ZH_HOW_MUCH = re.compile(
    rf"的(?P<f>[{HAN}]{{1,6}}?)(?:一个月|每个?月|一年|每年|今年|现在|目前|平时|每天|一天|每周|一共|总共"
    r"|大概|大约)*(?:花了|花|要|是|有|赚|挣)?多少"
)
# "用户会说日语吗？", "用户养宠物吗？": the yes or no is about what follows the verb.
ZH_YES_NO = re.compile(
    rf"(?:会|有|喜欢|爱|去|养|学|玩|打|弹|说|讲|吃|喝|抽|开)+(?:过|了)?(?P<f>[{HAN}A-Za-z]{{1,6}}?)吗$"
)
ZH_WHAT = re.compile(
    rf"什么(?P<f>[{HAN}]{{1,6}}?)(?=$|[？?呢吗了]|的[{HAN}])|(?:几|多少)(?:个|只|位|辆|本|家|套|台)(?P<g>[{HAN}]{{1,3}})"
)


def _chinese(text: str) -> QuestionReading:
    count = ZH_COUNT.search(text) is not None
    subject = USER
    names: list[str] = []
    if (
        (m := ZH_NAME_SUBJECT.match(text))
        and (name := m["titled"] or m["name"]) not in ZH_NOT_NAMES
        and not ZH_NOT_NAME_START.match(name)
        and not name.startswith("用户")
    ):
        subject = Subject(name, "", "person")
        names.append(name)
    names += [n for n in re.findall(r"[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)*", text) if n not in names]
    if m := ZH_ROLE_SUBJECT.search(text):
        word = m["role"]
        if word in ZH_PERSON_ROLES:
            subject = Subject("", ZH_PERSON_ROLES[word][0], "person")
        else:
            subject = Subject("", ZH_SPECIES[word], "pet")
    found = [(m.start(), key) for pattern, key in ZH_LOOKUPS if (m := pattern.search(text))]
    if m := ZH_FAVORITE.search(text):
        found.append((m.start(), attribute_key("最喜欢的" + m["x"])))
    if not found and (m := ZH_GENERIC.search(text)):
        found.append((m.start(), attribute_key(ZH_WHEN_AFTER.sub("", m["attr"]))))
    focus: list[str] = []
    for m in ZH_FOCUS.finditer(text):
        word = ZH_WHEN_AFTER.sub("", re.sub(r"^.*的", "", m["f"]))
        if (
            word
            and word not in ZH_NOT_NAMES
            and not word.startswith("用户")
            and word != subject.name
        ):
            focus.append(word)
    if m := ZH_HOW_MUCH.search(text):  # "用户在香港的房租一个月多少？": 房租
        word = m["f"]
        if (
            len(word) > 1
            and word not in focus
            and word not in ZH_NOT_NAMES
            and word[-1] not in "了过"
        ):
            focus.append(word)
    for m in ZH_WHAT.finditer(text):
        for word in re.split("的", m["f"] or m["g"] or ""):
            if word and word not in focus:
                focus.append(word)
    if ZH_SURNAME.search(text):
        focus.append("姓")
    closed = False
    if not focus and (m := ZH_YES_NO.search(text)):
        focus.append(m["f"])
        closed = True
    role = m["role"] if (m := ZH_ROLE_SUBJECT.search(text)) else None
    # "那个同学": 同学; the asked relative is no focus ("用户的双胞胎儿子": 双胞胎)
    focus = [word for f in focus if (word := ZH_DEMONSTRATIVE.sub("", f)) and word != role]
    focus = list(dict.fromkeys(p for word in focus for p in _zh_parts(word) if p != role))
    attributes = _ordered(found)
    if re.match(r"^(?:为什么|说说|讲讲|介绍一下|告诉我)", text) or re.search(r"吗$", text):
        attributes = tuple(a for a in attributes if a == "diet" or a in HABITS)
    choices = _zh_choices(text)
    if choices:
        focus = []
    return _reading(subject, names, focus, count, attributes, closed=closed, choices=choices)


ZH_CHOICE_VERBS = "喜欢|爱|会|有|去|养|学|玩|打|弹|说|讲|吃|喝|抽|开|住|在|选|买|坐"
ZH_EITHER_OR = re.compile(
    rf"(?:是|的|{ZH_CHOICE_VERBS})(?P<a>[^是的还，,\s]{{1,6}}?)(?P<a_de>的?)还是"
    rf"(?P<b>[^是的还，,\s]{{1,6}}?)(?P<b_de>的?)呢?$"
)


def _zh_choices(text: str) -> tuple[str, ...]:
    """An either-or question's alternatives, without the verb before them: "喜欢喝茶还是咖啡" →
    茶, 咖啡; one character alone says little ("公" is in "公斤"), so "公的还是母的" → 公的,
    母的."""
    if (m := ZH_EITHER_OR.search(text)) is None:
        return ()
    a, b = (re.sub(rf"^(?:{ZH_CHOICE_VERBS})+", "", m[side]) or m[side] for side in "ab")
    if len(a) == 1 or len(b) == 1:
        a, b = a + m["a_de"], b + m["b_de"]
    return (a, b)


# Words a Chinese question's compound is cut into: the word table's, and relations to the user.
ZH_KNOWN_WORDS = ZH_CONCEPT_WORDS | {word for word in ZH_PERSON_ROLES if len(word) > 1}


def _zh_parts(word: str) -> list[str]:
    """A Chinese compound the word table does not hold, cut into the table's words and what
    lies between them: "工作电话" → 工作, 电话 (each said in its own words or the table's);
    "粤语老师" → 粤语, 老师. Kept whole when it holds no word of the table."""
    if word in ZH_KNOWN_WORDS:
        return [word]
    parts: list[str] = []
    start = unknown = 0
    while start < len(word):
        end = next(
            (e for e in range(len(word), start + 1, -1) if word[start:e] in ZH_KNOWN_WORDS), None
        )
        if end is None:
            start += 1
            continue
        if unknown < start:
            parts.append(word[unknown:start])
        parts.append(word[start:end])
        start = unknown = end
    if not parts:
        return [word]
    if unknown < len(word):
        parts.append(word[unknown:])
    return parts


def question_read(text: str) -> QuestionReading:
    """What a recall query asks: about whom (the user unless another is named: "Mark", "the
    user's wife", "用户的妻子"), which attribute when it is a lookup ("What car does…" → car;
    not for "Why…", "Tell me about…", "Does the user like…"), the words naming what is asked
    (`focus`: "brand of guitar" → brand, guitar) and whether a number answers it."""
    text = PARENTHESES.sub("", text.replace("’", "'")).strip().rstrip("?？.!。！ ")
    if HAN_RE.search(text):
        return _chinese(text)
    return _english(text)


# --- Names in a text -------------------------------------------------------------------------


@lru_cache(maxsize=2048)
def _name_pattern(name: str) -> re.Pattern[str]:
    body = r"\s+".join(re.escape(part) for part in name.split())
    if HAN_RE.search(name):
        return re.compile(body)
    return re.compile(latin_bounded(body))


def names_in(text: str, names) -> set[str]:
    """Which of `names` the text mentions: longest first and without overlap, whole words
    for Latin script ("Sara" is not in "Sarah"; "Paris, Texas" where written counts as that
    place, its "Paris" not as "Paris" too), anywhere for Chinese."""
    found: set[str] = set()
    taken: list[tuple[int, int]] = []
    for name in sorted({n.strip() for n in names if n and n.strip()}, key=len, reverse=True):
        for m in _name_pattern(name).finditer(text):
            if all(m.end() <= start or m.start() >= end for start, end in taken):
                taken.append(m.span())
                found.add(name)
    return found


def _reading(
    subject: Subject,
    names: list[str],
    focus: list[str],
    count: bool,
    attributes: tuple[str, ...],
    *,
    closed: bool = False,
    choices: tuple[str, ...] = (),
) -> QuestionReading:
    """The reading, each list once per word in its order; `attribute` only when one is asked."""
    return QuestionReading(
        subject=subject,
        names=tuple(dict.fromkeys(names)),
        attribute=attributes[0] if len(attributes) == 1 else None,
        focus=tuple(dict.fromkeys(focus)),
        count=count,
        attributes=attributes,
        closed=closed,
        choices=choices,
    )
