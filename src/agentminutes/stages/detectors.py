"""Secret detectors: what the ``redact`` stage looks for, and how it finds it fast.

Each :class:`Detector` is a regular expression for one kind of secret, the
literal *anchors* every match contains, and a check that rejects look-alikes
(placeholders, variable references, identifiers). The set in
:data:`DETECTORS` covers the credentials that turn up in agent transcripts:
provider API keys, source-host and chat tokens, cloud access keys, JWTs,
private keys, ``Authorization`` headers, passwords in URLs, and high-entropy
values assigned to secret-looking names (``*_KEY``, ``*_TOKEN``,
``password`` …).

Speed comes from the anchors. Python's regular expression engine tries a
large alternation at every position, a few megabytes a second; a pattern that
starts with a literal is scanned for at memchr speed. So every anchor starts
with a character that is rare in prose and code (``k`` of ``sk-``, ``J`` of
``eyJ``, ``@`` of a URL's credentials …), there is one *gate* pattern per
anchor character (``k(?:-|_live_|ey=…)``), and a detector's own expression is
matched only where its match would start for a hit. Matches never start
mid-token: every token pattern is fenced by characters that cannot continue
it, so base64 blobs, hashes and ids that merely contain an anchor are left alone.

:class:`DetectorSet` compiles a set twice: over ``str`` (message text) and
over ``bytes`` (the JSON-escaped bytes of verbatim payloads, and a batch's
texts joined). Text is often JSON itself, so both take a newline written as
``\\n`` and escaped quotes.

User patterns (``--redact-pattern``, the config file) have no anchors; each
is a full pass over every string, so they cost in proportion.
"""

from __future__ import annotations

import base64
import bisect
import math
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from agentminutes.errors import OptionError, UsageError
from agentminutes.stages.prefilter import pattern_of

__all__ = (
    "DETECTORS",
    "Detector",
    "DetectorSet",
    "Finding",
    "load_config",
    "user_detector",
)

AnyStr = TypeVar("AnyStr", str, bytes)

#: Placeholders in the pattern sources. Text is often JSON itself (a tool printed a JSON
#: file): there, as in the escaped bytes of a verbatim payload, a newline before a token
#: reads as ``\\n`` and a quote may be escaped, so both modes take both forms.
_PARTS: Final = {
    # A token does not start right after another token character (base64 and ids included)…
    "L": r"(?:(?<![A-Za-z0-9_+/-])|(?<=\\[nrtbf]))",
    # … nor go on into one.
    "R": r"(?![A-Za-z0-9_+/-])",
    # The same fences for tokens of letters and digits only (an AWS key id after "=" or "_").
    "LA": r"(?:(?<![A-Za-z0-9])|(?<=\\[nrtbf]))",
    "RA": r"(?![A-Za-z0-9])",
    # An optional quote around a name or value.
    "Q": r"""(?:\\?["'`])?""",
    "SL": r"\\?/",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found: where it is, what found it, and the span that is replaced."""

    start: int
    end: int
    detector: str
    rank: int


@dataclass(frozen=True)
class Detector:
    """One kind of secret.

    *pattern* is a regular expression (``{L}``/``{R}`` fence a token, ``{Q}`` is
    an optional quote, ``{SL}`` a slash); its group ``secret``, if it has one,
    is the part replaced, else the whole match. Every match contains one of
    *anchors* (literals whose first character is rare in text) and starts
    *back* characters before it, or where *locate* says (for matches whose
    start varies: a name before an ``=``, a URL's scheme before its ``@``);
    it ends at most *ahead* characters after the anchor. *check* gets the
    matched secret and the match's groups and may reject it. A detector
    without anchors (a user's pattern) is searched for in every string.
    """

    name: str
    description: str
    pattern: str
    anchors: tuple[str, ...] = ()
    back: int = 0
    ahead: int = 512
    check: Callable[[str, dict[str, str | None]], bool] | None = None
    locate: Callable[[Any, int, int], int] | None = None
    #: What a gate hit needs after its anchor, and around it by lookarounds (a regex over bytes
    #: and text alike): only what the detector's own pattern requires, so no secret is dropped.
    anchor_suffix: str = ""
    flags: int = 0
    #: A looser pattern for the JSON-escaped bytes of verbatim payloads, where the
    #: text pattern cannot see the value whole (a private key's escaped newlines).
    bytes_pattern: str = ""
    #: An RE2 pattern (no lookarounds: ``^`` is the start of the string searched) found in
    #: every string in which this detector's pattern (its bytes pattern, if it has one)
    #: matches for a gate hit: what the gate and the pattern both need around the anchor,
    #: lookarounds dropped, bounded repeats opened (RE2 builds a state per repetition)
    #: and ``\\s`` spelled out (RE2's has no ``\\v``). Empty: the anchors alone, which is
    #: as loose as a prefilter can be. See :mod:`agentminutes.stages.prefilter`.
    prefilter: str = ""


#: What is around the ``k-`` of every ``sk-`` key the detectors below know: an ``s``
#: that starts a token before it (``{L}``) and at least eight key characters after. Each
#: detector's own pattern asks for more, so the gate drops no key; it drops the ``k-`` of
#: words (``deepseek-v4``, ``task-``, ``back-``), which were hits to try one by one.
_SK_GATE: Final = r"(?:(?<![A-Za-z0-9_+/-]sk-)(?<=sk-)|(?<=\\[nrtbf]sk-))(?=[A-Za-z0-9_-]{8})"
#: The gate above without lookarounds, for :attr:`Detector.prefilter`: the ``s`` at a
#: string's start, after a character no token holds, or after an escape.
_SK_PREFILTER: Final = r"(?:^|[^A-Za-z0-9_+/-]|\\[nrtbf])sk-[A-Za-z0-9_-]{8}"


# -- checks: what makes a look-alike not a secret -------------------------------------------------

#: Values that stand for a secret rather than being one (lowercased substrings).
_PLACEHOLDER_PARTS: Final = (
    "${",
    "$(",
    "{{",
    "}}",
    "...",
    "…",
    "***",
    "xxxx",
    "<",
    ">",
    "your",
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "redacted",
    "dummy",
    "sample",
    "fake",
    "insert",
    "replace",
    "process.env",
    "environ",
    "getenv",
    "secrets.",
)
_PLACEHOLDER_STARTS: Final = ("$", "%", "{", "[", "(", "@", "&", "*", "#", ":", "=", "/", "~", ".")
_SEGMENT: Final = r"(?:[a-z]+|[A-Z]+|[A-Z][a-z]+)(?:[A-Z][a-z]{2,})*[0-9]{0,4}"
#: Values that are names in code, not data: ``get_token``, ``self.api_key``, ``storageKey``,
#: ``br_skill_library_v2``, ``path/to/key.json`` (random tokens mix case and digits throughout).
_CODE_LIKE: Final = re.compile(
    rf"_*{_SEGMENT}(?:[_./:-]+{_SEGMENT})*(?:\(\))?|[a-z]{{2,}}(?:[A-Z][a-z]{{2,}})*[0-9]{{0,4}}"
)
#: Code around a value: a variable (``$FOO``, ``${x}``), a scope (``App::``), a member (``->``).
_CODE_PARTS: Final = re.compile(r"\$[A-Za-z_{(]|::|->|\(\)")
_FILE_NAME: Final = re.compile(
    r".*\.(?:json|pem|key|p12|pfx|txt|ya?ml|env|crt|cer|der|jks|ini|cfg|conf|toml|js|ts|py|sh)",
    re.IGNORECASE,
)
_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def entropy(value: str) -> float:
    """Shannon entropy of *value* in bits per character."""
    n = len(value)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _classes(value: str) -> int:
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )


def is_placeholder(value: str) -> bool:
    """Whether *value* stands for a secret (a variable, a template, an example) instead of being one."""
    low = value.lower()
    return (
        value.startswith((*_PLACEHOLDER_STARTS, "[REDACTED"))
        or any(p in low for p in _PLACEHOLDER_PARTS)
        or len(set(low)) <= 2
    )


def random_looking(value: str, *, min_len: int = 16, min_entropy: float = 3.0) -> bool:
    """Whether *value* looks generated rather than written: long, varied, not a word or a name."""
    if len(value) < min_len or is_placeholder(value) or any(c.isspace() for c in value):
        return False
    if value.isdigit() or value.lower() in ("true", "false", "null", "none", "undefined"):
        return False
    if written_by_hand(value):
        return False
    return entropy(value) >= min_entropy and _classes(value) >= 2


def written_by_hand(value: str) -> bool:
    """Whether *value* reads as code or a name (an identifier, a path, a file) rather than data."""
    return bool(
        _CODE_LIKE.fullmatch(value) or _CODE_PARTS.search(value) or _FILE_NAME.fullmatch(value)
    )


#: Parts of a documented token that is no token (``ghp_XXXX…``, ``sk-your-key-here``).
_TOKEN_PLACEHOLDERS: Final = (
    "xxxx",
    "your",
    "example",
    "placeholder",
    "redacted",
    "dummy",
    "<",
    ">",
    "...",
    "***",
    "${",
    "{{",
)


def _token(min_entropy: float = 3.0) -> Callable[[str, dict[str, str | None]], bool]:
    """A check for prefixed tokens: the body must look random (docs write ``ghp_XXXX…``)."""

    def check(secret: str, groups: dict[str, str | None]) -> bool:
        low = secret.lower()
        return not any(p in low for p in _TOKEN_PLACEHOLDERS) and entropy(secret) >= min_entropy

    return check


#: Words that, last in a name, make its value a secret (``GITHUB_TOKEN``, ``client_secret``).
_SECRET_WORDS: Final = frozenset(
    (
        "token",
        "secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "credential",
        "credentials",
        "apikey",
        "secretkey",
        "privatekey",
        "accesskey",
    )
)
#: Words before ``key`` that make it a secret's name (``API_KEY``, ``private_key``).
_KEY_QUALIFIERS: Final = frozenset(
    (
        "api",
        "secret",
        "private",
        "access",
        "auth",
        "client",
        "master",
        "signing",
        "encryption",
        "license",
        "service",
        "account",
        "app",
        "webhook",
        "sas",
        "subscription",
        "admin",
        "deploy",
        "consumer",
        "hmac",
        "jwt",
        "crypt",
        "cipher",
        "aes",
        "rsa",
        "x",
    )
)
#: Words before ``token`` that name no credential (``max_tokens``, ``next_page_token``).
_NOT_SECRET_BEFORE: Final = frozenset(
    (
        "page",
        "next",
        "continuation",
        "cancel",
        "cancellation",
        "max",
        "sync",
        "resume",
        "pagination",
        "dedup",
        "idempotency",
        # Tokenizers' special tokens: eos_token, pad_token …
        "bos",
        "eos",
        "pad",
        "unk",
        "sep",
        "cls",
        "mask",
        "special",
    )
)


def secret_name(name: str) -> bool:
    """Whether *name* (an env var, key, field or header) names a secret."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words:
        return False
    last = words[-1]
    before = words[-2] if len(words) > 1 else ""
    if last in ("pass", "pwd"):
        # Alone these are test verdicts ("PASS: test_x") and the working directory.
        return bool(before) and before not in _NOT_SECRET_BEFORE
    if last in _SECRET_WORDS:
        return before not in _NOT_SECRET_BEFORE
    if last == "key" and before:
        # UPPER_SNAKE env vars ending in _KEY are secrets by convention; other names need a qualifier.
        return before in _KEY_QUALIFIERS or (name.isupper() and "_" in name)
    return False


def _assignment(secret: str, groups: dict[str, str | None]) -> bool:
    name = groups.get("name") or ""
    if not secret_name(name):
        return False
    words = _WORDS.findall(name)
    password = bool(words) and words[-1].lower() in ("password", "passwd", "pwd", "pass")
    if password:
        # Passwords are short and written by people: long enough, more than letters, no name.
        return (
            len(secret) >= 8
            and not is_placeholder(secret)
            and not any(c.isspace() for c in secret)
            and _classes(secret) >= 2
            and not written_by_hand(secret)
            and "://" not in secret
        )
    return random_looking(secret) and "://" not in secret


def _bearer(secret: str, groups: dict[str, str | None]) -> bool:
    return random_looking(secret, min_len=16) and any(c.isdigit() for c in secret)


def _basic(secret: str, groups: dict[str, str | None]) -> bool:
    # Basic credentials are base64 of "user:password"; prose ("Basic usage") is not.
    try:
        decoded = base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
    except ValueError:
        return False
    return b":" in decoded and decoded.isascii() and decoded.decode().isprintable()


def _url_password(secret: str, groups: dict[str, str | None]) -> bool:
    low = secret.lower()
    if is_placeholder(secret) or low in ("password", "pass", "pwd", "passwd", "secret", "token"):
        return False
    return not (secret.isdigit() and len(secret) <= 5)  # host:port, not user:password


def _private_key(secret: str, groups: dict[str, str | None]) -> bool:
    # Documentation shows the frame with "..." inside; a key has a body.
    body = re.sub(r"-----[^-]*-----", "", secret)
    return sum(c.isalnum() or c in "+/" for c in body) >= 40


# -- where a match with a variable start starts -------------------------------------------------

_NAME_CHARS: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NAME_BYTES: Final = frozenset(map(ord, _NAME_CHARS))
_SCHEME_CHARS: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-"
)
_SCHEME_BYTES: Final = frozenset(map(ord, _SCHEME_CHARS))
_DIGITS: Final = frozenset("0123456789")
_DIGIT_BYTES: Final = frozenset(map(ord, _DIGITS))


def _run_start(value: Any, p: int, lo: int, limit: int, chars: frozenset[Any]) -> int:
    """Where the run of *chars* that ends right before *p* starts (at most *limit* long)."""
    i = p
    stop = max(lo, p - limit)
    while i > stop and value[i - 1] in chars:
        i -= 1
    return i


def _name_start(value: Any, p: int, lo: int) -> int:
    """The start of the name the anchor at *p* is part of (``MY_API_KEY`` for ``KEY``)."""
    chars = _NAME_CHARS if isinstance(value, str) else _NAME_BYTES
    return _run_start(value, p, lo, 80, chars)


def _scheme_start(value: Any, p: int, lo: int) -> int:
    """The start of the URL whose credentials end at the ``@`` at *p* (or -1)."""
    floor = max(lo, p - 440)
    if isinstance(value, str):
        i = value.rfind("://", floor, p)
        chars: frozenset[Any] = _SCHEME_CHARS
    else:
        i = max(value.rfind(b"://", floor, p), value.rfind(rb":\/\/", floor, p))
        chars = _SCHEME_BYTES
    if i < 0:
        return -1
    start = _run_start(value, i, floor, 21, chars)
    return start if start < i else -1


def _digits_before_colon(value: Any, p: int, lo: int) -> int:
    """The start of the digits before the ``:`` before *p* (a Telegram bot id), or -1."""
    colon = ":" if isinstance(value, str) else 0x3A
    if p - 1 < lo or value[p - 1] != colon:
        return -1
    start = _run_start(value, p - 1, lo, 10, _DIGITS if isinstance(value, str) else _DIGIT_BYTES)
    return start if start < p - 1 else -1


# -- the set --------------------------------------------------------------------------------------

_AWS_PREFIXES: Final = (
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AGPA",
    "AIDA",
    "AIPA",
    "ANPA",
    "ANVA",
    "APKA",
    "AROA",
)


def _assignment_prefilter(names: str, least: int) -> str:
    """The RE2 prefilter of a secret assignment to one of *names*: the operator, then at
    least *least* of the value's characters (what ``_assignment`` asks of it)."""
    return (
        names + r"""(?:\\?["'`])?[ \t]*(?::=|=>|[:=])[\t\n\v\f\r ]*(?:\\?["'`])?"""
        r"[A-Za-z0-9!#$%&*+./:=?@^_|~-]{" + str(least) + "}"
    )


def _sk_key(
    name: str,
    description: str,
    pattern: str,
    *,
    ahead: int = 310,
    check: Callable[[str, dict[str, str | None]], bool] | None = None,
) -> Detector:
    """A detector of the ``sk-`` family: found through the ``k-`` anchor behind the
    ``sk-`` gate and prefilter, the match starting at the ``s``; a random-looking body
    (:func:`_token`) unless *check* says more."""
    return Detector(
        name,
        description,
        pattern,
        anchors=("k-",),
        anchor_suffix=_SK_GATE,
        prefilter=_SK_PREFILTER,
        back=1,
        ahead=ahead,
        check=check or _token(),
    )


#: The detectors of the core install, most specific first (an overlap goes to the earlier one).
DETECTORS: Final[tuple[Detector, ...]] = (
    Detector(
        "private-key",
        "a PEM or PGP private key block (the whole block)",
        r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:(?!-----)[\s\S]){0,16000}-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
        r"|[A-Za-z0-9+/=\s]*)",
        anchors=("BEGIN",),
        back=5,
        ahead=16200,
        check=_private_key,
        bytes_pattern=r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----",
        prefilter=r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY",
    ),
    _sk_key(
        "anthropic-key",
        "an Anthropic API key or OAuth token (sk-ant-…)",
        r"{L}sk-ant-[A-Za-z0-9_-]{20,300}{R}",
    ),
    _sk_key(
        "openai-key",
        "an OpenAI API key (sk-proj-…, sk-svcacct-…, sk-admin-…, legacy sk-…T3BlbkFJ…)",
        r"{L}sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,300}"
        r"|[A-Za-z0-9_-]{8,100}T3BlbkFJ[A-Za-z0-9_-]{8,100}){R}",
    ),
    _sk_key(
        "sk-api-key",
        "another provider's sk- secret key (DeepSeek, OpenRouter, Moonshot, …)",
        r"{L}sk-(?:or-v1-)?[A-Za-z0-9]{32,200}{R}",
        ahead=210,
        check=lambda s, g: _token()(s, g) and any(c.isdigit() for c in s),
    ),
    Detector(
        "stripe-key",
        "a Stripe secret or restricted key, or a webhook signing secret",
        r"{L}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,200}{R}",
        anchors=("k_live_", "k_test_"),
        back=1,
        ahead=210,
        check=_token(),
    ),
    Detector(
        "stripe-webhook-secret",
        "a Stripe webhook signing secret (whsec_…)",
        r"{L}whsec_[A-Za-z0-9]{24,200}{R}",
        anchors=("whsec_",),
        ahead=210,
        check=_token(),
    ),
    Detector(
        "google-api-key",
        "a Google API key (AIza…)",
        r"{L}AIza[0-9A-Za-z_-]{35}{R}",
        anchors=("AIza",),
        # The key's 35 characters: not the "AIza..." of an example .env file.
        anchor_suffix=r"(?=[0-9A-Za-z_-]{35})",
        prefilter=r"AIza[0-9A-Za-z_-]{35}",
        ahead=40,
        check=_token(),
    ),
    Detector(
        "google-oauth",
        "a Google OAuth access token (ya29.…) or client secret (GOCSPX-…)",
        r"{L}(?:ya29\.[0-9A-Za-z_-]{20,2000}|GOCSPX-[0-9A-Za-z_-]{20,100}){R}",
        anchors=("ya29.", "GOCSPX-"),
        ahead=2010,
        check=_token(),
    ),
    Detector(
        "github-token",
        "a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)",
        r"{L}(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,251}){R}",
        anchors=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        ahead=260,
        check=_token(),
    ),
    Detector(
        "gitlab-token",
        "a GitLab token (glpat-, gldt-, glrt-, glptt- …)",
        r"{L}gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent|oas|ffct)-[A-Za-z0-9_-]{20,250}{R}",
        anchors=tuple(
            f"gl{k}-"
            for k in ("pat", "dt", "rt", "ptt", "soat", "cbt", "ft", "imt", "agent", "oas", "ffct")
        ),
        ahead=260,
        check=_token(),
    ),
    Detector(
        "slack-token",
        "a Slack token (xoxb-, xoxp-, xapp- …)",
        r"{L}(?:xox[abposre]-[A-Za-z0-9-]{10,250}|xapp-[0-9]-[A-Za-z0-9-]{10,250}){R}",
        anchors=("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"),
        ahead=260,
        check=_token(2.5),
    ),
    Detector(
        "slack-webhook",
        "a Slack incoming-webhook URL",
        r"https:{SL}{SL}hooks\.slack\.com{SL}services{SL}T[A-Z0-9]{6,20}{SL}B[A-Z0-9]{6,20}{SL}[A-Za-z0-9]{16,40}{R}",
        anchors=("k.com",),
        prefilter=r"hooks\.slack\.com\\?/services\\?/T",
        back=18,
        ahead=120,
    ),
    Detector(
        "aws-access-key",
        "an AWS access key id (AKIA…, ASIA…)",
        r"{LA}(?:" + "|".join(_AWS_PREFIXES) + r")[A-Z0-9]{16}{RA}",
        anchors=_AWS_PREFIXES,
        ahead=20,
        check=_token(2.5),
    ),
    Detector(
        "pypi-token",
        "a PyPI upload token (pypi-AgEIcHlwaS5vcmc…)",
        r"{L}pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,300}{R}",
        anchors=("AgEIcHlwaS5vcmc",),
        back=5,
        ahead=320,
    ),
    Detector(
        "sendgrid-key",
        "a SendGrid API key (SG.….…)",
        r"{L}SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}{R}",
        anchors=("G.",),
        prefilter=r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        back=1,
        ahead=70,
        check=_token(),
    ),
    Detector(
        "telegram-bot-token",
        "a Telegram bot token (digits:AA…)",
        r"{L}[0-9]{8,10}:AA[A-Za-z0-9_-]{33}{R}",
        anchors=("AA",),
        # Digits and a colon before, 33 token characters after, as the pattern asks: "AA"
        # alone is in every base64 blob (Codex's encrypted reasoning holds thousands).
        anchor_suffix=r"(?<=[0-9]:AA)(?=[A-Za-z0-9_-]{33})",
        prefilter=r"[0-9]:AA[A-Za-z0-9_-]{33}",
        locate=_digits_before_colon,
        ahead=40,
        check=_token(),
    ),
    Detector(
        "jwt",
        "a JSON Web Token (eyJ….eyJ….…)",
        r"{L}eyJ[A-Za-z0-9_-]{8,4000}\.ey[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{8,2000}{R}",
        anchors=("yJ",),
        prefilter=r"eyJ[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*\.ey[A-Za-z0-9_-]{8}[A-Za-z0-9_-]*"
        r"\.[A-Za-z0-9_-]{8}",
        back=1,
        ahead=14100,
    ),
    Detector(
        "basic-auth",
        "the credentials of an Authorization: Basic header",
        r"Basic\s+(?P<secret>[A-Za-z0-9+/]{8,2000}={0,2})(?![A-Za-z0-9+/=])",
        anchors=("Basic ",),
        prefilter=r"Basic [\t\n\v\f\r ]*[A-Za-z0-9+/]{8}",
        ahead=2010,
        check=_basic,
    ),
    Detector(
        "bearer-token",
        "the token of an Authorization: Bearer header",
        r"(?:Bearer|bearer|BEARER)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,4000})(?![A-Za-z0-9._~+/=-])",
        anchors=("Bearer", "bearer", "BEARER"),
        prefilter=r"(?:Bearer|bearer|BEARER)[\t\n\v\f\r ]+[A-Za-z0-9._~+/=-]{16}",
        ahead=4020,
        check=_bearer,
    ),
    Detector(
        "url-password",
        "the password of a URL with credentials (scheme://user:password@host)",
        r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,20}:{SL}{SL}[^\s:/?#@\"'`<>\\]{0,200}"
        r":(?P<secret>[^\s/?#@\"'`<>\\]{1,200})@",
        anchors=("@",),
        # The two characters before "@" end the password: neither is one a password cannot
        # hold. The "@" of a scoped package (node_modules/@types), a decorator after a line
        # break (\n@) or a quoted handle ("@me") is no hit to walk back 440 bytes from.
        anchor_suffix=r"""(?<=[^\s/?#@"'`<>\\]{2}@)""",
        # A scheme, "://", a user and a password (no lookbehind; the repeats opened).
        prefilter=r"""[A-Za-z0-9+.-]{2}:(?:\\?/){2}[^\t\n\v\f\r :/?#@"'`<>\\]*"""
        r""":[^\t\n\v\f\r /?#@"'`<>\\]+@""",
        locate=_scheme_start,
        ahead=1,
        check=_url_password,
    ),
    Detector(
        "secret-assignment",
        'a random-looking value assigned to a secret\'s name (API_KEY=…, password: …, "token": …)',
        # Not after ":" either: the name in a marker ([REDACTED:url-password:…]) is none.
        r"(?<![A-Za-z0-9_.:-])(?P<name>[A-Za-z0-9_.-]{1,80}){Q}\s*(?::=|=>|[:=])\s*{Q}"
        r"(?P<secret>[A-Za-z0-9!#$%&*+./:=?@^_|~-]{8,256})(?![A-Za-z0-9!#$%&*+./:=?@^_|~(-])",
        anchors=(
            "key",
            "Key",
            "KEY",
            "ken",
            "KEN",
            "cret",
            "CRET",
            "credential",
            "credentials",
            "Credential",
            "Credentials",
            "CREDENTIAL",
            "CREDENTIALS",
            "word",
            "wd",
            "PASS",
            "PASSWORD",
            "PASSWD",
            "PWD",
        ),
        locate=_name_start,
        # A secret's name is followed by its assignment: the gate looks for both.
        # Not "cwd", the working directory (every Claude Code record names it): a name
        # ending in it is never a secret's, and its hits were most of this gate's.
        # And, ahead, the start of the value the pattern asks for: not "if key:", "key)".
        anchor_suffix=r"""(?<![cC]wd)(?:\\?["'`])?[ \t]*(?::=|=>|[:=])"""
        r"""(?=\s*(?:\\?["'`])?[A-Za-z0-9!#$%&*+./:=?@^_|~-]{8})""",
        # The anchors, "wd" not after c or C, then the suffix (its lookbehind decides only "wd"),
        # and the value's first characters, as many as the check asks for: eight after a
        # password's name (the only names that end in these anchors), sixteen after others.
        prefilter=_assignment_prefilter(r"""(?:word|(?:^|[^cC])wd|PASS(?:WORD|WD)?|PWD)""", 8)
        + "|"
        + _assignment_prefilter(
            r"""(?:ken|KEN|cret|CRET|[Cc]redentials?|CREDENTIALS?|[kK]ey|KEY)""", 16
        ),
        ahead=330,
        check=_assignment,
    ),
)


def user_detector(pattern: str, name: str = "user-pattern") -> Detector:
    """A detector for a user's regular expression; its group ``secret``, if any, is what is replaced.

    Raises:
        UsageError: the expression does not compile, or matches the empty string.
    """
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise OptionError(f"--redact-pattern {pattern!r}: {exc}") from None
    if compiled.fullmatch(""):
        raise OptionError(f"--redact-pattern {pattern!r} matches the empty string")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", name):
        raise UsageError(f"redact pattern name {name!r}: use lowercase letters, digits and -")
    return Detector(name, f"the user's pattern {pattern}", pattern)


def load_config(path: str) -> tuple[list[Detector], set[str]]:
    """Read a redaction config file (TOML): user patterns, and detectors turned off.

    ::

        [[redact.pattern]]
        name = "acme-key"                  # names the marker: [REDACTED:acme-key:…]
        regex = 'ACME-[0-9A-F]{24}'

        [redact]
        disable = ["secret-assignment"]    # built-in detectors not to run

    Raises:
        UsageError: the file cannot be read, is not TOML, or names no known detector.
    """
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except OSError as exc:
        raise UsageError(f"--redact-config {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--redact-config {path}: not TOML: {exc}") from None
    section = doc.get("redact", {})
    if not isinstance(section, dict):
        raise UsageError(f"--redact-config {path}: [redact] must be a table")
    unknown = set(section) - {"pattern", "disable"}
    if unknown:
        raise UsageError(f"--redact-config {path}: unknown keys {', '.join(sorted(unknown))}")
    detectors = []
    for entry in section.get("pattern", []):
        if not isinstance(entry, dict) or not isinstance(entry.get("regex"), str):
            raise UsageError(f"--redact-config {path}: each [[redact.pattern]] needs a regex")
        detectors.append(user_detector(entry["regex"], str(entry.get("name", "user-pattern"))))
    disable = section.get("disable", [])
    known = {d.name for d in DETECTORS}
    if not isinstance(disable, list) or not set(disable) <= known:
        raise UsageError(
            f"--redact-config {path}: disable lists built-in detectors: {', '.join(sorted(known))}"
        )
    return detectors, set(disable)


# -- compiled ---------------------------------------------------------------------------------


@dataclass
class _Compiled(Generic[AnyStr]):
    detector: Detector
    rank: int
    regex: re.Pattern[AnyStr]
    has_secret: bool
    #: ``None`` for a loose bytes pattern: the text pass after it checks what it finds.
    check: Callable[[str, dict[str, str | None]], bool] | None


@dataclass
class _Mode(Generic[AnyStr]):
    """A detector set compiled for one kind of string (text, or JSON-escaped bytes)."""

    #: One pattern per first character of the anchors: ``k(?:-|ey|en…)``. A pattern that
    #: starts with a literal is scanned for at memchr speed; one alternation of all
    #: anchors would be tried at every position, ten times slower.
    gates: list[re.Pattern[AnyStr]]
    by_anchor: dict[AnyStr, list[_Compiled[AnyStr]]]
    #: Anchors that a gate hit holds followed by more (their detector's suffix), by first character.
    suffixed: dict[AnyStr, list[AnyStr]] = field(default_factory=dict)
    unanchored: list[_Compiled[AnyStr]] = field(default_factory=list)

    def detectors_at(self, hit: AnyStr) -> list[_Compiled[AnyStr]]:
        """The detectors to try for a gate hit's text."""
        found = self.by_anchor.get(hit)
        if found is not None:
            return found
        for anchor in self.suffixed.get(hit[:1], ()):
            if hit.startswith(anchor):
                return self.by_anchor[anchor]
        return []


def _fill(pattern: str, parts: dict[str, str]) -> str:
    out = pattern
    for key, value in parts.items():
        out = out.replace("{" + key + "}", value)
    return out


def _gates(anchors: dict[str, str]) -> list[str]:
    """One pattern per first character of *anchors* (anchor → the suffix that must follow it)."""
    by_first: dict[str, list[str]] = {}
    # Longest first, so that an anchor that extends another is reported whole.
    for a in sorted(anchors, key=lambda a: (-len(a), a)):
        by_first.setdefault(a[0], []).append(re.escape(a[1:]) + anchors[a])
    return [
        re.escape(first) + "(?:" + "|".join(group) + ")"
        for first, group in sorted(by_first.items())
    ]


class DetectorSet:
    """Detectors compiled for searching: fast gates over the anchors, each detector in a window.

    :meth:`find` returns the secrets in one string (text or JSON bytes);
    :meth:`flagged` tells which parts of a joined blob hold one, so a batch of
    events is scanned in one go.
    """

    def __init__(self, detectors: Sequence[Detector]) -> None:
        # Names may repeat (several user patterns are all "user-pattern"): a marker names a kind.
        self.detectors = tuple(detectors)
        self.text: _Mode[str] = self._compile(str)
        self.bytes: _Mode[bytes] = self._compile(bytes)
        prefilters = []
        for d in self.detectors:
            if not d.anchors:
                continue  # scanned whole by Python anyway
            if _LOOKAROUND.search(d.prefilter):
                raise ValueError(f"the prefilter of {d.name!r} has a lookaround")
            prefilters.append(d.prefilter or "|".join(re.escape(a) for a in d.anchors))
        #: Every anchored detector's :attr:`Detector.prefilter`, as one RE2 alternation.
        self.prefilter = pattern_of(prefilters)

    def _compile(self, kind: type[str] | type[bytes]) -> _Mode[Any]:
        as_bytes = kind is bytes

        def literal(text: str) -> Any:
            return text.encode() if as_bytes else text

        by_anchor: dict[Any, list[_Compiled[Any]]] = {}
        suffix_of: dict[str, str] = {}
        unanchored: list[_Compiled[Any]] = []
        for rank, d in enumerate(self.detectors):
            loose = as_bytes and bool(d.bytes_pattern)
            regex: re.Pattern[Any]
            if as_bytes:
                try:
                    regex = re.compile(
                        _fill(d.bytes_pattern or d.pattern, _PARTS).encode(), d.flags
                    )
                except re.error:
                    # A user pattern only text can take (a non-ASCII class): it gates on
                    # whatever could hold it; the text pass decides.
                    regex = re.compile(rb"[\x80-\xff]")
                    loose = True
            else:
                regex = re.compile(_fill(d.pattern, _PARTS), d.flags)
            check = None if loose else d.check
            compiled = _Compiled(d, rank, regex, "secret" in regex.groupindex, check)
            if not d.anchors:
                unanchored.append(compiled)
            for a in d.anchors:
                if suffix_of.setdefault(a, d.anchor_suffix) != d.anchor_suffix:
                    raise ValueError(f"anchor {a!r} is used with two suffixes")
                by_anchor.setdefault(literal(a), []).append(compiled)
        gates = [re.compile(literal(g)) for g in _gates(suffix_of)]
        suffixed: dict[Any, list[Any]] = {}
        for a in sorted(suffix_of, key=lambda a: (-len(a), a)):
            if suffix_of[a]:
                suffixed.setdefault(literal(a[0]), []).append(literal(a))
        return _Mode(gates, by_anchor, suffixed, unanchored)

    def find(self, value: AnyStr) -> list[Finding]:
        """The secrets in *value*, in order and not overlapping (the earlier detector wins)."""
        mode: _Mode[Any] = self.text if isinstance(value, str) else self.bytes
        found: list[Finding] = []
        end = len(value)
        for gate in mode.gates:
            for hit in gate.finditer(value):
                p = hit.start()
                for c in mode.detectors_at(hit.group()):
                    self._window(c, value, p, 0, end, found)
        for c in mode.unanchored:
            for m in c.regex.finditer(value):
                self._keep(c, m, found)
        return _resolve(found) if found else found

    def flagged(
        self,
        blob: bytes,
        starts: Sequence[int],
        ends: Sequence[int],
        candidates: Sequence[int] | None = None,
    ) -> set[int]:
        """The parts of *blob* (part *i* is ``blob[starts[i]:ends[i]]``) that may hold a secret.

        Parts are JSON payloads or UTF-8 text, joined by a NUL byte (no token
        goes on across one). A part is flagged when a detector confirms a
        secret in it, so flagged parts are the ones to redact. *candidates*
        (ascending) are the only parts where a gate can hit, as
        :attr:`prefilter` finds them: the gates scan those alone.
        """
        mode = self.bytes
        flagged: set[int] = set()
        found: list[Finding] = []
        for lo, hi in _ranges(starts, ends, candidates, len(blob)):
            for gate in mode.gates:
                for hit in gate.finditer(blob, lo, hi):
                    p = hit.start()
                    i = bisect.bisect_right(ends, p)
                    if i in flagged or i >= len(ends):
                        continue
                    for c in mode.detectors_at(hit.group()):
                        if self._window(c, blob, p, starts[i], ends[i], found):
                            flagged.add(i)
                            break
        for c in mode.unanchored:
            for m in c.regex.finditer(blob):
                i = bisect.bisect_right(ends, m.start())
                if i < len(ends) and i not in flagged and self._keep(c, m, found):
                    flagged.add(i)
        return flagged

    def _window(
        self,
        c: _Compiled[AnyStr],
        value: AnyStr,
        p: int,
        lo: int,
        hi: int,
        found: list[Finding],
    ) -> bool:
        """Match *c* where its match would start for the anchor at *p* (within ``[lo, hi)``)."""
        d = c.detector
        if d.locate is not None:
            start = d.locate(value, p, lo)
            if start < 0:
                return False
        else:
            start = p - d.back
            if start < lo:
                return False
        stop = p + d.ahead + 16
        m = c.regex.match(value, start, stop if stop < hi else hi)
        return m is not None and p < m.end() and self._keep(c, m, found)

    @staticmethod
    def _keep(c: _Compiled[AnyStr], m: re.Match[AnyStr], found: list[Finding]) -> bool:
        start, end = m.span("secret") if c.has_secret else m.span()
        if start < 0 or end <= start:
            return False
        check = c.check
        if check is not None:
            raw = m.group("secret") if c.has_secret else m.group()
            secret = raw.decode("latin-1") if isinstance(raw, bytes) else raw
            groups = {
                k: (v.decode("latin-1") if isinstance(v, bytes) else v)
                for k, v in m.groupdict().items()
            }
            if not check(secret, groups):
                return False
        found.append(Finding(start, end, c.detector.name, c.rank))
        return True


#: Candidate parts closer than this are scanned as one range (a gate's call costs more).
_RANGE_GAP: Final = 4096
_LOOKAROUND: Final = re.compile(r"\(\?<?[=!]")


def _ranges(
    starts: Sequence[int], ends: Sequence[int], candidates: Sequence[int] | None, size: int
) -> Iterator[tuple[int, int]]:
    """The spans of the blob the gates scan: all of it, or the candidate parts, nearby ones
    merged. A span keeps the NUL after its last part, so a lookahead sees what it saw in
    the whole blob; one before its start sees the bytes there, as ever."""
    if candidates is None:
        yield 0, size
        return
    lo = hi = -1
    for i in candidates:
        if lo >= 0 and starts[i] - hi > _RANGE_GAP:
            yield lo, hi
            lo = -1
        if lo < 0:
            lo = starts[i]
        hi = min(ends[i] + 1, size)
    if lo >= 0:
        yield lo, hi


def _resolve(found: list[Finding]) -> list[Finding]:
    """Keep non-overlapping findings: the earlier detector first, then the earlier start."""
    taken: list[Finding] = []
    for f in sorted(found, key=lambda f: (f.rank, f.start, -f.end)):
        if all(f.end <= t.start or f.start >= t.end for t in taken):
            taken.append(f)
    taken.sort(key=lambda f: f.start)
    return taken


def describe(detectors: Iterable[Detector] = DETECTORS) -> Iterator[str]:
    """One line per detector: its name and what it finds (for help and docs)."""
    for d in detectors:
        yield f"{d.name}: {d.description}"
