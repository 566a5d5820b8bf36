"""Chinese clauses: who each is about ("我", "我哥哥马克", "她", "咪咪") and the values it states
("住在纽约", "在成都上班", "是纽约的律师", "今年三岁", "换了新手机号，是…", "不再吃素了")."""

import re

from memories.statements.keys import attribute_key, relation_attribute
from memories.statements.model import USER, Subject
from memories.statements.reading import (
    Clause,
    Context,
    Handler,
    Subjects,
    after_lead,
    mentioned,
    pending_said,
    renamed,
    stating,
)
from memories.statements.words import (
    HAN,
    PERSON_ROLES,
    ZH_CAR_MAKES,
    ZH_JOBS,
    ZH_NAME_STOP,
    ZH_NOT_NAMES,
    ZH_PASTIMES,
    ZH_PERSON_ROLES,
    ZH_ROLE_PREDICATES,
    ZH_SPECIES,
    ZH_SURNAMES,
    ZH_TITLES,
    alternation,
)

ZH_ROLE = alternation(ZH_PERSON_ROLES)
EN_ROLE = alternation(PERSON_ROLES)
ZH_PET = alternation(ZH_SPECIES)
ZH_MODS = r"(?:另一个|另外一个|另一位|另外一位|一个|一位|最好的|好|新|亲|两个)?"
STOP = re.escape(ZH_NAME_STOP)
# A name said right after a role ("我哥哥马克是…"): two or three characters before a verb or
# particle, or a Latin name; not a state said of them ("我哥哥身体好", "我老伴血压高") unless it
# opens with a surname ("张强").
ZH_STATE_END = "好高低大多少忙累差胖瘦快慢强弱坏棒"
ZH_HAN_NAME = (
    rf"(?!(?:{ZH_ROLE_PREDICATES}))(?:(?![{STOP}])[{HAN}]){{2,3}}?(?=[{STOP}]|现在|改名|更名|$)"
)
ZH_NAME = (
    rf"(?:[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)?|(?=[{ZH_SURNAMES}]){ZH_HAN_NAME}"
    rf"|{ZH_HAN_NAME}(?<![{ZH_STATE_END}]))"
)
# A name after 叫 ("叫咪咪"): up to the clause's end.
CALLED = rf"(?:[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)?|[{HAN}]{{1,4}}?)"
ZA = (
    r"(?:现在|目前|已经|也|还|都|一直|刚|刚刚|刚才|终于|正式|如今|最近|其实|就|才|又|早就|已|仍然"
    r"|依然|还是|正在)*"
)
ZV = r"[^，,。；;！!？?\s]+?"
ZE = r"(?=[了啦呢吧啊呀哦嘛]*(?:[，,。；;！!？?\s]|$))"
NUM = r"\+?\d[\d\s-]{5,}\d"
ZH_EMAIL = r"[\w.+-]+@[\w.-]+\w"
# A place: up to a particle or a word that starts saying something else ("搬到长沙离大女儿近").
PLACE_V = r"[^，,。；;！!？?\s的离附旁那这和跟去来住]+?"
PLACE_END = r"(?=[了啦呢吧啊呀哦嘛]*(?:[，,。；;！!？?\s的离附旁那这和跟去来住]|$))"
FUTURE = re.compile(
    r"下(?:个)?(?:月|周|星期|礼拜)|明天|明年|后天|将要|将会|打算|准备|计划|快要|就要|要搬|马上要"
    r"|即将|想要|希望|如果|要是|等我|的话"
)
PAST = re.compile(r"(?:以前|之前|曾经|原来|过去|当年)")

LEAD = re.compile(
    r"^(?:(?:但是|但|不过|而且|然后|所以|因为|其实|对了|另外|还有|哦|啊|嗯|唉|哎|可惜|遗憾的是"
    r"|好消息是|告诉你|跟你说|说起来|话说|总之|反正|后来|之后|结果|现在|目前|最近|今天|昨天"
    r"|前天|上周|上个月|去年|今年|刚才|终于)[，,、\s]*)+"
)
ROLE_START = re.compile(
    # "我有个哥哥在深圳当老师": the brother's clause
    rf"^(?:(?:我们家|我家|咱家|我们|我|用户)(?:的|(?:还|也)?有(?:一?个|一?位)"
    rf"(?=(?:{ZH_ROLE})[在是当做住叫开]))?)?{ZH_MODS}(?P<role>(?>{ZH_ROLE}|{ZH_PET}))"
    rf"(?P<name>{ZH_NAME})?(?P<poss>的)?"
    # Code-switched: "My wife 在北京工作"
    rf"|^(?:[Mm]y|[Oo]ur)\s+(?:(?:older|younger|elder|big|little|baby|twin)\s+)?"
    rf"(?P<role_en>{EN_ROLE})(?:\s+(?P<name_en>[A-Z][a-z]+))?\s*(?=[{HAN}])"
)
USER_START = re.compile(r"^(?:我们|咱们|我|用户)(?P<poss>的)?")
# A name opening a clause: a surname and a given name ("张婷跳槽去了腾讯"), 小/老/阿 and one
# character ("老王是…"), or a doubled character ("朵朵六岁了").
NAME_START = re.compile(
    rf"^(?!(?:{ZH_NOT_NAMES}))(?P<name>[{ZH_SURNAMES}][{HAN}]{{1,2}}?|[小老阿][{HAN}]|([{HAN}])\2)"
    r"(?P<poss>的)?(?=是|在|跳槽|去了|住|搬|做|当|开|有|叫|喜欢|会|也|都|已经|刚|现在|最近|今年"
    r"|毕业|离职|辞职|结婚|生了|养了|其实|还|又|从|不|被|说|负责|升职|调|换|买|学|考|读|每天|平时)"
)
# The start of a clause that leaves out its subject, "I": a verb, an adverb, a time; or the
# user's own number or address, which no one else's is said without its owner ("新号码是…").
IMPLICIT_START = re.compile(
    r"^(?:住|在|搬|养|开|买|是|做|当|会|学|刚|最近|现在|目前|已经|还|也|一直|今年|每天|平时|周末"
    r"|正在|终于|从|不再|换了|辞职|离职|退休|跳槽|入职|加入|家里|家住|家在|准备|打算|读|看|追|玩|听"
    r"|早就|又|刚刚|之前|以前|以后|去年|今天|昨天|上周|上个月|下班|上班|手机|电话|新号|新的号|邮箱"
    r"|[烟酒](?:也|都|已经|早就)?戒|早上|中午|下午|晚上|每晚|不|没再|迷上|爱上|喜欢上)"
)
PRONOUN_START = re.compile(r"^(?P<p>他们|她们|它们|他|她|它)(?P<poss>的)?")
# A name about to be changed ("橘子现在改名叫团长了"): whoever or whatever it names (a thing,
# unless the message knows it: the graph records it only for an entity it holds).
ZH_DETERMINER = r"这|那|我|你|他|她|它|咱"
RENAMED_START = re.compile(
    rf"^(?!(?:{ZH_DETERMINER}))(?P<name>[A-Z][a-zA-Z]+|[{HAN}]{{1,4}}?)(?={ZA}(?:改名|更名))"
)
# What a name is changed to, in quotes or not.
NEW_NAME = rf"(?:改名|更名)(?:叫做?|为|成)了?[\"“「『]?(?P<v>{CALLED})[\"”」』]?{ZE}"
LATIN_START = re.compile(rf"^(?P<name>[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)?)(?P<poss>的)?(?=[{HAN}])")

# Someone named in passing, among whom one lives or goes with: "和老公还有女儿朵朵一起".
AMONG = re.compile(rf"(?:和|跟|还有|以及|与)(?P<role>(?>{ZH_ROLE}|{ZH_PET}))(?P<name>{ZH_NAME})")
INTRODUCTIONS = (
    AMONG,
    *(
        re.compile(p)
        for p in (
            rf"(?:我们家|我家|咱家|我们|我)(?:的)?{ZH_MODS}(?P<role>(?>{ZH_ROLE}|{ZH_PET}))(?P<name>{ZH_NAME})",
            rf"(?P<role>{ZH_ROLE}|{ZH_PET})[，,]?(?:的名字)?(?:叫做|名叫|名字叫|名字是|叫)"
            rf"(?P<name>{CALLED}){ZE}",
            rf"(?P<name>{CALLED})是我(?:的)?(?:{ZH_MODS})(?P<role>{ZH_ROLE}|{ZH_PET}){ZE}",
            rf"我(?:的)?(?P<role>{ZH_ROLE})(?:是|叫)(?P<name>[A-Z][a-zA-Z]+|[{HAN}]{{2,3}}){ZE}",
            # With a title: "我导师是王建华老师"; of two characters only after a supervisor,
            # whom one names so ("副导师是汪健老师"; "我哥是高中老师" is a job)
            rf"(?:^|(?<=[，,。；;\s])|我的?)(?P<role>{ZH_ROLE})(?:是|叫)(?P<name>(?=[{ZH_SURNAMES}])"
            rf"(?:[{HAN}]{{3}}|(?<=导师[是叫])[{HAN}]{{2}}))(?<![学系科]){ZH_TITLES}{ZE}",
        )
    ),
)
JOB_RE = re.compile(rf"(?:{ZH_JOBS})")
ZH_NUMERAL = re.compile(r"[一二三四五六七八九十百千万两零\d]+(?:岁|多)?")
ZH_PASTIME = re.compile(ZH_PASTIMES)
# How one names a manager or a colleague: a surname and a title at work ("张经理", "李总", "王工").
TITLED_NAME = re.compile(
    rf"[{ZH_SURNAMES}](?:经理|总监|总|主任|主管|老板|老师|教授|医生|大夫|律师|处长|科长|局长|部长|院长|校长|工)"
)
# A role said as another person's ("我哥家的闺女叫…", "朋友的狗叫…"): not the user's.
OTHERS_OWN = re.compile(rf"(?:{ZH_ROLE}|他|她|他们|她们)家?的$")


def role_of(word: str) -> tuple[str, str, str]:
    if word in ZH_PERSON_ROLES:
        return (*ZH_PERSON_ROLES[word], "person")
    if word.lower() in PERSON_ROLES:
        return (*PERSON_ROLES[word.lower()], "person")
    return ZH_SPECIES.get(word, word), "", "pet"


def by_role(subjects: Subjects, word: str, name: str = "") -> Subject:
    """The user's relative or pet the role word says ("女儿", "柯基", "wife"), by `name` if one."""
    role, gender, kind = role_of(word)
    return subjects.person(name, role, kind, gender=gender, said=word)


def _may_name(word: str) -> bool:
    """Whether a word after a role may be its name: a surname with a title ("张经理", "李总"),
    not a job ("我哥哥医生"), nor an attribute ("跟我儿子名字就差一个字")."""
    if TITLED_NAME.fullmatch(word):
        return True
    if word.endswith("的") or word in ZH_PERSON_ROLES or ZH_NUMERAL.fullmatch(word):
        return False  # "我叔叔是种地的": the one who does it; "和妻子女儿": another relative
    return JOB_RE.search(word) is None and attribute_key(word) in (word, word.casefold())


def introduce(sentence: str, subjects: Subjects) -> None:
    for pattern in INTRODUCTIONS:
        for m in pattern.finditer(sentence):
            name = m["name"]
            if subjects.known(name) or not _may_name(name) or name in ("什么", "谁", "啥"):
                continue
            if OTHERS_OWN.search(sentence, 0, m.start("role")):
                continue
            by_role(subjects, m["role"], name)


def mention(clause: Clause, subjects: Subjects) -> str:
    start, t = after_lead(clause.text, LEAD)
    if m := ROLE_START.match(t):
        if m["role_en"]:
            subject = by_role(subjects, m["role_en"], m["name_en"] or "")
            return mentioned(clause, subject, start, start + m.end(), subjects)
        name = m["name"] or ""
        if name and subjects.known(name) is None and not _may_name(name):
            name = ""
        subject = by_role(subjects, m["role"], name)
        end = m.end() if name else m.end("role")
        clause.possessive = bool(m["poss"]) and bool(name)
        if not name and t[end : end + 1] == "的":
            clause.possessive = True
            end += 1
        return mentioned(clause, subject, start, start + end, subjects)
    if m := USER_START.match(t):
        clause.possessive = bool(m["poss"])
        return mentioned(clause, USER, start, start + m.end(), subjects)
    if (m := NAME_START.match(t)) and subjects.known(m["name"]) is None:
        clause.possessive = bool(m["poss"])
        clause.pronoun = clause.unknown = True
        return mentioned(clause, Subject(m["name"], "", "person"), start, start + m.end(), subjects)
    if m := PRONOUN_START.match(t):
        clause.pronoun = True
        clause.possessive = bool(m["poss"])
        return mentioned(clause, subjects.resolve(m["p"]), start, start + m.end(), subjects)
    for name, subject in subjects.named.items():
        if t.startswith(name):
            end = len(name)
            if t[end : end + 1] == "的":
                clause.possessive = True
                end += 1
            clause.pronoun = True
            return mentioned(clause, subject, start, start + end, subjects)
    if m := RENAMED_START.match(t):
        subject = subjects.known(m["name"])
        clause.unknown = subject is None
        subject = subject or Subject(m["name"], "", "thing")
        return mentioned(clause, subject, start, start + m.end(), subjects)
    if m := LATIN_START.match(t):
        clause.possessive = bool(m["poss"])
        subject = subjects.known(m["name"]) or Subject(m["name"], "", "person")
        clause.pronoun = True
        clause.unknown = subjects.known(m["name"]) is None
        return mentioned(clause, subject, start, start + m.end(), subjects)
    clause.mention = (start, start)
    return t


ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


def number(text: str) -> str:
    """A number, in digits: "三" → "3", "十二" → "12", "二十五" → "25"."""
    if text.isdigit():
        return text
    if "十" in text:
        tens, _, ones = text.partition("十")
        return str(
            (ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (ZH_DIGITS.get(ones, 0) if ones else 0)
        )
    return str(ZH_DIGITS.get(text, text))


# --- Handlers --------------------------------------------------------------------------------


def _ended(m: re.Match[str], rest: str) -> bool:
    """Said to hold no longer: "不再住在…", or of the past ("以前在…工作")."""
    return bool(m.groupdict().get("neg")) or PAST.search(rest[: m.start()]) is not None


def lives(ctx: Context, m, rest: str) -> bool:
    ended = _ended(m, rest)
    value = m["v"]
    if re.search(r"\d+号", m.string[m.start("v") :]):
        ctx.say("address", m.string[m.start("v") :].split("，")[0], ended=ended)
        return True
    ctx.say("lives in", value, ended=ended, entity=ctx.entity(value, "place"))
    return True


# Not where one works but when or how: "入职刚两周", "在这边找了份工作".
NOT_EMPLOYER = re.compile(
    r"^(?:这边|那边|这里|那里)|找了|^(?:刚|才|已经|快)?[一二三四五六七八九十两\d]+个?(?:天|周|星期|月|年)多?了?$"
)


def works(ctx: Context, m, rest: str) -> bool:
    ended = _ended(m, rest)
    org = m["v"]
    if NOT_EMPLOYER.search(org):
        return False
    ctx.say("works at", org, ended=ended, entity=ctx.entity(org, "organisation"))
    if m.groupdict().get("job"):
        ctx.say("job", m["job"], ended=ended)
    return True


def job(ctx: Context, m, rest: str) -> bool:
    before = rest[max(0, m.start() - 3) : m.start()]
    if before.endswith("不") and not before.endswith("不再"):
        return True
    names = [name for name in ctx.subjects.named if len(name) > 1]
    if names and re.fullmatch(rf"(?:{alternation(names)}){ZH_TITLES}", m["job"]):
        return True  # "王建华老师": a name with its title, read as one (INTRODUCTIONS)
    if m["job"] in ctx.subjects.named:
        return True  # "我的领导是张经理": the manager's name, titled

    ended = before.endswith("不再") or PAST.search(rest[: m.start()]) is not None
    ctx.say("job", m["job"], ended=ended)
    if m.groupdict().get("place") and not ended:
        ctx.say("lives in", m["place"], entity=ctx.entity(m["place"], "place"))
    return True


def quit_job(ctx: Context, m, rest: str) -> bool:
    org = m.groupdict().get("v") or ""
    ctx.say("works at", org, ended=True, entity=ctx.entity(org, "organisation") if org else None)
    return True


def left(ctx: Context, m, rest: str) -> bool:
    value = m["v"]
    if value in ctx.subjects.places:
        ctx.say("lives in", value, ended=True)
    else:
        ctx.say("works at", value, ended=True)
    return True


def age(ctx: Context, m, rest: str) -> bool:
    ctx.say("age", number(m["n"]))
    return True


QUESTION_WORDS = re.compile(r"什么|哪|谁|多少|几|吗$")


def say(key: str) -> Handler:
    """States the match's value as `key`, unless the value asks ("在哪里上班") — then nothing."""
    stated = stating(key)

    def handler(ctx: Context, m: re.Match[str], rest: str) -> bool:
        return True if QUESTION_WORDS.search(m["v"]) else stated(ctx, m, rest)

    return handler


def car(ctx: Context, m, rest: str) -> bool:
    # "开车上班", "开特斯拉上班": how they get to work, read by the commute rule ("开着那辆
    # 电动车去上班" still names a car).
    value = re.sub(r"(?:去)?(?:上班|上学)$", "", m["v"])
    commute = value != m["v"] and not re.search(r"辆|台", value)
    if value == "车" or commute:
        return False
    if not re.search(rf"{ZH_CAR_MAKES}|车|[A-Z]", value) or re.search(r"年|月|天|次|了", value):
        return False
    ctx.say("car", re.sub(r"^(?:一辆|辆|台|一台|的是)", "", value))
    return True


ACTS = {"读": "reading", "看": "reading", "追": "watching", "玩": "playing", "听": "listening to"}


def _act(m) -> str:
    act = m["act"]
    if act == "看":  # a book when said so, else a show
        return "reading" if re.search(r"书|小说|读", m.string) else "watching"
    return ACTS.get(act, "reading")


def doing(ctx: Context, m, rest: str) -> bool:
    ctx.say(_act(m), m["v"])
    return True


def done(ctx: Context, m, rest: str) -> bool:
    ctx.say(_act(m), m["v"], ended=True)
    return True


def speaks(ctx: Context, m, rest: str) -> bool:
    for language in re.split(r"和|、|跟|与|以及|,|，", m["v"]):
        if language:
            ctx.say("speaks", language)
    return True


def pet(ctx: Context, m, rest: str) -> bool:
    species, _, _ = role_of(m["sp"])
    count = m.groupdict().get("n")
    name = m.groupdict().get("name")
    if count and number(count) not in ("1",) and not name:
        ctx.say(f"number of {species}s", number(count))
        return True
    subject = (ctx.subjects.known(name) if name else None) or ctx.subjects.person(
        name or "", species, "pet"
    )
    ctx.subjects.add(subject)
    ctx.clause.introduced = subject
    if subject.name:  # named here or in the clause after ("养了一只柯基，叫豆豆")
        ctx.relate(subject)
    else:
        ctx.say("pet", species, entity=subject)
    if m["sp"] not in ("狗", "小狗", "狗狗", "狗子", "猫", "小猫", "猫咪", "宠物"):
        ctx.say("breed", m["sp"], subject=subject)
    return True


def relative(ctx: Context, m, rest: str) -> bool:
    role, gender, _ = role_of(m["role"])
    count = m.groupdict().get("n")
    if count and number(count) != "1":
        word = {"child": "children"}.get(role, role + "s")
        ctx.say(f"number of {word}", number(count))
        return True
    subject = ctx.subjects.person("", role, "person", gender=gender)
    ctx.subjects.add(subject)
    ctx.say(role, role, subject=USER, entity=subject)
    return True


def gone(ctx: Context, m, rest: str) -> bool:
    subject = ctx.clause.subject
    if subject is None or subject.is_user:
        return False
    ctx.relation_ended(
        subject, "pet" if subject.kind == "pet" else relation_attribute(subject.role)
    )
    return True


# Names said together ("豆豆和球球", "豆豆、球球"): several, one each.
NAME_LIST = re.compile(r"和|跟|与|、")
ZH_KIN_OR_PET = re.compile(rf"{ZH_ROLE}|{ZH_PET}")


def called(ctx: Context, m, rest: str) -> bool:
    """The user's name ("叫小明") — or, after "养了一只柯基，", the dog's, known already: told
    with the clause that met it too ("用户养了一只柯基，叫豆豆"), whose value it names."""
    named = ctx.subjects.known(m["v"])
    if named is not None:
        before = ctx.clause.before
        if before is not None and any(s.value_entity == named for s in before.statements):
            before.naming = ctx.clause
        ctx.clause.subject = named
        return True
    if len(names := NAME_LIST.split(m["v"])) > 1:
        # "养了两只猫，叫豆豆和球球", "有两个孩子，叫…": the names of those just counted or said,
        # none the user's
        before = ctx.clause.before
        said = ZH_KIN_OR_PET.search((before.text if before else "") + ctx.clause.text)
        for name in names if said else ():
            ctx.relate(ctx.subjects.known(name) or by_role(ctx.subjects, said[0], name))
        return True
    ctx.say("name", m["v"])
    return True


def renamed_by_user(ctx: Context, m, rest: str) -> bool:
    """A new name the user gave: their daughter's ("我给女儿改名叫多多"), Lucky's ("我把Lucky改名
    叫旺财")."""
    if m["role"]:
        ctx.say("name", m["v"], subject=by_role(ctx.subjects, m["role"]))
        return True
    return renamed(ctx, m, rest)


def favorite(ctx: Context, m, rest: str) -> bool:
    ctx.say("最喜欢的" + m["attr"], m["v"])
    return True


def pastime(ctx: Context, m, rest: str) -> bool:
    """A pastime taken up ("迷上了钓鱼") or given up ("不打篮球了"), one of ZH_PASTIMES (not
    someone fallen for, "迷上了他"): the hobby, and what one likes, held or ended."""
    ended = bool(m.groupdict().get("neg"))
    ctx.say("hobby", m["v"], ended=ended)
    if ended:
        ctx.say("likes", m["v"], ended=True)
    return True


def likes(ctx: Context, m, rest: str) -> bool:
    value = m["v"]
    if value in ("它", "他", "她", "这个", "那个"):
        return False
    liked = m["verb"] not in ("不喜欢", "讨厌")
    ctx.say("likes" if liked else "dislikes", value)
    for part in re.split(r"和|、|还有", value) if liked else ():
        if ZH_PASTIME.fullmatch(part):
            ctx.say("hobby", part)  # "喜欢打篮球": a pastime, what a question of hobbies asks
    return True


SECRET = re.compile(r"密码|口令|验证码|卡号|身份证|护照|银行卡|账号|PIN|pin|\[redacted")


def possessed(ctx: Context, m, rest: str) -> bool:
    attr = m["attr"]
    if attr in ZH_PERSON_ROLES or attr in ZH_SPECIES:
        return False
    if SECRET.search(attr) or SECRET.search(m["v"]) or QUESTION_WORDS.search(m["v"]):
        return True  # said, and kept by no one; or asked
    value = re.sub(r"^(?:一辆|一台|一个|一只|一部|一位|辆|台|部)", "", m["v"])
    key = attribute_key(attr)
    if key == "phone" and not re.search(r"\d{3}", value):
        return False
    ctx.say(key, value)
    ctx.subjects.answered(ctx.subject, key)
    return True


# What is possessed: in Chinese, or in English ("我的favorite band是…").
POSSESSION = r"[^，,。是为叫]{1,10}?|[A-Za-z][A-Za-z ]{1,24}?"
SAID_TO_BE = r"(?:现在|目前)?(?:是|为|叫|换成了?|改成了?|变成了?)"
POSSESSED = re.compile(rf"^\s*(?P<attr>{POSSESSION})\s*{SAID_TO_BE}(?P<v>{ZV}){ZE}")
CHANGED = re.compile(
    rf"^(?P<attr>[{HAN}]{{1,6}}?)(?:换成了?|改成了?|变成了?|改为|换为)(?P<v>{ZV}){ZE}"
)
INVERSION = re.compile(
    r"^(?P<v>[^，,。是]+?)(?:现在)?(?:是|成了|成为了?)(?:我们|我)(?:现在)?(?:(?P<attr>最(?:喜欢|爱)的[^，,。]+)"
    r"|的(?P<attr2>[^，,。的]{1,6}))$"
)
# "…，是138…", "…，新号码是138…", or the number or email alone ("…，+86 186…").
RESOLVE = re.compile(
    rf"^(?:新的?(?:号码?|邮箱|地址|号)?|号码|新号码)?(?:是|为)\s*(?:一?[辆台部])?"
    rf"(?P<v>{NUM}|{ZH_EMAIL}|{ZV}){ZE}"
    rf"|^(?:改用|换用|用|换成了?)?(?P<alone>{NUM}|{ZH_EMAIL}){ZE}"
)


def generic(ctx: Context, rest: str) -> bool:
    clause = ctx.clause
    if clause.possessive and (m := POSSESSED.match(rest)):
        return possessed(ctx, m, rest)
    if clause.subject is not None and (m := CHANGED.match(re.sub(rf"^{ZA}", "", rest))):
        return possessed(ctx, m, rest)
    return False


def inversion(clause: Clause, subjects: Subjects, ctx: Context) -> bool:
    m = INVERSION.match(LEAD.sub("", clause.text))
    if m is None:
        return False
    value, attr = m["v"], m["attr"] or m["attr2"]
    if (
        SECRET.search(value)
        or SECRET.search(attr)
        or JOB_RE.search(attr)
        or re.fullmatch(r"[A-Z]{2,5}", attr)
    ):
        return False  # "另一个Leon是我们的PM": a colleague, not the user's attribute
    named = subjects.known(value)
    if named is not None:
        clause.subject = named
        ctx.relate(named)
        return True
    if attr in ZH_PERSON_ROLES or attr in ZH_SPECIES:
        return False
    clause.subject = USER
    subjects.add(USER)
    ctx.say(attr, value)
    return True


def resolve(clause: Clause, subjects: Subjects, ctx: Context, rest: str) -> bool:
    """The new value said after a new one was announced: "我换了新手机号，是138…"."""
    if subjects.pending is None:
        return False
    m = RESOLVE.match(re.sub(rf"^{ZA}", "", rest))
    if m is None:
        return False
    return pending_said(clause, subjects, ctx, m["v"] or m["alone"])


def future(text: str) -> bool:
    return FUTURE.search(text) is not None


QUESTION = re.compile(r"什么|哪(?:里|儿|个|家|所)|谁|多少|几[个岁只位]|[吗呢]$")


def question(text: str) -> bool:
    """A clause that asks ("我的狗叫什么名字"), question mark or not."""
    return QUESTION.search(text) is not None
