"""The Chinese patterns a clause's predicate is read by, most specific first (a match
overlapping an earlier one is skipped), each with its handler (chinese.py)."""

import re

from memories.statements.chinese import (
    CALLED,
    NEW_NAME,
    NUM,
    PLACE_END,
    PLACE_V,
    ZA,
    ZE,
    ZH_EMAIL,
    ZH_PET,
    ZH_ROLE,
    ZV,
    age,
    called,
    car,
    doing,
    done,
    favorite,
    gone,
    job,
    left,
    likes,
    lives,
    pastime,
    pet,
    quit_job,
    relative,
    renamed_by_user,
    say,
    speaks,
    works,
)
from memories.statements.reading import Handler, names_the, pending, renamed, stating
from memories.statements.words import (
    HAN,
    ZH_JOBS,
    ZH_NUMBER,
    ZH_PASTIMES,
    ZH_SURNAMES,
    ZH_WORK_DONE,
    ZH_WORK_DRIVEN,
)

LANGUAGE = rf"(?:[{HAN}]{{1,4}}?(?:语|文)|普通话|粤语|[A-Z][a-z]+)"
# A person one reports to, by name ("李娜", "刘总", "副总裁孙丽", "Rachel Lim"): not a role
# ("向老板汇报"), a body ("向董事会汇报") or others ("给客户汇报方案", "向大家汇报").
REPORTS_TO = (
    rf"(?:[A-Z][a-zA-Z]+(?:\s[A-Z][a-zA-Z]+)?|(?!{ZH_ROLE}|董事)(?=[{ZH_SURNAMES}])[{HAN}]{{2,3}}?)"
)
# Not an end or a plan ("我不再向王磊汇报了", "不用给…"), nor one report ("汇报过这个问题",
# "汇报了进度"); "汇报工作" is the work itself.
NOT_REPORTING = r"(?<!不)(?<!没)(?<!再)(?<!要)(?<!会)"
ONE_REPORT = rf"(?!过|了?(?!工作)[{HAN}])"
JOB_FIELDS = (
    r"research|design|marketing|engineering|sales|product|pm|ux|ui|hr|it|ops|operations|data"
    r"|finance|consulting|analytics|analyst|engineer|manager|developer|designer|lead|qa|support"
    r"|strategy|legal|pr|growth|recruiting|accounting|audit"
)

PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    (re.compile(p), h)
    for p, h in (
        # Ends first: "不再吃素了", "辞职了", "去世了"
        (
            r"(?:不再|不)(?:吃素|是素食(?:主义)?者)了?|不吃素了|(?:开始|又开始|重新)吃肉",
            stating("diet", value="吃素", ended=True),
        ),
        # Habits given up: "我戒烟了", "酒也戒了"
        (
            r"戒(?:掉)?了?烟|烟(?:也|都|已经|早就)?戒(?:掉)?了",
            stating("smoking", value="抽烟", ended=True),
        ),
        (
            r"戒(?:掉)?了?酒|酒(?:也|都|已经|早就)?戒(?:掉)?了",
            stating("drinking", value="喝酒", ended=True),
        ),
        (r"(?:去世了?|过世了?|死了|离世了?|不在了|走丢了|丢了)", gone),
        (rf"(?:从|在)(?P<v>{ZV})(?:辞职|离职)", quit_job),
        (r"辞职|离职|辞工|被裁(?:员)?|被辞退|被开除|失业了|不干了|裸辞", quit_job),
        # Retired, not "退休教师" (a retired teacher: the job)
        (
            r"退休(?!(?:教师|老师|工人|干部|职工|医生|护士|警察|军人|工程师|会计|员工|人员))",
            stating("job", value="退休"),
        ),
        (r"离婚了?", stating("relationship status", value="离婚")),
        (r"结婚了|成家了", stating("relationship status", value="已婚")),
        (rf"离开了?(?P<v>{ZV}){ZE}", left),
        (rf"搬离了?(?P<v>{ZV}){ZE}", stating("lives in", ended=True)),
        # Living, working, studying somewhere
        (
            rf"(?P<neg>不再|不)?(?:住在|定居在?|生活在|居住在|搬到了?|搬去了?|搬回了?|落户(?:在|到)?)(?P<v>{PLACE_V}){PLACE_END}",
            lives,
        ),
        (r"在(?P<v>[^，,。；在]+?)(?:住|生活|定居|安家)(?!过)", lives),
        # Settled in a place, not for a night ("在酒店安顿下来了")
        (r"在(?P<v>[^，,。；在]+?)(?<!酒店)(?<!宾馆)(?<!民宿)(?<!旅馆)(?:安顿|落脚)", lives),
        # A home: "家在鼓楼的老小区", "在滨江租了个房子"; not a noun phrase ("家在外地的同学"),
        # a home sold ("家在城南的那套房子卖了"), a place to buy from ("在网上租了个房子").
        (
            rf"(?:^|[，,。；;\s])(?:我|我们)?家在(?!哪|什么)(?P<v>{PLACE_V})"
            r"(?=的(?:一个|一栋)?[^，,。；那这]{0,3}?(?:小区|楼|村|院)|[，,。；;！!]|$)",
            lives,
        ),
        (
            r"在(?!网上|线上|中介|平台)(?P<v>[^，,。；在]+?)(?:租|买)了(?:个|一个|一套|一间)?"
            r"[^，,。；]{0,6}?(?:房子|公寓|一房|[两三四]居室?|[两三四]室一厅)(?=[，,。；;！!]|$)",
            lives,
        ),
        (
            rf"在(?P<v>[^，,。；在]+?)(?:做|当|担任|任)(?P<job>[^，,。；\s]*?(?:{ZH_JOBS}|师|员))",
            works,
        ),
        # A job named in English by a mixed speaker, by its field: "在深圳大疆做UX research"
        # (not "在咖啡店做latte art")
        (
            r"在(?!家|宿舍|学校|网上)(?P<v>[^，,。；在]{2,10}?)(?:做|当|负责)"
            rf"(?P<job>(?=(?:[A-Za-z&/-]+\s+){{0,2}}(?i:{JOB_FIELDS})\b)"
            r"[A-Za-z][A-Za-z&/-]*(?:\s+[A-Za-z&/-]+){0,2})(?=[，,。；;！!]|$)",
            works,
        ),
        (
            r"(?P<neg>不再|不)?在(?P<v>[^，,。；在]+?)(?:工作|上班|任职|实习|打工|供职)(?![过室台服])",
            works,
        ),
        (rf"(?:入职|加入|跳槽到|跳槽去)了?(?P<v>{ZV}){ZE}", works),
        (r"去(?P<v>[^，,。；]+?)(?:上班|工作)了", works),
        (
            r"在(?P<v>[^，,。；在]+?)(?:读书|上学|念书|读大学|读研|读博|上大学|读高中|上高中|读本科"
            r"|读初中|上初中|读中学|上中学|读小学|上小学|上幼儿园|读大专|读研究生)",
            say("school"),
        ),
        (rf"转学(?:到|去)了?(?P<v>{ZV}){ZE}", say("school")),
        # A job, and where: "是纽约的律师"
        (
            rf"是(?:一名|一个|一位|个|名|位)?(?:(?P<place>[^，,。的是]{{1,6}}?)的)?(?P<job>[^，,。；的\s是]*?(?:{ZH_JOBS})){ZE}",
            job,
        ),
        (
            rf"(?:当|做|成为|成了|升(?:职)?(?:为|成了?))了?(?:一名|一个)?(?P<job>[^，,。；\s]*?(?:{ZH_JOBS})){ZE}",
            job,
        ),
        (r"(?:从事|做)(?P<job>[^，,。；]+?)(?:工作|行业)", job),
        # Work said by what one does, where: "在老家种地", "在深圳开出租车", "送外卖"
        (
            rf"(?:^|在(?![^，,。；]*?(?:考虑|想|犹豫|纠结|打算|要不要|琢磨|计划|学))[^，,。；在]{{1,8}}?"
            rf"|还在|一直)(?P<job>{ZH_WORK_DONE}){ZE}",
            job,
        ),
        # A job said by what one does: "是种地的", "是开出租车的" (not "是开车来的")
        (
            rf"是(?P<job>{ZH_WORK_DONE}|(?:做|干|搞|卖|种|教|修|送|跑)(?![你我他她它])[{HAN}]{{1,3}}?)"
            r"(?<![来去回过])的(?=[，,。；;！!\s]|$)",
            job,
        ),
        # Whom the user reports to: "我现在向李娜汇报", "我现在report给Rachel Lim"
        (
            rf"{NOT_REPORTING}(?:向|给)(?:副?总裁|总监|总经理|经理|主管)?(?P<name>{REPORTS_TO})(?:直接)?"
            rf"汇报{ONE_REPORT}",
            names_the("manager"),
        ),
        (
            rf"{NOT_REPORTING}report\s*(?:给|to)\s*(?P<name>{REPORTS_TO})(?=[，,。；;！!]|$)",
            names_the("manager"),
        ),
        # Age
        (rf"(?:今年|已经|快|才|刚满|满)?(?P<n>{ZH_NUMBER})(?:周)?岁", age),
        # "今年七十了": this year's number, 岁 left unsaid
        (rf"今年(?P<n>{ZH_NUMBER})了", age),
        # Phone and email: a new one, said now or in the next clause
        (
            rf"换了?(?:个|一个)?新(?:的)?(?P<attr>手机号码?|手机号|手机|电话号码?|电话|号码|工作号|工作电话|邮箱|地址|车)(?:[，,：:]?\s*(?:是|为)?(?P<v>{NUM}|[\w.+-]+@[\w.-]+))?",
            pending,
        ),
        # "邮箱换了，现在用…": the new one in the next clause
        (
            r"(?<![不没别])(?P<attr>手机号码?|手机号|手机|电话号码?|电话|号码|邮箱(?:地址)?|地址)"
            r"(?:也|又|已经)?(?:换了|改了|变了)",
            pending,
        ),
        (
            rf"(?:手机|电话|新)(?:号码?|号)?(?:是|为|换成了?|改成了?|变成了?)\s*(?P<v>{NUM})",
            say("phone"),
        ),
        (
            rf"(?:工作|办公室?)(?:电话|号码?|号|手机)(?:是|为|换成了?|改成了?|变成了?)\s*(?P<v>{NUM})",
            say("work phone"),
        ),
        (rf"邮箱(?:地址)?(?:是|为|换成了?|改成了?)(?P<v>{ZH_EMAIL})", say("email")),
        # The address to write to: "以后用工作邮箱 …", "发邮件就用学校邮箱 …"
        (
            rf"(?<![不没别])(?<!不再)(?<!不要)(?<!不用)(?<!别再)用[{HAN}]{{0,4}}?邮箱(?:地址)?[：:\s]*"
            rf"(?P<v>{ZH_EMAIL})",
            say("email"),
        ),
        # Car
        (rf"(?:卖了|卖掉了)(?:我的)?(?P<v>{ZV}车)", stating("car", ended=True)),
        (rf"把(?:[^，,。]+?)换成了?(?:一辆|一台|辆|台)?(?P<v>{ZV}){ZE}", car),
        # not how one came: "是开车来的"
        (
            rf"开(?:的是|着|一辆|辆|了一辆)?(?!{ZH_WORK_DRIVEN})(?P<v>{ZV})(?<![来去回])(?<![来去回]的){ZE}",
            car,
        ),
        (rf"买了(?:一辆|辆|台|一台)?(?P<v>{ZV}){ZE}", car),
        # Diet
        (r"吃素|是素食(?:主义)?者|只吃素|是纯素(?:食)?者?", stating("diet", value="吃素")),
        # Habits: "我烟瘾有点大", "晚上都要喝二两白酒" (not "不抽烟", "戒烟")
        (r"(?<![不没别戒])(?:抽烟|吸烟)|烟瘾", stating("smoking", value="抽烟")),
        (
            r"(?<![不没别戒])喝(?:点|两口|二两|半斤|一杯|几杯|[一二两三四五六七八九十]+[两杯瓶口])?"
            r"(?:白酒|啤酒|红酒|黄酒|洋酒|酒)(?!量)",
            stating("drinking", value="喝酒"),
        ),
        # Favorites
        (
            rf"最(?:喜欢|爱|喜爱)的(?P<attr>[^，,。是]{{1,8}}?)(?:现在)?(?:是|变成了?|换成了?)(?P<v>{ZV}){ZE}",
            favorite,
        ),
        # Reading, watching, playing
        (r"(?P<act>读|看|追|玩|听)完了?《(?P<v>[^》]+)》", done),
        (r"《(?P<v>[^》]+)》(?:早就?|已经|都|终于)?(?P<act>读|看|追|玩|听)完了?", done),
        (r"(?:在|正在|开始|刚开始)(?P<act>读|看|追|玩|听)(?:的是|了)?《(?P<v>[^》]+)》", doing),
        # Languages
        (rf"会(?:说|讲)(?P<v>{LANGUAGE}(?:(?:和|、|跟|与)?{LANGUAGE})*)", speaks),
        (rf"(?:说|讲)(?:一口)?(?:流利的)?(?P<v>{LANGUAGE})", speaks),
        (rf"(?:在|正在|开始)学(?:习)?(?P<v>{ZV}){ZE}", stating("learning")),
        # Pets and relatives
        (
            rf"(?:养了?|有|领养了?|收养了?|捡了)(?:(?P<n>{ZH_NUMBER})?(?:只|条|个|头))?(?:[^，,。]{{0,6}}?的)?(?P<sp>{ZH_PET})(?:[，,]?(?:叫|名叫|名字叫)(?P<name>{CALLED}){ZE})?",
            pet,
        ),
        (rf"有(?:(?P<n>{ZH_NUMBER})(?:个|位))?(?P<role>{ZH_ROLE}){ZE}", relative),
        # Commute
        (
            r"(?P<v>(?:坐|骑|开|搭|乘)[^，,。；;！!？?\s上]{1,10}?|走路|步行|打车)(?:去)?上班",
            say("commute"),
        ),
        # Likes, allergies, household, name
        (rf"(?:迷上了?|爱上了|喜欢上了)(?:做|玩|练|学)?(?P<v>{ZH_PASTIMES}){ZE}", pastime),
        (rf"(?P<neg>不再?|没再)(?P<v>{ZH_PASTIMES})了", pastime),
        (
            r"^(?:很|非常|特别|最|也|还|真的|超|平时|平常|一直|从小|周末|现在|最近|经常|向来)*"
            r"(?P<verb>不喜欢|喜欢|喜爱|爱|讨厌|偏好)(?!上了)(?P<v>[^，,。；;！!？?]+)",
            likes,
        ),
        (r"对(?P<v>[^，,。；;]+?)过敏", say("allergy")),
        (rf"(?:和|跟|与)(?P<v>[^，,。住]+?)(?:一起)?{ZA}住", say("lives with")),
        (rf"^叫(?P<v>{ZV}){ZE}", called),
        (rf"^{ZA}{NEW_NAME}", renamed),
        (
            rf"^{ZA}(?:把|给)(?:我的|我家的?|我们家的?)?(?:(?P<role>{ZH_ROLE}|{ZH_PET})|(?P<name>{CALLED}))"
            rf"(?:的名字)?{NEW_NAME}",
            renamed_by_user,
        ),
    )
]

# The handlers that read a past ("以前住在…") as a value that ended; others skip it.
READS_PAST = frozenset({lives, works, job})
