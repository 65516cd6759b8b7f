"""Encoding events as JSON lines: one reusable encoder, one event per line."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from agentminutes.pipeline.batch import Batch
from agentminutes.schema import Event

__all__ = (
    "append_jsonl",
    "encode_event",
    "format_json",
    "jsonl_encoder",
    "one_line",
)


_encoder = msgspec.json.Encoder()


def encode_event(event: Event) -> bytes:
    """Encode one event as compact JSON (no trailing newline)."""
    return _encoder.encode(event)


def format_json(data: bytes, indent: int) -> bytes:
    """*data* (encoded JSON) re-indented by *indent* spaces (0: on one line).

    Verbatim JSON copied from a transcript may hold what msgspec's tokenizer
    rejects although JSON allows it: a lone UTF-16 surrogate escape
    (``\\ud800``), which the reference copies as it was and so do we. Such a
    document is re-indented by Python's parser instead, which keeps the escape.
    """
    try:
        return msgspec.json.format(data, indent=indent)
    except msgspec.DecodeError:
        import json

        value = json.loads(data)
        if indent:
            return json.dumps(value, indent=indent).encode()
        return json.dumps(value, separators=(",", ":")).encode()


def one_line(data: bytes) -> bytes:
    """*data* (encoded JSON) on one line: verbatim payloads cut from a pretty-printed
    source may hold newlines between tokens, which JSONL cannot carry."""
    return format_json(data, 0) if b"\n" in data else data


def append_jsonl(
    encoder: msgspec.json.Encoder,
    events: Sequence[Event],
    buf: bytearray,
    prefix: bytes = b"",
    suffix: bytes = b"\n",
) -> None:
    """Append *events* to *buf* as lines ``prefix EVENT suffix``, one event per line.

    The fast path encodes straight into *buf*; one count of the newlines
    afterwards proves every event took exactly one line, and only if one did not
    is the batch encoded again, event by event, with :func:`one_line`.
    """
    start = len(buf)
    encode_into = encoder.encode_into
    for ev in events:
        if prefix:
            buf += prefix
        encode_into(ev, buf, -1)
        buf += suffix
    if buf.count(b"\n", start) == len(events):
        return
    del buf[start:]
    for ev in events:
        buf += prefix
        buf += one_line(encoder.encode(ev))
        buf += suffix


# -- follow's sinks: lines out, as they come ------------------------------------------------

#: Turns a batch into the bytes of its output lines (each ending with a newline).
Encode = Callable[[Batch], bytes]


def jsonl_encoder() -> Encode:
    """Bare JSONL: one event per line, exactly as ``convert --format jsonl`` writes it."""
    encoder = msgspec.json.Encoder()
    buf = bytearray()

    def encode(batch: Batch) -> bytes:
        del buf[:]
        append_jsonl(encoder, batch.events, buf)
        return bytes(buf)

    return encode
