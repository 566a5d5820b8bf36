"""Forget requests in what users say, English and Chinese: which sentence asks the assistant to
forget, and the words that name what ("my home address", "that relationship", "我的病史").

A request addresses the assistant: an imperative (forget / delete / remove / erase / scrub /
scrap …, "don't keep / store / remember …", "stop remembering …", "no need to remember …",
忘掉 / 删掉 / 清除 / 抹掉 / 别记 / 不要保存 / 当我没说 …) at the start of a clause, after
politeness ("please", "can you", "For privacy reasons,", "请", "麻烦你", "拜托"), or a wish about
the assistant's memory ("I don't want you to remember …", "I'd rather you not keep …", "let's
pretend I never told you …", "I don't want it stored", 我不想让你记住…). Chinese often names the
topic first ("工资那个事情你忘掉吧", "关于那段感情的事，你都忘了吧").

What users say about their own forgetting or deleting ("I always forget my keys", "I deleted my
account", "Don't forget to call Mom", 我忘了带钥匙, 别忘了…) is not a request. Nor is a task for
other tools ("Delete the draft email", "清空购物车"): verbs that also name such tasks (delete,
remove, clear, 删除, 清除 …) ask to forget only when the request names the assistant's memory or
what was said, or the topic is personal information or "that".

The topic is returned as said; memories/forgetting/topics.py reads what it names.
"""

import re
from dataclasses import dataclass

from memories.forgetting.topics import Topic, topic_read
from memories.sentences import HAN, sentence_spans, sentences


@dataclass(frozen=True)
class ForgetAsk:
    topic: str  # the words naming what to forget, as said ("" when nothing follows the verb)
    # Where in the message the request was made (its sentence).
    start: int = 0
    end: int = 0


# --- English -----------------------------------------------------------------------------------

# Where an imperative may stand: a sentence's or a clause's start, after politeness.
CLAUSE_START = (
    r"(?:^|[,;:—–-]\s*|\b(?:and|so|then|now|but|just|also|okay|ok|hey)\s+)"
    r"(?:(?:hmm+|um+|uh+|ugh|oh|well|so|hey|ok|okay|look|listen|honestly)[,.]?\s+)*"
)
POLITE = (
    r"(?:(?:please|pls|kindly|just|also|actually|now|then|can you|could you|would you|will you"
    r"|i want you to|i need you to|i'd like you to|i would like you to|i'm asking you to"
    r"|you should|you can|you may|you must|go ahead and|make sure (?:that )?you|make sure to"
    r"|be sure to|remember to|i'd appreciate it if you(?:'d| would)?|if you could|if you can"
    r"|i ask that you|i'm requesting that you|let's|let us|you could|could you maybe|maybe"
    r"|is there a way(?: that)?(?: you could| to)?|is there any way(?: you could| to)?"
    r"|is it possible(?: for you)? to|would you mind|do you mind)\s+)*"
)
# Verbs that ask to forget whatever follows them, and verbs that may name another task too.
STRONG_VERBS = ("forget", "unlearn", "forgotten")
# What a passive request asks to be done to its topic ("Could that part be wiped?").
PASSIVE = (
    r"(?P<verb>forgotten|deleted|removed|erased|wiped(?:\s+out)?|cleared|purged|scrubbed"
    r"|dropped|scrapped|discarded|taken out|left out)"
)
ERASE_VERB = (
    r"(?P<verb>forget|unlearn|delete|remove|erase|wipe(?:\s+out)?|clear(?:\s+out)?|purge|scrub"
    r"|discard|get rid of|throw (?:away|out)|expunge|obliterate|scrap|ditch|drop|toss|strike"
    r"|let go of|lose)"
)
KEEP_VERB = (
    r"(?:keep(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|remember(?:ing)?|record(?:ing)?|retain(?:ing)?"
    r"|hold(?:ing)? on ?to|hang(?:ing)? on ?to|track(?:ing)?|log(?:ging)?|memoriz(?:e|ing)"
    r"|note(?:ing)? down|writ(?:e|ing) down|know)"
)
# What may follow the topic: where from, and how ("from your memory, permanently, please").
MEMORY_NOUN = (
    r"(?:memory|memories|records?|notes|mind|database|system|files?|profile|history|logs?"
    r"|storage|brain|head|data)"
)
WHAT_YOU_KEEP = (
    r"(?:whatever|what|everything|anything)\s+(?:you(?:'ve|\s+have)?|you\s+know)"
    r"(?:\s+(?:saved|stored|kept|got|recorded|noted|know|remember))?(?:\s+about\s+me)?"
)
FROM_MEMORY = (
    rf"(?:\s+(?:from|out of|in|off)\s+(?:(?:your|the|my)\s+{MEMORY_NOUN}|{WHAT_YOU_KEEP})"
    r"|\s+from\s+memory|\s+(?:on|in)\s+(?:file|record))?"
)
TAIL = (
    rf"{FROM_MEMORY}(?:\s*,?\s*(?:please|for me|immediately|right away|right now|now|as well|too"
    r"|also|permanently|completely|entirely|forever|for good|thanks|thank you|asap|altogether"
    r"|at once|once and for all|for privacy(?: reasons)?|if you (?:can|could|don't mind)"
    r"|from now on|anymore|any more|okay|ok|alright|all right|yeah|though))*"
    # A reason may follow: "…, I'd rather not have it stored", "… because …".
    r"(?:\s*[,;—–-]\s*(?:i|i'd|i'm|i've|it|it's|that|this|we|you|they|he|she|there|because"
    r"|since|as|so)\b.*)?\s*$"
)
# Where a topic stops: a reason or a condition after it ("… until I've told my family"), or a
# clause about it ("the info I gave you").
TOPIC_END = re.compile(
    r"\s+(?:until|because|since|as|so that|so|before|after|unless|if|when|while|though"
    r"|although|but)\s+.*$|\s*[,;]\s*(?:i|i'm|i've|we|it|it's|that|this|he|she|they|you"
    r"|there)\b.*$",
    re.I,
)
# "the info I gave you", "anything health-related you have on me" (not "what I told you about
# X", which names X).
RELATIVE_END = re.compile(
    r"(?<!^what)(?<!^everything)(?<!^anything)(?<!^all)\s+(?:that\s+)?(?:i|you)\s+"
    r"(?:gave|told|shared|mentioned|said|have|know|saved|stored|wrote|sent)(?:\s+.*)?$",
    re.I,
)
EN_ASKS = [
    # "Please forget my address", "For privacy reasons, please remove my home address from
    # your memory", "can you delete everything about Alex", "scrap what I said about my pay"
    re.compile(
        rf"{CLAUSE_START}{POLITE}{ERASE_VERB}(?:\s+(?:about|all about|any of|all of|all))?"
        rf"(?:\s+(?P<topic>.+?))?{TAIL}",
        re.I,
    ),
    # "Don't keep my phone number", "Stop remembering where I work", "no need to remember that"
    re.compile(
        rf"{CLAUSE_START}{POLITE}(?:don't|do not|never|not|stop|no longer|quit|you shouldn't"
        rf"|you should not|you don't need to|you don't have to|you needn't|there's no need to"
        rf"|no need to)\s+{KEEP_VERB}"
        rf"(?:\s+(?:anything|stuff|things)\s+(?:about|on|regarding))?(?:\s+(?P<topic>.+?))?{TAIL}",
        re.I,
    ),
    # "Could you not hold on to the therapy details?"
    re.compile(
        rf"\b(?:can|could|would|will)\s+you\s+(?:please\s+)?not\s+{KEEP_VERB}"
        rf"(?:\s+(?P<topic>.+?))?{TAIL}",
        re.I,
    ),
    # "I don't want you to remember my address"
    re.compile(
        r"\bi\s+(?:don't|do not|no longer|really don't)\s+want\s+you\s+to\s+"
        rf"(?:{KEEP_VERB}|have)(?:\s+anything about)?(?:\s+(?P<topic>.+?))?{TAIL}",
        re.I,
    ),
    # "I'd rather you didn't keep that", "I'd really prefer you not store my salary"
    re.compile(
        r"\bi(?:'d| would)\s+(?:(?:really|much|honestly|actually)\s+)?"
        r"(?:rather|prefer(?: it if)?|like it if)\s+you\s+"
        r"(?:didn't|did not|not|don't|wouldn't|would not)\s+"
        rf"{KEEP_VERB}(?:\s+(?P<topic>.+?))?{TAIL}",
        re.I,
    ),
    # "Take my address out of your memory", "leave my salary out of whatever you've saved"
    re.compile(
        rf"{CLAUSE_START}{POLITE}(?:take|get|leave|keep|cut)\s+(?P<topic>.+?)\s+out\s+of\s+"
        rf"(?:(?:your|the)\s+{MEMORY_NOUN}|{WHAT_YOU_KEEP}){TAIL}",
        re.I,
    ),
    # "Could that part be wiped?", "I'd like my criminal record removed from your memory",
    # "make sure none of that sticks around"
    re.compile(
        r"\b(?:can|could|would|will|should)\s+(?P<topic>.+?)\s+(?:please\s+)?be\s+"
        rf"{PASSIVE}{TAIL}",
        re.I,
    ),
    re.compile(
        r"\bi(?:'d| would)\s+(?:really\s+)?(?:like|want|prefer)\s+(?P<topic>.+?)\s+"
        rf"{PASSIVE}{TAIL}",
        re.I,
    ),
    re.compile(
        r"\bmake\s+sure\s+(?:that\s+)?(?:none\s+of|nothing\s+(?:of|about)|no\s+trace\s+of)"
        r"\s+(?P<topic>.+?)\s+(?:sticks around|stays|is kept|remains|is saved|is stored)"
        rf"{TAIL}",
        re.I,
    ),
    # "Let's pretend I never told you about my ex"
    re.compile(
        r"\b(?:pretend|act like|act as if|as if)\s+i\s+never\s+(?:told you|said|mentioned|shared"
        r"|brought up)(?:\s+(?:that|about|anything about))?"
        rf"(?:\s+(?P<topic>.+?))?{TAIL}",
        re.I,
    ),
    # "I don't want it stored", "I don't even want the June thing on record"
    re.compile(
        r"\bi\s+(?:don't|do not|no longer)\s+(?:even\s+|really\s+)?want\s+(?P<topic>.+?)\s+"
        r"(?:stored|remembered|kept|saved|recorded|on (?:file|record)|in your memory|logged"
        rf"|written down|floating around){TAIL}",
        re.I,
    ),
]
# "forget I said that", "forget I ever mentioned my ex", "forget what I told you about work"
FORGET_SAID = re.compile(
    r"^(?:forget|ignore|disregard)\s+(?P<what>that\s+|what\s+)?i\s+(?P<just>ever\s+|just\s+)?"
    r"(?:said|mentioned|told you|brought up|shared)(?:\s+(?P<rest>.+?))?\s*$",
    re.I,
)
# Not requests: "don't forget to …", "never forget …", "I forgot …", "you forgot …".
NOT_A_REQUEST = re.compile(
    r"\b(?:don't|do not|never|not|won't|wouldn't|can't|cannot|couldn't|shouldn't)\s+"
    r"(?:ever\s+)?(?:let\s+me\s+)?forget\b|\b(?:i|we|you|he|she|they)\s+(?:always\s+"
    r"|sometimes\s+|often\s+|just\s+|accidentally\s+|already\s+|keep\s+)?(?:forgot|forget"
    r"|forgetting|deleted|removed|erased|cleared|lost|dropped|scrapped)\b",
    re.I,
)
# "Forget it" said as "never mind".
NEVER_MIND = re.compile(r"^\W*(?:\w+[,.]?\s+)?forget\s+it\b", re.I)
# Names of information rather than of a thing: "the job hunt stuff", "the account info".
INFO_NOUN = re.compile(
    r"\b(?:stuff|things?|info|information|details?|data|records?|part|bit|notes?|story"
    r"|history|anything|everything)\b|-related\b|\brelated to\b",
    re.I,
)
MEMORY_CUE = re.compile(
    r"\b(?:your\s+(?:memory|memories|records?|notes|mind|database|system|files?)|from\s+memory"
    r"|what\s+i\s+(?:just\s+)?(?:told\s+you|said|mentioned|shared)|(?:everything|anything|all)"
    r"\s+(?:you\s+know\s+)?about|on\s+(?:file|record)|the\s+fact\s+that)\b",
    re.I,
)
# "Remove the meeting from my calendar": another place than the assistant's memory.
ELSEWHERE = re.compile(
    r"\b(?:from|in|on|off)\s+(?:my|the)\s+(?!memory\b|records?\b|notes\b|profile\b)\w+", re.I
)


def _english(sentence: str) -> ForgetAsk | None:
    if match := FORGET_SAID.match(sentence):
        rest = (match["rest"] or "").strip()
        if rest.lower() in ("that", "it", "this") or (
            (not rest and (match["what"] or "").strip().lower() != "what") or match["just"]
        ):
            return ForgetAsk(topic="what i just said")  # "forget I said that"
        return ForgetAsk(topic=rest or "what i said")  # "forget what I said": names nothing
    for pattern in EN_ASKS:
        match = pattern.search(sentence)
        if match is None:
            continue
        before = sentence[: match.start()]
        if NOT_A_REQUEST.search(sentence[: match.end()]) and not _polite_request(before):
            continue
        topic = RELATIVE_END.sub("", TOPIC_END.sub("", (match["topic"] or "").strip()))
        verb = (match.groupdict().get("verb") or "forget").lower()
        if NEVER_MIND.match(match.group()) and not _polite_request(sentence):
            continue  # "ugh, forget it, I'll call them myself": never mind, not a request
        if verb not in STRONG_VERBS and not _about_memory(match.group(), topic):
            continue  # "Delete the draft", "Clear my schedule": a task, not a memory
        return ForgetAsk(topic=topic)
    return None


def _polite_request(before: str) -> bool:
    """A clause that asks even though it reads "I … delete" ("can you please delete")."""
    return (
        re.search(r"\b(?:please|can you|could you|would you|from your)\b", before, re.I) is not None
    )


def _about_memory(request: str, topic: str) -> bool:
    """Whether delete / remove / erase / clear asks to forget: the request names the
    assistant's memory or what was said, or its topic is the user's personal information,
    information of a kind ("the job hunt stuff") or what was just said ("delete that") — and
    no other place ("remove X from my calendar")."""
    if MEMORY_CUE.search(request):
        return True
    if ELSEWHERE.search(topic):
        return False
    return _names_memory(topic_read(topic), info=INFO_NOUN.search(topic) is not None)


def _names_memory(read: Topic, *, info: bool) -> bool:
    """ "That", "that password", "my address", "the gambling stuff": what was said, or
    personal information — not "this file" or "my schedule"."""
    if read.anaphoric:
        return not read.words or bool(read.concepts)
    if read.concepts:
        return read.owned or info or any(c.sensitive for c in read.concepts)
    return info and bool(read.words or read.names)


# --- Chinese -----------------------------------------------------------------------------------

ZH_POLITE = (
    r"(?:请你?|麻烦你?|拜托你?|帮我|帮忙|你|您|能不能|能否|可以|可不可以|赶紧|马上|立刻|也|就|都|直接"
    r"|再|先|彻底|暂时|还是|一起)*"
)
ZH_STRONG = r"忘掉|忘记|忘了|忘|当我没说过?|当我没提过?|当没听过|当不知道|当作不知道|就当没这回事"
ZH_WEAK = r"删掉|删除|删了|删|清除|清掉|清空|清理|抹掉|抹去|去掉|移除|丢掉|擦掉|擦除|扔掉"
ZH_KEEP = r"记住|记着|记下来?|记录|记得|记|保存|保留|留着|存储|存下来?|存着|存"
ZH_NEGATION = r"别|不要|不用|不必|不需要|无需|没必要"
ZH_VERB = re.compile(
    rf"(?P<strong>{ZH_STRONG})|(?P<weak>{ZH_WEAK})(?:掉|了)?"
    rf"|(?:{ZH_NEGATION})(?:再|继续|帮我)?(?P<keep>{ZH_KEEP})(?:住|着|下来|下)?"
    rf"|我不(?:想|希望|愿意|要)(?:让)?(?:你|您)(?:再)?(?P<wish>记住|记得|知道|保存|保留|存|记)(?:着|住)?"
)
# Around the verb: what only asks politely or points ("把", "从你的记忆里"), never the topic.
ZH_FROM_MEMORY = r"从(?:你的?)?(?:记忆|记录|数据库|系统|资料)(?:里|中|里面)?"
ZH_FRAME = re.compile(
    rf"^(?:{ZH_POLITE}把|{ZH_POLITE}{ZH_FROM_MEMORY}|{ZH_POLITE})+|(?:{ZH_FROM_MEMORY}|{ZH_POLITE}"
    r"|都|给)+$"
)
ZH_FILLER = re.compile(r"^(?:算了|哎呀|哎|唉|嗯|好吧|好的|那个|对了|其实|说真的)+$")
ZH_PARTICLES = re.compile(r"^[吧了啊呀哦呢吗嘛的]*(?:好吗|行吗|可以吗|好不好)?[吧了啊呀哦呢吗嘛]*$")
# 我忘了带钥匙, 他删了我的照片, 别忘了…, 我老是忘记…: about forgetting, not asking for it.
ZH_NOT_A_REQUEST = re.compile(
    r"(?:^|[^你您帮给替让])(?:我|我们|他|她|他们|她们)(?:又|总是|老是|经常|常常|刚|刚刚|已经|不小心|都)?"
    r"(?:忘|删|清)|别忘|不要忘|不能忘|别删|不要删|怕(?:自己)?忘|会忘|容易忘"
    r"|忘(?:了|记)(?:带|拿|给|买|交|关|锁|做|写|吃|说|告诉|提醒|签|去|打)"
)
ZH_MEMORY_CUE = re.compile(r"记忆|记录|记住|记得|资料|信息|关于|有关|我说的|我告诉你的|当我没")
ZH_INFO_NOUN = re.compile(r"事|信息|资料|记录|内容|方面|那段|那部分|情况|细节")
ZH_CLAUSE = re.compile(r"[，,；;：:]")
ANY_RECORD = re.compile(r"^任何(?:记录|痕迹|信息|资料|东西)$")


def _chinese(clause: str) -> ForgetAsk | None:
    """A Chinese clause's request: the verb, and its topic after it (清除我的住址) or before it
    (工资那个事情你忘掉吧); "" when the clause names none (你都忘了吧)."""
    if ZH_NOT_A_REQUEST.search(clause):
        return None
    for match in ZH_VERB.finditer(clause):
        before = ZH_FRAME.sub("", clause[: match.start()])
        after = ZH_FRAME.sub("", ZH_PARTICLES.sub("", clause[match.end() :]))
        if after and not ZH_PARTICLES.match(after):
            topic = re.sub(r"[吧了啊呀]+$", "", after)
        else:
            topic = before
        topic = ANY_RECORD.sub("", topic)  # 不要保留任何记录: "any record" of a topic named before
        if topic and before and after and not ZH_PARTICLES.match(after):
            continue  # a verb in the middle of a statement: "我把照片删掉了一半"
        asks = bool(
            match["keep"]
            or match["wish"]
            or match.start() == 0
            or (match["strong"] or "").startswith("当")  # 当我没说: an ask by itself
            or re.search(r"^把|请|帮|麻烦|拜托|你|您|吧$", clause)
        )
        if not asks:
            continue
        if match["weak"] and not _zh_about_memory(clause, topic):
            continue  # 删除这个文件, 清空购物车: a task, not a memory
        return ForgetAsk(topic=topic.strip())
    return None


def _zh_about_memory(clause: str, topic: str) -> bool:
    """删除 / 清除 / 抹掉 ask to forget where the clause names the assistant's memory, or the topic
    is the user's personal information, information of a kind or what was just said (as
    `_about_memory`)."""
    if ZH_MEMORY_CUE.search(clause):
        return True
    if not topic:
        return True  # 删了吧: "that"
    return _names_memory(topic_read(topic), info=ZH_INFO_NOUN.search(topic) is not None)


def _sentence_ask(sentence: str) -> ForgetAsk | None:
    if not HAN.search(sentence):
        return _english(sentence)
    clauses = [c.strip() for c in ZH_CLAUSE.split(sentence) if c.strip()]
    for index, clause in enumerate(clauses):
        if (ask := _chinese(clause)) is None:
            continue
        if ask.topic:
            return ask
        # 关于那段感情的事，你都忘了吧 / 我哥那件事，你就当不知道吧，别存着: the topic came first,
        # in the nearest clause before that is no request itself; 忘了吧 alone: "that".
        named = [c for c in clauses[:index] if _chinese(c) is None and not ZH_FILLER.match(c)]
        return ForgetAsk(topic=named[-1] if named else "这个")
    return None


# "Scratch that." / "Wait, scratch that last bit.": what was just said, taken back (the
# openers "scratch that, …" before a correction are read as part of the correction).
RETRACT = re.compile(
    r"^(?:(?:wait|oh|ok|okay|no|actually|hmm+|um+|sorry)[,.!]?\s+)*(?:scratch|strike)\s+"
    r"(?:that|this|the last (?:bit|part|thing|one))(?:\s+(?:last\s+)?(?:bit|part|one))?\W*$",
    re.I,
)


def forget_asks(text: str) -> list[ForgetAsk]:
    """The forget requests a message makes, in order: one per sentence (or Chinese clause) that
    asks, with where that sentence stands. The topic may name nothing usable ("forget
    everything"); topics.py says so."""
    asks = []
    for start, end in sentence_spans(text):
        if RETRACT.match(text[start:end].strip()):
            asks.append(ForgetAsk(topic="what i just said", start=start, end=end))
            continue
        for sentence in sentences(text[start:end]):
            if (ask := _sentence_ask(sentence)) is not None:
                asks.append(ForgetAsk(topic=ask.topic, start=start, end=end))
                break
    return asks


def asks_to_forget(text: str) -> bool:
    """Whether the message asks to forget something (such a turn is not kept as an episode: it
    would keep what it asks to forget)."""
    return bool(forget_asks(text))
