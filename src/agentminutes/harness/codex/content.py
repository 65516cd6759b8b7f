"""Codex values mapped onto the schema: content blocks, tool inputs and outputs, timestamps."""

from __future__ import annotations

import re
from typing import Final

from msgspec import Raw

from agentminutes.harness.codex.records import (
    _Block,
    _decode_blocks,
    _decode_exit_code,
    _decode_output_metadata,
    _decode_output_object,
    _decode_raw,
    _decode_raw_list,
    _decode_str,
    _DecodeErrors,
    _encode,
    _lead,
)
from agentminutes.harness.codex.vocabulary import (
    _IMAGE_BLOCKS,
    _LBRACE,
    _LBRACKET,
    _QUOTE,
    _RAW_NULL,
    _SPACE,
    _TEXT_BLOCKS,
)
from agentminutes.schema import NO_RAW, ContentBlock
from agentminutes.timestamps import format_ns, valid_timestamp

#: The everyday shape of a valid timestamp already in the reference's form (days past
#: the 28th, trailing zeros of the fraction and zero offsets take the full path).
_COMMON_TIMESTAMP: Final = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
    r"(?:\.\d{0,8}[1-9])?(?:Z|[+-](?!00:00)(?:[01]\d|2[0-3]):[0-5]\d)"
).fullmatch


def _timestamp(value: str) -> str:
    """*value* when it is a valid RFC 3339 timestamp, else ``""``."""
    if _COMMON_TIMESTAMP(value) is not None:
        return value
    return valid_timestamp(value)


def _unix_time(value: float | None) -> str:
    """A Unix time in seconds as RFC 3339; ``""`` for none, or for one no calendar date
    from year 1 to 9999 holds (milliseconds written as seconds, say: no timestamp)."""
    if value is None or not _UNIX_MIN <= value < _UNIX_MAX:
        return ""
    try:
        return format_ns(round(value * 1_000_000) * 1000)
    except ValueError:  # rounded up past the last second of 9999
        return ""


#: The Unix times of 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z.
_UNIX_MIN: Final = -62_135_596_800
_UNIX_MAX: Final = 253_402_300_800


_JSON_OPENERS: Final = frozenset('{["-0123456789tfn')


def _input_value(source: str | Raw | None) -> Raw:
    """A tool input as recorded: the JSON a string holds when it holds one, else the string."""
    if not source:
        return NO_RAW
    if isinstance(source, Raw):
        if _lead(source) != _QUOTE:
            return source
        text = _decode_str(source)
        if not text:
            return NO_RAW
    else:
        text = source
    # Only a string whose first non-blank character can open a JSON value is
    # worth parsing (a patch script or shell line never is).
    if text.lstrip(" \t\r\n")[:1] in _JSON_OPENERS:
        try:
            return _decode_raw(text.encode())
        except _DecodeErrors:
            pass
    return Raw(_encode(text))


def _content_blocks(content: Raw) -> list[ContentBlock] | None:
    if not content:
        return None
    return _map_blocks(_decode_blocks(content), content)


def _map_blocks(decoded: str | list[_Block | None] | None, content: Raw) -> list[ContentBlock]:
    """Map native content (a string or a list of blocks) onto schema blocks."""
    if decoded is None:
        return []
    if isinstance(decoded, str):
        return [ContentBlock(kind="text", text=decoded)]
    out: list[ContentBlock] = []
    raws: list[Raw] | None = None
    for i, b in enumerate(decoded):
        btype = b.type if b is not None else None
        if b is not None and btype in _TEXT_BLOCKS:
            out.append(ContentBlock(kind="text", text=b.text or ""))
            continue
        if raws is None:
            raws = _decode_raw_list(content)
        kind = "image" if btype in _IMAGE_BLOCKS else "other"
        out.append(ContentBlock(kind=kind, raw=raws[i]))
    return out


def _plain_text(blocks: list[ContentBlock] | None) -> str:
    if not blocks:
        return ""
    return "\n".join(b.text for b in blocks if b.kind == "text" and b.text)


def _tool_output(output: Raw) -> tuple[list[ContentBlock] | None, bool]:
    """A tool result's content, and whether its recorded exit code says it failed."""
    if not output or output == _RAW_NULL:
        return None, False
    first = _lead(output)
    if first == _QUOTE:
        text = _decode_str(output)
        return [ContentBlock(kind="text", text=text)], _metadata_failed(text)
    if first == _LBRACKET:
        decoded = _decode_blocks(output)
        blocks = _map_blocks(decoded, output)
        return blocks, _chunks_failed(decoded)
    if first == _LBRACE:
        obj = _decode_output_object(output)
        text = obj.content or obj.output or ""
        if text:
            blocks = [ContentBlock(kind="text", text=text)]
        else:
            blocks = [ContentBlock(kind="other", raw=output)]
        return blocks, _metadata_failed(output)
    # A number or a bool: not content in any shape the harness writes.
    return _map_blocks(_decode_blocks(output), output), False


def _metadata_failed(text: str | Raw) -> bool:
    """A ``{"output": …, "metadata": {"exit_code": N}}`` document with N != 0."""
    if isinstance(text, str):
        if not text.lstrip(_SPACE).startswith("{"):
            return False
        data: bytes | Raw = text.encode()
    else:
        data = text
    try:
        meta = _decode_output_metadata(data).metadata
    except _DecodeErrors:
        return False
    return meta is not None and meta.exit_code is not None and meta.exit_code != 0


def _chunks_failed(decoded: str | list[_Block | None] | None) -> bool:
    """Output chunks of a custom tool: ``Script failed``, or a JSON chunk's exit code."""
    if not isinstance(decoded, list):
        return False
    for i, b in enumerate(decoded):
        if b is None or not b.text:
            continue
        text = b.text.strip(_SPACE)
        if i == 0 and text.startswith("Script failed"):
            return True
        if text.startswith("{"):
            try:
                code = _decode_exit_code(text.encode()).exit_code
            except _DecodeErrors:
                continue
            if code is not None:
                return code != 0
    return False
