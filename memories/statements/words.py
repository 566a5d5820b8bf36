"""The words the readings know by name: relations to the user, animals and breeds, jobs,
languages, car makes, numbers, a few place names, and the concepts a question's focus word
may be answered by (English and Chinese)."""

import re
from functools import cache

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"


def word_set(text: str) -> frozenset[str]:
    """The words of a text, as a set (long word lists read best as text)."""
    return frozenset(text.split())


def alternation(words) -> str:
    """A regex alternation of `words`, longest first (so "golden retriever" wins over
    "retriever"), spaces matching any whitespace."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in ordered)


# --- Relations to the user -------------------------------------------------------------------

# word → (role, gender "m"/"f"/""). Roles are singular and English for both languages, so a
# code-switching user's "我老婆" and "my wife" meet.
PERSON_ROLES: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("brother", "bro"), ("brother", "m")),
    **dict.fromkeys(("sister", "sis"), ("sister", "f")),
    "sibling": ("sibling", ""),
    **dict.fromkeys(("wife", "missus", "missis"), ("wife", "f")),
    "husband": ("husband", "m"),
    **dict.fromkeys(("spouse", "partner", "significant other", "other half"), ("partner", "")),
    **dict.fromkeys(("girlfriend", "gf"), ("girlfriend", "f")),
    **dict.fromkeys(("boyfriend", "bf"), ("boyfriend", "m")),
    **dict.fromkeys(("fiancée", "fiancee"), ("fiancée", "f")),
    **dict.fromkeys(("fiancé", "fiance"), ("fiancé", "m")),
    **dict.fromkeys(("mom", "mum", "mother", "mama", "mommy", "mummy", "ma"), ("mother", "f")),
    **dict.fromkeys(("dad", "father", "papa", "daddy", "pa"), ("father", "m")),
    "parent": ("parent", ""),
    "son": ("son", "m"),
    "daughter": ("daughter", "f"),
    **dict.fromkeys(("kid", "child", "baby", "toddler"), ("child", "")),
    **dict.fromkeys(("stepson",), ("stepson", "m")),
    **dict.fromkeys(("stepdaughter",), ("stepdaughter", "f")),
    **dict.fromkeys(("grandma", "grandmother", "granny", "nana", "gran"), ("grandmother", "f")),
    **dict.fromkeys(("grandpa", "grandfather", "granddad", "grandad"), ("grandfather", "m")),
    **dict.fromkeys(("mommy", "mummy"), ("mother", "f")),
    "grandson": ("grandson", "m"),
    "granddaughter": ("granddaughter", "f"),
    **dict.fromkeys(("grandchild", "grandkid"), ("grandchild", "")),
    **dict.fromkeys(("aunt", "auntie", "aunty"), ("aunt", "f")),
    "uncle": ("uncle", "m"),
    "cousin": ("cousin", ""),
    "niece": ("niece", "f"),
    "nephew": ("nephew", "m"),
    **dict.fromkeys(("mother-in-law",), ("mother-in-law", "f")),
    **dict.fromkeys(("father-in-law",), ("father-in-law", "m")),
    **dict.fromkeys(("sister-in-law",), ("sister-in-law", "f")),
    **dict.fromkeys(("brother-in-law",), ("brother-in-law", "m")),
    **dict.fromkeys(("friend", "buddy", "pal", "bestie", "bff", "best friend"), ("friend", "")),
    **dict.fromkeys(("roommate", "flatmate", "housemate"), ("roommate", "")),
    **dict.fromkeys(("neighbor", "neighbour"), ("neighbor", "")),
    **dict.fromkeys(("boss", "manager", "supervisor", "line manager"), ("manager", "")),
    **dict.fromkeys(("colleague", "coworker", "co-worker", "workmate"), ("colleague", "")),
    "teammate": ("teammate", ""),
    "classmate": ("classmate", ""),
    "mentor": ("mentor", ""),
    "therapist": ("therapist", ""),
    "doctor": ("doctor", ""),
    "dentist": ("dentist", ""),
    "landlord": ("landlord", ""),
    "landlady": ("landlord", "f"),
    "tutor": ("tutor", ""),
    "coach": ("coach", ""),
    "ex": ("ex", ""),
    "ex-wife": ("ex-wife", "f"),
    "ex-husband": ("ex-husband", "m"),
    "ex-girlfriend": ("ex-girlfriend", "f"),
    "ex-boyfriend": ("ex-boyfriend", "m"),
}
# Kin told apart by their order of birth ("my older brother", "my little sister", "哥哥" and
# "弟弟", "大女儿"): a role of its own, so two of them are two entities, each with its values; a
# question of the plain role ("the user's brother") may be answered by either (BASE_ROLES).
_OLDER = ("older", "elder", "oldest", "eldest")
_YOUNGER = ("younger", "youngest")
_ORDERED_KIN: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # role: (gender, words for the older one, for the younger one)
    "brother": ("m", (*_OLDER, "big"), (*_YOUNGER, "little", "baby", "kid")),
    "sister": ("f", (*_OLDER, "big"), (*_YOUNGER, "little", "baby", "kid")),
    "son": ("m", _OLDER, _YOUNGER),
    "daughter": ("f", _OLDER, _YOUNGER),
}
ORDERED_ROLES: dict[str, tuple[str, str]] = {
    f"{word} {kin}": (f"{order} {kin}", gender)
    for kin, (gender, older, younger) in _ORDERED_KIN.items()
    for order, words in (("older", older), ("younger", younger))
    for word in words
} | {
    "big bro": ("older brother", "m"),
    "little bro": ("younger brother", "m"),
    "big sis": ("older sister", "f"),
    "little sis": ("younger sister", "f"),
}
# Kin told apart by the side of the family, as Chinese always says ("舅舅", the mother's
# brother, and "叔叔", the father's): the same, a role of its own within the plain one.
LINEAGE_ROLES: dict[str, tuple[str, str]] = {
    f"{side} {kin}": (f"{side} {kin}", gender)
    for side in ("paternal", "maternal")
    for kin, gender in (
        ("uncle", "m"),
        ("aunt", "f"),
        ("grandfather", "m"),
        ("grandmother", "f"),
    )
} | {
    f"{sibling}'s {child}": (f"{sibling}'s {child}", gender)
    for sibling in ("brother", "sister")
    for child, gender in (("son", "m"), ("daughter", "f"))
}
PERSON_ROLES |= ORDERED_ROLES | LINEAGE_ROLES
_NIBLINGS = {"son": "nephew", "daughter": "niece"}
BASE_ROLES = {role: role.split()[-1] for role, _ in ORDERED_ROLES.values()} | {
    role: _NIBLINGS.get(role.split()[-1], role.split()[-1]) for role in LINEAGE_ROLES
}


def kin_of(role: str) -> list[str]:
    """The roles told apart within `role` by order of birth or side of the family: "older
    brother", "younger brother" for "brother"; "paternal uncle", "maternal uncle" for "uncle"."""
    return [ordered for ordered, base in BASE_ROLES.items() if base == role]


# Plural words and the role they are many of.
PERSON_PLURALS = {
    "brothers": "brother",
    "sisters": "sister",
    "siblings": "sibling",
    "parents": "parent",
    "sons": "son",
    "daughters": "daughter",
    "kids": "child",
    "children": "child",
    "babies": "child",
    "grandkids": "grandchild",
    "grandchildren": "grandchild",
    "cousins": "cousin",
    "friends": "friend",
    "roommates": "roommate",
    "colleagues": "colleague",
    "coworkers": "colleague",
    "nieces": "niece",
    "nephews": "nephew",
    "grandparents": "grandparent",
    "in-laws": "in-law",
    "parents-in-law": "in-law",
    "folks": "parent",
    "aunts": "aunt",
    "uncles": "uncle",
    "neighbors": "neighbor",
    "neighbours": "neighbor",
    "flatmates": "roommate",
    "housemates": "roommate",
    "teammates": "teammate",
    "classmates": "classmate",
}

ZH_PERSON_ROLES: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("哥哥", "大哥", "二哥", "哥"), ("older brother", "m")),
    **dict.fromkeys(("弟弟", "小弟"), ("younger brother", "m")),
    "兄弟": ("brother", "m"),
    **dict.fromkeys(("姐姐", "大姐", "二姐", "姐"), ("older sister", "f")),
    **dict.fromkeys(("妹妹", "小妹"), ("younger sister", "f")),
    "姐妹": ("sister", "f"),
    **dict.fromkeys(("老婆", "妻子", "太太", "媳妇", "夫人", "爱人"), ("wife", "f")),
    **dict.fromkeys(("老公", "丈夫", "先生"), ("husband", "m")),
    **dict.fromkeys(("男朋友", "男友"), ("boyfriend", "m")),
    **dict.fromkeys(("女朋友", "女友"), ("girlfriend", "f")),
    **dict.fromkeys(("对象", "老伴", "伴侣", "配偶", "另一半"), ("partner", "")),
    "未婚夫": ("fiancé", "m"),
    "未婚妻": ("fiancée", "f"),
    **dict.fromkeys(("爸爸", "父亲", "老爸", "爸"), ("father", "m")),
    **dict.fromkeys(("妈妈", "母亲", "老妈", "妈"), ("mother", "f")),
    **dict.fromkeys(("父母", "爸妈"), ("parent", "")),
    "儿子": ("son", "m"),
    "女儿": ("daughter", "f"),
    **dict.fromkeys(("孩子", "小孩", "宝宝"), ("child", "")),
    **dict.fromkeys(("爷爷", "祖父"), ("paternal grandfather", "m")),
    **dict.fromkeys(("外公", "姥爷"), ("maternal grandfather", "m")),
    **dict.fromkeys(("奶奶", "祖母"), ("paternal grandmother", "f")),
    **dict.fromkeys(("外婆", "姥姥"), ("maternal grandmother", "f")),
    **dict.fromkeys(("叔叔", "伯伯", "姑父"), ("paternal uncle", "m")),
    **dict.fromkeys(("舅舅", "姨父"), ("maternal uncle", "m")),
    **dict.fromkeys(("姑姑", "婶婶"), ("paternal aunt", "f")),
    **dict.fromkeys(("姨妈", "舅妈", "小姨", "大姨"), ("maternal aunt", "f")),
    "阿姨": ("aunt", "f"),
    **dict.fromkeys(("表哥", "表弟", "堂哥", "堂弟"), ("cousin", "m")),
    **dict.fromkeys(("表姐", "表妹", "堂姐", "堂妹"), ("cousin", "f")),
    "侄子": ("brother's son", "m"),
    "外甥": ("sister's son", "m"),
    "侄女": ("brother's daughter", "f"),
    "外甥女": ("sister's daughter", "f"),
    **dict.fromkeys(("好朋友", "朋友", "好友", "闺蜜", "哥们", "发小"), ("friend", "")),
    **dict.fromkeys(("同事",), ("colleague", "")),
    # "boss": as a speaker who mixes in English says it ("我boss叫Jason Wu")
    **dict.fromkeys(
        ("老板", "上司", "领导", "主管", "上级", "组长", "经理", "boss"), ("manager", "")
    ),
    **dict.fromkeys(("导师", "副导师"), ("mentor", "")),
    **dict.fromkeys(("孙子", "外孙"), ("grandson", "m")),
    **dict.fromkeys(("孙女", "外孙女"), ("granddaughter", "f")),
    "大女儿": ("older daughter", "f"),
    "小女儿": ("younger daughter", "f"),
    **dict.fromkeys(("二女儿", "闺女"), ("daughter", "f")),
    "大儿子": ("older son", "m"),
    "小儿子": ("younger son", "m"),
    "二儿子": ("son", "m"),
    **dict.fromkeys(("姐夫", "妹夫"), ("brother-in-law", "m")),
    # "小姨子": the wife's younger sister, not an aunt
    **dict.fromkeys(("嫂子", "弟妹", "弟媳", "小姨子"), ("sister-in-law", "f")),
    "室友": ("roommate", ""),
    "邻居": ("neighbor", ""),
    "同学": ("classmate", ""),
    "前任": ("ex", ""),
    "前妻": ("ex-wife", "f"),
    "前夫": ("ex-husband", "m"),
}

# Relations of which a person has one at a time: a new one replaces the old ("my new boss").
SINGLE_RELATIONS = frozenset(
    {"wife", "husband", "partner", "girlfriend", "boyfriend", "fiancé", "fiancée", "mother",
     "father", "manager", "landlord", "therapist", "doctor", "dentist"}
)  # fmt: skip
# The attribute a relation is kept under: wife, husband… are all the user's "partner".
RELATION_ATTRIBUTE = (
    dict.fromkeys(
        ("wife", "husband", "partner", "girlfriend", "boyfriend", "fiancé", "fiancée"), "partner"
    )
    | BASE_ROLES
)

# --- Animals ---------------------------------------------------------------------------------

SPECIES: dict[str, str] = {
    **dict.fromkeys(("dog", "puppy", "pup", "doggy", "doggo", "pooch"), "dog"),
    **dict.fromkeys(("cat", "kitten", "kitty"), "cat"),
    **dict.fromkeys(("parrot", "budgie", "parakeet", "cockatiel", "bird", "canary"), "bird"),
    "hamster": "hamster",
    "guinea pig": "guinea pig",
    **dict.fromkeys(("rabbit", "bunny"), "rabbit"),
    **dict.fromkeys(("fish", "goldfish", "betta"), "fish"),
    **dict.fromkeys(("turtle", "tortoise"), "turtle"),
    "snake": "snake",
    **dict.fromkeys(("lizard", "gecko", "iguana", "bearded dragon"), "lizard"),
    **dict.fromkeys(("horse", "pony"), "horse"),
    "ferret": "ferret",
    "hedgehog": "hedgehog",
    "chinchilla": "chinchilla",
    "pet": "pet",
}
SPECIES_PLURALS = {
    "dogs": "dog",
    "puppies": "dog",
    "pups": "dog",
    "cats": "cat",
    "kittens": "cat",
    "birds": "bird",
    "parrots": "bird",
    "hamsters": "hamster",
    "rabbits": "rabbit",
    "bunnies": "rabbit",
    "turtles": "turtle",
    "horses": "horse",
    "pets": "pet",
}
BREEDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "golden retriever", "labrador retriever", "labrador", "retriever", "poodle",
            "beagle", "bulldog", "french bulldog", "frenchie", "german shepherd", "husky",
            "corgi", "dachshund", "chihuahua", "pug", "terrier", "yorkie", "border collie",
            "collie", "shih tzu", "rottweiler", "dalmatian", "greyhound", "labradoodle",
            "goldendoodle", "cockapoo", "schnauzer", "spaniel", "cocker spaniel", "maltese",
            "pomeranian", "samoyed", "akita", "shiba inu", "shiba", "great dane", "mastiff",
            "pit bull", "pitbull", "doberman", "sheepdog", "bichon", "whippet", "basset hound",
            "bloodhound", "sheltie", "jack russell", "cavalier", "boston terrier", "mutt",
        ),
        "dog",
    ),
    **dict.fromkeys(
        (
            "tabby", "siamese", "persian", "maine coon", "ragdoll", "bengal", "sphynx",
            "british shorthair", "calico", "scottish fold", "russian blue", "abyssinian",
            "tortoiseshell", "tuxedo cat",
        ),
        "cat",
    ),
}  # fmt: skip
ZH_SPECIES: dict[str, str] = {
    **dict.fromkeys(("狗", "小狗", "狗狗", "狗子", "宠物狗", "犬"), "dog"),
    **dict.fromkeys(("猫", "小猫", "猫咪", "宠物猫"), "cat"),
    **dict.fromkeys(("鹦鹉", "鸟", "小鸟"), "bird"),
    **dict.fromkeys(("兔子", "小兔", "兔"), "rabbit"),
    "仓鼠": "hamster",
    **dict.fromkeys(("鱼", "金鱼"), "fish"),
    **dict.fromkeys(("乌龟", "龟"), "turtle"),
    "宠物": "pet",
    **dict.fromkeys(
        ("金毛", "拉布拉多", "泰迪", "柯基", "哈士奇", "柴犬", "边牧", "比熊", "萨摩耶",
         "德牧", "博美", "法斗", "雪纳瑞", "阿拉斯加", "中华田园犬", "土狗"),
        "dog",
    ),
    **dict.fromkeys(("英短", "布偶", "橘猫", "狸花猫", "暹罗猫", "美短", "加菲猫", "蓝猫"), "cat"),
}  # fmt: skip

# --- Jobs ------------------------------------------------------------------------------------

JOBS = word_set(
    """nurse doctor physician surgeon lawyer attorney paralegal judge engineer developer
    programmer coder designer teacher professor lecturer tutor student researcher scientist
    analyst consultant accountant banker trader broker manager director executive ceo cto
    cfo coo vp president founder cofounder co-founder entrepreneur freelancer contractor
    writer author editor journalist reporter photographer artist painter illustrator
    musician singer actor actress dancer chef cook baker barista bartender waiter waitress
    cashier clerk receptionist secretary assistant administrator architect pharmacist
    dentist therapist psychologist psychiatrist counselor counsellor veterinarian vet pilot
    driver mechanic electrician plumber carpenter firefighter officer cop detective soldier
    sailor farmer gardener librarian pastor priest intern recruiter salesperson realtor
    agent nanny caregiver paramedic translator interpreter economist mathematician physicist
    chemist biologist statistician auditor politician diplomat homemaker retiree technician
    specialist coordinator strategist marketer lead principal postdoc undergrad gp midwife
    optician"""
)
# The last word of a job title said with "at"/"for" after it ("a recruiter at Stripe").
JOB_SUFFIX = r"[a-z]+(?:er|or|ist|ian|ant|ent|ee)"

ZH_JOBS = (
    "经理|工程师|设计师|老师|教师|医生|护士|律师|学生|程序员|会计|分析师|研究员|教授|作家|记者"
    "|厨师|顾问|销售|主管|总监|司机|创始人|实习生|架构师|产品经理|科学家|警察|公务员|编辑|翻译"
    "|摄影师|画家|演员|歌手|飞行员|消防员|快递员|外卖员|店员|老板|博士生|研究生|大学生|高中生"
    "|初中生|小学生|药剂师|牙医|兽医|咨询师|心理咨询师|保安|主播|运营|策划|财务|人事|HR|CEO"
    "|CTO|总裁|合伙人|农民|工人|电工|厨子|服务员|收银员|导游|空姐|空乘|律所合伙人|运维|测试开发"
    "|前端|后端|交警"
)
# Pastimes, as Chinese says them: what "喜欢…", "迷上了…", "不…了" take as a hobby.
ZH_PASTIMES = (
    r"(?:打(?:篮球|羽毛球|乒乓球|网球|排球|高尔夫|台球|游戏|麻将)|踢(?:足球|球)|跑步|跑马拉松|游泳|爬山"
    r"|徒步|露营|钓鱼|骑(?:车|行|自行车)|滑雪|滑板|冲浪|攀岩|健身|练瑜伽|做瑜伽|瑜伽|弹(?:钢琴|吉他|琴)"
    r"|拉(?:小提琴|二胡)|画画|唱歌|跳舞|下(?:棋|象棋|围棋)|玩游戏|摄影|拍照|书法|烘焙|做饭|陶艺|插花"
    r"|看书|读书|看电影|追剧|旅游|旅行|养花|种花|编织|露营|拼乐高|乐高)"
)
# Work said by what one does, not by a title ("在老家种地", "开出租车", "送外卖"); a taxi or a lorry
# one drives for a living is no car of one's own.
ZH_WORK_DRIVEN = r"(?:出租车?|网约车|滴滴|货车|大车|卡车|公交车?)"
ZH_WORK_DONE = (
    rf"(?:种地|种田|种菜|务农|开{ZH_WORK_DRIVEN}|跑运输|跑滴滴|送快递|送外卖|跑外卖|卖菜|卖水果"
    r"|摆摊|教书|做生意|做买卖|打工|开店|开饭店|开餐馆|开超市|开公司|当兵)"
)

# --- Languages -------------------------------------------------------------------------------

LANGUAGES = word_set(
    """English Spanish French German Italian Portuguese Mandarin Chinese Cantonese Japanese
    Korean Russian Arabic Hindi Bengali Urdu Turkish Dutch Swedish Norwegian Danish Finnish
    Polish Greek Hebrew Thai Vietnamese Indonesian Malay Tagalog Swahili Persian Farsi
    Ukrainian Czech Hungarian Romanian Latin Esperanto Catalan Punjabi Tamil Gujarati Irish
    Welsh Icelandic Serbian Croatian Bulgarian Slovak Lithuanian Latvian Estonian ASL"""
)

# --- Cars ------------------------------------------------------------------------------------

CAR_MAKES = word_set(
    """toyota honda tesla bmw ford chevy chevrolet audi mercedes mercedes-benz benz volkswagen
    vw subaru mazda nissan hyundai kia jeep volvo porsche lexus acura infiniti cadillac
    buick gmc dodge chrysler rivian lucid polestar mini fiat jaguar ferrari lamborghini
    maserati bentley byd nio xpeng geely skoda peugeot renault citroen prius camry corolla
    civic accord mustang f-150 wrangler outback forester rav4 cr-v miata golf jetta leaf"""
)
ZH_CAR_MAKES = (
    "丰田|本田|特斯拉|宝马|奔驰|奥迪|大众|比亚迪|蔚来|小鹏|理想|福特|日产|现代|起亚|马自达"
    "|斯巴鲁|沃尔沃|保时捷|雷克萨斯|别克|吉利|长城|红旗|五菱|凯美瑞|卡罗拉|思域|雅阁|问界"
    "|小米SU7|极氪|领克|哈弗|长安|奇瑞|路虎|捷豹|法拉利|兰博基尼"
)
VEHICLES = r"car|truck|suv|van|minivan|sedan|pickup|hatchback|convertible|motorcycle|motorbike|ev"

# --- Numbers ---------------------------------------------------------------------------------

NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "a couple of": 2, "both": 2,
    "twin": 2, "twins": 2,
}  # fmt: skip
NUMBER = r"\d{1,3}|" + alternation(w for w in NUMBER_WORDS if w not in ("a", "an"))
ZH_NUMBER = r"\d{1,3}|[一二两三四五六七八九十]{1,3}"

# --- Places ----------------------------------------------------------------------------------

# Second halves of "City, Region" names: "Paris, Texas" is one place, not Paris.
REGIONS = word_set(
    """Alabama Alaska Arizona Arkansas California Colorado Connecticut Delaware Florida Georgia
    Hawaii Idaho Illinois Indiana Iowa Kansas Kentucky Louisiana Maine Maryland
    Massachusetts Michigan Minnesota Mississippi Missouri Montana Nebraska Nevada Ohio
    Oklahoma Oregon Pennsylvania Tennessee Texas Utah Vermont Virginia Washington Wisconsin
    Wyoming TX CA NY WA MA IL FL OR CO GA NC VA AZ NJ PA OH MI MN DC Ontario Quebec Alberta
    France Spain Italy Germany England Scotland Wales Ireland Canada Australia Japan China
    Mexico Brazil India UK USA US"""
) | frozenset(
    (
        "British Columbia",
        "New Hampshire",
        "New Jersey",
        "New Mexico",
        "New York",
        "North Carolina",
        "North Dakota",
        "Rhode Island",
        "South Carolina",
        "South Dakota",
        "West Virginia",
    )
)
# Capitalised words that are no one's name.
NOT_NAMES = word_set(
    """I I'm I've I'd I'll The A An This That These Those It Its It's There Then Now So But And
    Or If When While What Who Whom Whose Where Why How Which My Our Your His Her Their We He
    She They You Me Us Him Them Yes No Not Oh Ok Okay Yeah Yep Hey Hi Hello Well Also Just
    Actually Sadly Luckily Unfortunately Thanks Thank Please Sorry Today Tomorrow Yesterday
    Tonight Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March
    April May June July August September October November December Christmas Easter User
    Assistant Mr Mrs Ms Dr Big Good Bad Great Update Anyway Btw FYI PS Last Next Every All
    Some Any Both After Before Since Until Still Maybe Hmm Wow Lol Guess Fun Note"""
)
# Words before a family name that are no given name: "Dr Patel", "Miss Patel" may be her.
TITLES = frozenset(
    {
        *("Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Doctor", "Prof", "Professor", "Nurse"),
        *("Aunt", "Auntie", "Uncle", "Coach", "Sir", "Dame", "Lady", "Lord", "Judge", "Officer"),
    }
)
# Said after a Chinese name ("王建华老师", "李医生"): the name is the part before.
ZH_TITLES = r"(?:老师|教授|医生|大夫|先生|女士)"

# Common Chinese surnames: a clause starting with one and a given name is about that person
# ("张婷跳槽去了腾讯"); also 小/老/阿 + a character ("老王", "小李").
ZH_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏"
    "魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵"
    "万钱严覃武戴莫孔向汤欧阳司翟庞葛殷樊詹聂耿邢伍喻骆甄萧裴乔庄"
)
# Words that start with a surname's character and are no name.
ZH_NOT_NAMES = (
    "周末|周[一二三四五六日天]|马上|高兴|方便|白天|高新|金额|黄金|江边|石头|万一|钱包|段时间|任何"
    "|程序|许多|付款|龙虾|史上|向来|汤圆|武汉|江苏|黄山|高中|高考|孙子|孙女|王者|李子|张家|何时"
)

# What is said of someone right after their role, never a name ("我爸退休了", "我妈生病了").
ZH_ROLE_PREDICATES = (
    "退休|生病|病了|结婚|离婚|出差|加班|毕业|失业|怀孕|感冒|发烧|过世|去世|回国|出国|升职|辞职|离职"
    "|跳槽|搬家|出院|手术|住院|旅游|旅行|退学|考上|考研|恋爱|分手|订婚|出生|长大|瘦了|胖了|改名|更名"
)

# Chinese characters that end a name said after a role ("我哥哥马克是…": 马克): verbs,
# particles and adverbs that follow a subject.
ZH_NAME_STOP = (
    "是在住有开说也和跟与今已会去的了叫从对很都还刚最正把被给要想能就才又养买吃做当上下调准打来回"
    "工读学喜爱讨嫁娶离搬换不没每一两三几岁年这那个们戒抽吸喝，。！？；、,.!?; "
)

# A colour said answers "what colour", but one colour is no synonym of another.
COLOURS = (
    "red|blue|green|black|white|ginger|brown|grey|gray|yellow|orange|pink|purple|golden|silver"
)
ZH_COLOURS = "红色|蓝色|绿色|黑色|白色|黄色|灰色|粉色|紫色|橙色|棕色|金色|银色"

# --- Concepts: the words that answer a question's focus word ----------------------------------

# Each group: words (English stems or phrases, Chinese substrings) meaning the same thing
# for the purpose of "does this memory say something about X". Lookups go from a focus word
# to every group that holds it.
CONCEPTS: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split("|"))
    for group in (
        "salary|pay|paid|paycheck|income|earn|earning|wage|compensation|per year|per hour"
        "|k a year|工资|薪水|收入|月薪|年薪|薪资|挣|赚",
        "car|vehicle|drive|driving|automobile|sedan|suv|truck|pickup|minivan|ev|"
        + "|".join(CAR_MAKES)
        + "|车|汽车|开车|座驾|"
        + ZH_CAR_MAKES,
        "child|children|kid|son|daughter|baby|toddler|孩子|小孩|儿子|女儿|宝宝",
        "son|儿子",
        "daughter|女儿",
        "wife|spouse|married|妻子|老婆|太太|爱人|媳妇",
        "husband|spouse|married|丈夫|老公",
        "partner|spouse|wife|husband|girlfriend|boyfriend|married|对象|伴侣|老婆|老公|妻子|丈夫",
        # Whether someone is seeing someone is said by a date or a break-up too.
        "boyfriend|girlfriend|dating|broke up|split up|男朋友|女朋友|男友|女友|对象|约会|分手",
        "brother|sibling|哥哥|弟弟|兄弟",
        "sister|sibling|姐姐|妹妹|姐妹",
        "mother|mom|mum|妈妈|母亲",
        "father|dad|爸爸|父亲",
        "parent|mother|father|mom|dad|父母|爸妈",
        "friend|buddy|pal|朋友|好友|闺蜜",
        "job|work|occupation|profession|career|position|employed|employer|company|role|for a living"
        "|in charge of|responsible for|工作|职业|上班|职位|公司|负责|"
        + "|".join(JOBS)
        + "|"
        + ZH_JOBS,
        "name|named|called|名字|叫|姓名",
        "surname|last name|family name|姓",
        "age|old|aged|year-old|years old|turned|born|birthday|岁|年龄|多大|出生",
        "live|living|lives|based|reside|resident|moved|settled|home|city|town|address|住|搬"
        "|定居|城市|老家",
        "city|town|live|lives|living|based|moved|settled|住|搬|城市|定居",
        "address|street|avenue|road|地址|住址|街",
        "language|speak|spoken|fluent|fluently|learning|"
        + "|".join(LANGUAGES).lower()
        + "|语言|语|外语",
        "book|novel|read|reading|reads|author|书|小说|读|《",
        "movie|film|show|series|watch|watching|电影|剧",
        "game|play|playing|游戏|玩",
        "music|song|band|singer|album|listen|音乐|歌|乐队|歌手",
        "title|titled|called|named|书名|名字|《",
        "brand|model|maker|manufacturer|牌子|品牌|" + "|".join(CAR_MAKES) + "|" + ZH_CAR_MAKES,
        "school|university|college|uni|campus|attend|attended|graduated|studied|study|major"
        "|degree|大学|学校|学院|毕业|读书|专业",
        "favorite|favourite|fav|best|most|love|prefer|最喜欢|最爱|偏爱",
        "phone|phone number|number|mobile|cell|telephone|电话|手机|号码|手机号|手机号码|电话号码",
        "email|e-mail|mail|email address|e-mail address|@|邮箱|邮件|邮箱地址|电子邮箱|邮件地址",
        "manager|boss|supervisor|report to|老板|上司|领导|经理|主管",
        "commute|commuting|drive|bike|cycle|train|bus|subway|metro|通勤|地铁|港铁|公交|打车|开车"
        "|骑车|步行",
        "hobby|pastime|enjoy|free time|spare time|took up|taking up|getting into|got into"
        "|really into|been into|obsessed with|passionate about|爱好|兴趣|业余|迷上|爱上了",
        "pet|dog|cat|puppy|kitten|宠物|狗|猫",
        "dog|puppy|pup|"
        + "|".join(b for b, s in BREEDS.items() if s == "dog")
        + "|狗|小狗|金毛|拉布拉多",
        "cat|kitten|kitty|" + "|".join(b for b, s in BREEDS.items() if s == "cat") + "|猫|猫咪",
        "diet|vegetarian|vegan|pescatarian|meat|eat|eating|keto|素|吃肉|饮食|素食",
        "guitar|吉他",
        "piano|钢琴",
        "instrument|guitar|piano|violin|cello|drums|flute|ukulele|saxophone|乐器|吉他|钢琴|小提琴"
        "|大提琴|鼓|长笛|尤克里里|萨克斯",
        "twin|twins|双胞胎|龙凤胎",
        "food|dish|cuisine|eat|meal|食物|菜|吃",
        "color|colour|颜色",
        "sport|team|运动|球队",
        "allergy|allergic|intolerant|intolerance|过敏|不耐受",
        "birthday|born|生日|出生",
        "condition|illness|disease|diagnosed|medical|health|病|疾病|健康",
        "house|home|apartment|flat|place|房子|公寓",
        "trip|travel|vacation|holiday|visit|visited|旅行|旅游|度假",
    )
)
# How an attribute of someone else is commonly said, beyond the table's words for its key and
# the forms of its first word ("lives", "lived", "live"): what tells it ("What does Tomas
# do?": "he runs the sales team"), read one way only (a memory about a team does not answer
# "Does the user play for a team?").
ATTRIBUTE_WORDS: dict[str, tuple[str, ...]] = {
    "job": (
        *("team", "shift", "runs a", "runs the", "running a", "running the", "leads", "manages"),
        *("owns", "开了一家", "开了个", "当"),
    ),
    "works at": (
        *("office", "station", "hospital", "clinic", "firm", "factory", "store", "shop"),
        *("agency", "bank", "company", "joined", "hired", "starts at", "started at"),
        *("上班", "单位", "医院", "工厂", "银行", "公司", "店"),
    ),
    "learning": (
        *("lesson", "class", "course", "studying"),
        # Not "学了" alone: "转到一所小学了" tells no lesson.
        *("在学", "学习", "改学", "开始学", "去学", "课", "培训"),
    ),
    "lives in": (
        *("rent", "flat", "house", "apartment", "home", "moved"),
        *("settled", "家在", "租", "安顿", "搬", "住"),
    ),
    "hometown": ("grew up", "born", "from", "老家", "长大", "出生"),
}
# The table's phrases of several words ("phone number", "email address"), and its Chinese
# words of two characters or more: a question's noun phrase is read against them.
CONCEPT_PHRASES = frozenset(t.lower() for group in CONCEPTS for t in group if " " in t)
ZH_CONCEPT_WORDS = frozenset(
    t for group in CONCEPTS for t in group if len(t) > 1 and re.fullmatch(f"[{HAN}]+", t)
)


# Whether one is married, has children: a state of the family, said in its own words.
FAMILY_STATES = frozenset(
    {"married", "single", "divorced", "engaged", "widowed", "pregnant", "结婚", "已婚", "单身",
     "离婚", "怀孕", "订婚"}
)  # fmt: skip


def is_relation(word: str) -> bool:
    """Whether `word` names a relation to the user ("son", "kids", "老伴")."""
    return word.lower() in PERSON_ROLES or word in ZH_PERSON_ROLES


@cache
def role_words(role: str) -> frozenset[str]:
    """The words naming `role` (a relation to the user, "brother"; or a pet's species, "dog"),
    in English and Chinese: "bro", "哥哥". Built once per role: recall asks for each hit."""
    if not role:
        return frozenset()
    people = (PERSON_ROLES, ZH_PERSON_ROLES)
    animals = (SPECIES, SPECIES_PLURALS, ZH_SPECIES)
    return frozenset(
        {role}
        | {word for table in people for word, (name, _) in table.items() if name == role}
        | {word for table in animals for word, name in table.items() if name == role}
    )
