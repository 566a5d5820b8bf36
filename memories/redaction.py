"""Secrets are never stored: credentials and identifiers found in text are replaced by a typed
placeholder (`[redacted: password]`) before anything is written (docs/privacy.md).

What is found, by kind:
- `password`, `pin`: a value stated as one ("my password is …", "the door code is 4821",
  "密码是…", "PIN码：…"), in a URL's user:password@, or after `password=` in a connection string;
- `card_number`: 13–19 digits (spaces or dashes between groups) with a card network's prefix
  and a valid Luhn check digit;
- `ssn`: a US social security number written 123-45-6789 (or nine digits after "SSN");
- `national_id`: a Chinese resident id (18 characters, a real birth date, the ISO 7064 check
  character), or a passport / driving licence / id number stated as such;
- `iban`: an IBAN whose length fits its country and whose mod-97 check holds;
- `api_key`: the common providers' key formats (OpenAI, Anthropic, AWS, GitHub, GitLab,
  Slack, Stripe, Google, …), NeuroMem's own tokens, and keys or tokens stated as such;
- `token`: JSON Web Tokens, bearer tokens, and long random-looking strings (mixed case and
  digits, high entropy), outside URLs' paths;
- `private_key`: PEM / OpenSSH private key blocks.

Found spans never overlap: the earlier, then the longer, wins. REDACTION_DISABLED_KINDS
turns kinds off. Detection is rules only here; with EXTRACTOR=llm the extractor may name
more spans (memories/extraction/llm.py), which `redact_spans` removes the same way.
"""

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

KINDS = (
    "password",
    "pin",
    "card_number",
    "ssn",
    "national_id",
    "iban",
    "api_key",
    "token",
    "private_key",
)
PLACEHOLDER = "[redacted: {kind}]"
PLACEHOLDER_PATTERN = re.compile(r"\[redacted: [a-z_]+\]")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str


@dataclass(frozen=True)
class Redacted:
    text: str
    counts: Counter[str] = field(default_factory=Counter)


# --- Stated credentials --------------------------------------------------------------------

# What a value is called, by kind. Longest alternatives first where one begins another.
PASSWORD_LABELS = (
    r"(?:(?:wi-?fi|wlan|login|account|admin|root|master|bank(?:ing)?|e-?mail|computer|laptop"
    r"|phone|router|system|company|work|server|database|db|vpn|network|app|icloud|apple id"
    r"|google|facebook|instagram|netflix|amazon)\s+)?"
    r"(?:password|passwd|passcode|pass\s?phrase|pass\s?word|pwd|pw)"
)
PIN_LABELS = (
    r"(?:(?:door|gate|garage|alarm|safe|lock|locker|security|access|entry|building|keypad|atm"
    r"|debit card|credit card|card|phone|sim|bank|verification|2fa|otp|one-time)\s+)"
    r"(?:code|pin|combination)|pin(?:\s+(?:code|number))?|combination|otp"
)
KEY_LABELS = (
    r"(?:api|access|secret|private|auth|bearer|session|refresh|personal access)[\s_-]?"
    r"(?:key|token)|client[\s_-]secret|secret[\s_-]key|(?:my|the)\s+token|secret"
)
ID_LABELS = (
    r"passport(?:\s+(?:number|no\.?|#))?|(?:driver'?s?|driving)\s+licen[cs]e(?:\s+(?:number|no\.?))?"
    r"|national\s+(?:id|insurance)(?:\s+(?:number|no\.?))?|id\s+(?:card\s+)?number"
    r"|tax\s+(?:id|number)|social\s+insurance\s+number"
)
SSN_LABELS = r"ssn|social\s+security(?:\s+(?:number|no\.?|#))?"
# Between the label and the value: "for the company system", then "is", ":", "=", "set to" …
LABEL_TAIL = (
    r"(?:\s+(?:for|to|of|on|at)(?:\s+[\w'’.-]+){1,4}?)?"
    r"(?:\s*(?:[:=]|：)\s*|\s+(?:(?:is|'s) going to be(?!\s+\w+ed\b)|is gonna be(?!\s+\w+ed\b)"
    r"|is still|is now|will be|has been|is|was|are|became|reads)"
    r"(?:\s+(?:still|now|actually|just|always))?(?:\s*[:=]\s*|\s+)"
    # "the password is the same: hunter2"
    r"(?:(?:still\s+)?the\s+same\s*[:=]\s*)?(?:set\s+to\s+|changed\s+to\s+)?)"
)
# "username jdoe, password hunter2": a login written as a pair.
PAIR = (
    r"\b(?:user(?:\s*name)?|login|account|email|e-mail)\s*[:=]?\s*\S+?\s*[,;/]?\s+"
    rf"(?P<label>{PASSWORD_LABELS})\s*[:=]?\s*"
)
SET_TO = (
    r"\b(?:set|changed|reset|updated|switched)\s+(?:my|the|our)\s+"
    rf"(?P<label>{PASSWORD_LABELS}|{PIN_LABELS})\s+to\s+"
)
# A value: a quoted string, or a run of non-space characters.
VALUE = (
    r"(?:\"(?P<q1>[^\"\n]{1,200})\"|'(?P<q2>[^'\n]{1,200})'|“(?P<q3>[^”\n]{1,200})”"
    # An app password as providers print it, in four groups: "abcd efgh ijkl mnop".
    r"|(?P<grouped>[a-z]{4}(?: [a-z]{4}){3})(?![\w-])"
    r"|(?P<bare>\S{1,200}))"
)
VALUE_GROUPS = ("q1", "q2", "q3", "grouped", "bare")
STATED = [
    re.compile(
        # The label may close a quote: '{"password": "…"}', JSON written as text.
        rf"\b(?P<label>{KEY_LABELS}|{SSN_LABELS}|{ID_LABELS}|{PIN_LABELS}|{PASSWORD_LABELS})\b"
        rf"[\"'”’]?{LABEL_TAIL}{VALUE}",
        re.I,
    ),
    re.compile(rf"{SET_TO}{VALUE}", re.I),
    re.compile(rf"{PAIR}{VALUE}", re.I),
    re.compile(
        r"(?P<label>(?:登录|登陆|银行卡|信用卡|支付|开机|锁屏|无线|邮箱|账户|账号|系统|电脑|手机|门禁|门锁"
        r"|保险柜|wifi|WiFi|WIFI)?(?:密码|口令|PIN码|pin码|PIN|验证码|密钥|秘钥|令牌)"
        r"|身份证(?:号码?)?|护照(?:号码?)?|社保(?:号|卡号)|驾照(?:号码?)?|(?:API|api)\s*(?:key|Key|KEY))"
        r"(?:\s*(?:是|为|：|:|=|改成了?|改为|换成了?|设成了?|设置为|设为)\s*)"
        r"(?P<bare>[^\s，。；！？、,;!?]{1,200})"
    ),
    re.compile(r"(?P<label>验证码|动态码|校验码)\s+(?P<bare>\d{4,8})(?!\d)"),
    # A social security number after its label alone: "SSN 123456789", "SSN# 123-45-6789".
    re.compile(rf"\b(?P<label>{SSN_LABELS})\s*#?\s*(?P<bare>\d{{3}}-?\d{{2}}-?\d{{4}})\b", re.I),
    # With nothing between label and value ("and my password Lz8Kq2Wv"): only a value mixing
    # letters and digits, as words after a label never do ("my password manager").
    re.compile(
        rf"\b(?P<label>{PASSWORD_LABELS})\s+(?P<bare>(?=[^\s\d]*\d)(?=\S*[A-Za-z])\S{{6,200}})",
        re.I,
    ),
]
# What follows "my password is" that is no password: "My password is too long", "是什么".
NOT_VALUES_TEXT = """
    a an the my your our their his her its this that these those it is was are not no none too
    very so quite really still now just also always never same different wrong right correct
    incorrect weak strong secure safe unsafe long short easy hard simple complex complicated
    expired changed reset required needed case sensitive case-sensitive written saved stored
    hidden private secret new old forgotten lost compromised leaked stolen blank empty unknown
    something nothing anything what which where when how why who here there on in at for to and
    or but because since based about like one two three set being been protected encrypted
    managed different? ok fine good bad terrible horrible awful great update updated broken
    locked working going gonna i 什么 多少 啥 哪个 几位 几位数 多长 忘了 丢了 错了 对的 一样 不对
"""
NOT_VALUES = frozenset(NOT_VALUES_TEXT.split())
TRAILING = ".,;:)]}\"'”’。，；：）"


def _label_kind(label: str) -> str:
    label = label.lower()
    if re.search(r"ssn|social\s+security", label):
        return "ssn"
    if re.search(
        r"passport|licen|national|id\b|id\s+card|tax|insurance|身份证|护照|社保|驾照", label
    ):
        return "national_id"
    if re.search(r"key|token|secret|密钥|秘钥|令牌", label):
        return "api_key"
    if re.search(r"pin|code|combination|otp|验证码|动态码|校验码", label):
        return "pin"
    return "password"


# Every label holds one of these (in lower case): text without any has no stated secret, and
# most text has none, so the patterns above need not scan it. (Searched in the lowered text:
# re.I makes an alternation of literals many times slower.)
LABEL_HINT = re.compile(
    r"pass|pw|pin|code|combination|key|token|secret|licen|national|id|tax|social|ssn|api|bearer"
    r"|otp|密码|口令|验证码|动态码|校验码|密钥|秘钥|令牌|身份证|护照|社保|驾照"
)


def _stated(text: str) -> Iterator[Span]:
    if not LABEL_HINT.search(text.lower()):
        return
    for pattern in STATED:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            group = next(g for g in VALUE_GROUPS if groups.get(g) is not None)
            start, end = match.span(group)
            value = match.group(group)
            if group == "bare":
                stripped = value.rstrip(TRAILING)
                end -= len(value) - len(stripped)
                value = stripped
            if group == "grouped" and value.split()[0] in NOT_VALUES:
                continue  # "is very long and", not an app password
            kind = secret_kind(match.group("label"), value)
            if kind is not None:
                yield Span(start, end, kind)


def secret_kind(label: str, value: str) -> str | None:
    """The kind of secret `value` is when `label` names it as one ("password", "door code"), or
    None when it cannot be one: no value ("My password is too long"), or no digit where the
    kind has some ("the door code is simple", "the secret is out")."""
    if not value or value.lower() in NOT_VALUES:
        return None
    kind = _label_kind(label)
    needs_digit = kind in ("pin", "ssn", "national_id") or label.lower() == "secret"
    if needs_digit and not any(ch.isdigit() for ch in value):
        return None
    return kind


# --- Numbers with a check digit --------------------------------------------------------------


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


# Card networks' prefixes (IIN ranges) and lengths.
CARD_NETWORKS = (
    (re.compile(r"4"), (13, 16, 19)),  # Visa
    (re.compile(r"5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720"), (16,)),  # Mastercard
    (re.compile(r"3[47]"), (15,)),  # American Express
    (re.compile(r"6011|65|64[4-9]|622"), (16, 17, 18, 19)),  # Discover
    (re.compile(r"35(?:2[89]|[3-8]\d)"), (16, 17, 18, 19)),  # JCB
    (re.compile(r"62|81"), (16, 17, 18, 19)),  # UnionPay
    (re.compile(r"3(?:0[0-5]|[689])"), (14, 15, 16, 19)),  # Diners Club
    (re.compile(r"5[06-9]|6\d"), (16, 17, 18, 19)),  # Maestro
)
CARD_CANDIDATE = re.compile(r"(?<![\d.,/-])\d(?:(?: {1,2}|-)?\d){12,18}(?![\d/]|[.,-]\d)")


def _cards(text: str) -> Iterator[Span]:
    for match in CARD_CANDIDATE.finditer(text):
        raw = match.group()
        digits = re.sub(r"\D", "", raw)
        separators = set(re.findall(r"[ -]", raw))
        if len(separators) > 1:
            continue
        if separators and not all(2 <= len(g) <= 6 for g in re.split(r" {1,2}|-", raw)):
            continue
        if not luhn_valid(digits):
            continue
        if any(
            prefix.match(digits) and len(digits) in lengths for prefix, lengths in CARD_NETWORKS
        ):
            yield Span(match.start(), match.end(), "card_number")


SSN_FORMATTED = re.compile(
    r"(?<![\d-])(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}(?![\d-])"
)


def _ssns(text: str) -> Iterator[Span]:
    for match in SSN_FORMATTED.finditer(text):
        yield Span(match.start(), match.end(), "ssn")


CN_ID = re.compile(
    r"(?<![\dA-Za-z])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}"
    r"[\dXx](?![\dA-Za-z])"
)
CN_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
CN_ID_CHECK = "10X98765432"


def cn_id_valid(number: str) -> bool:
    total = sum(
        int(digit) * weight for digit, weight in zip(number[:17], CN_ID_WEIGHTS, strict=True)
    )
    return CN_ID_CHECK[total % 11] == number[17].upper()


def _cn_ids(text: str) -> Iterator[Span]:
    for match in CN_ID.finditer(text):
        if cn_id_valid(match.group()):
            yield Span(match.start(), match.end(), "national_id")


# IBAN lengths by country (ISO 13616 registry).
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
    "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20,
    "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18,
    "NO": 15, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "SA": 24,
    "SC": 31, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24,
    "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
}  # fmt: skip
IBAN_LABEL = re.compile(r"\biban\b", re.I)
# Its groups apart by a space or a dash or not at all; in lower case only after its label.
IBAN_CANDIDATE = re.compile(
    r"\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,4})?\b", re.I
)


def iban_valid(iban: str) -> bool:
    if IBAN_LENGTHS.get(iban[:2]) != len(iban):
        return False
    rearranged = iban[4:] + iban[:4]
    return int("".join(str(int(char, 36)) for char in rearranged)) % 97 == 1


def _ibans(text: str) -> Iterator[Span]:
    for match in IBAN_CANDIDATE.finditer(text):
        raw = match.group()
        if not raw.isupper() and not IBAN_LABEL.search(
            text[max(0, match.start() - 20) : match.start()]
        ):
            continue  # in lower case only where named so: hex ids are alike
        raw = raw.upper()
        length = IBAN_LENGTHS.get(raw[:2], 0)
        # The candidate may run on into a next group of letters or digits: its own length only.
        kept = re.match(rf"(?:[ -]?[A-Z0-9]){{{length}}}", raw) if length else None
        if kept and iban_valid(re.sub(r"[ -]", "", kept.group())):
            yield Span(match.start(), match.start() + kept.end(), "iban")


# --- Keys and tokens ---------------------------------------------------------------------------

PROVIDER_KEYS = re.compile(
    r"\bsk-(?:ant-|proj-|svcacct-|admin-|live-)?[A-Za-z0-9_-]{20,}"
    r"|\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{22,}"
    r"|\bglpat-[A-Za-z0-9_-]{20,}"
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"
    r"|https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"
    r"|\bAIza[0-9A-Za-z_-]{35}"
    r"|\bya29\.[0-9A-Za-z_-]{20,}"
    r"|\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"
    r"|\bnpm_[A-Za-z0-9]{36}"
    r"|\bhf_[A-Za-z0-9]{30,}"
    r"|\bpypi-[A-Za-z0-9_-]{50,}"
    r"|\bnm_[A-Za-z0-9_-]{40,}"  # NeuroMem's own API tokens
    r"|\bkey-[0-9a-z]{32}\b"
    r"|\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b"  # Telegram bot tokens
)
JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")
BEARER = re.compile(r"\b(?:bearer|token)\s+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)", re.I)
# With or without a user name: "redis://:secret@cache:6379".
URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]*:(?P<value>[^\s@/]+)@", re.I)
DSN_PASSWORD = re.compile(r"\b(?:password|passwd|pwd)=(?P<value>[^\s;&]+)", re.I)
PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.S,
)
URL = re.compile(r"\b(?:https?|ftp)://\S+", re.I)
# A URL's query values named like secrets are secrets even inside a URL.
URL_SECRET_PARAM = re.compile(
    r"[?&](?:token|access_token|api_key|apikey|key|secret|sig|signature|password|pwd|auth)"
    r"=(?P<value>[^&#\s]{8,})",
    re.I,
)
# Every provider key, JWT and token candidate holds such a run (a Slack webhook, its URL).
KEY_RUN = re.compile(r"[A-Za-z0-9+/=_-]{10}|hooks\.slack\.com")
TOKEN_CANDIDATE = re.compile(r"(?<![\w/+=-])[A-Za-z0-9+/=_-]{20,}(?![\w/+=-])")
ENTROPY_MIN_BITS = 3.5


def shannon_bits(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def looks_random(candidate: str) -> bool:
    """Mixed case with digits, high entropy, and no long run of letters: a key or a token, not
    an identifier (`calculateTotalPrice2024`), a hash (hex: no upper and lower case together) or
    a word."""
    body = candidate.rstrip("=")
    if sum(c.isdigit() for c in body) < (1 if len(body) >= 32 else 2):
        return False
    if not (any(c.islower() for c in body) and any(c.isupper() for c in body)):
        return False
    if max((len(run) for run in re.findall(r"[A-Za-z]+", body)), default=0) > 24:
        return False
    words = re.findall(r"[A-Z]?[a-z]{3,}", body)
    if sum(map(len, words)) > len(body) / 2:
        return False  # camelCase / snake_case words
    return shannon_bits(body) >= ENTROPY_MIN_BITS


def _tokens(text: str) -> Iterator[Span]:
    # Each pattern scans only text holding what it needs: most text holds none of it.
    if "-----BEGIN" in text:
        for match in PRIVATE_KEY.finditer(text):
            yield Span(match.start(), match.end(), "private_key")
    lower = text.lower()
    if "bearer" in lower or "token" in lower:
        for match in BEARER.finditer(text):
            yield Span(*match.span("value"), "token")
    urls: list[tuple[int, int]] = []
    if "://" in text:
        for match in URL_PASSWORD.finditer(text):
            yield Span(*match.span("value"), "password")
        urls = [match.span() for match in URL.finditer(text)]
    if "=" in text:
        for match in DSN_PASSWORD.finditer(text):
            yield Span(*match.span("value"), "password")
        for match in URL_SECRET_PARAM.finditer(text):
            yield Span(*match.span("value"), "token")
    if KEY_RUN.search(text):
        for match in PROVIDER_KEYS.finditer(text):
            yield Span(match.start(), match.end(), "api_key")
        for match in JWT.finditer(text):
            yield Span(match.start(), match.end(), "token")
        for match in TOKEN_CANDIDATE.finditer(text):
            inside_url = any(start <= match.start() < end for start, end in urls)
            if not inside_url and looks_random(match.group()):
                yield Span(match.start(), match.end(), "token")


DETECTORS: tuple[Callable[[str], Iterable[Span]], ...] = (
    _tokens,
    _stated,
    _cards,
    _ssns,
    _cn_ids,
    _ibans,
)


def enabled_kinds() -> frozenset[str]:
    return frozenset(KINDS) - frozenset(settings.REDACTION_DISABLED_KINDS)


# What every secret but a stated one holds: two digits, a run of key characters, a URL, an
# assignment, a key block. Most memories hold none of it nor a label: two scans.
MAY_HOLD_SECRET = re.compile(rf"\d[ -]?\d|{KEY_RUN.pattern}|://|=|-----BEGIN")


# Full-width forms ("４１１１…", "ＡＰＩ"), read as the ASCII they stand for: one character for
# one, so a span found in the reading is the same span of the text.
FULL_WIDTH = {0xFF01 + offset: 0x21 + offset for offset in range(0x5E)} | {0x3000: 0x20}


def spans_found(text: str, kinds: frozenset[str] | None = None) -> list[Span]:
    """The secrets in `text` of the enabled kinds (or `kinds`), in order, not overlapping."""
    text = text.translate(FULL_WIDTH)
    if not (MAY_HOLD_SECRET.search(text) or LABEL_HINT.search(text.lower())):
        return []
    kinds = enabled_kinds() if kinds is None else kinds
    placeholders = [match.span() for match in PLACEHOLDER_PATTERN.finditer(text)]
    found = sorted(
        (
            span
            for detect in DETECTORS
            for span in detect(text)
            if span.kind in kinds
            # What was redacted before is no secret again ("is [redacted: password]").
            and not any(start < span.end and span.start < end for start, end in placeholders)
        ),
        key=lambda span: (span.start, -(span.end - span.start)),
    )
    kept: list[Span] = []
    for span in found:
        if kept and span.start < kept[-1].end:
            if span.end > kept[-1].end:  # overlapping: one placeholder covers both
                kept[-1] = Span(kept[-1].start, span.end, kept[-1].kind)
            continue
        kept.append(span)
    return kept


def redact_spans(text: str, spans: Iterable[Span]) -> Redacted:
    """`text` with each span replaced by its kind's placeholder."""
    counts: Counter[str] = Counter()
    pieces, position = [], 0
    for span in sorted(spans, key=lambda s: s.start):
        if span.start < position:
            continue
        pieces += [text[position : span.start], PLACEHOLDER.format(kind=span.kind)]
        position = span.end
        counts[span.kind] += 1
    if not counts:
        return Redacted(text)
    pieces.append(text[position:])
    return Redacted("".join(pieces), counts)


def redact(text: str) -> Redacted:
    """`text` with every secret of an enabled kind replaced by its placeholder."""
    kinds = enabled_kinds()
    if not text or not kinds:
        return Redacted(text)
    return redact_spans(text, spans_found(text, kinds))


def redact_json(value: Any) -> tuple[Any, Counter[str]]:
    """A JSON value with every string in it, keys included, redacted; and a string or number
    under a key that names a secret ({"wifi_password": "bluecabin7"}) replaced whole."""
    counts: Counter[str] = Counter()
    if not value:  # most metadata is empty
        return value, counts
    kinds = enabled_kinds()

    def text(item: str) -> str:
        redacted = redact(item)
        counts.update(redacted.counts)
        return redacted.text

    def named(item: str | float, name: str | None) -> str | None:
        kind = None if name is None else _named_secret(name, str(item))
        if kind not in kinds:
            return None
        counts[kind] += 1
        return PLACEHOLDER.format(kind=kind)

    def walk(item: Any, name: str | None = None) -> Any:
        if isinstance(item, str):
            # A secret the text states itself ("PIN: 0382") is redacted where it stands.
            said = text(item)
            if said != item:
                return said
            return named(item, name) or item
        if isinstance(item, int | float) and not isinstance(item, bool):
            return named(item, name) or item
        if isinstance(item, dict):
            walked: dict[str, Any] = {}
            for key, child in item.items():
                safe_key = text(key)
                while safe_key in walked:  # two keys redacted alike: both kept
                    safe_key += "'"
                walked[safe_key] = walk(child, key)
            return walked
        if isinstance(item, list):
            return [walk(child, name) for child in item]
        return item

    return walk(value), counts


SECRET_NAME = re.compile(
    rf"(?:{KEY_LABELS}|{SSN_LABELS}|{ID_LABELS}|{PIN_LABELS}|{PASSWORD_LABELS}|token)", re.I
)


def _named_secret(name: str, value: str) -> str | None:
    """The kind of secret a JSON key names its value as ("password", "wifi_password", "apiKey",
    "door-code"), if the value can be one (secret_kind)."""
    if PLACEHOLDER_PATTERN.fullmatch(value):
        return None
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    words = re.sub(r"[\s_.-]+", " ", words).strip()
    if not SECRET_NAME.fullmatch(words):
        return None
    return secret_kind(words, value.strip())
