"""Checks of values on their way to PostgreSQL, shared by the API's fields and the services.

Each answers a message when the value cannot be stored or addressed as given, else None:
text PostgreSQL refuses (NUL, lone surrogates), end-user ids every route can name, JSON nested
deeper than anyone means to, floats a `real` column cannot hold, vectors halfvec cannot hold.
"""

import math
import re
from typing import Any

import numpy as np

from core.errors import Invalid

USER_ID_MAX_LENGTH = 255
JSON_MAX_DEPTH = 32
# halfvec's largest finite value.
HALFVEC_MAX = 65504.0

_UNSTORABLE_TEXT = re.compile("[\x00\ud800-\udfff]")
# UTF-8 cannot carry one: text with it cannot even be answered.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# Control characters (C0, DEL and C1) and "/" (a path segment: /users/{user_id}/ could not
# name the user).
_USER_ID_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f/\ud800-\udfff]")

# The API's patterns for the strings these checks take, in the dialect Python and ECMA-262 (the
# OpenAPI's) share. WHITESPACE is what str.strip() removes, spelled out: ECMA's \s is another
# set. END is the value's end: Python's `$` also matches before a final newline.
WHITESPACE = r"\t-\r\u001c- \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
END = r"(?![\s\S])"
TEXT_PATTERN = rf"^[^\u0000]*{END}"
# Text that is not blank once trimmed.
NON_BLANK_TEXT_PATTERN = rf"^[^\u0000]*[^\u0000{WHITESPACE}][^\u0000]*{END}"
# A name lists show (an agent's, name_problem): no control characters, not blank once trimmed.
NAME_PATTERN = (
    rf"^[^\u0000-\u001f\u007f]*[^{WHITESPACE}\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*{END}"
)
_NAME_FORBIDDEN = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
# A new end-user id (user_id_problem); an id to look up is NON_BLANK_TEXT_PATTERN.
_ID_EDGE = rf"[^{WHITESPACE}/\u0000-\u001f\u007f-\u009f]"
USER_ID_PATTERN = rf"^{_ID_EDGE}(?:[^/\u0000-\u001f\u007f-\u009f]*{_ID_EDGE})?{END}"


def validated(**problems: str | None) -> None:
    """Raise Invalid for the first field whose check found a problem:
    `validated(content=text_problem(content), metadata=json_problem(metadata))`."""
    for field, problem in problems.items():
        if problem is not None:
            raise Invalid(problem, field=field)


def is_number(value: Any) -> bool:
    """A JSON number: an int or a float, and no bool (Python's bool is an int)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def text_problem(value: str) -> str | None:
    """NUL and lone surrogates: PostgreSQL stores neither in text or JSONB."""
    found = _UNSTORABLE_TEXT.search(value)
    if found is None:
        return None
    if found.group() == "\x00":
        return "NUL characters (\\u0000) are not allowed."
    return "Lone surrogate characters are not allowed."


def name_problem(value: str, *, most: int) -> str | None:
    """A name lists show: no control characters (a tab or a line break in an admin list's
    name), no lone surrogates, 1 to `most` characters once stripped."""
    if _NAME_FORBIDDEN.search(value):
        return "A name without control characters (tabs, line breaks …)."
    if not value.strip() or len(value.strip()) > most:
        return f"A name of 1 to {most} characters."
    return None


def bigint_id(text: str) -> int | None:
    """The positive id of a bigint column that `text` spells in ASCII digits, else None
    (str.isdigit() also takes "²"; int() refuses to read over 4,300 digits, 2**63 has 19)."""
    if text.isascii() and text.isdigit() and len(text) <= 19 and 0 < int(text) < 2**63:
        return int(text)
    return None


def regex_problem(pattern: str) -> str | None:
    """A Python regular expression that does not compile (a repetition past the engine's limit,
    "x{99999999999}", raises OverflowError, not re.error)."""
    try:
        re.compile(pattern)
    except (re.error, OverflowError) as error:
        return f"Not a regular expression: {error}."
    return None


def user_id_problem(value: Any, *, new: bool = True) -> str | None:
    """`new`: an id about to be written, which every route must be able to name. Otherwise an
    id to look up, which may be one stored before these rules (say, by the V1 upgrade): only
    what PostgreSQL could never hold is refused."""
    if not isinstance(value, str):
        return "Must be a string."
    if not value.strip():
        return "Must not be blank."
    if not new:
        if len(value) > USER_ID_MAX_LENGTH:
            return f"Ensure this field has no more than {USER_ID_MAX_LENGTH} characters."
        return text_problem(value)
    if value != value.strip():
        return "Must not start or end with whitespace."
    if len(value) > USER_ID_MAX_LENGTH:
        return f"Ensure this field has no more than {USER_ID_MAX_LENGTH} characters."
    found = _USER_ID_FORBIDDEN.search(value)
    if found is not None:
        return f"Must not contain {found.group()!r} (control characters, '/', surrogates)."
    return None


def json_problem(value: Any) -> str | None:
    """A JSON value PostgreSQL's jsonb takes: no unstorable text in keys or strings, finite
    numbers (Python's json reads 1e400 as inf), at most JSON_MAX_DEPTH levels."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        item, depth, path = stack.pop()
        if depth > JSON_MAX_DEPTH:
            return f"Nested deeper than {JSON_MAX_DEPTH} levels."
        if isinstance(item, str):
            problem = text_problem(item)
        elif isinstance(item, float):
            problem = None if math.isfinite(item) else "Numbers must be finite."
        elif isinstance(item, dict):
            problem = next(filter(None, (text_problem(str(key)) for key in item)), None)
            stack.extend((child, depth + 1, f"{path}.{key}") for key, child in item.items())
        elif isinstance(item, list):
            problem = None
            stack.extend((child, depth + 1, f"{path}[{n}]") for n, child in enumerate(item))
        else:
            problem = None
        if problem is not None:
            return f"{path.lstrip('.')}: {problem}" if path else problem
    return None


def float4(value: float) -> float:
    """`value` for a PostgreSQL `real` column: one so small that it rounds to zero there is 0
    (PostgreSQL would refuse it as an underflow). ValueError when not finite or too big."""
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer too large for any float
        raise ValueError("is out of range") from None
    if not finite:
        raise ValueError("must be a finite number")
    with np.errstate(over="ignore", under="ignore"):
        rounded = np.float32(value)
    if not np.isfinite(rounded):
        raise ValueError("is out of range")
    return value if rounded else 0.0


def embedding_problem(vector: list[float], *, dimensions: int) -> str | None:
    """A client's vector: the configured size, finite, within halfvec's range, and not zero
    once stored as halfvec (a zero vector has no direction: every cosine with it is NaN)."""
    if len(vector) != dimensions:
        return f"Expected {dimensions} dimensions, got {len(vector)}."
    array = np.asarray(vector, dtype=np.float64)
    if not np.isfinite(array).all():
        return "Values must be finite numbers."
    if np.abs(array).max(initial=0) > HALFVEC_MAX:
        return f"Values must lie within ±{HALFVEC_MAX:g} (halfvec)."
    if not np.any(array.astype(np.float16)):
        return "Must not be a zero vector (or one that rounds to zero as halfvec)."
    return None
