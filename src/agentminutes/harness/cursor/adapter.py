"""The Cursor adapter: agent transcripts read line by line.

Mapping decisions:

* The stream opens with a ``session_meta`` carried by the first line (the
  transcript names no session: the session and subagent ids come from the
  file's place, which :mod:`agentminutes.discovery` reads).
* A ``user`` line becomes a ``user_message`` (``human``); its ``tool_result``
  blocks become ``tool_result`` events. The text is kept as delivered under
  ``--text-form delivered``; by default the ``<user_query>`` wrapper Cursor
  puts around what the person typed is taken off (a ``<timestamp>`` line
  before it too).
* An ``assistant`` line becomes ``thinking`` for thinking blocks, a
  ``tool_call`` per ``tool_use`` block and one ``assistant_message`` of its
  text (no model, no usage: the file records neither). Cursor writes no
  tool-use ids, so each call gets ``<line>:<block>`` and a result without an
  id answers the oldest call still unanswered.
* ``turn_ended`` becomes a ``system`` event ``turn_ended`` (level ``error``
  with the error's text when the turn failed). A ``system`` line becomes a
  ``system`` event ``system_message``.
"""

from __future__ import annotations

import re
from collections import deque
from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._anthropic_wire import TypedBlock
from agentminutes.harness.base import BaseAdapter, Confidence, ParseOptions, SkipHook, tool_call
from agentminutes.harness.cursor.vocabulary import HARNESS, TOOL_KINDS
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Origin,
    SystemEvent,
    Thinking,
    UserMessage,
)

__all__ = ("CursorAdapter",)


class _Message(msgspec.Struct):
    content: Raw = NO_RAW


class _Line(msgspec.Struct, forbid_unknown_fields=False):
    role: str | None = None
    type: str | None = None
    message: _Message | None = None
    status: str | None = None
    error: Raw = NO_RAW


class _Block(TypedBlock):
    is_error: bool = False
    source: Raw = NO_RAW


_decode_line = msgspec.json.Decoder(_Line).decode
_decode_blocks = msgspec.json.Decoder(list[_Block] | str).decode
_decode_raw_list = msgspec.json.Decoder(list[Raw]).decode
_decode_any = msgspec.json.Decoder().decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)

#: The wrapper around what the person typed (and the time line Cursor may put before it).
_USER_QUERY: Final = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)


class CursorAdapter(BaseAdapter):
    """Parses Cursor ``agent-transcripts`` JSONL files."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "2.1.207"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.started = False
        #: Calls not answered yet, oldest first (results carry no id to pair by).
        self.open_calls: deque[str] = deque()

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = head.lstrip(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0].strip()
        try:
            fields = msgspec.json.decode(first, type=dict[str, Raw])
        except (*_DECODE_ERRORS, RecursionError):
            return Confidence.NO_MATCH
        keys = set(fields)
        if keys == {"role", "message"}:
            try:
                role = msgspec.json.decode(fields["role"], type=str)
                message = msgspec.json.decode(fields["message"], type=dict[str, Raw])
            except _DECODE_ERRORS:
                return Confidence.NO_MATCH
            if role in ("user", "assistant", "system") and "content" in message:
                return Confidence.CERTAIN
        if keys <= {"type", "status", "error"} and fields.get("type") == b'"turn_ended"':
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    # -- feeding ----------------------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = _decode_line(line)
        except _DECODE_ERRORS as exc:
            return self._early(self.undecodable(exc, line, lineno), line, lineno)
        out: list[Event] = []
        if not self.started:
            self.started = True
            out += self.opening(
                self.session_meta(self.prov(line, lineno), harness_version=self.effective_version)
            )
        if rec.type == "turn_ended" and rec.role is None:
            out.append(self._turn_ended(rec, line, lineno))
            return out
        if rec.role is None or rec.message is None:
            out.append(
                self.unknown_or_fail(
                    rec.type or "", line, lineno, "neither a message nor a turn's end"
                )
            )
            return out
        try:
            blocks = _decode_blocks(rec.message.content) if rec.message.content else []
        except _DECODE_ERRORS as exc:
            out.append(
                self.unknown_or_fail(rec.role, line, lineno, f"malformed message content: {exc}")
            )
            return out
        if isinstance(blocks, str):
            blocks = [_Block(type="text", text=blocks)]
        if rec.role == "user":
            self._user(blocks, line, lineno, out)
        elif rec.role == "assistant":
            self._assistant(blocks, line, lineno, out)
        elif rec.role == "system":
            text = "\n".join(b.text or "" for b in blocks if b.type == "text")
            out.append(
                Event(
                    kind=EventKind.SYSTEM,
                    provenance=self.prov(line, lineno),
                    system=SystemEvent(subtype="system_message", text=text),
                )
            )
        else:
            out.append(
                self.unknown_or_fail(rec.role, line, lineno, f'unrecognized role "{rec.role}"')
            )
        return out

    def _early(self, event: Event, line: bytes, lineno: int) -> list[Event]:
        if self.started:
            return [event]
        return self.hold(event)

    def finish(self) -> list[Event]:
        return self.release()

    # -- records ----------------------------------------------------------------------

    def _turn_ended(self, rec: _Line, line: bytes, lineno: int) -> Event:
        failed = (rec.status or "") not in ("", "success")
        text = ""
        if rec.error:
            try:
                value = _decode_any(rec.error)
            except _DECODE_ERRORS:
                value = None
            text = value if isinstance(value, str) else bytes(rec.error).decode()
        return Event(
            kind=EventKind.SYSTEM,
            provenance=self.prov(line, lineno),
            system=SystemEvent(
                subtype="turn_ended",
                level="error" if failed else "",
                text=text or (rec.status or ""),
                details=Raw(line),
            ),
        )

    def _user(self, blocks: list[_Block], line: bytes, lineno: int, out: list[Event]) -> None:
        content: list[ContentBlock] = []
        results: list[Event] = []
        for i, b in enumerate(blocks):
            if b.type == "tool_result":
                results.append(self._result(b, i, line, lineno))
            elif b.type == "text":
                content.append(ContentBlock(kind="text", text=self._user_text(b.text or "")))
            elif b.type == "image":
                content.append(ContentBlock(kind="image", raw=_block_raw(line, i)))
            else:
                content.append(ContentBlock(kind="other", raw=_block_raw(line, i)))
        out.extend(results)
        if content or not results:
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    provenance=self.prov(line, lineno),
                    user_message=UserMessage(origin=Origin.HUMAN, content=content or None),
                )
            )

    def _user_text(self, text: str) -> str:
        if self.options.text_form == "delivered":
            return text
        m = _USER_QUERY.search(text)
        return m.group(1) if m else text

    def _result(self, b: _Block, i: int, line: bytes, lineno: int) -> Event:
        call_id = b.tool_use_id or ""
        if call_id and call_id in self.open_calls:
            self.open_calls.remove(call_id)
        elif not call_id and self.open_calls:
            call_id = self.open_calls.popleft()
        content: list[ContentBlock] = []
        if b.content:
            try:
                value = _decode_blocks(b.content)
            except _DECODE_ERRORS:
                value = bytes(b.content).decode("utf-8", "replace")
            if isinstance(value, str):
                content.append(ContentBlock(kind="text", text=value))
            else:
                content.extend(
                    ContentBlock(kind="text", text=v.text or "")
                    if v.type == "text"
                    else ContentBlock(kind="other", raw=_block_raw(bytes(b.content), j, top=True))
                    for j, v in enumerate(value)
                )
        return Event(
            kind=EventKind.TOOL_RESULT,
            provenance=self.prov(line, lineno),
            tool_result=self.tool_result(call_id, content, is_error=b.is_error),
        )

    def _assistant(self, blocks: list[_Block], line: bytes, lineno: int, out: list[Event]) -> None:
        texts: list[ContentBlock] = []
        mid = f"line-{lineno}"
        for i, b in enumerate(blocks):
            if b.type == "text":
                texts.append(ContentBlock(kind="text", text=b.text or ""))
            elif b.type in ("thinking", "reasoning"):
                out.append(
                    Event(
                        kind=EventKind.THINKING,
                        message_id=mid,
                        provenance=self.prov(line, lineno),
                        thinking=Thinking(
                            text=b.thinking or b.text or "", signature=b.signature or ""
                        ),
                    )
                )
            elif b.type == "tool_use":
                name = b.name or ""
                call_id = b.id or f"{lineno}:{i}"
                self.name_call(call_id, name)
                self.open_calls.append(call_id)
                out.append(
                    Event(
                        kind=EventKind.TOOL_CALL,
                        message_id=mid,
                        provenance=self.prov(line, lineno),
                        tool_call=tool_call(call_id, name, b.input or NO_RAW, TOOL_KINDS),
                    )
                )
            else:
                texts.append(ContentBlock(kind="other", raw=_block_raw(line, i)))
        if texts or not out:
            out.append(
                Event(
                    kind=EventKind.ASSISTANT_MESSAGE,
                    message_id=mid,
                    provenance=self.prov(line, lineno),
                    assistant_message=AssistantMessage(content=texts or None),
                )
            )


def _block_raw(line: bytes, index: int, *, top: bool = False) -> Raw:
    """The *index*-th content block of *line*, verbatim."""
    try:
        if top:
            return _decode_raw_list(line)[index]
        rec = msgspec.json.decode(line, type=dict[str, Raw])
        message = msgspec.json.decode(rec["message"], type=dict[str, Raw])
        return _decode_raw_list(message["content"])[index]
    except (*_DECODE_ERRORS, KeyError, IndexError):
        return NO_RAW
