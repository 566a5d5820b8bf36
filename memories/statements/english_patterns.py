"""The English patterns a clause's predicate is read by, most specific first (a match
overlapping an earlier one is skipped), each with its handler (english_values.py) and what a
clause must hold for it to be tried."""

import re

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
    JOB_WORD,
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
)
from memories.statements.english_values import (
    age,
    allergy,
    breed,
    broke_up,
    car,
    car_gone,
    diet,
    doing,
    email_address,
    finished,
    for_a_living,
    gone,
    household_after,
    job,
    learning,
    left_place,
    likes,
    lives,
    lost,
    mail_to,
    origin,
    pet,
    quit_job,
    relative,
    speaks,
    started,
    student,
    study,
    unless_negated,
    works,
)
from memories.statements.reading import Handler, names_the, pending, renamed, stating
from memories.statements.words import (
    BREEDS,
    CAR_MAKES,
    JOB_SUFFIX,
    NUMBER,
    PERSON_PLURALS,
    PERSON_ROLES,
    SPECIES,
    SPECIES_PLURALS,
    VEHICLES,
    word_set,
)

I = re.I  # noqa: E741

PLAYED = (
    r"(?:guitar|piano|drums|violin|cello|bass|ukulele|saxophone|flute|trumpet|tennis|soccer"
    r"|football|basketball|baseball|golf|chess|volleyball|hockey|badminton|squash|pickleball"
    r"|cricket|rugby|poker|table\s+tennis|ping\s+pong)"
)

PLACE = rf"(?:{CAP}|(?:an?|the)\s+(?:[\w-]+\s+){{0,3}}?[\w-]+{END})"
HOME = r"(?:house|flat|apartment|terrace|cottage|condo|bungalow|townhouse|place|home)"
NOT_HOME = r"(?:holiday|vacation|summer|second|weekend|beach|ski|rental|investment|buy-to-let)"
EMPLOYER = (
    r"(?:consultancy|company|firm|startup|start-up|agency|bank|practice|studio|lab|publisher"
    r"|hospital|clinic|school|university|college|nonprofit|non-profit|manufacturer|retailer)"
)
IN_PLACE = rf"(?:\s+(?:in|based in|out of)\s+(?P<place>{CAP}))?"

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
        # A home rented or bought somewhere: "We rent a little flat in Leith", "exchanged on a
        # cottage on the river at Dartmouth" (contracts exchanged: bought); not a holiday home,
        # a place for the trip: "for" ends it.
        (
            rf"\b(?:rent|rents|renting|bought|closed\s+on|exchanged\s+on|signed\s+for"
            rf"|moved\s+into)\s+"
            rf"(?:an?|the|our|my)\s+(?:(?!{NOT_HOME}\b)[\w-]+\s+){{0,2}}?{HOME}"
            rf"(?:\s+(?:on|by)\s+the\s+[\w-]+)?\s+(?:in|at)\s+(?P<v>{CAP})(?!\s+for\b)",
            lives,
            ("rent", "bought", "closed on", "exchanged on", "signed for", "moved into"),
        ),
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
            # Not what ended or is only sought: "stopped working at", "applied to work at".
            rf"(?<!stopped )(?<!quit )(?<!applied to )(?<!apply to )(?<!want to )(?<!hope to )"
            rf"(?<!trying to )\b(?:work(?:s|ing)?|employed|teach(?:es|ing)?)\s+"
            rf"(?:(?:full|part)[- ]time\s+)?(?:at|for|by)\s+(?P<org>{ORG}){END}{IN_PLACE}",
            works,
            ("work", "employ", "teach"),
        ),
        (rf"\b(?:work(?:s|ing)?)\s+with\s+(?P<org>{CAP}){END}", works, ("work",)),
        # What one does, said so: "repairs boats for a living", "I fix bikes for a living"
        (
            r"(?:^\s*|\band\s+)(?P<v>(?-i:[a-z])[\w-]*(?:\s+[\w-]+){0,3}?)\s+for\s+a\s+living\b",
            unless_negated(for_a_living),
            ("for a living",),
        ),
        # Work said by what one does there: "I teach chemistry at Lincoln High", "work nights at
        # St. Mary's" (a named place only: "I teach my kids at home" is no job).
        (
            rf"\b(?:(?:teach(?:es|ing)?|lectur(?:e|es|ing)|tutor(?:s|ing)?)\s+(?:(?!(?:at|for|in)\b)"
            rf"[\w-]+\s+){{1,3}}?|work(?:s|ing)?\s+(?:nights|days|weekends|evenings|mornings"
            rf"|shifts|remotely)\s+)(?:at|for)\s+(?P<org>{CAP}){END}{IN_PLACE}",
            works,
            ("teach", "lectur", "tutor", "work"),
        ),
        # An employer named with what it is: "I write software for Brightline, a startup" (where
        # it is says nothing of where the user lives).
        (
            rf"\bfor\s+(?P<org>{CAP}),\s+(?:an?|the)\s+(?:[\w-]+\s+){{0,2}}?{EMPLOYER}"
            rf"(?:\s+(?:in|based\s+in)\s+{CAP})?(?=\s*(?:[,.;!?]|$))",
            works,
            ("for ",),
        ),
        # A year of a subject: "second-year law at Glasgow", "final year medic at King's" (not
        # a year at a firm, nor "a first-year associate").
        (
            rf"(?:{BE}(?:an?\s+|in\s+(?:my|his|her|their)\s+)?|,\s*)"
            rf"(?:first|second|third|fourth|final|1st|2nd|3rd|4th)[-\s]year\s+"
            rf"(?:(?!(?:{JOB_WORD}|associate|trainee|apprentice)s?\b)[\w-]+\s+){{1,2}}at\s+(?P<org>{CAP})",
            student,
            ("year",),
        ),
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
            rf"\b(?:joined|(?:got|landed|found|took)\s+(?:an?\s+|the\s+)?(?:new\s+)?(?:(?:full|part)"
            rf"[- ]time\s+)?(?:job|position|role|gig|post)(?:\s+as\s+(?P<job0>(?:an?\s+)?"
            rf"(?:[\w-]+\s+){{0,2}}?[\w-]+))?\s+(?:at|with))"
            rf"\s+(?P<org>{CAP})(?:\s+as\s+(?P<job>{JOB}))?",
            works,
            ("joined", "job", "position", "role", "gig", "post"),
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
        (
            rf"{BE}retired\b|\b(?:just\s+)?retired\b(?!\s+from)",
            stating("job", value="retired"),
            ("retired",),
        ),
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
        (rf"\b(?:reach|call|text)\s+me\s+(?:at|on)\s+(?P<v>{PHONE})", stating("phone"), ("me ",)),
        (rf"\b(?:email|mail|reach)\s+me\s+at\s+(?P<v>{EMAIL})", stating("email"), ("me ",)),
        # The value first: "jo@fastmail.com is my address now", "555-0202 is my new number"
        (
            rf"(?P<v>{EMAIL})\s+(?:is|'s)\s+{ADV}my\s+(?:new\s+|current\s+|main\s+)?"
            rf"(?:(?:e-?mail|home)\s+)?(?:address|e-?mail)\b",
            stating("email"),
            ("my ",),
        ),
        (
            rf"(?P<v>{PHONE})\s+(?:is|'s)\s+{ADV}my\s+(?:new\s+|current\s+|main\s+)?"
            rf"(?:phone\s+|cell\s+|mobile\s+)?(?:number|phone|cell|mobile)\b",
            stating("phone"),
            ("my ",),
        ),
        # The address mail is to go to: "my work address changes to …", "send anything
        # work-related to …"
        (
            rf"(?:\b(?P<my>my)\s+|^\s*)(?:work\s+|new\s+)?(?:e-?mail\s+)?address\s+(?:changes|changed"
            rf"|has\s+changed)\s+to\s+(?P<v>{EMAIL})",
            email_address,
            ("address",),
        ),
        (
            rf"\bsend\s+(?:anything|everything|stuff|things|mail|emails?)"
            rf"(?:\s+[\w-]+)?\s+to\s+(?P<v>{EMAIL})",
            mail_to,
            ("send",),
        ),
        # Car
        (
            rf"\b(?:sold|got\s+rid\s+of|totaled|totalled|wrecked|traded\s+in|traded|scrapped)"
            rf"\s+(?P<v>(?:my|our|the)\s+"
            rf"(?:[\w-]+\s+){{0,2}}?(?:{VEHICLES}|{CAR})"
            rf"(?:\s+(?!(?:and|but|so|to|for|with|because|last|this|yesterday)\b)[\w-]+)?)",
            car_gone,
            ("sold", "rid of", "totaled", "totalled", "wrecked", "traded", "scrapped"),
        ),
        (
            rf"\bdrives?\s+"
            rf"(?!(?:to|me|us|him|her|them|home|around|back|there)\b)(?P<v>(?:an?|the|my"
            rf"|our|his|her)\s+(?:[\w-]+\s+){{0,4}}?[\w-]+|{CAP}){END}",
            car,
            ("driv",),
        ),
        # A car by its make or a vehicle: "I'm driving a Tesla now" (not "the kids to school")
        (
            rf"\b(?:bought|got|purchased|leased|own|owns|have|has|picked\s+up|drive"
            rf"|(?:am|is|are|'m|'re|'s)\s+{ADV}driving)\s+(?:(?:a|an|my"
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
            rf"\b(?:went|gone|turned|became|become|switched\s+to"
            rf"|(?<!almost\s)(?<!nearly\s)decided\s+to\s+(?:go|become))\s+"
            rf"(?:a\s+)?(?:fully\s+|full\s+|strictly\s+|completely\s+)?(?P<v>{DIETS})\b",
            diet,
            DIET_WORDS,
        ),
        (
            rf"\b(?:stopped|quit|gave\s+up)\s+being\s+(?:a\s+)?(?P<v>{DIETS})\b",
            stating("diet", lower=True, ended=True),
            DIET_WORDS,
        ),
        # Habits, and habits given up: "I smoke about ten a day", "I quit smoking"
        (
            r"^\s+(?:still\s+|also\s+)?(?-i:smokes?)\b(?!\s+(?:meat|fish|salmon|ribs|brisket|pork|cheese"
            rf"|weed|pot))|{BE}(?:still\s+)?an?\s+(?:\w+\s+)?smoker\b",
            unless_negated(stating("smoking", value="smoking")),
            ("smoke", "smoker"),
        ),
        (
            r"\b(?:quit|gave\s+up|given\s+up|stopped|kicked)\s+(?:the\s+)?(?:smoking|cigarettes"
            r"|vaping)\b",
            stating("smoking", value="smoking", ended=True),
            ("smoking", "cigarettes", "vaping"),
        ),
        (
            r"\b(?:quit|gave\s+up|given\s+up|stopped)\s+(?:drinking|alcohol|booze)\b"
            r"(?!\s+(?:coffee|tea|soda|pop|water|milk|juice|cola|coke))",
            stating("drinking", value="drinking", ended=True),
            ("drinking", "alcohol", "booze"),
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
            stating("learning", ended=True),
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
            names_the("partner"),
            ("married", "engaged"),
        ),
        (
            rf"{BE}(?:happily\s+)?(?P<v>married|single|divorced|engaged|widowed|separated)\b",
            unless_negated(stating("relationship status", lower=True)),
            ("married", "single", "divorced", "engaged", "widowed", "separated"),
        ),
        (
            r"\bgot\s+(?P<v>married|divorced|engaged)\b",
            unless_negated(stating("relationship status", lower=True)),
            ("married", "divorced", "engaged"),
        ),
        (
            rf"\b(?:broke\s+up\s+with|split\s+up\s+with|split\s+from|divorced|separated\s+from)\s+"
            rf"(?P<who>{NAME}|my\s+(?:wife|husband|girlfriend|boyfriend|partner|fiancée?))",
            broke_up,
            ("broke up", "split", "divorced", "separated"),
        ),
        (
            rf"\breport(?:s|ing)?\s+(?:directly\s+)?to\s+(?P<name>{NAME})",
            names_the("manager"),
            ("report",),
        ),
        # Commute
        (
            rf"\bcommutes?\s+(?:to\s+(?:work|the\s+office)\s+)?(?:by|on|via)\s+(?P<v>[\w\s-]+?){END}",
            stating("commute", lower=True),
            ("commut",),
        ),
        (
            r"\b(?P<v>bikes?|cycles?|walks?|drives?|runs?|skates?|scooters?)\s+to\s+(?:work|the\s+office"
            r"|school|campus)\b",
            stating("commute", lower=True),
            (" to work", " to the office", " to school", " to campus"),
        ),
        (
            r"\b(?:take|takes|ride|rides|catch|catches)\s+(?:the\s+)?(?P<v>train|bus|subway|metro|tube"
            r"|ferry|light\s+rail|tram|shuttle)\s+to\s+(?:work|the\s+office|school)",
            stating("commute", lower=True),
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
            stating("lives with"),
            ("with",),
        ),
        (
            r"\bwith\s+(?P<v>(?:my|our)\s+[^,;:!?()]+?)(?=\s*[,;:!?()]|\s*$|\s+in\b)",
            household_after,
            ("with my", "with our"),
        ),
        (
            rf"^\s*(?:(?:am|is|'s)\s+(?:now\s+)?called|(?:has\s+been|was|got)\s+renamed(?:\s+to)?)"
            rf"\s+(?P<v>{NAME})",
            renamed,
            ("called", "renamed"),
        ),
        (
            rf"\brenamed\s+(?:(?:my|our|the)\s+(?:[a-z]+\s+)?)?(?P<name>{NAME})\s+(?:to|as)\s+"
            rf"(?P<v>{NAME})",
            renamed,
            ("renamed",),
        ),
        (rf"\bwas\s+born\s+on\s+(?P<v>[\w\s,]+?){END}", stating("birthday"), ("born",)),
        (
            r"\b(?:make|makes|earn|earns|am\s+paid|get\s+paid|gets\s+paid)\s+(?P<v>(?:about\s+"
            r"|around\s+|roughly\s+|over\s+|under\s+)?[$€£¥]?\s?\d[\d,.]*\s*(?:k|K|thousand|million"
            r"|m)?(?:\s*(?:dollars|euros|pounds|yuan|usd|rmb))?(?:\s+(?:a|an|per)\s+(?:year|month"
            r"|hour|week)|\s+annually|\s+yearly)?)",
            stating("salary"),
            ("make", "earn", "paid"),
        ),
        (
            rf"\b(?:own|owns)\s+(?P<v>(?:an?|two|three|\d+)\s+(?:[\w-]+\s+){{0,3}}?[\w-]+){END}",
            unless_negated(stating("owns")),
            ("own",),
        ),
        (
            rf"\b(?:gave\s+up|given\s+up|quit|stopped\s+playing|no\s+longer\s+play)\s+"
            rf"(?:playing\s+)?(?:the\s+)?(?P<v>{PLAYED})\b",
            stating("plays", lower=True, ended=True),
            ("gave up", "given up", "quit", "stopped", "no longer"),
        ),
        (
            rf"\bplays?\s+(?:the\s+)?(?P<v>{PLAYED})\b",
            unless_negated(stating("plays", lower=True)),
            ("play",),
        ),
        # A pastime one is taken with: "I'm really into pottery" (not "into him", "into London")
        (
            rf"\b(?:am|'m|is|are|'re)\s+{ADV}(?:really\s+|so\s+|super\s+|totally\s+|big\s+"
            rf"|very\s+much\s+)?into\s+(?!(?:the|a|an|my|our|his|her|it|that|this|town|work"
            rf"|trouble|you|him|them|me|us|someone|somebody|overtime|each)\b)"
            rf"(?P<v>(?-i:[a-z][\w-]*)(?:\s+(?-i:[a-z][\w-]*))?){END}",
            unless_negated(stating("hobby", lower=True)),
            ("into",),
        ),
    )
]
# "I'm Dana.", "Hi, I'm Dana Whitfield": the whole clause, so "I'm Dana's sister" is not.
I_AM_NAME = re.compile(
    rf"^\s*(?:(?:hi|hello|hey)[,!]?\s+)?(?:i'm|i\s+am)\s+(?P<v>{NAME})\s*[.!]?\s*$", I
)
CALL_ME = re.compile(rf"(?:^|\bcan\s+|\bplease\s+|\bjust\s+)call\s+me\s+(?P<v>{NAME})", I)
