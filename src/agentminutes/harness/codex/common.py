"""What the readers of every Codex shape share: the adapter's state and its event helpers.

The held assistant message and the usage pooled for it live here (see the accounting
notes in :mod:`agentminutes.harness.codex`).
"""

from __future__ import annotations

from typing import Any, Final

from msgspec import Raw

from agentminutes.harness.base import BaseAdapter, ParseOptions, SkipHook, raw_record
from agentminutes.harness.codex.records import _Usage
from agentminutes.harness.codex.vocabulary import TOOL_KINDS
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Provenance,
    SystemEvent,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    Unknown,
)

_Held = list[Any]

#: How many call ids the adapter remembers the tool name of.
_MAX_TOOL_NAMES: Final = 4096


class CodexCommon(BaseAdapter):
    """State and event helpers shared by the readers of each Codex shape.

    :class:`~agentminutes.harness.codex.CodexAdapter` is this and one mixin per shape.
    """

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        #: The transcript shape, decided by the first record.
        self.shape = ""
        self.meta_sent = False
        #: The model of the latest turn_context.
        self.model = ""
        #: call id -> tool name, for results.
        #: The assistant message waiting to be shown complete, as plain data (it
        #: is pickled by snapshots): first and last line, timestamp, model,
        #: content blocks as (kind, text, raw bytes or None), the record under --keep-raw.
        self.pending: _Held | None = None
        #: Usage recorded since the last assistant message closed:
        #: input, cache read, cache write, output (None: nothing recorded).
        self.pool: list[int] | None = None
        #: exec --json: items whose tool_call went out at item.started.
        self.started: set[str] = set()
        #: A wrapped exec log's header, held until its thread id is known.
        self.header: tuple[bytes, int] | None = None
        #: Whether records are pretty-printed over several lines each.
        self.pretty = False
        #: A pretty-printed record being gathered: start line, parts, depth.
        self.gather: tuple[int, list[bytes], int] | None = None

    # -- shared helpers ----------------------------------------------------

    def _unknown(self, record_type: str, line: bytes, lineno: int, reason: str) -> Event:
        """Raise the loud-failure error, or in permissive mode keep *line* as ``unknown``.

        A line that is not JSON at all is kept as a JSON string, so the output
        stays JSON.
        """
        if not self.options.permissive:
            raise self.error(reason, lineno)
        raw = raw_record(line)
        return Event(
            kind=EventKind.UNKNOWN,
            provenance=Provenance(line=lineno, end_line=lineno),
            unknown=Unknown(record_type=record_type, reason=reason, raw=raw),
        )

    def _meta_event(self, ts: str, prov: Provenance, meta: Meta) -> Event:
        return Event(kind=EventKind.SESSION_META, timestamp=ts, provenance=prov, session_meta=meta)

    def _sparse_meta(self, ts: str, line: bytes, lineno: int) -> Event:
        self.meta_sent = True
        return self.session_meta(self.prov(line, lineno), timestamp=ts)

    def _system(
        self,
        ts: str,
        line: bytes,
        lineno: int,
        subtype: str,
        details: Raw,
        *,
        text: str = "",
        level: str = "",
    ) -> Event:
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=ts,
            provenance=self.prov(line, lineno),
            system=SystemEvent(subtype=subtype, level=level, text=text, details=details),
        )

    def _close(self, out: list[Event]) -> None:
        """Emit the held assistant message, with the usage pooled since the last one."""
        held = self.pending
        if held is None:
            return
        self.pending = None
        start, end, ts, model, blocks, raw = held
        usage = None
        pool = self.pool
        if pool is not None:
            self.pool = None
            usage = TokenUsage(
                input_tokens=pool[0],
                output_tokens=pool[3],
                cache_read_input_tokens=pool[1],
                cache_creation_input_tokens=pool[2],
            )
        content = [
            ContentBlock(kind=kind, text=text, raw=Raw(data) if data is not None else NO_RAW)
            for kind, text, data in blocks
        ]
        out.append(
            Event(
                kind=EventKind.ASSISTANT_MESSAGE,
                timestamp=ts,
                provenance=Provenance(
                    line=start, end_line=end, raw=[Raw(raw)] if raw is not None else None
                ),
                assistant_message=AssistantMessage(
                    model=model, content=content or None, usage=usage
                ),
            )
        )

    def _add_usage(self, usage: _Usage) -> None:
        pool = self.pool
        if pool is None:
            pool = self.pool = [0, 0, 0, 0]
        pool[0] += usage.input_tokens or 0
        pool[1] += usage.cached_input_tokens or 0
        pool[2] += usage.cache_write_input_tokens or 0
        pool[3] += usage.output_tokens or 0

    def _open_assistant(
        self, ts: str, line: bytes, lineno: int, content: list[ContentBlock] | None
    ) -> None:
        blocks = [(b.kind, b.text, bytes(b.raw) if b.raw else None) for b in content or ()]
        raw = bytes(line) if self.options.keep_raw else None
        self.pending = [lineno, lineno, ts, self.model, blocks, raw]

    def _tool_result(
        self,
        ts: str,
        prov: Provenance,
        call_id: str,
        is_error: bool,
        content: list[ContentBlock] | None,
        enrichment: Raw,
    ) -> Event:
        """The result of the call *call_id*, its tool named by the call.

        *content* stands as given: a result whose output is an empty list keeps
        an empty content list (``None`` is no output at all).
        """
        return Event(
            kind=EventKind.TOOL_RESULT,
            timestamp=ts,
            provenance=prov,
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=self.tool_names.get(call_id, ""),
                is_error=is_error,
                content=content,
                enrichment=enrichment,
            ),
        )

    def _tool_call(
        self,
        ts: str,
        prov: Provenance,
        call_id: str,
        name: str,
        tool_input: Raw,
        kind: str | None = None,
    ) -> Event:
        self.name_call(call_id, name)
        names = self.tool_names
        if len(names) > _MAX_TOOL_NAMES:
            # Results follow their calls closely: forget the oldest half.
            for old in list(names)[: _MAX_TOOL_NAMES // 2]:
                del names[old]
        return Event(
            kind=EventKind.TOOL_CALL,
            timestamp=ts,
            provenance=prov,
            tool_call=ToolCall(
                tool_call_id=call_id,
                name=name,
                kind=kind or TOOL_KINDS.get(name, ToolKind.OTHER),
                input=tool_input,
            ),
        )
