"""Planted secrets: real transcripts with a secret of every detector's kind in every text.

:func:`plant` copies a real fixture and appends, to every text-like string of
every record (prose, code, command lines, tool output — strings with a space
in them, JSON text inside strings included), one fresh secret of each kind in
the context it is found in (``export ACME_API_KEY=…``, ``Authorization:
Bearer …``, a URL with a password …). It also appends an unclassifiable
record holding them, which ``--permissive`` keeps as an ``unknown`` event.

Every secret is random (seeded), so it occurs nowhere else, and :class:`Plant`
knows exactly the span the redactor must replace, and so the marker it must
write for a given key: the test's expectation is the unredacted output with
each planted span replaced by its marker, equal as a JSON value.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"

#: Keys whose values are identity or structure, never text: left as they are.
_STRUCTURAL = frozenset(
    (
        "type",
        "id",
        "uuid",
        "parentUuid",
        "sessionId",
        "timestamp",
        "cwd",
        "version",
        "model",
        "signature",
        "encrypted_content",
        "encryptedContent",
        "reasoningOpaque",
        "call_id",
        "tool_use_id",
        "toolCallId",
        "name",
        "role",
        "requestId",
        "parentId",
        "interactionId",
        "gitBranch",
    )
)


def _rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """A random string of *alphabet* with a character of each of its classes (digit, lower, upper)."""
    classes = [f for f in (str.isdigit, str.islower, str.isupper) if any(f(c) for c in alphabet)]
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if all(any(f(c) for c in s) for f in classes):
            return s


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(
        json.dumps({"sub": _rand(rng, 12), "iat": rng.randrange(10**9, 2 * 10**9)}).encode()
    )
    return f"{head}.{body}.{_b64url(rng.randbytes(32))}"


def _pem(rng: random.Random) -> str:
    body = base64.b64encode(rng.randbytes(144)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{lines}\n-----END RSA PRIVATE KEY-----"


#: Each kind: the detector that must find it, and a maker of (text to plant, the span replaced).
KINDS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    "private-key": lambda r: ((k := _pem(r)), k),
    "anthropic-key": lambda r: (
        f"ANTHROPIC key sk-ant-api03-{(b := _rand(r, 93, URLSAFE))}AA",
        f"sk-ant-api03-{b}AA",
    ),
    "openai-key": lambda r: ((k := f"sk-proj-{_rand(r, 120, URLSAFE)}"), k),
    "sk-api-key": lambda r: ((k := f"sk-{_rand(r, 32, string.hexdigits[:16] + 'ABCDEF')}"), k),
    "stripe-key": lambda r: ((k := f"sk_live_{_rand(r, 24)}"), k),
    "stripe-webhook-secret": lambda r: ((k := f"whsec_{_rand(r, 32)}"), k),
    "google-api-key": lambda r: ((k := f"AIza{_rand(r, 35)}"), k),
    "google-oauth": lambda r: ((k := f"ya29.{_rand(r, 60)}-{_rand(r, 60, URLSAFE)}"), k),
    "github-token": lambda r: ((k := f"ghp_{_rand(r, 36)}"), k),
    "gitlab-token": lambda r: ((k := f"glpat-{_rand(r, 20)}"), k),
    "slack-token": lambda r: (
        (k := f"xoxb-{r.randrange(10**11, 10**12)}-{r.randrange(10**11, 10**12)}-{_rand(r, 24)}"),
        k,
    ),
    "slack-webhook": lambda r: (
        (
            k
            := f"https://hooks.slack.com/services/T{_rand(r, 8, string.ascii_uppercase + string.digits)}"
            f"/B{_rand(r, 8, string.ascii_uppercase + string.digits)}/{_rand(r, 24)}"
        ),
        k,
    ),
    "aws-access-key": lambda r: (
        (k := "AKIA" + _rand(r, 16, string.ascii_uppercase + string.digits)),
        k,
    ),
    "pypi-token": lambda r: (
        (k := f"pypi-AgEIcHlwaS5vcmc{_rand(r, 30)}-{_rand(r, 40, URLSAFE)}"),
        k,
    ),
    "sendgrid-key": lambda r: ((k := f"SG.{_rand(r, 22)}.{_rand(r, 43, URLSAFE)}"), k),
    "telegram-bot-token": lambda r: ((k := f"{r.randrange(10**9, 10**10)}:AA{_rand(r, 33)}"), k),
    "jwt": lambda r: ((k := _jwt(r)), k),
    "basic-auth": lambda r: (
        f"Authorization: Basic {(k := base64.b64encode(f'deploy:{_rand(r, 14)}'.encode()).decode())}",
        k,
    ),
    "bearer-token": lambda r: (
        f"curl -H 'Authorization: Bearer {(k := _rand(r, 40, URLSAFE))}'",
        k,
    ),
    "url-password": lambda r: (
        f"DATABASE_URL=postgres://app:{(k := _rand(r, 18))}@db.internal:5432/app",
        k,
    ),
    "secret-assignment": lambda r: (f"export ACME_API_KEY={(k := _rand(r, 32))}", k),
    "user-pattern": lambda r: ((k := f"ACME-{r.randrange(10**11, 10**12)}"), k),
}

#: The user pattern the tests pass (``--redact-pattern``), for the ``user-pattern`` kind.
USER_PATTERN = r"ACME-[0-9]{12}"
#: A run of letters and digits: a planted secret is known by its long runs.
_RUN = re.compile(r"[A-Za-z0-9]{12,}")


@dataclass
class Plant:
    """What was planted in one transcript: each secret span and the detector that must find it."""

    secrets: dict[str, str] = field(default_factory=dict)  # span -> detector
    rng: random.Random = field(default_factory=lambda: random.Random(16))
    #: How many strings were planted per place (record type and key path).
    places: dict[str, int] = field(default_factory=dict)
    #: Each secret's long runs of letters and digits (random: they occur nowhere else).
    cores: dict[str, str] = field(default_factory=dict)
    _shared: set[str] = field(default_factory=set)

    def snippet(self) -> str:
        """One fresh secret of every kind, one per line."""
        lines = []
        for detector, make in KINDS.items():
            text, span = make(self.rng)
            self.secrets[span] = detector
            runs = [run for run in _RUN.findall(span) if run not in self._shared]
            for run in runs:
                if run in self.cores:  # a fixed part (a JWT's header): it names no one secret
                    del self.cores[run]
                    self._shared.add(run)
                else:
                    self.cores[run] = span
            assert any(self.cores.get(run) == span for run in runs), f"{detector}: no unique run"
            lines.append(text)
        return "\n".join(lines)

    def expected(self, value: Any, key: bytes) -> Any:
        """*value* (unredacted JSON) as the redactor must write it: each span a marker."""
        if isinstance(value, dict):
            return {k: self.expected(v, key) for k, v in value.items()}
        if isinstance(value, list):
            return [self.expected(v, key) for v in value]
        if isinstance(value, str):
            for span in self.spans_in(value):
                detector = self.secrets[span]
                # Inside JSON text held in a string the span is escaped, and hashed as found.
                for form in (span, json.dumps(span)[1:-1]):
                    value = value.replace(form, marker(key, detector, form))
        return value

    def spans_in(self, text: str) -> set[str]:
        """The planted spans *text* holds (written as they are or escaped inside JSON text)."""
        found = set()
        for run in _RUN.findall(text):
            # Escaped JSON puts the letter of "\n" right before a token.
            span = self.cores.get(run) or self.cores.get(run[1:])
            if span is not None:
                found.add(span)
        return found

    def left_in(self, text: str) -> list[str]:
        """The detectors of planted spans still in *text* (what the redactor missed)."""
        return sorted({self.secrets[span] for span in self.spans_in(text)})


def marker(key: bytes, detector: str, secret: str) -> str:
    """The marker the redactor writes for *secret* under *key*."""
    digest = hmac.new(key, secret.encode(), hashlib.sha256).hexdigest()[:8]
    return f"[REDACTED:{detector}:{digest}]"


def _text_like(value: str) -> bool:
    return len(value) >= 12 and (" " in value or "\n" in value)


#: Strings planted per place (record type and key path): every field kind, a bounded corpus.
PER_PLACE = 2


def _plant_value(value: Any, plant: Plant, place: str, key: str = "") -> Any:
    if isinstance(value, dict):
        # A place is told apart by the record's kind along the way (Codex response_item/message/user).
        tag = "/".join(str(value[k]) for k in ("type", "role") if isinstance(value.get(k), str))
        here = f"{place}<{tag}>" if tag else place
        return {k: _plant_value(v, plant, f"{here}.{k}", k) for k, v in value.items()}
    if isinstance(value, list):
        return [_plant_value(v, plant, f"{place}[]", key) for v in value]
    if isinstance(value, str) and key not in _STRUCTURAL and not key.lower().endswith("id"):
        stripped = value.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                inner = json.loads(value)
            except ValueError:
                pass
            else:
                return json.dumps(_plant_value(inner, plant, place + "<json>", key))
        if _text_like(value) and plant.places.get(place, 0) < PER_PLACE:
            plant.places[place] = plant.places.get(place, 0) + 1
            return value + "\n" + plant.snippet()
    return value


def plant(source: Path, target: Path, unknown: dict[str, Any]) -> Plant:
    """Copy the transcript *source* to *target* with secrets planted; append the *unknown* record.

    *unknown* is a record of a type the harness's adapter does not know, with a
    ``"text"`` placeholder value ``"{secrets}"`` to fill.
    """
    p = Plant()
    out = []
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            out.append(line)
            continue
        record = json.loads(line)
        kind = str(record.get("type", "")) if isinstance(record, dict) else ""
        out.append(json.dumps(_plant_value(record, p, kind), ensure_ascii=False))
    filled = json.loads(json.dumps(unknown).replace('"{secrets}"', json.dumps(p.snippet())))
    out.append(json.dumps(filled))
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return p
