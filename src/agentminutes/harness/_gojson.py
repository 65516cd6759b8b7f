"""How the reference's Go JSON decoding reads a record, for the adapters' slow paths.

The reference decodes records with Go's ``encoding/json``: object keys match
struct fields case-insensitively (the last matching key wins), a ``null`` for
a string field leaves it alone, invalid UTF-8 inside strings reads as U+FFFD,
and lines are trimmed of Unicode white space. Adapters decode the common
exact-case record with a typed msgspec Struct (``forbid_unknown_fields``, so a
key they do not know sends the line here) and use these helpers only for
lines that need them. Type errors are worded the way Go words them, because
permissive output carries them as ``unknown`` reasons.

The pipeline reads every line the way Go's decoder would before an adapter
sees it (:func:`go_utf8`, :func:`go_escapes`): invalid UTF-8 becomes U+FFFD one
byte at a time, and a lone UTF-16 surrogate escape (``\\ud800``), which Go
decodes as U+FFFD and msgspec rejects, is rewritten to ``\\ufffd``.

Not reproduced: an exact duplicate key whose later value is ``null`` (Go keeps
the earlier value, the dict view here keeps only the later one).
"""

from __future__ import annotations

import codecs
import functools
import re
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

import msgspec
from msgspec import Raw

__all__ = (
    "C_RECURSION_LIMITED",
    "GO_MAX_DEPTH",
    "GO_SPACE",
    "FieldError",
    "fold_fields",
    "go_escape_spans",
    "go_escapes",
    "go_trim",
    "go_utf8",
    "go_utf8_spans",
    "json_kind",
    "normalize_line",
    "number_kind",
    "on_fresh_stack",
    "type_error",
)

#: Go's ``unicode.IsSpace``: what ``bytes.TrimSpace`` removes around a line or a request.
GO_SPACE: Final = (
    " \t\n\v\f\r\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

#: The deepest nesting Go's decoder accepts (``encoding/json``'s scanner limit).
GO_MAX_DEPTH: Final = 10_000

#: Whether a decoder's nesting counts against a C recursion limit that
#: ``sys.setrecursionlimit`` does not raise (Python 3.12 and later): about 10,000
#: levels less what the thread's stack already holds, so a value the reference reads
#: can fail deep inside the command line's stack and be read on a fresh thread.
C_RECURSION_LIMITED: Final = sys.version_info >= (3, 12)

_FRESH_STACK_THREAD: Final = "agentminutes-fresh-stack"

T = TypeVar("T")


def on_fresh_stack(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a new thread, whose stack holds nothing yet; its result or error.

    Called again from that thread, it raises :class:`RecursionError` instead:
    a value too deep for a fresh stack is too deep to read.
    """
    if threading.current_thread().name == _FRESH_STACK_THREAD:
        raise RecursionError("nested too deep for a fresh stack")
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(fn(*args))
        except BaseException as exc:  # handed to the caller's thread
            error.append(exc)

    previous = threading.stack_size(256 << 20)  # room for the C frames of 10,000 levels
    try:
        thread = threading.Thread(target=run, name=_FRESH_STACK_THREAD, daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if error:
        raise error[0]
    return result[0]


_decode_object = msgspec.json.Decoder(dict[str, Raw] | None).decode


def _one_byte(exc: UnicodeError) -> tuple[str, int]:
    # Go's utf8.DecodeRune: every byte of an invalid sequence is one U+FFFD
    # (Python's "replace" gives one for a whole truncated sequence).
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd", exc.start + 1


_GO_REPLACE: Final = "agentminutes-go-replace"
codecs.register_error(_GO_REPLACE, _one_byte)


def go_utf8(data: bytes) -> str:
    """*data* decoded as Go decodes a string: each invalid byte becomes U+FFFD."""
    return data.decode("utf-8", _GO_REPLACE)


#: Any escape: a backslash and what it escapes, a high surrogate escape with the
#: low one that may follow. Matching every escape from the left means the
#: ``ud800`` after an escaped backslash (``\\\\ud800``) is never taken for one.
#: Compiled when first needed (a line with a surrogate escape is rare), as are the
#: UTF-8 expressions below: every command that reads a transcript imports this module.
@functools.cache
def _escape() -> re.Pattern[bytes]:
    return re.compile(
        rb"\\(?:(?P<high>u[dD][89abAB][0-9a-fA-F]{2})(?P<pair>\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
        rb"|(?P<low>u[dD][c-fC-F][0-9a-fA-F]{2})|.)",
        re.DOTALL,
    )


#: Whether a line holds a surrogate escape at all (the cheap test before :func:`_escape`).
SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89a-fA-F]")


#: A Go-decoder's view of a line that differs from its bytes: ``(start, end, verbatim)``
#: says that ``fed[start:end]`` (what the adapter decodes) stands for ``verbatim`` in
#: JSON copied as it was (what the reference copies into its output).
Span = tuple[int, int, bytes]

_HIGH_HALF: Final = frozenset(b"89abAB")


def go_escape_spans(line: bytes) -> tuple[bytes, list[Span]]:
    """*line* with each lone surrogate escape replaced by ``\\ufffd``, and where.

    The replacement has the escape's length, so offsets stay those of *line*;
    each span's verbatim text is the escape as written. No spans: *line* as is.
    """
    spans: list[Span] = [
        (m.start(), m.end(), m.group())
        for m in _escape().finditer(line)
        if m.group("low") is not None or (m.group("high") is not None and m.group("pair") is None)
    ]
    if not spans:
        return line, spans
    out = bytearray(line)
    for start, end, _ in spans:
        out[start:end] = b"\\ufffd"
    return bytes(out), spans


def go_escapes(line: bytes) -> bytes | None:
    """*line* with each lone surrogate escape replaced by ``\\ufffd`` (same length, so byte
    offsets still match the original), or ``None`` when it has none."""
    fixed, spans = go_escape_spans(line)
    return fixed if spans else None


#: A run of valid UTF-8 (no surrogates, no overlong forms), or one byte that is not.
@functools.cache
def _utf8_run() -> re.Pattern[bytes]:
    return re.compile(
        rb"(?:[\x00-\x7f]|[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]"
        rb"|[\xe1-\xec\xee\xef][\x80-\xbf]{2}|\xed[\x80-\x9f][\x80-\xbf]"
        rb"|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}|\xf4[\x80-\x8f][\x80-\xbf]{2})+"
        rb"|(?P<bad>.)",
        re.DOTALL,
    )


@functools.cache
def _utf8_surrogate() -> re.Pattern[bytes]:
    return re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")


_FFFD: Final = "\ufffd".encode()


def go_utf8_spans(line: bytes) -> tuple[bytes, list[Span]]:
    """*line* with invalid UTF-8 replaced as Go decodes a string (U+FFFD per byte), and where.

    A UTF-16 half encoded as UTF-8 (``ED A0 80``), which Go also reads as three
    U+FFFD, is copied verbatim by the reference, and a lenient reader takes it
    for that half: its span's verbatim text is the escape (``\\ud800``) that
    says the same in valid JSON. Other invalid bytes have no span: copied as
    they are they would make the output invalid, so U+FFFD stays.
    """
    out: list[bytes] = []
    spans: list[Span] = []
    size = 0
    skip = 0
    surrogate = _utf8_surrogate()
    for m in _utf8_run().finditer(line):
        if m.group("bad") is None:
            out.append(m.group())
            size += m.end() - m.start()
            continue
        if skip:  # the continuation bytes of a surrogate taken whole
            skip -= 1
            continue
        at = m.start()
        half = surrogate.match(line, at)
        if half is not None:
            code = ord(half.group().decode("utf-8", "surrogatepass"))
            out.append(_FFFD * 3)
            spans.append((size, size + 9, b"\\u%04x" % code))
            size += 9
            skip = 2
        else:
            out.append(_FFFD)
            size += 3
    return b"".join(out), spans


class FieldError(Exception):
    """A value of the wrong JSON type for its field, worded like Go's ``UnmarshalTypeError``."""


def go_trim(text: str) -> str:
    """Trim Go's white space (not Python's, which also strips ``\\x1c``-``\\x1f``)."""
    return text.strip(GO_SPACE)


def normalize_line(line: bytes) -> bytes | None:
    """The line as Go reads it, when that differs from the bytes: U+FFFD for invalid
    UTF-8 and Unicode white space trimmed. ``None`` when nothing changes."""
    text = go_utf8(line)
    fixed = go_trim(text).encode()
    return None if fixed == line else fixed


def json_kind(raw: bytes | Raw) -> str:
    """The JSON type name Go's type errors use for a value: string, number, object …"""
    data = bytes(raw).lstrip()
    first = data[:1]
    if first == b'"':
        return "string"
    if first == b"{":
        return "object"
    if first == b"[":
        return "array"
    if first in (b"t", b"f"):
        return "bool"
    if first == b"n":
        return "null"
    return "number"


def number_kind(raw: bytes | Raw) -> str:
    """``number <literal>`` as Go words a number that does not fit an int field."""
    kind = json_kind(raw)
    return f"number {bytes(raw).decode()}" if kind == "number" else kind


def type_error(
    raw: bytes | Raw, where: str, gotype: str, *, int_target: bool = False
) -> FieldError:
    """Go's message for *raw* landing in a field of type *gotype* (``where`` names the field)."""
    kind = number_kind(raw) if int_target else json_kind(raw)
    return FieldError(f"json: cannot unmarshal {kind} into {where} of type {gotype}")


def fold_fields(
    raw: bytes | Raw, names: frozenset[str], strings: frozenset[str] = frozenset()
) -> Mapping[str, Raw] | None:
    """The values of *names* in a JSON object, keys matched case-insensitively, last wins.

    A ``null`` does not replace an earlier value of a field in *strings* (Go
    leaves a string alone on ``null``, but resets a pointer or a slice).
    ``None`` for a JSON ``null`` object. Raises :class:`msgspec.ValidationError` when the
    value is not an object, :class:`msgspec.DecodeError` when it is not JSON.
    """
    obj = _decode_object(raw)
    if obj is None:
        return None
    out: dict[str, Raw] = {}
    for key, value in obj.items():
        name = key if key in names else _fold(key)
        if name in names:
            if name in strings and name in out and bytes(value) == b"null":
                continue
            out[name] = value
    return out


def _fold(key: str) -> str:
    # Go's simple case folding: ASCII case, the Kelvin sign (lower() maps it to
    # "k") and the long s.
    return key.lower().replace("\u017f", "s")
