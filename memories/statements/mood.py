"""What of a sentence says something is so, of its speaker: not a question, a supposition, a
wish, what someone else says or thinks of them, a quotation of a speaker, or a line of code.
Those clauses are kept in the user's words (the episode) and state no fact: "What if I moved to
Berlin?", "Suppose my name is Bob", "I'd love to live in Lisbon someday", "You told me I live
in Berlin", 'My boss said "I live in Paris"', "我住在柏林吗？", "要是我住在柏林就好了". A clause
that states stays: "I live in Austin, any tips?" states "I live in Austin"."""

import re

from memories.sentences import HAN
from memories.statements.english import LEAD

CLAUSE_BREAK = re.compile(r"(\s*[,;，；]\s*)")
ASKED = re.compile(
    r"[?？]\W*$|吗[。！!？?]*$|^(?:what|where|who|when|why|how|which|do|does|did|can|could"
    r"|would|should|is|are|am|was|were|have|has|will|shall)\b",
    re.I,
)
SUPPOSED = re.compile(
    r"\b(?:what if|suppose|supposing|let'?s say|let us say|imagine|pretend|hypothetically"
    r"|in a world where|role-?play|write (?:a|me a) (?:story|poem|scene|script)|translate"
    r"|how do you say|i'?d (?:love|like|prefer) to|i wish|i'?d rather|someday|one day i"
    r"|dream of|used to (?!(?:the|it|this|that|a|an|being|having)\b))",
    re.I,
)
# Another's words or belief about the speaker, which may be wrong: "you told me…", "people
# think…", "my mum thinks…"; not what someone reports ("My doctor said my blood pressure is
# high" tells the user's blood pressure).
REPORTED = re.compile(
    r"\b(?:(?:you|he|she|they|people|everyone|everybody|someone|somebody)"
    r" (?:said|say|says|told me|tell me|think|thinks|thought|believe|believes|claim|claims"
    r"|assume|assumes|keeps? saying)"
    r"|my \w+ (?:thinks|thought|believes|claims|assumes|keeps saying))\b|\baccording to\b",
    re.I,
)
# A quotation holding a speaker's "I" ('My boss said "I live in Paris"'); a title is no
# speaker ('My favourite book is "Dune"').
QUOTED_SPEAKER = re.compile(
    r"[\"“„「『][^\"”“„」』]*?(?:\b(?:i|i'm|my|me)\b|我)[^\"”“„」』]*[\"”」』]", re.I
)
# Words quoted as someone said them, in any quotes: "My boss said 'I live in Paris'".
QUOTING = re.compile(
    r"\b(?:said|says|say|told (?:me|us|him|her)|wrote|writes|asked|asks)[,:]?\s*[\"'“‘「『]", re.I
)
ZH_SUPPOSED = re.compile(
    r"如果|要是|假如|假设|假使|万一|就好了|想(?:要)?(?:搬|去|住|换|当|做|买)|希望|梦想|翻译"
    r"|(?:以前|曾经)(?!.*(?:现在|目前|如今))"
)
ZH_REPORTED = re.compile(r"(?:你|他|她|他们|别人|大家|有人)(?:说|觉得|以为|认为)")
# A clause whose subject is no one: "Nobody in my family lives in Texas".
NO_ONE = re.compile(r"^(?:nobody|no one|none of|neither)\b", re.I)
# A line of code or of a stack trace: what it says is no one's word.
CODE = re.compile(
    r"^\s*(?:Traceback \(|File \"|raise\b|\w+(?:Error|Exception)\b:?|at [\w.$]+\(|>>> |\$ |#|//"
    r"|def |class |import |from \S+ import)"
)
CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)


def code_left_out(text: str) -> str:
    """`text` with its fenced code blocks emptied (each kept as a line break)."""
    return CODE_BLOCK.sub("\n", text)


def stated(sentence: str) -> str:
    """The part of `sentence` that says something is so in its speaker's own words: its other
    clauses left out; "" when none does."""
    if CODE.match(sentence) or QUOTED_SPEAKER.search(sentence) or QUOTING.search(sentence):
        return ""
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
        return not (
            ASKED.search(clause) or ZH_SUPPOSED.search(clause) or ZH_REPORTED.search(clause)
        )
    plain = LEAD.sub("", clause.strip())
    return not (
        ASKED.search(plain)
        or SUPPOSED.search(plain)
        or REPORTED.search(plain)
        or NO_ONE.match(plain)
    )
