"""What a forget request names, and which sentences are about it.

A topic as said ("my home address", "everything about that relationship", "what I told you
about my ex", "我的病史") is read into:
- its words, less pronouns, fillers and generic nouns ("information", "stuff", 信息, 事情);
- the names in it ("Alex", "Japan"): a sentence naming one is about the topic;
- concepts: kinds of personal information that a few words name and many words show ("medical
  information" → diabetes, blood pressure, 糖尿病 …; "home address" → an address, a street …),
  in English and Chinese (CONCEPTS);
- whether the user owns it ("my address": not a friend's address);
- whether it points back at what was just said ("that", "it", "that password", 刚才说的);
- or nothing at all ("everything", "what I said"): a vague request, which forgets nothing.

`Topic.about(sentence)` tells whether a sentence is about the topic; memories/forgetting/plan.py
decides what that erases.
"""

import re
from dataclasses import dataclass, field, replace
from functools import cached_property

from memories.sentences import HAN

# --- Concepts ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Concept:
    name: str
    # A topic naming the concept ("medical information", "病史").
    names: re.Pattern[str]
    # A sentence about it ("I have diabetes", "用户有高血压").
    shows: re.Pattern[str]
    # Slots whose facts hold it (memories/extraction.py).
    slots: tuple[str, ...] = ()
    # Information people keep private whoever it is about ("delete the wifi password" asks to
    # forget, where "delete the draft email" may be a task).
    sensitive: bool = False


def concept(
    name: str, names: str, shows: str, slots: tuple[str, ...] = (), *, sensitive: bool = False
) -> Concept:
    return Concept(name, re.compile(names, re.I), re.compile(shows, re.I), slots, sensitive)


# English patterns are word-bounded; Chinese ones are not (no spaces between words).
W = r"(?<![\w])"
E = r"(?![\w])"
STREET_TYPES = (
    r"street|st\.|avenue|ave\.?|road|rd\.|terrace|lane|ln\.|drive|dr\.|boulevard|blvd\.?|way"
    r"|court|ct\.|place|pl\.|circle|parkway|highway|square|crescent|close|row|alley"
)
CONCEPTS = (
    concept(
        "address",
        rf"{W}(?:(?:home|street|mailing|postal|physical|house|billing|shipping)\s+)?address(?:es)?{E}"
        rf"|{W}where\s+i\s+live{E}|地址|住址|住处|住哪|家在哪",
        rf"{W}address(?:es)?{E}|{W}lives?\s+at{E}|{W}living\s+at{E}"
        rf"|{W}\d+[a-z]?\s+(?:[A-Za-z][\w'.-]*\s+){{1,3}}(?:{STREET_TYPES}){E}"
        rf"|(?-i:{W}(?:[A-Z][\w'-]*\s+){{1,3}}(?:Street|Avenue|Road|Terrace|Lane|Drive|Boulevard"
        rf"|Way|Court|Place|Circle|Parkway|Square|Crescent){E})"
        rf"|{W}(?:apt|apartment|suite|unit|flat)\s*#?\s*\d+|{W}(?:zip|postal|post)\s*code{E}"
        rf"|{W}postcode{E}|地址|住址|门牌|小区|(?:路|街|巷|弄)\d+号|\d+(?:号楼|栋|单元)|\d+室",
        ("profile:address",),
        sensitive=True,
    ),
    concept(
        "home_city",
        rf"{W}(?:home\s*town|city|location|whereabouts|neighbou?rhood|where\s+i\s+live){E}"
        r"|城市|住在哪|在哪住|所在地|位置",
        rf"{W}(?:live|lives|living|lived)\s+in{E}|{W}moved\s+to{E}|{W}(?:based|located)\s+in{E}"
        rf"|{W}home\s*town{E}|住在|搬到|搬去|老家",
        ("profile:home_city",),
    ),
    concept(
        "health",
        rf"{W}(?:medical|health|healthcare|diagnos[ie]s|illness(?:es)?|diseases?|conditions?"
        rf"|medications?|meds|prescriptions?|treatments?|symptoms?|surgery|surgeries|operation"
        rf"|hospital(?:\s+stay)?|doctor'?s?\s+visits?|test\s+results?|lab\s+results?"
        rf"|results|checkup|check-up|scan|biopsy){E}|病|医疗|健康|身体|药|诊断|治疗|手术|检查|体检|化验",
        rf"{W}(?:diabet(?:es|ic)|blood\s+pressure|hypertension|cholesterol|cancer|tumou?r|asthma"
        rf"|depress(?:ion|ed)|anxiety|panic\s+attacks?|bipolar|adhd|autis(?:m|tic)|ptsd|ocd"
        rf"|schizophreni[ac]|epilep(?:sy|tic)|seizures?|migraines?|arthritis|hiv|aids|hepatitis"
        rf"|covid|surgery|surgeries|operated|diagnos(?:ed|is|es)|medications?|medicines?|insulin"
        rf"|prescri(?:ption|bed)s?|therap(?:y|ist|ies)|psychiatr(?:ist|ic|y)|chemo(?:therapy)?"
        rf"|radiation|illness(?:es)?|diseases?|chronic|pregnan(?:t|cy)|miscarriage|allerg(?:y|ies|ic)"
        rf"|medical|disorders?|syndrome|infections?|injur(?:y|ies|ed)|fractured?|stroke"
        rf"|heart\s+(?:attack|disease|condition)|kidney|liver|thyroid|rehab|addiction"
        rf"|antidepressants?|ssris?|dialysis|biopsy|tumor|overdose|sick|dental|tooth|teeth"
        rf"|wisdom\s+tooth|pain|aches?|fever|flu|cough|sore|nausea|insomnia"
        rf"|sleeping\s+pills?|glucose|blood\s+sugar|a1c|insulin\s+pump|inhaler|epipen){E}"
        r"|糖尿病|高血压|血压|胆固醇|癌|肿瘤|哮喘|抑郁|焦虑|双相|多动症|自闭|癫痫|偏头痛|关节炎|艾滋"
        r"|肝炎|新冠|手术|确诊|诊断|药|胰岛素|处方|治疗|心理医生|心理咨询|化疗|病|怀孕|流产|过敏|医院"
        r"|住院|康复|体检|症|牙|疼|痛|发烧|感冒|咳嗽|失眠|安眠药|休学|查出|复查|结节|囊肿|息肉|肿|炎"
        r"|乙肝|肝|肾|化验|检查结果|B超|CT|核磁",
        sensitive=True,
    ),
    concept(
        "mental_health",
        rf"{W}(?:therapy|therapist|counsell?ing|counsell?or|mental\s+health|psychiatr\w*"
        rf"|psycholog\w*){E}|心理|咨询师|精神科",
        rf"{W}(?:therap(?:y|ist|ies)|counsell?(?:ing|or)|psychiatr\w*|psycholog\w*|anxiety"
        rf"|depress(?:ion|ed)|panic\s+attacks?|ptsd|ocd|bipolar|adhd|burn-?out|antidepressants?"
        rf"|self-harm|suicid\w*){E}|心理|抑郁|焦虑|精神|惊恐|双相|咨询师|自残|轻生",
        sensitive=True,
    ),
    concept(
        "relationship",
        rf"{W}(?:relationships?|romance|love\s+life|dating(?:\s+life)?|break-?ups?|divorce|marriage"
        rf"|ex|ex-?(?:boyfriend|girlfriend|husband|wife|partner)|boyfriend|girlfriend|partner"
        rf"|affair|crush|dates?|who\s+i'?m\s+(?:into|seeing|dating)|love\s+interest){E}"
        r"|感情|恋爱|前男友|前女友|前夫|前妻|分手|离婚|男朋友|女朋友|对象|婚姻"
        r"|恋情|暗恋|前任",
        rf"{W}(?:break-?ups?|broke\s+up|broken\s+up|split\s+up|dumped|dating|dated|went\s+out\s+with"
        rf"|boyfriend|girlfriend|ex|ex-?(?:boyfriend|girlfriend|husband|wife|partner)|divorced?"
        rf"|separated|relationship|romance|romantic|married|marriage|wedding|engaged|engagement"
        rf"|affair|cheated|crush|in\s+love|heartbreak|heartbroken|first\s+date){E}"
        r"|分手|前男友|前女友|男朋友|女朋友|前夫|前妻|离婚|恋爱|感情|约会|对象|结婚|婚姻|出轨|暗恋|表白"
        r"|失恋|前任",
        sensitive=True,
    ),
    concept(
        "finance",
        rf"{W}(?:financ(?:es|ial)|money|salary|income|pay|wages?|earn(?:s|ings)?|what\s+i\s+make"
        rf"|debts?|loans?|mortgage"
        rf"|savings|bank(?:ing)?(?:\s+(?:account|details|info))?|credit"
        rf"|investments?|stocks?|crypto|taxes|net\s+worth|budget){E}"
        r"|工资|收入|薪水|薪资|年薪|月薪|存款|贷款|债|房贷|银行|理财|财务|钱|投资|股票",
        rf"{W}(?:salary|income|earn(?:s|ed|ing)?|paid|wages?|debts?|loans?|mortgage|savings"
        rf"|bank|account\s+number|credit\s+card|debit\s+card|card\s+number|invest(?:ment|ments"
        rf"|ed|ing)?|stocks?|shares|crypto|bitcoin|bonus|raise|net\s+worth|bankrupt(?:cy)?"
        rf"|owe[sd]?|broke|taxes){E}|\$\s?\d|\d\s?(?:k|grand|dollars|usd|euros?|pounds)\b"
        r"|\[redacted: (?:card_number|iban)\]|工资|收入|薪水|薪资|年薪|月薪|存款|贷款|欠|房贷|银行"
        r"|卡号|投资|股票|基金|万元|块钱|奖金|信用卡",
        sensitive=True,
    ),
    # Cards are finance too, but "my credit card" is not the bank account beside it.
    concept(
        "payment_card",
        rf"{W}(?:(?:credit|debit|bank|payment|amex|visa|mastercard)\s+)?cards?"
        rf"(?:\s+(?:number|details|info|information))?{E}|信用卡|借记卡|银行卡|卡号",
        rf"{W}(?:credit\s+card|debit\s+card|card\s+number|card\s+ending|ending\s+in\s+\d{{4}}"
        rf"|last\s+(?:four|4)\s+digits|amex|american\s+express|visa\s+card|mastercard"
        rf"|discover\s+card|cvv|expiry\s+date){E}|\[redacted: card_number\]"
        r"|信用卡|借记卡|银行卡|卡号|尾号",
        sensitive=True,
    ),
    concept(
        "credentials",
        rf"{W}(?:passwords?|passcodes?|pass\s?phrases?|pins?(?:\s+(?:code|number))?|logins?"
        rf"|credentials|api\s+keys?|keys?|tokens?|secrets?|codes?|combination){E}"
        r"|密码|口令|验证码|密钥|秘钥|令牌",
        rf"{W}(?:passwords?|passcodes?|pass\s?phrases?|pin|pins|logins?|credentials|api\s+keys?"
        rf"|tokens?|secret|(?:door|gate|garage|alarm|safe|lock|access|security)\s+code){E}"
        r"|\[redacted: (?:password|pin|api_key|token|private_key)\]"
        r"|密码|口令|验证码|密钥|秘钥|令牌",
        sensitive=True,
    ),
    concept(
        "identity_number",
        rf"{W}(?:ssn|social\s+security(?:\s+number)?|id(?:\s+(?:card|number))?|identity"
        rf"|passport(?:\s+number)?|driver'?s?\s+licen[cs]e|national\s+(?:id|insurance)(?:\s+number)?"
        rf"|tax\s+(?:id|number)){E}|身份证|护照|驾照|社保|证件",
        rf"{W}(?:ssn|social\s+security|passport|driver'?s?\s+licen[cs]e|national\s+id"
        rf"|id\s+(?:card\s+)?number|national\s+insurance|tax\s+id){E}"
        r"|\[redacted: (?:ssn|national_id)\]|身份证|护照|驾照|社保|证件号",
        sensitive=True,
    ),
    concept(
        "phone",
        rf"{W}(?:phone|mobile|cell|contact|telephone)(?:\s+(?:phone|number))?{E}"
        rf"|(?:(?<=work )|(?<=home )|(?<=personal )|(?<=office )|(?<=private ))(?:number|line)"
        rf"|^(?:my\s+|the\s+)?(?:number|digits){E}|电话|手机|号码",
        rf"{W}(?:phone|mobile|cell(?:\s+phone)?|call\s+me\s+at|text\s+me\s+at){E}"
        r"|(?<![\d-])\+?\d[\d\s().-]{6,}\d(?![\d-])|电话|手机",
        ("profile:phone",),
        sensitive=True,
    ),
    concept(
        "email",
        rf"{W}(?:e-?mail(?:\s+address)?|inbox){E}|邮箱|电子邮件|邮件地址",
        rf"{W}e-?mail{E}|[\w.+-]+@[\w-]+\.[\w.-]+|邮箱",
        ("profile:email",),
    ),
    concept(
        "job",
        rf"{W}(?:job|work|workplace|employer|career|occupation|profession|company|office"
        rf"|boss|position|role){E}|工作|职业|公司|单位|老板|职位",
        rf"{W}(?:work(?:s|ed|ing)?\s+(?:at|for|as|in)|job|employer|employed|hired|fired|laid\s+off"
        rf"|promot(?:ed|ion)|my\s+boss|colleagues?|coworkers?|co-workers?|intern(?:ship)?"
        rf"|resign(?:ed)?|quit\s+my){E}|工作|上班|公司|单位|职位|老板|同事|辞职|入职|跳槽",
        ("profile:job",),
    ),
    concept(
        "name",
        rf"{W}(?:name|real\s+name|full\s+name|surname|last\s+name|first\s+name){E}|名字|姓名",
        rf"{W}(?:name|called|call\s+me){E}|名字|姓名|我叫|用户叫",
        ("profile:name",),
    ),
    concept(
        "birthday",
        rf"{W}(?:birthday|birth\s*date|date\s+of\s+birth|age|how\s+old\s+i\s+am){E}|生日|出生|年龄",
        rf"{W}(?:birthday|born|birth|years?\s+old|turn(?:ed|ing|s)?\s+\d+){E}|生日|出生|岁",
        ("profile:birthday",),
    ),
    concept(
        "family",
        rf"{W}(?:family|kids?|children|child|wife|husband|spouse|parents?|mom|mother|dad|father"
        rf"|siblings?|brothers?|sisters?|sons?|daughters?|household){E}"
        r"|家人|家庭|家里|孩子|老婆|老公|妻子|丈夫|父母|爸爸|妈妈|儿子|女儿|哥哥|姐姐|弟弟|妹妹",
        rf"{W}(?:wife|husband|spouse|sons?|daughters?|kids?|children|child|mom|mother|dad|father"
        rf"|parents|brothers?|sisters?|siblings?|family|grandm\w+|grandf\w+|grandparents"
        rf"|in-laws?|cousins?|aunt|uncle|nephew|niece|baby){E}"
        r"|老婆|妻子|老公|丈夫|儿子|女儿|孩子|妈妈|母亲|爸爸|父亲|父母|哥哥|姐姐|弟弟|妹妹|家人|爷爷"
        r"|奶奶|外公|外婆",
        ("profile:household",),
    ),
    concept(
        "beliefs",
        rf"{W}(?:religion|religious\s+\w+|faith|beliefs?|politics|political\s+\w+|views|vote"
        rf"|voting|sexuality|sexual\s+orientation|orientation|gender\s+identity){E}"
        r"|宗教|信仰|政治|性取向",
        rf"{W}(?:church|mosque|temple|synagogue|pray(?:s|ed|ing)?|christian|catholic|muslim"
        rf"|islam|jewish|buddhis[tm]|hindu|atheist|agnostic|religio(?:n|us)|faith|god|bible"
        rf"|quran|vot(?:e|ed|ing)|democrat|republican|liberal|conservative|politic(?:s|al)"
        rf"|gay|lesbian|bisexual|queer|transgender|trans|non-binary|coming\s+out|came\s+out){E}"
        r"|教堂|寺庙|清真寺|祈祷|基督|天主|穆斯林|伊斯兰|佛教|信佛|无神论|投票|党员|同性恋|双性恋"
        r"|出柜",
        sensitive=True,
    ),
    concept(
        "education",
        rf"{W}(?:exams?|tests?\s+scores?|grades?|gpa|transcripts?|school\s+results?"
        rf"|admissions?|applications?\s+to\s+\w+|entrance\s+exam|bar\s+exam|sat|act|gre|gmat"
        rf"|failing\s+\w+|failed\s+\w+){E}|考试|考研|高考|中考|成绩|分数|挂科|落榜|考公|上岸",
        rf"{W}(?:exams?|failed|fail(?:ing)?|flunk\w*|score[sd]?|grades?|gpa|transcripts?"
        rf"|admitted|admission|rejected|waitlist\w*|retak\w+|resit|bar\s+exam|sat|gre|gmat){E}"
        r"|考试|考研|高考|中考|成绩|分数|挂科|落榜|没考上|没上岸|上岸|国家线|分数线|复读|二战|考公",
        sensitive=True,
    ),
    concept(
        "legal",
        rf"{W}(?:legal(?:\s+\w+)?|court(?:\s+case)?|lawsuits?|case|arrests?|criminal\s+record"
        rf"|charges?|conviction|police|lawyer|trial){E}|官司|诉讼|法院|案子|起诉|犯罪|违法|警察|律师",
        rf"{W}(?:arrest(?:ed)?|dui|dwi|court|trial|lawsuits?|sued|suing|lawyer|attorney|charged"
        rf"|convicted|conviction|felony|misdemeanou?r|jail|prison|probation|parole|police"
        rf"|trespass(?:ing)?|fined|ticket(?:ed)?|custody|hearing|plea|guilty|criminal){E}"
        r"|官司|诉讼|起诉|告了|法院|开庭|律师|判决|判了|拘留|坐牢|监狱|缓刑|警察|纠纷|案子|罚款|违法|犯罪",
        sensitive=True,
    ),
    concept(
        "gambling",
        rf"{W}(?:gambl\w*|betting|bets?|casinos?|poker){E}|赌博|赌|彩票",
        rf"{W}(?:gambl\w*|bet|bets|betting|casinos?|poker|blackjack|roulette|slots?|lottery"
        rf"|sportsbook|wager\w*|bellagio){E}|赌|彩票|下注|输了.{{0,6}}钱",
        sensitive=True,
    ),
    concept(
        "death",
        rf"{W}(?:death|died|passing|passed(?:\s+away)?|funeral|loss|grief|mourning){E}"
        r"|去世|过世|死|葬礼|离世|走了",
        rf"{W}(?:died|dead|death|passed\s+away|passed|funeral|buried|lost\s+(?:my|our)\s+\w+"
        rf"|grief|grieving|mourning|widow(?:ed|er)?){E}|去世|过世|离世|死了|葬礼|走了",
        sensitive=True,
    ),
    concept(
        "job_search",
        rf"{W}(?:job\s+(?:hunt(?:ing)?|search(?:ing)?|interviews?|applications?|offers?)"
        rf"|interviews?|interviewing|looking\s+for\s+(?:a\s+)?(?:new\s+)?job|quitting"
        rf"|leaving\s+my\s+job|new\s+job|job\s+change|layoffs?|laid\s+off|getting\s+fired"
        rf"|firing|job\s+loss|losing\s+my\s+job){E}|找工作|跳槽|换工作|面试|离职|辞职|裁员|被裁|失业",
        rf"{W}(?:interview(?:s|ed|ing)?|recruiters?|job\s+offers?|offer\s+from|applied|applying"
        rf"|resume|cv|quit(?:ting)?\s+my\s+job|leave\s+my\s+job|job\s+(?:hunt|search)"
        rf"|headhunt\w*|resign\w*|notice|laid\s+off|let\s+go|fired|layoffs?|severance){E}"
        r"|offer|面试|跳槽|换工作|辞职|离职|猎头|简历|找工作|裁员|被裁|裁了|失业|赔偿|N\+1",
        sensitive=True,
    ),
    concept(
        "pregnancy",
        rf"{W}(?:pregnan\w*|baby|expecting|due\s+date|fertility|ivf|miscarriage){E}"
        r"|怀孕|宝宝|孩子的事|预产期|备孕|流产",
        rf"{W}(?:pregnan\w*|expecting|weeks\s+along|due\s+(?:date|in)|trimester|ivf"
        rf"|fertility|miscarr\w*|ultrasound|morning\s+sickness){E}|怀孕|孕|预产期|备孕|流产|产检",
        sensitive=True,
    ),
    concept(
        "travel",
        rf"{W}(?:trips?|travel(?:s|ling|ing)?|vacation|holiday|journey|flight|itinerary"
        rf"|travel\s+plans?){E}|旅行|旅游|出行|行程|度假|出差|机票",
        rf"{W}(?:trips?|travel\w*|vacation|holiday|flying|fly(?:ing)?\s+to|flight|itinerary"
        rf"|visit(?:ing)?|tour|cruise|going\s+to\s+[A-Z]\w+){E}|旅行|旅游|去.{{1,8}}玩|度假|出差"
        r"|机票|跟团|自由行",
    ),
    concept(
        "account",
        rf"{W}(?:accounts?(?:\s+(?:info|details|login))?|logins?|usernames?|user\s+names?"
        rf"|handles?|profiles?|wechat(?:\s+id)?|whatsapp|telegram|signal){E}"
        r"|账号|账户|用户名|微信号?|QQ号?|登录|小号|大号",
        rf"{W}(?:accounts?|logins?|log\s+in|username|user\s+name|handle|wechat|whatsapp"
        rf"|telegram|netflix|spotify|hulu|disney\+?|amazon\s+prime|instagram|facebook|twitter"
        rf"|tiktok|snapchat|linkedin){E}|账号|账户|用户名|微信|QQ|登录|抖音|微博|小红书",
        sensitive=True,
    ),
)


# --- Reading a topic ---------------------------------------------------------------------------

# What a topic's words may lead with before naming it: "everything about", "what I told you
# about", "the part about", "the fact that", "关于" …
LEAD = re.compile(
    r"^(?:(?:everything|anything|all|stuff|things?)(?:\s+(?:you\s+know|i(?:'ve)?\s+"
    r"(?:told\s+you|said|mentioned|shared)))?\s+(?:about|on|regarding|concerning|related\s+to)"
    r"|(?:all|any)(?:\s+of)?(?:\s+the)?\s+(?:stuff|things|info|information|details|data|notes"
    r"|memories|records)\s+(?:about|on|regarding)|the\s+(?:stuff|things?|part|bit|info|information"
    r"|details|data|notes?|memories|records?|conversation|story)\s+(?:about|on|regarding|where)"
    r"|what\s+i(?:'ve)?\s+(?:just\s+)?(?:told\s+you|said|mentioned|shared|wrote)"
    r"(?:\s+(?:about|regarding|on))?|the\s+fact\s+that|about|regarding|any\s+mention\s+of"
    r"|mentions?\s+of|all\s+of|all|everything\s+related\s+to|that(?=\s+(?:i|my|we|our|me)\b))\s+",
    re.I,
)
ZH_LEAD = re.compile(r"^(?:关于|有关|所有|全部|一切|所有关于|所有有关|跟|和|我说的|我说过的)+")
ZH_TAIL = re.compile(
    r"(?:的事情?|的信息|的资料|的记录|的内容|的一切|的东西|这件事|那件事|那个事情?|那事|这事|那段|这段"
    r"|那部分|的部分|方面的内容|方面|这些|那些|的话|相关的|有关的)+$"
)
# "That", "it", "what I just said", "that password", "刚才说的", "那段感情": what was just said.
ANAPHOR = re.compile(
    r"^(?:that|it|this|those|these|them|what\s+i\s+just\s+(?:said|told\s+you|mentioned|wrote)"
    r"|the\s+last\s+thing\s+i\s+(?:said|told\s+you)|my\s+last\s+message|that\s+last\s+(?:part|bit"
    r"|message)|everything\s+i\s+just\s+said|what\s+i\s+just\s+shared)$",
    re.I,
)
DEMONSTRATIVE = re.compile(r"^(?:that|this|those|these)\s+(?P<head>.+)$", re.I)
ZH_ANAPHOR = re.compile(
    r"^(?:这个|那个|这些|那些|这件事|那件事|它|这|那|刚才说的|刚刚说的|刚才那句话?|刚才的|我刚才说的"
    r"|我刚说的|刚说的|上面说的|上面那句|之前说的|前面说的|后面说的|后来说的|这句话|那句话)$"
)
ZH_DEMONSTRATIVE = re.compile(r"^(?:这|那)(?:个|段|些|件|条)?(?P<head>.+)$")

STOPWORDS_TEXT = """
    i me my mine myself you your yours that this these those the a an about what said say told
    tell is am are was were be been being it its of to in on at for and or really very so just
    do does did don't not no like likes love loves enjoy enjoys hate hates prefer prefers thing
    things stuff part bit fact i'm i've all everything anything please now know known knows
    remember info information details detail data record records notes note memory memories
    conversation story mention mentions any some whole entire with from where when how which who
    whom why whatever we our us us' ever again any more anymore also too just own old new
    current previous former last latest session sessions appointment appointments visit visits
    plan plans issue issues problem problems situation matter case topic subject him her them
    his hers over into whole even concerning regarding involving
"""
STOPWORDS = frozenset(STOPWORDS_TEXT.split())
ZH_STOP = re.compile(
    r"我自己|我的|我们的|我|自己|那个|这个|这边|那边|你|很|非常|特别|真的|不喜欢|喜欢|爱|讨厌|偏好"
    r"|的|了|吧|都|也|就|过|说"
)
ZH_GENERIC_TEXT = """
    任何 任何记录 任何东西 记录 这块 那块 这条 那条
    信息 资料 记录 内容 东西 事 事情 一切 所有 情况 相关 问题 方面 部分
"""
ZH_GENERIC = frozenset(ZH_GENERIC_TEXT.split())
ZH_GENERIC_TAIL = re.compile(r"(?:信息|资料|记录|内容|情况|相关|的事情?)+$")
WORD = re.compile(r"[\w'@.+-]+")
NAME = re.compile(r"(?<![\w'])(?!I\b)[A-Z][\w'-]*")


def stem(word: str) -> str:
    word = word.lower().removesuffix("'s").removesuffix("’s")
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


@dataclass(frozen=True)
class Topic:
    said: str
    # Stems (English) or segments (Chinese) that are not part of a concept's name: what makes
    # the topic specific ("personal" in "my personal cell number", "Iceland" in "my Iceland
    # trip"). A topic with none is the concepts it names ("my medical information").
    words: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    concepts: tuple[Concept, ...] = ()
    owned: bool = False  # "my …": the user's, not someone else's
    anaphoric: bool = False  # points back at what was just said
    chinese: bool = False
    # Someone else's ("my brother's surgery", "我哥哥的手术"): a sentence must name them too.
    owner: str = ""

    @property
    def vague(self) -> bool:
        """Names nothing: a request that forgets nothing."""
        return not (self.words or self.names or self.concepts or self.anaphoric)

    @cached_property
    def slots(self) -> frozenset[str]:
        return frozenset(slot for c in self.concepts for slot in c.slots)

    @property
    def broad(self) -> bool:
        """Names kinds of information and nothing more specific ("my address", not "my work
        address"): every fact in their slots is about it."""
        return bool(self.concepts) and not (self.words or self.names or self.owner)

    def plain(self) -> "Topic":
        """The topic without pointing back ("that password" → "password")."""
        return replace(self, anaphoric=False)

    def about(self, sentence: str) -> bool:
        """Whether `sentence` is about the topic (see `spans`)."""
        return bool(self.spans(sentence))

    def spans(self, sentence: str) -> list[tuple[int, int]]:
        """Where `sentence` is about the topic: it names one of its names, holds all of its
        specific words, or (for a topic without any) shows one of its concepts — the user's own
        where the topic is theirs ("my address", not "Tom's work address"), the owner's where
        it is someone else's ("my brother's surgery")."""
        found = [m.span() for name in self.names for m in _word_matches(sentence, name)]
        if self.words:
            per_word = [_word_matches(sentence, word, stemmed=True) for word in self.words]
            if all(per_word):
                found += [m.span() for matches in per_word for m in matches]
        elif not self.names:
            found += self._concept_spans(sentence)
        return self._whose(sentence, found)

    def partly(self, sentence: str) -> bool:
        """Whether `sentence` shows a concept of a topic that is more specific than it ("my
        Iceland trip": a trip; "my personal cell number": a phone number): about the topic only
        if it means the same (memories/forgetting/plan.py asks the embeddings)."""
        return bool(self.partly_spans(sentence))

    def partly_spans(self, sentence: str) -> list[tuple[int, int]]:
        """Where `sentence` is partly about the topic (see `partly`)."""
        if not (self.words or self.names):
            return []
        return self._whose(sentence, self._concept_spans(sentence))

    def _concept_spans(self, sentence: str) -> list[tuple[int, int]]:
        return [m.span() for c in self.concepts for m in c.shows.finditer(sentence)]

    def _whose(self, sentence: str, found: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if self.owned:
            found = [span for span in found if not owned_by_another(sentence, span[0])]
        if found and self.owner and not _word_matches(sentence, self.owner, stemmed=True):
            return []
        return found

    def owners_named_in(self, text: str) -> bool:
        """Whether `text` can be about the topic for whose it is: it names the topic's owner,
        or (the user's own topic) does not lead with someone else."""
        if self.owner:
            return bool(_word_matches(text, self.owner, stemmed=True))
        return not (self.owned and owned_by_another(text, len(CLAUSE_BREAK.split(text)[0])))


@dataclass(frozen=True)
class _Match:
    start: int
    end: int

    def span(self) -> tuple[int, int]:
        return self.start, self.end


# People called by more than one word: "my grandpa's death" is about "my grandfather".
KIN = [
    "grandpa grandfather granddad grandad gramps",
    "grandma grandmother granny nana gran",
    "mom mother mum mommy mama ma",
    "dad father daddy papa pa",
    "brother bro",
    "sister sis",
    "husband hubby spouse",
    "wife spouse",
    "kid child son daughter",
    "爸 爸爸 父亲 老爸",
    "妈 妈妈 母亲 老妈",
    "哥 哥哥",
    "姐 姐姐",
    "弟 弟弟",
    "妹 妹妹",
    "老公 丈夫",
    "老婆 妻子 太太",
    "爷爷 祖父",
    "奶奶 祖母",
    "外公 姥爷",
    "外婆 姥姥",
]
ALIASES = {word: tuple(group.split()) for group in KIN for word in group.split()}


def _word_matches(sentence: str, word: str, *, stemmed: bool = False) -> list[_Match]:
    if HAN.search(word):
        return [
            _Match(m.start(), m.end())
            for alias in ALIASES.get(word, (word,))
            for m in re.finditer(re.escape(alias), sentence)
        ]
    wanted = {stem(alias) if stemmed else alias for alias in ALIASES.get(word.lower(), (word,))}
    wanted = {w.lower() for w in wanted}
    return [
        _Match(m.start(), m.end())
        for m in WORD.finditer(sentence)
        if (stem(m.group()) if stemmed else m.group().lower().rstrip(".")) in wanted
    ]


def concepts_named(text: str) -> tuple[Concept, ...]:
    """The concepts `text` names: the most specific where one name holds another ("job hunt":
    the job search, not every job), the head where one qualifies another ("work number": a
    phone number, not the job)."""
    spans = {c: [m.span() for m in c.names.finditer(text)] for c in CONCEPTS}
    named = {c: found for c, found in spans.items() if found}

    def within(inner: tuple[int, int], outer: tuple[int, int]) -> bool:
        return outer[0] <= inner[0] and inner[1] <= outer[1] and inner != outer

    def qualifies(inner: tuple[int, int], head: tuple[int, int]) -> bool:
        return 0 <= head[0] - inner[1] <= 1 and not HAN.search(text[slice(*inner)])

    return tuple(
        c
        for c, found in named.items()
        if not any(
            all(any(within(s, o) or qualifies(s, o) for o in other) for s in found)
            for d, other in named.items()
            if d is not c
        )
    )


def topic_read(said: str) -> Topic:
    """The topic a request names (see the module's docstring)."""
    text = " ".join(said.replace("’", "'").split()).strip(" .,!?;:。，！？；：")
    if HAN.search(text):
        return _chinese_topic(text)
    owned = re.search(r"\b(?:my|mine|i|me|myself|i'm|i've)\b", text, re.I) is not None
    while (lead := LEAD.match(text)) is not None:
        text = text[lead.end() :]
    if ANAPHOR.match(text):
        return Topic(said, anaphoric=True, owned=owned)
    anaphoric = False
    if (demonstrative := DEMONSTRATIVE.match(text)) is not None:
        anaphoric, text = True, demonstrative["head"]
    owner = ""
    if (possessed := POSSESSED.match(text)) is not None:
        owner, owned, text = possessed["owner"], False, possessed["head"]
    concepts = concepts_named(text)
    named = [m.span() for c in concepts for m in c.names.finditer(text)]
    words = tuple(
        dict.fromkeys(
            stem(word.group())
            for word in WORD.finditer(text.lower())
            if word.group().strip(".") not in STOPWORDS
            and len(word.group().strip(".")) > 1
            and not any(start < word.end() and word.start() < end for start, end in named)
        )
    )
    names = tuple(dict.fromkeys(m.group() for m in NAME.finditer(text)))
    return Topic(said, words, names, concepts, owned, anaphoric, owner=owner)


def _chinese_topic(text: str) -> Topic:
    owned = "我" in text
    text = ZH_TAIL.sub("", ZH_LEAD.sub("", text))
    if not text:
        return Topic(said=text, chinese=True)  # 一切, 所有: names nothing
    if ZH_ANAPHOR.match(text) or re.match(r"^(?:刚才|刚刚|我刚才|我刚)", text):
        return Topic(text, anaphoric=True, owned=owned, chinese=True)
    anaphoric = False
    if (demonstrative := ZH_DEMONSTRATIVE.match(text)) is not None and "我" not in text:
        anaphoric, text = True, demonstrative["head"]
    owner = ""
    if (possessed := ZH_POSSESSED.match(text)) is not None:
        owner, owned, text = possessed["owner"], False, possessed["head"]
    concepts = concepts_named(text)
    named = [m.span() for c in concepts for m in c.names.finditer(text)]
    segments, start = [], 0
    for stop in [*ZH_STOP.finditer(text), None]:
        end = stop.start() if stop else len(text)
        if end > start and not any(s < end and start < e for s, e in named):
            segments.append(text[start:end])
        start = stop.end() if stop else end
    words = tuple(
        dict.fromkeys(
            w for s in segments if s not in ZH_GENERIC and (w := ZH_GENERIC_TAIL.sub("", s))
        )
    )
    return Topic(text, words, (), concepts, owned, anaphoric, chinese=True, owner=owner)


# --- Whose it is -------------------------------------------------------------------------------

PERSON_NOUNS = (
    r"friends?|brothers?|sisters?|mom|mum|mother|dad|father|wife|husband|spouse|sons?|daughters?"
    r"|colleagues?|co-?workers?|boss|manager|neighbou?rs?|cousins?|uncle|aunt|partner|roommate"
    r"|flatmate|teammates?|girlfriend|boyfriend|ex|kids?|child|children|parents?|grandma|grandpa"
    r"|grandmother|grandfather|nephew|niece|in-laws?|classmates?|client|landlord|doctor|teacher"
)
# A topic owned by someone else: "my brother's surgery", "Tom's address", "我哥哥的手术".
POSSESSED = re.compile(
    rf"^(?:my\s+|the\s+)?(?P<owner>(?:{PERSON_NOUNS})|(?-i:[A-Z][a-z]+))'s\s+(?P<head>.+)$", re.I
)
ZH_PERSON_NOUNS = (
    r"朋友|同事|哥哥|姐姐|弟弟|妹妹|妈妈|爸爸|母亲|父亲|老婆|老公|妻子|丈夫|儿子|女儿|邻居|老板|室友|同学"
    r"|男朋友|女朋友|前男友|前女友|孩子|客户|爷爷|奶奶|外公|外婆|闺蜜|哥们|老妈|老爸|领导|上司"
    r"|妈|爸|哥|姐|弟|妹"
)
ZH_POSSESSED = re.compile(rf"^(?:我的?)?(?P<owner>{ZH_PERSON_NOUNS})的(?P<head>.+)$")
# A third person owning what follows: "Tom's", "my friend's", "his", "her", "my brother Mike".
# Places that own what follows as a person would: "my office in Pioneer Square" is not where
# the user lives.
PLACE_NOUNS = r"office|workplace|company|school|gym|studio|shop|store|clinic|employer"
OTHER_OWNER = re.compile(
    rf"\b(?:(?:{PERSON_NOUNS}|{PLACE_NOUNS})(?:'s)?|his|her|hers|him|he|she)\b"
    r"|(?-i:\b(?!(?:I|The|A|An|My|Also|And|But|So|Then|Yeah|Yes|No|Oh|Well|Maybe|Just|It|This"
    r"|That|We|They|He|She|You|Our|Your|His|Her|Their|There|Here|What|When|Where|Why|How|Who"
    r"|If|On|In|At|For|To|From|With|Honestly|Actually|Please|Thanks|Sometimes|Finally|Last"
    r"|Next|User|Assistant)\b)[A-Z][a-z]+(?:'s\b|\s+(?:is|was|has|had|[a-z]+s|[a-z]+ed)\b))",
    re.I,
)
# The user owning what follows: "I", "my", "the user's", "User:".
# "your" as the assistant says it ("your address").
USER_OWNER = re.compile(r"\b(?:i|my|mine|i'm|i've|the user'?s?|user:|your|you)(?![\w'])", re.I)
ZH_OTHER_OWNER = re.compile(rf"{ZH_PERSON_NOUNS}|他|她|医生|老师")
ZH_USER_OWNER = re.compile(r"我|用户")
# Where whose it is stops carrying over: a sentence's end, an episode's quote of the assistant.
# (Within a sentence it carries over clauses: "老婆在银行上班，月薪一万五" is the wife's pay.)
CLAUSE_BREAK = re.compile(r"[.!?。！？]|→")


# Who speaks is not whose it is: "Physio says the surgery healed", "医生让我复查".
REPORTED = re.compile(
    r"\b(?:says?|said|told\s+me|tells\s+me|thinks?|thought|suggested|recommended|explained"
    r"|confirmed|mentioned|warned|asked\s+me)\b|说|告诉我|觉得|认为|建议|让我|叫我",
    re.I,
)


def owned_by_another(sentence: str, position: int) -> bool:
    """Whether what stands at `position` belongs to someone other than the user: the owner
    named last before it in its sentence ("my friend Tom's work address", "我朋友的地址",
    "老婆在银行上班，月薪一万五") is a third person."""
    clause = REPORTED.split(CLAUSE_BREAK.split(sentence[:position])[-1])[-1]
    # The word at `position` too: "Dana lives at …" names Dana by her verb.
    word = re.match(r"\S*", sentence[position:]).group()
    owners = [(m.end(), True) for m in USER_OWNER.finditer(clause)]
    owners += [
        (min(m.end(), len(clause)), False)
        for m in OTHER_OWNER.finditer(clause + word)
        if m.start() < len(clause)
    ]
    owners += [(m.end(), True) for m in ZH_USER_OWNER.finditer(clause)]
    owners += [(m.end(), False) for m in ZH_OTHER_OWNER.finditer(clause)]
    if not owners:
        return False
    return not max(owners)[1]


# --- Values ------------------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w-])\+?\d[\d\s().,/-]*\d(?![\w-])")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
PROPER = re.compile(r"(?-i:(?<![\w'])(?:[A-Z][\w'-]+)(?:\s+(?:[A-Z][\w'-]+|of|de|van|von))*)")
# Words that start a sentence or a label, never a value.
NOT_NAMES_TEXT = """
    I User Assistant The A An My Our Your It He She They We This That These Those What When
    Where Why How Who Please Thanks Thank Yes No Ok Okay Oh Hi Hello Hey Sure Also And But So
    Actually Well Just Now Then Monday Tuesday Wednesday Thursday Friday Saturday Sunday January
    February March April May June July August September October November December Mr Mrs Ms Dr
"""
NOT_NAMES = frozenset(NOT_NAMES_TEXT.split())


@dataclass(frozen=True)
class Values:
    """What a forgotten text said that identifies it elsewhere: its numbers, e-mail addresses
    and names ("742 Evergreen Terrace", "Alex")."""

    items: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, text: str) -> "Values":
        found = {
            m.group() for m in NUMBER.finditer(text) if sum(c.isdigit() for c in m.group()) >= 3
        }
        found |= {m.group() for m in EMAIL.finditer(text)}
        for match in PROPER.finditer(text):
            words = [w for w in match.group().split() if w not in NOT_NAMES]
            if words and (len(words) > 1 or _introduced(text, match.start())):
                found.add(" ".join(words))
        return cls(frozenset(value.strip(" .,") for value in found if len(value.strip(" .,")) > 1))

    def __or__(self, other: "Values") -> "Values":
        return Values(self.items | other.items)

    def found_in(self, sentence: str) -> bool:
        return bool(self.spans(sentence))

    def spans(self, sentence: str) -> list[tuple[int, int]]:
        found = []
        for value in self.items:
            pattern = rf"(?<![\w]){re.escape(value)}(?![\w])"
            found += [m.span() for m in re.finditer(pattern, sentence, re.I)]
        return found


INTRODUCING = re.compile(
    rf"\b(?:with|and|named|called|met|dating|dated|married|marry|divorced|ex|about|to|from|by"
    rf"|for|like|love|miss|visit(?:ed|ing)?|{PERSON_NOUNS})\s*$",
    re.I,
)


def _introduced(text: str, position: int) -> bool:
    """A single capitalised word is a name where it is introduced as one: "with Alex", "my ex
    Alex", "Alex and I", "Alex's" — not a place in an address, nor a sentence's first word."""
    if INTRODUCING.search(text[:position]):
        return True
    return re.match(r"[\w'-]+(?:'s\b|\s+and\s+(?:i|me)\b)", text[position:], re.I) is not None
