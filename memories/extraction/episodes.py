"""A user turn kept as an episode: in the user's own words with the assistant turn it answers
(`episode_content`, read back by `EPISODE`), unless it carries no content (`content_free`)."""

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
