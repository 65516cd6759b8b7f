"""Content recorded as a string or as a list of items, and the error of a record that is neither.

pi and Factory Droid record a message's (or a tool result's) content as the
Anthropic-style "a string, or a list of typed blocks", and Kimi Code CLI its
user input and tool output as "a string, or a list of content parts": the same
rule read with a different item. :func:`text_or_items` is that rule; each
format says how one item becomes a content block. A record whose content does
not have the recorded shape raises :class:`Malformed`, whose message the
adapter reports for the record (an ``unknown`` event, or an error when strict).
Formats that keep what they cannot read instead (Continue, Goose, a Cline task's
tool results) read each item with :func:`item_block`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol, TypeVar

import msgspec
from msgspec import Raw

from agentminutes.schema import ContentBlock

__all__ = ("Malformed", "decoded", "item_block", "text_or_items")

_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)
_T = TypeVar("_T")


class Malformed(Exception):
    """A record whose content does not have the recorded shape (the message says how)."""


def decoded(decode: Callable[[Raw], _T], raw: Raw, what: str) -> _T:
    """*raw* decoded by *decode*; a decode error is :class:`Malformed` ("malformed *what*: …")."""
    try:
        return decode(raw)
    except _DECODE_ERRORS as exc:
        raise Malformed(f"malformed {what}: {exc}") from None


def text_or_items(
    raw: Raw,
    decode: Callable[[Raw], str | list[Raw] | None],
    item: Callable[[Raw], ContentBlock],
    what: str,
    *,
    empty_text: bool = True,
) -> list[ContentBlock]:
    """Content *raw* (a string, or a list of items) as content blocks.

    No content and ``null`` give none; a string is one text block (an empty
    one only with *empty_text*); each item of a list is the block *item* makes
    of it. *decode* reads the value, *what* names it in a decode error.
    """
    if not raw:
        return []
    value = decoded(decode, raw, what)
    if value is None:
        return []
    if isinstance(value, str):
        return [ContentBlock(kind="text", text=value)] if value or empty_text else []
    return [item(r) for r in value]


class _Typed(Protocol):
    """An item that says its type, and its text when it is text."""

    @property
    def type(self) -> str | None: ...

    @property
    def text(self) -> str | None: ...


def item_block(
    raw: Raw, decode: Callable[[Raw], _Typed], *, image: str | None = None
) -> ContentBlock:
    """The item *raw* of a content list as a block: its text, an image (an item whose
    type is *image*), else the item kept verbatim (``other``, also when *decode* fails)."""
    try:
        item = decode(raw)
    except _DECODE_ERRORS:
        return ContentBlock(kind="other", raw=raw)
    if item.type == "text":
        return ContentBlock(kind="text", text=item.text or "")
    if image is not None and item.type == image:
        return ContentBlock(kind="image", raw=raw)
    return ContentBlock(kind="other", raw=raw)
