"""A user turn kept as an episode: in the user's own words with the assistant turn it answers
(`episode_content`, read back by `EPISODE`), unless it carries no content (`content_free`);
`only_asks`: one in which the user only asks the assistant for something."""

import re
import unicodedata

from memories.sentences import HAN

# The assistant turn kept as an episode's context: its end (where the question usually is),
# whole sentences up to this many characters.
CONTEXT_CHARS = 160
CONTEXT_SENTENCE_START = re.compile(r"(?<=[.!?。！？])\s*(?=\S)")


def episode_content(words: str, *, replying_to: str = "") -> str:
    """A user turn as an episodic memory: "Assistant: What's your name? → User: It's Marcus
    Chen" ("助手：你叫什么名字？ → 用户：我叫陈明" when the user writes Chinese); just "User: …"
    when the turn answers no assistant message. The user's words are kept verbatim."""
    chinese = HAN.search(words) is not None
    user, assistant, colon = ("用户", "助手", "：") if chinese else ("User", "Assistant", ": ")
    said = f"{user}{colon}{words.strip()}"
    context = _assistant_context(replying_to)
    return f"{assistant}{colon}{context} → {said}" if context else said


# episode_content's form read back: "Assistant: <context> → User: <words>" (or the Chinese
# labels), or "User: <words>".
EPISODE = re.compile(
    r"^(?:(?:Assistant: |助手：)(?P<context>.*?) → )?(?:User: |用户：)(?P<words>.*)$", re.S
)


def _assistant_context(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= CONTEXT_CHARS:
        return text
    tail = text[-CONTEXT_CHARS:]
    start = CONTEXT_SENTENCE_START.search(tail)
    if start is not None:
        return tail[start.end() :]
    return "…" + tail.split(" ", 1)[-1]  # one long sentence: its end, from a word start


# Turns that carry nothing of their own: acknowledgements, thanks, greetings, laughter and
# interjections (English and Chinese), alone or strung together, with any punctuation and
# emoji. Answers ("yes", "no", "对", "不行") are content: with their context they say something.
FILLERS = (
    # English (apostrophes become spaces before matching)
    r"ok(?:ay|ey|ie)?|k+|alright|all right|right|sure|cool|nice|great|perfect|awesome",
    r"got it|gotcha|i see|understood|noted|thanks|thank (?:you|u)|thx|ty|tysm|cheers",
    r"so much|very much|a lot|much appreciated|appreciate it|np|no problem|no worries",
    r"(?:ha){2,}h?|(?:he){2,}|lo+l|lmf?ao+|rofl|xd|h+m+|u+m+|u+h+|o+h+|a+h+|wow|yay|oops",
    r"hi|hello|hey|yo|bye|bye bye|goodbye|see you|see ya|good (?:night|morning)|please",
    # Chinese
    r"好的?|好吧|好啊|好嘞|行|可以|嗯+|哦+|噢+|喔+|哈+|呵+|嘿+|嘻+|谢谢(?:你|您)?|多谢|谢了",
    r"感谢|辛苦了|收到|知道了|明白了?|懂了|了解|没问题|没事|不客气|拜拜|再见|晚安|早安|你好|您好",
    r"[啊呀啦吧呢哇嘛]",
)
CONTENT_FREE = re.compile(rf"(?:(?:{'|'.join(FILLERS)})\s*)+")


def content_free(text: str) -> bool:
    """True for a turn with nothing worth keeping as an episode ("thanks", "ok", "好的",
    "谢谢", "lol", emoji)."""
    # Punctuation, symbols (emoji), separators, control and format characters (zero-width
    # joiners), marks (emoji variation selectors) all become spaces.
    kept = "".join(" " if unicodedata.category(ch)[0] in "PSZCM" else ch for ch in text)
    words = " ".join(kept.lower().split())
    return not words or CONTENT_FREE.fullmatch(words) is not None


# A request to the assistant: its first sentence a question opening with a question word or an
# auxiliary, or an instruction opening with its verb; in Chinese a question (a question word,
# ending in a question mark), or one opening with "help me", "give me", "recommend", "explain
# in …".
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
QUESTION_OPENERS = (
    *("what", "what's", "whats", "how", "why", "when", "where", "which", "who", "whom", "whose"),
    *("is", "are", "am", "was", "were", "can", "could", "would", "should", "do", "does", "did"),
    *("will", "shall", "has", "have"),
)
INSTRUCTION_VERBS = (
    *("give", "write", "explain", "convert", "summarise", "summarize", "help", "suggest", "tell"),
    *("list", "translate", "proofread", "recommend", "turn", "make", "show", "find", "draft"),
    *("describe", "compare", "check", "define", "calculate", "rewrite", "rephrase", "fix", "name"),
)
ZH_REQUEST_OPENERS = (
    *("帮我", "给我", "告诉我", "推荐", "解释", "翻译", "列出", "总结一下", "概括一下"),
    *("写(?:一|个|段|封|首|篇|句|几)", "用[^，,。了]{1,8}?(?:解释|概括|总结|说|写)"),
)
# A word, not the start of one ("Name's Priya", "Can't decide…" open with no request).
WORD_END = r"(?![\w'’])"
EN_QUESTION = re.compile(rf"^(?:please\s+)?(?:{'|'.join(QUESTION_OPENERS)}){WORD_END}.*\?$", re.I)
EN_INSTRUCTION = re.compile(
    rf"^(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:{'|'.join(INSTRUCTION_VERBS)})"
    rf"{WORD_END}",
    re.I,
)
ZH_QUESTION_WORDS = (
    *("什么", "怎么", "怎样", "哪", "谁", "吗", "呢", "多少", "几", "为什么", "为啥", "是否"),
    *("要不要", "能不能", "可不可以", "有没有", "还是", "有多"),
)
ZH_QUESTION = re.compile(rf"(?:{'|'.join(ZH_QUESTION_WORDS)})[^，,]*[？?]$")
ZH_REQUEST = re.compile(rf"^(?:请|麻烦你?)?(?:{'|'.join(ZH_REQUEST_OPENERS)})")
# Words quoted are not the user's own (What does “per my last email” mean?).
QUOTED = re.compile(r'"[^"]*"|“[^”]*”|‘[^’]*’|「[^」]*」')
# What says something of the user: "I", "we", "my", "our" ("how do I…", "should I…" only ask),
# 我 but as the one asked for ("帮我", "告诉我"), and a clause before the question saying what
# happened ("刚升职了，要不要请客？").
FIRST_PERSON = (
    *("I", "I'm", "I've", "I'd", "I'll", "my", "mine"),
    *("we", "we're", "we've", "we'd", "us", "our", "ours"),
)
OWN = re.compile(rf"\b(?:{'|'.join(FIRST_PERSON)})\b|(?<![帮给告诉教让])我|咱|[了过][，,]", re.I)
ASKING_I = re.compile(
    rf"^(?:please\s+)?(?:{'|'.join(QUESTION_OPENERS)})(?:\s+\w+){{0,2}}\s+I{WORD_END}", re.I
)
# A sentence on the asking itself, after the request ("… I always forget.", "I'm curious.",
# "…我老记不住。"), and the register an answer is asked in ("explain it like I'm five"): they
# say nothing of the user to remember.
ASKED_THING = (
    r"(?:\s+(?:it|that|this|which\s+is\s+which|which\s+one"
    r"|the\s+(?:answer|name|word|rule|difference)))?"
)
APOSTROPHE = "['’]"
ASIDES = (
    rf"(?:i\s+)?(?:always|often|keep)\s+(?:forget|forgetting){ASKED_THING}",
    rf"(?:i\s+)?(?:can\s+never|never|can{APOSTROPHE}t|cannot|just\s+can{APOSTROPHE}t)\s+(?:remember"
    rf"|recall|keep\s+track|tell\s+(?:them|the\s+two)\s+apart){ASKED_THING}",
    rf"i(?:{APOSTROPHE}m|\s+am)\s+(?:not\s+sure|never\s+sure|curious|confused){ASKED_THING}",
    rf"(?:i(?:{APOSTROPHE}ve|\s+have)\s+)?always\s+wondered|i\s+was\s+(?:just\s+)?wondering"
    r"|just\s+(?:curious|wondering)",
    r"i\s+(?:always\s+)?(?:mix|get)\s+(?:them|these|those|it|this|that)\s+(?:up|mixed\s+up|confused)",
    r"我?(?:老|总|总是|老是|一直|经常|常常|每次都)?(?:记不住|记不清|忘|忘记|搞不清楚?|分不清楚?|搞混|弄混)了?",
    r"(?:有点|很|就是|只是)?好奇(?:一下)?|我?不太?确定",
)
ASIDE = re.compile(rf"(?:{'|'.join(ASIDES)})[\s.!。！…~～]*", re.I)
# An answer's register: "like I'm five", "like I'm a beginner".
ANSWER_REGISTER = re.compile(
    rf"\blike\s+I(?:{APOSTROPHE}m|\s+am)\s+(?:\d+|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|an?\s+(?:child|kid|beginner|toddler|[\w-]+-year-old))\b",
    re.I,
)


def only_asks(content: str) -> bool:
    """True for an episode in which the user only asks the assistant for something, about
    nothing of their own ("What's the capital of Australia?", "Write a birthday message for a
    coworker", "帮我把华氏度换算成摄氏度"): not for "Can you help me word a letter to my
    patients?", which says who the user is."""
    episode = EPISODE.match(content)
    if episode is None:
        return False
    sentences = SENTENCE_END.split(episode["words"].strip())
    first = sentences[0].strip()
    instruction = EN_INSTRUCTION.match(first) is not None
    # "How do I descale a kettle?" asks; "Is it weird that I hate cilantro?" tells.
    told = " ".join(s for s in sentences if not ASIDE.fullmatch(s.strip()))
    said = ASKING_I.sub(" ", QUOTED.sub(" ", told), count=1)
    if instruction:
        said = ANSWER_REGISTER.sub(" ", said)
    if not first or OWN.search(said):
        return False
    if HAN.search(first):
        return ZH_QUESTION.search(first) is not None or ZH_REQUEST.match(first) is not None
    return instruction or EN_QUESTION.match(first) is not None
