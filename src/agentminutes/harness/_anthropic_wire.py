"""The Anthropic Messages API's content blocks as msgspec decodes them.

Claude Code records each message's ``content`` in the API's own shape, and
Factory Droid records its messages the same way whatever the provider, as does
a Cline task folder's API history: one Struct serves them (:class:`Block`).
Cline's 3.x session files and Cursor's transcripts hold the same blocks but
are read refusing a ``null`` type (:class:`TypedBlock`). Only the fields that
steer parsing are typed; a block's input and a tool result's content stay
``Raw`` and are copied through verbatim.
"""

from __future__ import annotations

import msgspec
from msgspec import Raw

from agentminutes.schema import NO_RAW

__all__ = ("Block", "TypedBlock")


class TypedBlock(msgspec.Struct):
    """A content block whose ``type`` must be a string when present (``null`` is malformed).

    How Cline's 3.x session files and Cursor's transcripts are read: the
    block's type, its text or thinking, a tool call's id, name and input, a
    tool result's call id and content.
    """

    type: str = ""
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    input: Raw = NO_RAW
    tool_use_id: str | None = None
    content: Raw = NO_RAW


class Block(TypedBlock):
    """One content block: ``text``, ``thinking``, ``tool_use``, ``tool_result``, ``image`` …

    Its ``type`` may be ``null``, and a tool result's ``is_error`` is read.
    """

    type: str | None = None  # type: ignore[assignment]
    is_error: bool | None = None
