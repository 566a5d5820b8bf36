"""Kinds of personal information a forget request may name: a few words name one ("medical
information", "home address", 病史) and many words show it ("I have diabetes", "742 Evergreen
Terrace", 糖尿病), in English and Chinese. memories/forgetting/topics.py reads a topic into
them; a concept's slots name the extractor's facts that hold it (memories/extraction/).
"""

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    name: str
    # A topic naming the concept ("medical information", "病史").
    names: re.Pattern[str]
    # A sentence about it ("I have diabetes", "用户有高血压").
    shows: re.Pattern[str]
    # Slots whose facts hold it (memories/extraction/rules.py).
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
