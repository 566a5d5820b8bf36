"""When a recall query asks about: what held before, or what holds now."""

import re

I = re.I  # noqa: E741

# Said in so many words, not by the tense alone ("What did the user study?" may ask what holds
# still); "before" closing the question or before "that", "then", "now" ("What does the user
# eat before a run?" asks no such thing), "之前" of the subject ("跑步之前" is not).
HELD_BEFORE = (
    r"\b(?:used\s+to|did\b.*\buse\s+to|before(?=\s*[?.!]*\s*$|\s+(?:that|then|now)\b)"
    # before the value that replaced it, asked in the past: "Where did the user live before
    # Leeds?" (not "What must the user finish before Friday?")
    r"|(?:did|was|were|had)\b.*\bbefore(?=\s+(?:moving\s+to\s+)?(?-i:[A-Z])[\w'-]*"
    r"(?:\s+(?-i:[A-Z])[\w'-]*)*\s*[?.!]*\s*$)"
    r"|previous(?:ly)?|former(?:ly)?|original(?:ly)?|at\s+first|ever|in\s+the\s+past)\b"
    r"|以前|原来|原先|曾经|过去|当初|从前|换过|(?:^|用户|他|她|它|搬到[^，,。？?]{1,8})之前"
)
HELD_BEFORE_QUESTION = re.compile(HELD_BEFORE, I)


def asks_what_held_before(text: str) -> bool:
    """Whether a recall query asks, in so many words, what held before."""
    return HELD_BEFORE_QUESTION.search(text) is not None


# A question about what held before, or about how something changed, asks for the old values
# too: recall must not rank them below the newer ones. Past tense counts ("What did the user
# study?"): it may ask about a value that has since changed.
PAST_QUESTION = re.compile(
    rf"{HELD_BEFORE}|\b(?:before|first|earlier|past|until|history|chang(?:e|es|ed|ing)"
    r"|switch(?:ed|ing)?|did|was|were|had)\b|之前|最初|起初|先前|第一|变化|历史",
    I,
)


def asks_about_the_past(text: str) -> bool:
    """Whether a recall query asks what held before, or how something changed."""
    return PAST_QUESTION.search(text) is not None


# A question that says it asks what holds now ("What car does the user drive now?", "Does the
# user still smoke?", "用户现在住在哪里？").
PRESENT_QUESTION = re.compile(
    r"\b(?:now|nowadays|currently|current|presently|these\s+days|at\s+the\s+moment|"
    r"at\s+present|still|any\s*more|lately)\b|现在|目前|如今|眼下|当前|这阵子|最近|还在|仍然|依然",
    I,
)


def asks_about_the_present(text: str) -> bool:
    """Whether a recall query says it asks what holds now."""
    return PRESENT_QUESTION.search(text) is not None
