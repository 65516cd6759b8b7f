"""The ``redact`` stage: secrets in events become markers before anything is written.

Every text an event carries is searched — message, thinking and tool-result
text, tool inputs, the harness's sidecars (``enrichment``), system details,
unknown records and kept raw records — and each secret found is replaced by
``[REDACTED:<detector>:<hash>]``: the detector's name and the first 8 hex
digits of an HMAC-SHA256 of the secret under a key drawn for the run, so
one secret maps to one marker within a run (repeats can still be counted) and
nothing about it can be looked up across runs. Pass *key* for markers that
stay the same across runs (a follower restarted from its state).

Verbatim payloads (:class:`msgspec.Raw`) are JSON and stay valid JSON: their
bytes are searched as they are; only when a detector confirms a secret there
is the payload split into its string tokens, and only the string values that
hold one are decoded, redacted and encoded again — keys, numbers, structure
and every other string are left byte for byte. A value whose key names a
secret (``"api_key": "…"``) is redacted whole.

Images' base64 data and thinking signatures are not searched: they are
binary and opaque, never text anyone typed or printed. What was redacted is
counted by detector (:attr:`Redaction.counts`); :meth:`Redaction.summary` is
the line the CLI prints on stderr.
"""

from __future__ import annotations

import operator
import os
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from itertools import accumulate, repeat
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import msgspec

from agentminutes.errors import UsageError
from agentminutes.pipeline.batch import Batch
from agentminutes.schema import Event, Raw

if TYPE_CHECKING:
    from agentminutes.stages.detectors import Detector, DetectorSet, Finding
    from agentminutes.stages.prefilter import Load

# The detectors (their regular expressions compile when imported) are loaded by
# redact(), when a redaction is built: a command that does not redact -- follow to
# stdout, convert by default -- does not pay for them at start-up. So are hmac and
# secrets (which loads random), for the same commands.

__all__ = (
    "KEY_ENV",
    "Redaction",
    "Redactor",
    "chosen",
    "redact",
    "redaction",
    "redaction_choice",
    "summary",
)

#: The environment variable that keys the markers for every run (else each run draws a key).
KEY_ENV: Final = "AGENTMINUTES_REDACT_KEY"

#: A JSON string token (opening quote to closing quote, escapes included).
_STRING: Final = re.compile(rb'"(?:[^"\\]++|\\.)*+"')
_SPACE: Final = b" \t\r\n"
_decode_str = msgspec.json.Decoder(str).decode
_encode = msgspec.json.Encoder().encode


class _Scan(NamedTuple):
    """A batch's texts joined, what owns each, and the prefilter's pass (maybe running)."""

    owners: list[Any]
    fields: list[str | int]
    blob: bytes
    starts: list[int]
    ends: list[int]
    candidates: Callable[[], list[int] | None]


class Redactor:
    """Replaces the secrets in strings, JSON payloads and events; counts them by detector."""

    def __init__(self, detectors: DetectorSet, key: bytes, *, prefilter: Load = "loaded") -> None:
        """*prefilter* says when the RE2 prefilter may load pyarrow (see
        :class:`~agentminutes.stages.prefilter.Prefilter`): it changes the speed, not
        what is redacted."""
        import hashlib  # here, not at the top: OpenSSL loads with it (every stats run would)
        import hmac

        from agentminutes.stages.detectors import _assignment, secret_name
        from agentminutes.stages.prefilter import Prefilter

        self._hmac = hmac.new
        self._sha256 = hashlib.sha256
        self.detectors = detectors
        self.prefilter = Prefilter(detectors.prefilter, load=prefilter)
        self._key = key
        self.counts: Counter[str] = Counter()
        self._secret_name = secret_name
        self._assigned = _assignment

    def marker(self, detector: str, secret: str) -> str:
        """The marker that replaces *secret*, found by *detector* (and count it)."""
        digest = self._hmac(self._key, secret.encode("utf-8", "surrogatepass"), self._sha256)
        self.counts[detector] += 1
        return f"[REDACTED:{detector}:{digest.hexdigest()[:8]}]"

    def text(self, value: str) -> str:
        """*value* with its secrets replaced; the same object when it holds none."""
        if not value:
            return value
        found = self.detectors.find(value)
        if not found:
            return value
        return self._splice(value, found)

    def _splice(self, value: str, found: list[Finding]) -> str:
        parts: list[str] = []
        last = 0
        for f in found:
            parts.append(value[last : f.start])
            parts.append(self.marker(f.detector, value[f.start : f.end]))
            last = f.end
        parts.append(value[last:])
        return "".join(parts)

    def raw(self, payload: Raw) -> Raw:
        """The JSON *payload* with the secrets in its string values replaced; itself when it holds none."""
        if not payload:
            return payload
        data = bytes(payload)
        found = self.detectors.find(data)
        if not found:
            return payload
        out = bytearray()
        last = 0
        key: bytes | None = None
        spans = [(f.start, f.end) for f in found]
        i = 0
        for token in _STRING.finditer(data):
            start, end = token.span()
            after = end
            while after < len(data) and data[after] in _SPACE:
                after += 1
            if after < len(data) and data[after] == 0x3A:  # ':' — a key, never changed
                key = token.group()
                continue
            this_key = key if key is not None and _follows_key(data, start) else None
            key = None
            while i < len(spans) and spans[i][1] <= start:
                i += 1
            if i >= len(spans):
                break
            if spans[i][0] >= end:
                continue
            new = self._value(_decode_str(token.group()), this_key)
            if new is not None:
                out += data[last:start]
                out += _encode(new)
                last = end
        if not last:
            return payload
        out += data[last:]
        return Raw(bytes(out))

    def _value(self, value: str, key: bytes | None) -> str | None:
        """A JSON string value redacted, or ``None`` when it holds no secret."""
        new = self.text(value)
        if new is not value:
            return new
        if key is not None:
            name = _decode_str(key)
            if self._secret_name(name) and self._assigned(value, {"name": name}):
                return self.marker("secret-assignment", value)
        return None

    def events(self, events: Sequence[Event]) -> None:
        """Redact every text *events* carry, in place.

        Their strings and payloads are joined into one blob and scanned once:
        only the parts a detector flags are then redacted one by one.
        """
        scan = self.scan(events)
        if scan is not None:
            self.apply(scan)

    def scan(self, events: Sequence[Event], *, background: bool = False) -> _Scan | None:
        """The first half of :meth:`events`: join the texts of *events* and start the
        prefilter's pass over them (on a thread when *background*); ``None``: no text."""
        owners: list[Any] = []
        fields: list[str | int] = []
        parts: list[Any] = []
        seen: set[tuple[int, str | int]] = set()
        for ev in events:
            _collect(ev, owners, fields, parts, seen)
        if not parts:
            return None
        # A large batch has a hundred thousand parts: their offsets in the blob are
        # summed in C (``bounds[i]`` is just past part *i*'s NUL), not in a Python loop.
        parts = [p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p for p in parts]
        lengths = list(map(len, parts))
        bounds = list(accumulate(map(operator.add, lengths, repeat(1))))
        starts = [0, *bounds[:-1]]
        ends = list(map(operator.sub, bounds, repeat(1)))
        blob = b"\0".join(parts)
        candidates = self.prefilter.start(blob, starts, background=background)
        return _Scan(owners, fields, blob, starts, ends, candidates)

    def apply(self, scan: _Scan) -> None:
        """The second half of :meth:`events`: scan the parts the prefilter left and redact
        those that hold a secret. A value redacted since :meth:`scan` (an object two
        batches share) is looked at again and found clean: nothing is counted twice."""
        flagged = self.detectors.flagged(scan.blob, scan.starts, scan.ends, scan.candidates())
        for i in sorted(flagged):
            owner, name = scan.owners[i], scan.fields[i]
            if isinstance(name, int):
                owner[name] = self.raw(owner[name])
                continue
            value = getattr(owner, name)
            setattr(owner, name, self.raw(value) if isinstance(value, Raw) else self.text(value))

    def event(self, ev: Event) -> Event:
        """Redact every text *ev* carries, in place; return it."""
        self.events((ev,))
        return ev


def _collect(
    ev: Event,
    owners: list[Any],
    fields: list[str | int],
    parts: list[Any],
    seen: set[tuple[int, str | int]],
) -> None:
    """Note every text and payload of *ev*: its owner, the field, the value.

    An adapter may hand the same object to two events (a block in a message and
    in its record's replay): it is noted once, so it is redacted and counted once.
    """

    def add(owner: Any, name: str, value: Any) -> None:
        key = (id(owner), name)
        if key in seen:
            return
        seen.add(key)
        owners.append(owner)
        fields.append(name)
        parts.append(value)

    blocks = None
    if ev.tool_result is not None:
        r = ev.tool_result
        blocks = r.content
        if r.enrichment:
            add(r, "enrichment", r.enrichment)
        if r.fetch is not None and r.fetch.url:
            add(r.fetch, "url", r.fetch.url)
    elif ev.tool_call is not None:
        if ev.tool_call.input:
            add(ev.tool_call, "input", ev.tool_call.input)
    elif ev.assistant_message is not None:
        blocks = ev.assistant_message.content
    elif ev.user_message is not None:
        blocks = ev.user_message.content
    elif ev.thinking is not None:
        if ev.thinking.text:
            add(ev.thinking, "text", ev.thinking.text)
    elif ev.system is not None:
        s = ev.system
        if s.text:
            add(s, "text", s.text)
        if s.details:
            add(s, "details", s.details)
    elif ev.unknown is not None and ev.unknown.raw:
        add(ev.unknown, "raw", ev.unknown.raw)
    if blocks:
        for b in blocks:
            if b.text:
                add(b, "text", b.text)
            if b.uri:
                add(b, "uri", b.uri)
            # An image's native block is its base64 data: binary, never text.
            if b.raw and b.kind != "image":
                add(b, "raw", b.raw)
    prov = ev.provenance
    if prov is not None and prov.raw:
        for i, raw in enumerate(prov.raw):
            if (id(prov.raw), i) in seen:
                continue
            seen.add((id(prov.raw), i))
            owners.append(prov.raw)
            fields.append(i)
            parts.append(raw)


def _follows_key(data: bytes, start: int) -> bool:
    """Whether the token at *start* is the value right after a key (``"k": <here>``)."""
    j = start - 1
    while j >= 0 and data[j] in _SPACE:
        j -= 1
    return j >= 0 and data[j] == 0x3A


class Redaction:
    """The redact stage: batches in, the same batches out with their events redacted.

    Marks pass through untouched. :attr:`counts` holds what was redacted so far,
    by detector; :meth:`summary` says it in one line.
    """

    __name__ = "redact"

    def __init__(self, redactor: Redactor, *, overlap: bool = False) -> None:
        """*overlap*: hold one batch back while the next is parsed, so the prefilter's
        pass over it runs on a thread meanwhile (for finished files: a live follow wants
        each batch at once)."""
        self.redactor = redactor
        self.overlap = overlap

    @property
    def counts(self) -> Counter[str]:
        """Secrets redacted so far, by detector name."""
        return self.redactor.counts

    def summary(self) -> str:
        """``redacted N secrets (detector n, …)``: the report line."""
        return summary(self.counts)

    async def __call__(self, batches: AsyncIterator[Batch]) -> AsyncIterator[Batch]:
        if not self.overlap:
            redact = self.redactor.events
            async for batch in batches:
                if batch.events:
                    redact(batch.events)
                yield batch
            return
        redactor = self.redactor
        held: tuple[Batch, _Scan | None] | None = None
        try:
            async for batch in batches:
                scan = redactor.scan(batch.events, background=True) if batch.events else None
                if held is not None:
                    yield self._done(*held)
                held = (batch, scan)
            if held is not None:
                batch, scan = held
                held = None
                yield self._done(batch, scan)
        finally:
            if held is not None and held[1] is not None:
                held[1].candidates()  # not left running on its thread
            redactor.prefilter.close()

    def _done(self, batch: Batch, scan: _Scan | None) -> Batch:
        if scan is not None:
            self.redactor.apply(scan)
        return batch


def summary(counts: Mapping[str, int]) -> str:
    """``redacted N secrets (detector n, …)``: what was redacted, by detector, in one line."""
    total = sum(counts.values())
    text = f"redacted {total} secret{'' if total == 1 else 's'}"
    if total:
        text += " (" + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if v) + ")"
    return text


def redact(
    *,
    patterns: Sequence[str] = (),
    config: str | None = None,
    disable: Iterable[str] = (),
    detectors: Sequence[Detector] | None = None,
    key: bytes | str | None = None,
) -> Redaction:
    """The redact stage: secrets in every event's texts become ``[REDACTED:<detector>:<hash>]``.

    *detectors* replaces the built-in set (:data:`~agentminutes.stages.detectors.DETECTORS`);
    *patterns* adds regular expressions (group ``secret``, if present, is what
    is replaced; markers name them ``user-pattern``); *config* is a TOML file
    of named patterns and built-in detectors to disable (see
    :func:`~agentminutes.stages.detectors.load_config`); *disable* names
    built-in detectors not to run. *key* keys the markers' hash (default: new
    random bytes for each stage).

    Raises:
        UsageError: a pattern that does not compile, an unreadable config, an unknown name.
    """
    from agentminutes.stages.detectors import DETECTORS, DetectorSet, load_config, user_detector

    chosen = list(DETECTORS if detectors is None else detectors)
    off = set(disable)
    extra = [user_detector(p) for p in patterns]
    if config is not None:
        configured, config_off = load_config(config)
        extra.extend(configured)
        off |= config_off
    unknown = off - {d.name for d in chosen}
    if unknown:
        raise UsageError(f"redact: no detector named {', '.join(sorted(unknown))}")
    chosen = [d for d in chosen if d.name not in off]
    builtin = {d.name for d in DETECTORS}
    for d in extra:
        if d.name in builtin:
            raise UsageError(f"redact pattern name {d.name!r} is a built-in detector's")
    chosen.extend(extra)
    if isinstance(key, str):
        key = key.encode()
    import secrets

    return Redaction(Redactor(DetectorSet(chosen), key or secrets.token_bytes(32)))


def chosen(redact: bool, no_redact: bool) -> bool | None:
    """``--redact`` (``True``), ``--no-redact`` (``False``) or neither (``None``).

    Raises:
        UsageError: both given.
    """
    if redact and no_redact:
        raise UsageError("--redact and --no-redact contradict each other; give one")
    return True if redact else False if no_redact else None


def redaction_choice(
    redact: bool,
    no_redact: bool,
    *,
    patterns: Sequence[str] = (),
    config: str | None = None,
    default: bool = False,
    where: str = "",
) -> bool | None:
    """A command's ``--redact``/``--no-redact`` as :func:`chosen` gives it, checked against its
    patterns and config; where the command redacts by default (*default*: its output leaves
    the machine), ``--no-redact`` is warned about on stderr: secrets go *where* as they are.

    Raises:
        UsageError: both flags, or ``--no-redact`` with patterns or a config.
    """
    choice = chosen(redact, no_redact)
    if choice is False:
        if patterns or config:
            raise UsageError("--redact-pattern and --redact-config redact; drop --no-redact")
        if default:
            import sys

            print(
                f"agentminutes: warning: --no-redact: secrets in the transcripts go {where} "
                "as they are",
                file=sys.stderr,
                flush=True,
            )
    return choice


def redaction(
    enabled: bool | None,
    *,
    default: bool = False,
    patterns: Sequence[str] = (),
    config: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Redaction | None:
    """The redact stage the command-line options ask for, or ``None`` when redaction is off.

    *enabled* is ``--redact`` (``True``), ``--no-redact`` (``False``) or neither
    (``None``: *default*, unless patterns or a config are given, which turn it
    on). The markers are keyed by ``$AGENTMINUTES_REDACT_KEY`` when it is set
    (markers that stay the same across runs), else by a key drawn for this run.

    Raises:
        UsageError: ``--no-redact`` with patterns or a config, or a bad pattern or config.
    """
    if enabled is False:
        if patterns or config:
            raise UsageError("--redact-pattern and --redact-config redact; drop --no-redact")
        return None
    if enabled is None and not default and not patterns and not config:
        return None
    key = (os.environ if env is None else env).get(KEY_ENV) or None
    return redact(patterns=patterns, config=config, key=key)
