"""Verbatim JSON made safe to write: one member per key, numbers every JSON reader reads.

Events copy parts of their records verbatim (a tool's input, a record kept
whole as ``details`` or ``raw``): the bytes as the harness wrote them, which is
what the reference writes too. Two things such bytes may hold make the output
unreadable to strict or common readers although the input was accepted:

* a key repeated within one object (``{"a": 1, "a": 2}``): decoders disagree
  on which member counts, and strict ones refuse the document. Every decoder
  here (msgspec, and Go's for the reference) reads the *last* member, so the
  earlier ones are dropped and what the output means is unchanged;
* an integer of more than 4,300 digits, which Python's ``json`` refuses to
  read (``sys.get_int_max_str_digits``). It is written in exponent form with
  every digit kept (``1000…0`` becomes ``1.000…0e5000``): the same number,
  which such readers take as a float.

Everything else stays byte for byte. :func:`replace_raws`, the walk over every
verbatim value an event holds, is shared with the restoring of rewritten lines
(``pipeline.conversion.Rewrites``). Checking costs little where nothing is
wrong, which is nearly always: a value that is not an object or array, or has
fewer than two keys (and too few bytes for a long integer), cannot hold
either; otherwise msgspec decodes and encodes it again, and equal bytes prove
every key unique (msgspec refuses a long integer). Only a value that differs
(a repeat, a long integer, or formatting msgspec writes otherwise) is
tokenized in Python. The check adds a sixth to two fifths to a conversion's CPU
time where a transcript's records are mostly kept verbatim (Claude Code, Copilot
CLI); ``stats``, which writes none of it, does not pay it
(``ParseOptions.check_verbatim``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.schema import NO_RAW, ContentBlock, Event, TokenUsage

__all__ = ("MAX_INT_DIGITS", "RawMap", "replace_raws", "safe_events", "safe_json")

#: Python's default limit on the digits of an integer it converts from text.
MAX_INT_DIGITS: Final = 4300

_decode: Final = msgspec.json.decode
_encode: Final = msgspec.json.encode
_format: Final = msgspec.json.format

#: A key's closing quote followed by white space before its colon: ``'":'`` counts
#: the others (and over-counts, by escaped quotes before a colon inside strings).
_SPACED_COLON: Final = re.compile(rb'"[ \t\r\n]+:')
_NUMBER_START: Final = frozenset(b"-0123456789")
_TOKEN: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\],:]|[^\s{}\[\],:"]+', re.S)


def safe_json(data: bytes) -> bytes | None:
    """*data* (one JSON value) without repeated keys and over-long integers, or ``None``
    when it has neither (the common case, decided without tokenizing)."""
    first = data[:1]
    if first != b"{" and first != b"[":
        if len(data) > MAX_INT_DIGITS and data[0] in _NUMBER_START:
            return _rewritten(data)
        return None  # a string, a literal or a number of allowed length: no keys
    if len(data) <= MAX_INT_DIGITS and data.count(b'":') < 2 and not _SPACED_COLON.search(data):
        return None  # at most one key (none repeats), and too short for a long integer
    try:
        # msgspec refuses an integer past the digit limit (ValidationError).
        again = _encode(_decode(data))
    except (msgspec.DecodeError, msgspec.EncodeError, RecursionError, ValueError):
        again = b""
    if again and (again == data or again == _compact(data)):
        return None  # the same members again, so no key repeats
    return _rewritten(data)


def _compact(data: bytes) -> bytes:
    try:
        return _format(data, indent=-1)
    except msgspec.DecodeError:
        return b""


def _rewritten(data: bytes) -> bytes | None:
    """Drop the earlier members of repeated keys and rewrite long integers, by tokens."""
    cuts: list[tuple[int, int, bytes]] = []
    # One frame per open object (the start of each member, its key, in order, and
    # the index of each key's latest member) or array (None).
    frames: list[tuple[list[int], dict[bytes, int]] | None] = []
    expect_key = False
    for m in _TOKEN.finditer(data):
        tok = m.group()
        c = tok[0]
        if c == 0x22:  # a string
            frame = frames[-1] if expect_key and frames else None
            if frame is not None:
                starts, latest = frame
                key = _key(tok)
                earlier = latest.get(key)
                latest[key] = len(starts)
                starts.append(m.start())
                if earlier is not None:  # dropped up to the key of the member after it
                    cuts.append((starts[earlier], starts[earlier + 1], b""))
                expect_key = False
        elif c == 0x7B:  # {
            frames.append(([], {}))
            expect_key = True
        elif c == 0x5B:  # [
            frames.append(None)
            expect_key = False
        elif c == 0x7D or c == 0x5D:  # } or ]
            if frames:
                frames.pop()
            expect_key = False
        elif c == 0x2C:  # ,
            expect_key = bool(frames) and frames[-1] is not None
        elif len(tok) > MAX_INT_DIGITS:
            long = _exponent_form(tok)
            if long is not None:
                cuts.append((m.start(), m.end(), long))
    if not cuts:
        return None
    return _apply(data, _outermost(cuts))


def _outermost(cuts: list[tuple[int, int, bytes]]) -> list[tuple[int, int, bytes]]:
    """The cuts in order, leaving out those inside a member already dropped."""
    cuts.sort(key=lambda cut: (cut[0], -cut[1]))
    out: list[tuple[int, int, bytes]] = []
    reach = -1
    for cut in cuts:
        if cut[0] >= reach:
            out.append(cut)
            reach = cut[1]
    return out


def _apply(data: bytes, ranges: list[tuple[int, int, bytes]]) -> bytes:
    parts: list[bytes] = []
    pos = 0
    for start, end, text in ranges:
        parts += (data[pos:start], text)
        pos = end
    parts.append(data[pos:])
    return b"".join(parts)


def _key(tok: bytes) -> bytes:
    """A key token as the text it names (escapes resolved, so ``"\\u0061"`` is ``"a"``)."""
    if b"\\" not in tok:
        return tok[1:-1]
    try:
        name = msgspec.json.decode(tok, type=str)
    except msgspec.DecodeError:
        return tok  # a lone surrogate escape: compared as written
    return name.encode("utf-8", "surrogatepass")


def _exponent_form(tok: bytes) -> bytes | None:
    """An integer literal of more than :data:`MAX_INT_DIGITS` digits as ``d.ddd…eN``."""
    sign = b"-" if tok[:1] == b"-" else b""
    digits = tok[len(sign) :]
    if not digits.isdigit() or len(digits) <= MAX_INT_DIGITS or digits[:1] == b"0":
        return None  # a fraction or exponent already reads as a float
    return b"%s%s.%se%d" % (sign, digits[:1], digits[1:], len(digits) - 1)


def _safe_raw(raw: Raw) -> Raw:
    fixed = safe_json(bytes(raw))
    return raw if fixed is None else Raw(fixed)


def safe_events(events: list[Event]) -> list[Event]:
    """Make the verbatim JSON in *events* safe to write (see the module), in place."""
    return replace_raws(events, _safe_raw)


RawMap = Callable[[Raw], Raw]


def replace_raws(events: list[Event], fn: RawMap) -> list[Event]:
    """Replace each verbatim JSON value in *events* by what *fn* makes of it, in place.

    Every :class:`~msgspec.Raw` the schema holds is visited (the provenance's
    records, a tool's input, a result's enrichment, content blocks, usage extras,
    a system event's details, an unknown record), by the event's kind.
    """
    for ev in events:
        prov = ev.provenance
        if prov is not None and prov.raw:
            prov.raw = [fn(r) for r in prov.raw]
        payload = _PAYLOAD.get(ev.kind)
        if payload is not None:
            payload(ev, fn)
    return events


def _blocks(blocks: list[ContentBlock] | None, fn: RawMap) -> None:
    if blocks:
        for block in blocks:
            if block.raw is not NO_RAW:
                block.raw = fn(block.raw)


def _usage(usage: TokenUsage | None, fn: RawMap) -> None:
    if usage is not None and usage.extra:
        extra = usage.extra
        for name, value in extra.items():
            extra[name] = fn(value)


def _field(part: object | None, name: str, fn: RawMap) -> None:
    """Replace the verbatim JSON in field *name* of an event's payload *part*."""
    if part is not None:
        raw = getattr(part, name)
        if raw is not NO_RAW:
            setattr(part, name, fn(raw))


def _tool_call(ev: Event, fn: RawMap) -> None:
    _field(ev.tool_call, "input", fn)


def _tool_result(ev: Event, fn: RawMap) -> None:
    result = ev.tool_result
    if result is not None:
        _field(result, "enrichment", fn)
        _blocks(result.content, fn)


def _user(ev: Event, fn: RawMap) -> None:
    if ev.user_message is not None:
        _blocks(ev.user_message.content, fn)


def _assistant(ev: Event, fn: RawMap) -> None:
    message = ev.assistant_message
    if message is not None:
        _blocks(message.content, fn)
        _usage(message.usage, fn)


def _system(ev: Event, fn: RawMap) -> None:
    _field(ev.system, "details", fn)


def _unknown(ev: Event, fn: RawMap) -> None:
    _field(ev.unknown, "raw", fn)


#: Where each event kind's payload holds verbatim JSON.
_PAYLOAD: Final[dict[str, Callable[[Event, RawMap], None]]] = {
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "user_message": _user,
    "assistant_message": _assistant,
    "system": _system,
    "unknown": _unknown,
}
