"""The toy harness's adapter: one record a line, each record its events."""

from __future__ import annotations

from typing import ClassVar

import msgspec
from msgspec import Raw

from agentminutes.harness import BaseAdapter, Confidence
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)


class _Record(msgspec.Struct):
    t: str
    at: str = ""
    id: str = ""
    cwd: str = ""
    v: str = ""
    text: str = ""
    msg: str = ""
    model: str = ""
    name: str = ""
    args: Raw = NO_RAW
    out: str | int = ""
    cached: int = 0
    # "in" is a keyword: read through rename
    tokens_in: int = msgspec.field(default=0, name="in")


_DECODE = msgspec.json.Decoder(_Record)


class ToyAdapter(BaseAdapter):
    """Reads toy transcripts."""

    name: ClassVar[str] = "toy"
    last_checked: ClassVar[str] = "1.0"

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = head.split(b"\n", 1)[0]
        try:
            rec = _DECODE.decode(first)
        except msgspec.DecodeError:
            return Confidence.NO_MATCH
        return (
            Confidence.CERTAIN
            if rec.t == "start" and rec.id.startswith("toy-")
            else Confidence.NO_MATCH
        )

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = _DECODE.decode(line)
        except msgspec.DecodeError as exc:
            return [self.undecodable(exc, line, lineno)]
        prov = self.prov(line, lineno)
        if rec.t == "start":
            self.version = rec.v
            meta = Meta(harness="toy", harness_version=rec.v, session_id=rec.id, cwd=rec.cwd)
            return self.opening(
                Event(
                    kind=EventKind.SESSION_META,
                    timestamp=rec.at,
                    provenance=prov,
                    session_meta=meta,
                )
            )
        if rec.t == "user":
            return [
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=rec.at,
                    provenance=prov,
                    user_message=UserMessage(
                        origin=Origin.HUMAN, content=[ContentBlock(kind="text", text=rec.text)]
                    ),
                )
            ]
        if rec.t == "model":
            usage = TokenUsage(
                input_tokens=rec.tokens_in,
                output_tokens=int(rec.out or 0),
                cache_read_input_tokens=rec.cached,
            )
            return [
                Event(
                    kind=EventKind.ASSISTANT_MESSAGE,
                    timestamp=rec.at,
                    provenance=prov,
                    message_id=rec.msg,
                    assistant_message=AssistantMessage(
                        model=rec.model,
                        content=[ContentBlock(kind="text", text=rec.text)],
                        usage=usage,
                    ),
                )
            ]
        if rec.t == "tool":
            self.name_call(rec.id, rec.name)
            return [
                Event(
                    kind=EventKind.TOOL_CALL,
                    timestamp=rec.at,
                    provenance=prov,
                    tool_call=ToolCall(
                        tool_call_id=rec.id, name=rec.name, kind=ToolKind.READ, input=rec.args
                    ),
                )
            ]
        if rec.t == "result":
            return [
                Event(
                    kind=EventKind.TOOL_RESULT,
                    timestamp=rec.at,
                    provenance=prov,
                    tool_result=ToolResult(
                        tool_call_id=rec.id,
                        tool_name=self.tool_names.get(rec.id, ""),
                        content=[ContentBlock(kind="text", text=str(rec.out))],
                    ),
                )
            ]
        if rec.t == "note":
            self.skip("note", lineno)
            return []
        return [self.unknown_or_fail(rec.t, line, lineno, f'unknown record type "{rec.t}"')]
