"""What of a sentence says something is so, of its speaker: not a question, a supposition, a
wish, another's belief about them, words quoted as someone said them, or a line of code. Those
are kept in the user's words (the episode) and state no fact: "What if I moved to Berlin?",
"Suppose my name is Bob", "I'd love to live in Lisbon someday", "You told me I live in
Berlin", 'My boss said "I live in Paris"', "我住在柏林吗？", "要是我住在柏林就好了". What states
beside them stays: "I live in Austin, any tips?" states "I live in Austin"; 'I told my boss
"I quit" and I now work at Google' states the job."""

import re

from memories.sentences import HAN
from memories.statements.english import LEAD

CLAUSE_BREAK = re.compile(r"(\s*[,;，；]\s*|\s+but\s+(?=now\b|i\b|i'm\b|these days\b))", re.I)
# Asked: a clause ending so, or in a question's word order ("Do I live…", "Is my…"); not one
# opening with a question word that states ("When I moved to Austin, …", "Will is my brother").
ASKED = re.compile(
    r"[?？]\W*$|吗[。！!？?]*$|^(?:do|does|did|is|are|am|was|were|have|has|can|could|would"
    r"|should)\s+(?:i|you|we|my|our|he|she|they|it|that|there)\b",
    re.I,
)
SUPPOSED = re.compile(
    r"\b(?:what if|suppose|supposing|let'?s say|let us say|pretend|hypothetically"
    r"|in a world where|role-?play|write (?:a|me a) (?:story|poem|scene|script)"
    r"|how do you say|i'?d (?:love|prefer) to|i wish|i'?d rather|someday|dream of"
    r"|used to (?!(?:the|it|this|that|a|an|\w+ing)\b))"
    r"|^(?:imagine\s+(?:if|that|i|you|we|a world)|translate\s+(?:[\"“']|this|that|it|the"
    r"|into|to))\b",
    re.I,
)
# Another's belief about the speaker, which may be wrong: "you told me…", "people think…",
# "my mum thinks…"; not what someone reports ("My doctor said my blood pressure is high").
REPORTED = re.compile(
    r"\b(?:(?:you|people|everyone|everybody|someone|somebody)"
    r" (?:said|say|says|told me|tell me|think|thinks|thought|believe|believes|claim|claims"
    r"|assume|assumes|keeps? saying)"
    r"|(?:my \w+|he|she|they) (?:thinks|thought|believes|claims|assumes|keeps saying))\b"
    r"|\baccording to\b",
    re.I,
)
# Words quoted as someone said them: a speech verb, then the quotation, which is theirs ("My
# boss said 'I live in Paris'"). A quotation without one is a title ('"Me and Bobby McGee"').
QUOTED = r"(?:\"[^\"]*\"|“[^”]*”|'[^']*'(?!\w)|‘[^’]*’|「[^」]*」|『[^』]*』)"
QUOTED_SPEECH = re.compile(
    # The speaker's words with the clause that says so (to the clause's start), or a quotation
    # a line of code passes: 'raise ValueError("my name is Bob")'.
    r"(?:^|(?<=[,;，；]))[^,;，；\"“'‘「『]*?\b(?:said|says|say|told(?:\s+\w+){1,2}|wrote|writes"
    rf"|asked|asks|yelled|shouted)[,:]?\s*{QUOTED}|\w\(\s*{QUOTED}",
    re.I,
)
ZH_QUOTED_SPEECH = re.compile(r"(?:说|问|写道)[：:]?\s*(?:“[^”]*”|「[^」]*」|\"[^\"]*\")")
# Chinese: a supposition or a wish ("要是我住在柏林就好了"), the past alone ("以前住在上海"),
# another's belief ("他以为我住在柏林"; not "我跟你说…").
ZH_NOT_STATED = re.compile(
    r"如果|要是|假如|假设|假使|万一|就好了|想(?:要)?(?:搬|去|住|换|当|做|买)|希望|梦想|翻译(?:成|一下|这)"
    r"|(?:以前|曾经)(?!.*(?:现在|目前|如今))|(?<![跟和对])(?:你|他|她|他们|别人|大家|有人)(?:说|觉得|以为|认为)"
)
# A clause whose subject is no one: "Nobody in my family lives in Texas".
NO_ONE = re.compile(r"^(?:nobody|no one|none of|neither)\b", re.I)
# A line of code or of a stack trace: what it says is no one's word.
CODE = re.compile(
    r"^\s*(?:Traceback \(|File \"|raise\b|\w+(?:Error|Exception)\b:|at [\w.$]+\(|>>> |\$ "
    r"|#(?!\d)|//|def |class |import |from \S+ import )"
)
CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)


def code_left_out(text: str) -> str:
    """`text` with its fenced code blocks emptied (each kept as a line break)."""
    return CODE_BLOCK.sub("\n", text)


def stated(sentence: str) -> str:
    """The part of `sentence` that says something is so in its speaker's own words: quoted
    speech and its other clauses left out; "" when none does."""
    if CODE.match(sentence):
        return ""
    sentence = ZH_QUOTED_SPEECH.sub("", QUOTED_SPEECH.sub("", sentence))
    parts = CLAUSE_BREAK.split(sentence)
    clauses, breaks = parts[0::2], parts[1::2]
    kept = [_states(clause) for clause in clauses]
    if all(kept):
        return sentence
    joined = ""
    for index, clause in enumerate(clauses):
        if kept[index]:
            joined += (breaks[index - 1] if joined and index else "") + clause
    return joined


def _states(clause: str) -> bool:
    if HAN.search(clause):
        return not (ASKED.search(clause) or ZH_NOT_STATED.search(clause))
    plain = LEAD.sub("", clause.strip())
    return not (
        ASKED.search(plain)
        or SUPPOSED.search(plain)
        or REPORTED.search(plain)
        or NO_ONE.match(plain)
    )
