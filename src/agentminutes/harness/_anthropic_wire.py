"""The Anthropic Messages API's content blocks as msgspec decodes them.

Claude Code records each message's ``content`` in the API's own shape, and
Factory Droid records its messages the same way whatever the provider, as does
a Cline task folder's API history: one Struct serves them. Only the fields that steer parsing are typed; a block's
input and a tool result's content stay ``Raw`` and are copied through verbatim.
"""

from __future__ import annotations

import msgspec
from msgspec import Raw

from agentminutes.schema import NO_RAW

__all__ = ("Block",)


class Block(msgspec.Struct):
    """One content block: ``text``, ``thinking``, ``tool_use``, ``tool_result``, ``image`` …"""

    type: str | None = None
    text: str | None = None
    thinking: str | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    input: Raw = NO_RAW
    tool_use_id: str | None = None
    is_error: bool | None = None
    content: Raw = NO_RAW
