"""Attribute phrases normalised by meaning: "home city", "based in", "住在" are all "lives in";
"favourite programming language" and "favorite language" are one key by their head noun."""

import re
from functools import lru_cache

from memories.statements.words import HAN, RELATION_ATTRIBUTE

# Whole phrases (lower case, singular) and the key they mean. Chinese phrases map to the same
# keys, so a code-switching user's facts meet.
SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        (
            "lives in",
            "live in",
            "living in",
            "live",
            "home",
            "home city",
            "city",
            "town",
            "city of residence",
            "residence",
            "place of residence",
            "location",
            "based in",
            "base",
            "where i live",
            "current city",
            "settled in",
            "moved to",
            "住在",
            "住",
            "居住地",
            "所在城市",
            "城市",
            "居住城市",
            "常住地",
        ),
        "lives in",
    ),
    **dict.fromkeys(
        (
            "works at",
            "work at",
            "works for",
            "work for",
            "working at",
            "employer",
            "company",
            "workplace",
            "firm",
            "organization",
            "organisation",
            "公司",
            "单位",
            "工作单位",
            "上班",
            "上班的地方",
            "工作地点",
            "在哪上班",
        ),
        "works at",
    ),
    **dict.fromkeys(
        (
            "job",
            "occupation",
            "profession",
            "role",
            "position",
            "job title",
            "work",
            "line of work",
            "career",
            "day job",
            "gig",
            "职业",
            "工作",
            "职位",
            "岗位",
            "本职工作",
        ),
        "job",
    ),
    **dict.fromkeys(
        (
            "phone",
            "phone number",
            "number",
            "mobile",
            "mobile number",
            "cell",
            "cell number",
            "cellphone",
            "cell phone",
            "telephone",
            "telephone number",
            "tel",
            "contact number",
            "手机",
            "手机号",
            "手机号码",
            "电话",
            "电话号码",
            "号码",
            "联系电话",
        ),
        "phone",
    ),
    # A work phone is one more number, not the personal one replaced.
    **dict.fromkeys(
        (
            "work phone",
            "work number",
            "work phone number",
            "work mobile",
            "office phone",
            "office number",
            "工作号",
            "工作电话",
            "工作手机",
            "办公电话",
            "办公室电话",
        ),
        "work phone",
    ),
    **dict.fromkeys(
        (
            "email",
            "e-mail",
            "email address",
            "e-mail address",
            "mail",
            "邮箱",
            "邮箱地址",
            "电子邮件",
            "电子邮箱",
            "邮件地址",
        ),
        "email",
    ),
    **dict.fromkeys(("age", "年龄", "岁数"), "age"),
    **dict.fromkeys(("car", "vehicle", "ride", "automobile", "车", "汽车", "座驾", "车子"), "car"),
    **dict.fromkeys(("diet", "eating habit", "饮食", "饮食习惯"), "diet"),
    **dict.fromkeys(("name", "full name", "real name", "名字", "姓名", "全名"), "name"),
    **dict.fromkeys(
        ("address", "home address", "street address", "地址", "住址", "家庭地址"), "address"
    ),
    **dict.fromkeys(
        ("birthday", "birth date", "date of birth", "dob", "bday", "生日", "出生日期"), "birthday"
    ),
    **dict.fromkeys(
        (
            "salary",
            "pay",
            "income",
            "wage",
            "earning",
            "annual salary",
            "工资",
            "薪水",
            "收入",
            "月薪",
            "年薪",
            "薪资",
            "薪酬",
        ),
        "salary",
    ),
    **dict.fromkeys(
        (
            "manager",
            "boss",
            "supervisor",
            "line manager",
            "老板",
            "上司",
            "领导",
            "主管",
            "直属领导",
        ),
        "manager",
    ),
    **dict.fromkeys(
        (
            "partner",
            "wife",
            "husband",
            "spouse",
            "girlfriend",
            "boyfriend",
            "significant other",
            "fiancé",
            "fiancée",
            "fiance",
            "fiancee",
            "老婆",
            "妻子",
            "老公",
            "丈夫",
            "对象",
            "伴侣",
            "爱人",
            "太太",
            "男朋友",
            "女朋友",
            "男友",
            "女友",
            "未婚夫",
            "未婚妻",
        ),
        "partner",
    ),
    **dict.fromkeys(
        ("school", "university", "college", "uni", "alma mater", "学校", "大学", "学院"), "school"
    ),
    **dict.fromkeys(("breed", "品种"), "breed"),
    **dict.fromkeys(("commute", "commute to work", "通勤", "通勤方式", "上班方式"), "commute"),
    **dict.fromkeys(
        ("reading", "current book", "book", "book i'm reading", "read", "在读的书", "在读"),
        "reading",
    ),
    **dict.fromkeys(("watching", "current show", "show i'm watching", "在看", "在追"), "watching"),
    **dict.fromkeys(("playing", "current game", "game i'm playing", "在玩"), "playing"),
    **dict.fromkeys(
        ("speaks", "speak", "language", "spoken language", "language spoken", "会说", "语言"),
        "speaks",
    ),
    **dict.fromkeys(("learning", "learn", "learns", "studying", "在学", "学习"), "learning"),
    **dict.fromkeys(
        ("native language", "mother tongue", "first language", "母语"), "native language"
    ),
    **dict.fromkeys(
        ("hobby", "pastime", "interest", "爱好", "兴趣", "兴趣爱好", "业余爱好"), "hobby"
    ),
    **dict.fromkeys(("pet", "宠物"), "pet"),
    **dict.fromkeys(("child", "kid", "孩子", "小孩"), "child"),
    **dict.fromkeys(("lives with", "live with", "household", "住在一起"), "lives with"),
    **dict.fromkeys(
        ("hometown", "home town", "from", "where i'm from", "grew up in", "老家", "家乡"),
        "hometown",
    ),
    **dict.fromkeys(("birthplace", "born in", "place of birth", "出生地"), "birthplace"),
    # Not "from" above: where one studied is no home town
    **dict.fromkeys(("graduated from", "alma mater", "毕业于"), "graduated from"),
    **dict.fromkeys(("likes", "like", "loves", "love", "enjoys", "喜欢"), "likes"),
    **dict.fromkeys(("dislikes", "dislike", "hates", "hate", "讨厌", "不喜欢"), "dislikes"),
    **dict.fromkeys(("allergy", "allergic to", "过敏"), "allergy"),
    **dict.fromkeys(("deadline", "due date", "截止日期", "截止时间", "期限"), "deadline"),
    **dict.fromkeys(("major", "field of study", "专业"), "major"),
    **dict.fromkeys(
        ("relationship status", "marital status", "relationship", "婚姻状况", "感情状况"),
        "relationship status",
    ),
}

# Head nouns after "favorite …" ("favorite programming language" → "favorite language"),
# English synonyms and Chinese nouns alike.
NOUNS: dict[str, str] = {
    "film": "movie",
    "flick": "movie",
    "novel": "book",
    "track": "song",
    "tune": "song",
    "writer": "author",
    "beverage": "drink",
    "cuisine": "food",
    "dish": "food",
    "meal": "food",
    "tv show": "show",
    "tv series": "show",
    "series": "show",
    "videogame": "game",
    "video game": "game",
    "vehicle": "car",
    "kid": "child",
    "colour": "color",
    "颜色": "color",
    "语言": "language",
    "食物": "food",
    "菜": "food",
    "美食": "food",
    "电影": "movie",
    "书": "book",
    "小说": "book",
    "运动": "sport",
    "歌手": "singer",
    "乐队": "band",
    "歌": "song",
    "歌曲": "song",
    "水果": "fruit",
    "城市": "city",
    "饮料": "drink",
    "游戏": "game",
    "动物": "animal",
    "季节": "season",
    "作家": "author",
    "演员": "actor",
    "球队": "team",
    "电视剧": "show",
    "剧": "show",
    "花": "flower",
    "国家": "country",
    "咖啡": "coffee",
    "茶": "tea",
    "品牌": "brand",
    "车": "car",
    "明星": "celebrity",
    "节日": "holiday",
    "餐厅": "restaurant",
    "地方": "place",
    "甜点": "dessert",
    "音乐": "music",
    "诗人": "poet",
    "画家": "painter",
}

IRREGULAR_SINGULARS = {
    "children": "child",
    "people": "person",
    "men": "man",
    "women": "woman",
    "feet": "foot",
    "teeth": "tooth",
    "mice": "mouse",
    "geese": "goose",
    "wives": "wife",
    "knives": "knife",
    "lives": "lives",  # "lives in" is a key, not a plural
    "series": "series",
    "species": "species",
    "news": "news",
    "glasses": "glasses",
    "clothes": "clothes",
    "sports": "sport",
    "status": "status",
    "address": "address",
    "business": "business",
    "class": "class",
    "alias": "alias",
    "bus": "bus",
    "works": "works",  # "works at"
    "speaks": "speaks",
    "likes": "likes",
    "dislikes": "dislikes",
    "earnings": "earning",
    "knows": "knows",
    "plays": "plays",
    "owns": "owns",
}
SPELLINGS = {
    "favourite": "favorite",
    "fave": "favorite",
    "fav": "favorite",
    "colour": "color",
    "neighbour": "neighbor",
    "programme": "program",
    "theatre": "theater",
    "organisation": "organization",
    "e-mail": "email",
}

OWNER = re.compile(
    r"^(?:(?:my|your|his|her|their|our|its|the user's|user's|the|a|an|this|that)\s+)+"
    r"|^(?:我的|用户的|他的|她的|它的|我们的|我|用户)"
)
# Words that say when, not what: "current city", "new phone number", "目前的工作".
WHEN = re.compile(
    r"\b(?:current|currently|present|new|old|latest|actual|usual|main|primary|now|former"
    r"|previous)\s+|^(?:现在|目前|当前|新的?|旧的?|以前的?)的?"
)
FAVORITE = re.compile(r"^(?:favorite|preferred|most loved|top)\s+(?P<what>.+)$")
ZH_FAVORITE = re.compile(r"^(?:最喜欢|最爱|最喜爱|最钟爱)的?(?P<what>.+)$")


def singular(word: str) -> str:
    """An English noun's singular: "children" → "child", "hobbies" → "hobby", "brands"
    → "brand"."""
    if word in IRREGULAR_SINGULARS:
        return IRREGULAR_SINGULARS[word]
    if len(word) <= 3 or not word.isascii() or word.endswith(("ss", "us", "is", "'s")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def noun_key(phrase: str) -> str:
    """What a noun phrase names, by its head: "programming language" → "language",
    "films" → "movie", "编程语言" → "language"."""
    phrase = phrase.strip()
    if HAN_RE.search(phrase):
        for start in range(len(phrase)):  # the head comes last in Chinese
            if phrase[start:] in NOUNS:
                return NOUNS[phrase[start:]]
        return phrase
    words = [singular(SPELLINGS.get(w, w)) for w in phrase.split()]
    if not words:
        return phrase
    for start in range(len(words)):
        tail = " ".join(words[start:])
        if tail in NOUNS:
            return NOUNS[tail]
    return words[-1]


HAN_RE = re.compile(f"[{HAN}]")


def plural_phrase(phrase: str) -> bool:
    """Whether an English attribute phrase is plural ("my hobbies are…"): many values."""
    words = phrase.lower().split()
    return bool(words) and words[-1] != singular(words[-1]) and words[-1] not in IRREGULAR_SINGULARS


@lru_cache(maxsize=4096)
def attribute_key(phrase: str) -> str:
    """The attribute a phrase names, normalised: lower case, favourite → favorite, plural →
    singular, "favorite X" by X's head noun, synonyms of the common attributes to one key
    ("home city", "based in", "住在" → "lives in"; "employer", "在…上班" → "works at"; "职业"
    → "job"; "手机" → "phone"; "最喜欢的编程语言" → "favorite language"); Chinese phrases to the
    English key where one is known, else to the Chinese words."""
    text = " ".join(phrase.replace("’", "'").lower().split()).strip(" .,:;!?。，：；！？")
    text = OWNER.sub("", text).strip()
    text = WHEN.sub("", text).strip()
    if text in SYNONYMS:
        return SYNONYMS[text]
    if HAN_RE.search(text):
        return _chinese_key(text)
    words = [SPELLINGS.get(w, w) for w in text.replace("'s ", " ").split()]
    text = " ".join(words)
    if (favorite := FAVORITE.match(text)) is not None:
        return "favorite " + noun_key(favorite["what"])
    if text.startswith("number of "):
        return text
    words = [singular(w) for w in words]
    for start in range(len(words)):  # the head noun: "home phone number" → "phone"
        tail = " ".join(words[start:])
        if tail in SYNONYMS and not (start and tail in VAGUE_HEADS):
            return SYNONYMS[tail]
    return " ".join(words)


# Heads that name nothing alone after other words: a "social security number" is no phone
# number, a "last name" no name.
VAGUE_HEADS = frozenset({"number", "name", "type", "date", "code", "id", "mail"})


def _chinese_key(text: str) -> str:
    text = text.lstrip("的")
    if (favorite := ZH_FAVORITE.match(text)) is not None:
        return "favorite " + noun_key(favorite["what"])
    for start in range(len(text)):  # the head comes last: "工作单位" → "单位"
        if text[start:] in SYNONYMS:
            return SYNONYMS[text[start:]]
    return text


# Attributes of which a subject holds many values at once; every other attribute holds one
# (a new value replaces the old), unless the phrase that named it was plural.
MANY = frozenset(
    {"speaks", "learning", "pet", "child", "son", "daughter", "brother", "sister", "sibling",
     "friend", "cousin", "colleague", "classmate", "teammate", "neighbor", "roommate",
     "grandchild", "grandson", "granddaughter", "niece", "nephew", "aunt", "uncle",
     "grandmother", "grandfather", "parent", "likes", "dislikes", "allergy", "hobby", "owns",
     "plays", "studied", "graduated from", "visited", "stepson", "stepdaughter", "mentor",
     "coach", "tutor", "ex", "sister-in-law", "brother-in-law"}
)  # fmt: skip


# The attributes a question of one is answered by besides itself: a hobby is often said as what
# one plays.
ANSWERED_BY = {"hobby": ("hobby", "plays")}


def answering_attributes(attribute: str) -> tuple[str, ...]:
    return ANSWERED_BY.get(attribute, (attribute,))


def single_valued(attribute: str, *, plural: bool = False) -> bool:
    """Whether a subject holds one value of `attribute` at a time (lives in, job, phone,
    favorite X, diet, car…) rather than many (children, pets, friends, languages, hobbies)."""
    return attribute.startswith("number of ") or (not plural and attribute not in MANY)


def relation_attribute(role: str) -> str:
    """The attribute under which the user's relation to a person or pet is kept: "brother",
    "friend"; every partner role is "partner", every animal "pet"."""
    return RELATION_ATTRIBUTE.get(role, role)
