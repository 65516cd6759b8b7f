"""Content of Claude Code records as schema values: prompt text, content blocks, usage, fetch info."""

from __future__ import annotations

from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.harness.claude_code.records import (
    _Attachment,
    _Block,
    _decode_block,
    _decode_blocks,
    _decode_fetch,
    _decode_int,
    _decode_str,
    _decode_usage,
    _FastBlock,
    _FastMessage,
    _Message,
)
from agentminutes.harness.claude_code.vocabulary import _USAGE_KEYS
from agentminutes.schema import (
    NO_RAW,
    ContentBlock,
    FetchInfo,
    TokenUsage,
)

_REMINDER_OPEN: Final = "<system-reminder>\n"
_REMINDER_CLOSE: Final = "\n</system-reminder>"


def _strip_reminder(text: str) -> str:
    """Remove the exact ``<system-reminder>`` wrapper the harness delivers text in."""
    if text.startswith(_REMINDER_OPEN):
        rest = text[len(_REMINDER_OPEN) :]
        if rest.endswith(_REMINDER_CLOSE):
            return rest[: -len(_REMINDER_CLOSE)]
    return text


def _joined(items: list[str | None] | None, sep: str, *, keep_empty: bool) -> str:
    if not items:
        return ""
    return sep.join(x or "" for x in items if keep_empty or x)


def _loose_str(raw: Raw) -> str:
    if not raw:
        return ""
    try:
        return _decode_str(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""


def _bare_attachment_text(att: _Attachment) -> str:
    """An attachment's own text: its string ``content`` or ``text``, else a per-type field."""
    text = _loose_str(att.content) or _loose_str(att.text)
    if text:
        return text
    kind = att.type or ""
    if kind in ("deferred_tools_delta", "agent_listing_delta"):
        return _joined(att.added_lines, "\n", keep_empty=True)
    if kind == "mcp_instructions_delta":
        return _joined(att.added_blocks, "\n\n", keep_empty=True)
    if kind == "edited_text_file":
        return att.snippet or ""
    if kind == "read_truncation_notice":
        return att.banner or ""
    if kind == "instructions":
        return _joined(
            [f.content if f else None for f in att.files or ()], "\n\n", keep_empty=False
        )
    if kind == "prompt_snapshot":
        return _joined(att.system_prompt, "\n\n", keep_empty=False)
    if kind == "queued_command":
        return _prompt_text(att.prompt)
    return ""


def _prompt_text(raw: Raw) -> str:
    if not raw:
        return ""
    try:
        blocks = _blocks(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""
    if isinstance(blocks, str):
        return blocks
    return _plain_text(blocks)


def _content_block(b: _Block | None, raw: Raw) -> ContentBlock:
    if b is None:
        return ContentBlock(kind="other", raw=raw)
    if b.type == "text":
        return ContentBlock(kind="text", text=b.text or "")
    if b.type == "image":
        return ContentBlock(kind="image", raw=raw)
    if b.type == "document":
        return ContentBlock(kind="document", raw=raw)
    return ContentBlock(kind="other", raw=raw)


def _plain_text(blocks: list[tuple[_Block | None, Raw]]) -> str:
    return "\n".join(b.text for b, _ in blocks if b is not None and b.type == "text" and b.text)


#: A message's content: a bare string, or typed blocks each with its verbatim JSON.
Blocks = str | list[tuple["_Block | None", Raw]]


def _blocks(raw: Raw) -> Blocks:
    """Decode message content: a string (one text block) or an array of blocks.

    Every element is decoded before anything is emitted, so a malformed
    element rejects the whole record, never half of it.
    """
    if not raw:
        return []
    value = _decode_blocks(raw)
    if value is None:
        return []
    if isinstance(value, str):
        return value
    return [(_decode_block(item), item) for item in value]


def _typed_blocks(
    content: str | list[_FastBlock | None] | list[_Block | None] | msgspec.UnsetType | None,
    kinds: frozenset[str],
) -> Blocks | None:
    """Content decoded with its record, as :func:`_blocks` gives it; ``None`` to take that path.

    The one-pass decode keeps no block's verbatim JSON, so only blocks of
    *kinds* (which need none) are read here; a tool result's own content must
    be text too. Any other block (an image, a null element, a type the adapter
    rejects) sends the record back to :func:`_blocks`.
    """
    if content is None or content is msgspec.UNSET:
        return []
    if isinstance(content, str):
        return content
    out: list[tuple[_Block | None, Raw]] = []
    for b in content:
        if b is None or b.type not in kinds:
            return None
        if b.type == "tool_result" and not _text_only(b.content):
            return None
        out.append((b, NO_RAW))
    return out


def _text_only(content: object) -> bool:
    """Whether a one-pass decoded tool result's content needs no verbatim JSON."""
    if not isinstance(content, list):
        return True
    return all(b is not None and b.type == "text" for b in content)


def _inner_blocks(b: _Block) -> Blocks:
    """A tool result's content blocks (its ``content``, decoded with the record or raw)."""
    if isinstance(b, _FastBlock):
        content = b.content
        if content is None or content is msgspec.UNSET:
            return []
        if isinstance(content, str):
            return content
        return [(x, NO_RAW) for x in content]
    return _blocks(b.content) if b.content else []


def _message_usage(msg: _Message) -> TokenUsage | None:
    """A message's usage (decoded with the record or raw); ``None`` when it has none."""
    if isinstance(msg, _FastMessage):
        usage = msg.usage
        return None if usage is None or usage is msgspec.UNSET else _usage_fields(usage)
    return _usage(msg.usage) if msg.usage else None


def _usage(raw: Raw) -> TokenUsage | None:
    return _usage_fields(_decode_usage(raw))


def _usage_fields(fields: dict[str, Raw] | None) -> TokenUsage | None:
    if fields is None:
        return None
    counts = [0, 0, 0, 0]
    for i, key in enumerate(_USAGE_KEYS):
        value = fields.pop(key, None)
        if value is not None:
            counts[i] = _decode_int(value) or 0
    return TokenUsage(
        input_tokens=counts[0],
        output_tokens=counts[1],
        cache_read_input_tokens=counts[2],
        cache_creation_input_tokens=counts[3],
        extra=fields or None,
    )


def _fetch_info(raw: Raw) -> FetchInfo | None:
    if not raw or not bytes(raw).lstrip().startswith(b"{"):
        return None
    try:
        f = _decode_fetch(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not f.url:
        return None
    return FetchInfo(
        url=f.url, raw_bytes=f.bytes or 0, status_code=f.code or 0, duration_ms=f.duration_ms or 0
    )
