"""The Gemini API's content parts as msgspec decodes them, and a part read as content blocks.

Gemini CLI records its messages' ``parts`` and tool results in the Gemini API's
own shapes, and Qwen Code (a fork of it) records them the same way: one set of
Structs serves both. Only the fields that steer parsing are typed; payloads
stay ``Raw`` and are copied through verbatim.
"""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.schema import NO_RAW, ContentBlock

__all__ = (
    "DECODE_ERRORS",
    "Blob",
    "Content",
    "FunctionCall",
    "FunctionResponse",
    "Part",
    "Response",
    "decode_blob",
    "decode_content",
    "decode_function_call",
    "decode_function_response",
    "decode_part",
    "decode_response",
    "part_blocks",
)


class Part(msgspec.Struct, rename="camel"):
    """One part of a content: text (or a thought), an attachment, a function call or response."""

    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    inline_data: Raw = NO_RAW
    file_data: Raw = NO_RAW
    function_call: Raw = NO_RAW
    function_response: Raw = NO_RAW


class Blob(msgspec.Struct, rename="camel"):
    """An ``inlineData`` or ``fileData`` attachment."""

    mime_type: str | None = None
    file_uri: str | None = None


class FunctionCall(msgspec.Struct):
    """A part's ``functionCall``."""

    id: str | None = None
    name: str | None = None
    args: Raw = NO_RAW


class FunctionResponse(msgspec.Struct):
    """A part's ``functionResponse``."""

    id: str | None = None
    name: str | None = None
    response: Raw = NO_RAW


class Response(msgspec.Struct):
    """A function response's body: ``{output}`` or ``{error}``."""

    output: Raw = NO_RAW
    error: Raw = NO_RAW


class Content(msgspec.Struct):
    """A content: its role and its parts (raw)."""

    role: str | None = None
    parts: Raw = NO_RAW


decode_part = msgspec.json.Decoder(Part).decode
decode_blob = msgspec.json.Decoder(Blob).decode
decode_function_call = msgspec.json.Decoder(FunctionCall).decode
decode_function_response = msgspec.json.Decoder(FunctionResponse).decode
decode_response = msgspec.json.Decoder(Response | None).decode
decode_content = msgspec.json.Decoder(Content).decode

DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


def part_blocks(part: Part, raw: Raw) -> list[ContentBlock]:
    """The part *part* (verbatim: *raw*) as content blocks: text, an attachment, or *raw* kept.

    Empty text gives no block; any other part (a function call among a
    message's content, say) is kept verbatim as an ``other`` block.
    """
    if part.text is not None:
        return [ContentBlock(kind="text", text=part.text)] if part.text else []
    blob = part.inline_data or part.file_data
    if blob:
        try:
            b = decode_blob(blob)
        except DECODE_ERRORS:
            return [ContentBlock(kind="other", raw=raw)]
        mime = b.mime_type or ""
        if part.file_data:
            return [ContentBlock(kind="resource", mime_type=mime, uri=b.file_uri or "", raw=raw)]
        kind = "image" if mime.startswith("image/") else "document"
        return [ContentBlock(kind=kind, mime_type=mime, raw=raw)]
    return [ContentBlock(kind="other", raw=raw)]
