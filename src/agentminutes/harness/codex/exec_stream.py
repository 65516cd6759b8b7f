"""``codex exec --json`` streams, bare or wrapped by a logger (``stream_output`` lines)."""

from __future__ import annotations

from typing import Final

from msgspec import Raw

from agentminutes.harness.codex.common import CodexCommon
from agentminutes.harness.codex.content import _map_blocks, _unix_time
from agentminutes.harness.codex.records import (
    _decode_blocks,
    _decode_exec,
    _decode_exec_error,
    _decode_exec_item,
    _decode_mcp_result,
    _decode_usage,
    _decode_wrap_header,
    _decode_wrapped,
    _DecodeErrors,
    _encode,
    _ExecItem,
    _lead,
    _WrapHeader,
)
from agentminutes.harness.codex.shape import _is_logger_header, _is_thread_start
from agentminutes.harness.codex.vocabulary import (
    _EXEC_TYPES,
    _LBRACE,
    _RAW_NULL,
    _SPACE,
    HARNESS,
    HARNESS_PREFIXES,
)
from agentminutes.schema import (
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    Provenance,
    Thinking,
    ToolKind,
    UserMessage,
)


class ExecStreamMixin(CodexCommon):
    """Reads ``codex exec --json`` events, bare or in a logger's wrapping."""

    # -- codex exec --json ---------------------------------------------------

    def _exec_line(self, line: bytes, lineno: int) -> list[Event]:
        out: list[Event] = []
        self._exec(Raw(line), "", line, lineno, out)
        return out

    def _exec(self, data: Raw, ts: str, line: bytes, lineno: int, out: list[Event]) -> None:
        """One ``codex exec --json`` event (*data*), recorded on *line*."""
        try:
            ev = _decode_exec(data)
        except _DecodeErrors as exc:
            out.append(self._unknown("", line, lineno, f"invalid exec event: {exc}"))
            return
        etype = ev.type or ""
        if etype not in _EXEC_TYPES:
            out.append(
                self._unknown(etype, line, lineno, f'unrecognized exec event type "{etype}"')
            )
            return
        if not self.meta_sent:
            self.meta_sent = True
            if etype == "thread.started":
                prov = self.prov(line, lineno)
                if self.header is not None:
                    out.extend(self._flush_header(ev.thread_id or "", lineno, line))
                    return
                meta = Meta(
                    harness=HARNESS,
                    harness_version=self.options.harness_version,
                    session_id=ev.thread_id or "",
                )
                out.append(self._meta_event(ts, prov, meta))
                return
            out.append(self._sparse_meta(ts, line, lineno))
        if etype == "item.completed" or etype == "item.started" or etype == "item.updated":
            self._exec_item(etype, ev.item, ts, line, lineno, out)
        elif etype == "turn.completed":
            if ev.usage and ev.usage != _RAW_NULL:
                try:
                    usage = _decode_usage(ev.usage)
                except _DecodeErrors as exc:
                    out.append(self._unknown(etype, line, lineno, f"malformed token usage: {exc}"))
                    return
                self._add_usage(usage)
            self._close(out)
            out.append(self._system(ts, line, lineno, etype, data))
        elif etype == "turn.started":
            self._close(out)
            out.append(self._system(ts, line, lineno, etype, data))
        elif etype == "turn.failed":
            self._close(out)
            text = ""
            if _lead(ev.error) == _LBRACE:
                try:
                    text = _decode_exec_error(ev.error).message or ""
                except _DecodeErrors:
                    text = ""
            out.append(self._system(ts, line, lineno, etype, data, text=text, level="error"))
        elif etype == "error":
            out.append(
                self._system(ts, line, lineno, etype, data, text=ev.message or "", level="error")
            )
        else:  # a thread.started after the first record
            out.append(self._system(ts, line, lineno, etype, data))

    def _exec_item(
        self, etype: str, raw_item: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        try:
            item = _decode_exec_item(raw_item)
        except _DecodeErrors as exc:
            out.append(self._unknown(etype, line, lineno, f"malformed {etype} item: {exc}"))
            return
        itype = item.type or item.item_type or ""
        if itype == "assistant_message":  # its name before exec --json 0.4x settled
            itype = "agent_message"
        item_id = item.id or ""
        if etype != "item.completed":
            # Started and updated items repeat the completed one, except that a
            # tool's start is when its call was made.
            if etype == "item.started" and itype in ("command_execution", "mcp_tool_call"):
                self._close(out)
                prov = self.prov(line, lineno)
                out.append(self._exec_call(item, itype, ts, prov))
                self.started.add(item_id)
                return
            self.skip(f"{etype}/{itype}", lineno)
            return
        self._close(out)
        if itype == "agent_message":
            text = item.text or ""
            self._open_assistant(
                ts, line, lineno, [ContentBlock(kind="text", text=text)] if text else None
            )
        elif itype == "reasoning":
            out.append(
                Event(
                    kind=EventKind.THINKING,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    thinking=Thinking(text=item.text or ""),
                )
            )
        elif itype == "user_message":
            text = item.text or ""
            origin = (
                Origin.HARNESS if text.lstrip(_SPACE).startswith(HARNESS_PREFIXES) else Origin.HUMAN
            )
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    user_message=UserMessage(
                        origin=origin, content=[ContentBlock(kind="text", text=text)]
                    ),
                )
            )
        elif itype in _EXEC_TOOLS:
            if item_id in self.started:
                self.started.discard(item_id)
            else:
                out.append(self._exec_call(item, itype, ts, self.prov(line, lineno)))
            try:
                out.append(self._exec_result(item, itype, raw_item, ts, self.prov(line, lineno)))
            except _DecodeErrors as exc:
                out.append(self._unknown(etype, line, lineno, f"malformed {itype} result: {exc}"))
        elif itype == "error":
            out.append(
                self._system(
                    ts, line, lineno, "error", raw_item, text=item.message or "", level="error"
                )
            )
        else:
            out.append(self._unknown(etype, line, lineno, f'unrecognized item type "{itype}"'))

    def _exec_call(self, item: _ExecItem, itype: str, ts: str, prov: Provenance) -> Event:
        name, kind = _EXEC_TOOLS[itype]
        call_id = item.id or ""
        if itype == "command_execution":
            tool_input = Raw(b'{"command":' + bytes(item.command or _RAW_NULL) + b"}")
        elif itype == "file_change":
            tool_input = item.changes
        elif itype == "web_search":
            tool_input = item.action or Raw(_encode({"type": "search", "query": item.query or ""}))
        elif itype == "todo_list":
            tool_input = Raw(b'{"items":' + bytes(item.items or _RAW_NULL) + b"}")
        else:  # mcp_tool_call
            name = f"mcp__{item.server or ''}__{item.tool or ''}"
            tool_input = item.arguments
        return self._tool_call(ts, prov, call_id, name, tool_input, kind)

    def _exec_result(
        self, item: _ExecItem, itype: str, raw_item: Raw, ts: str, prov: Provenance
    ) -> Event:
        status = item.status or ""
        content: list[ContentBlock] | None = None
        if itype == "command_execution":
            is_error = (item.exit_code is not None and item.exit_code != 0) or status in (
                "failed",
                "declined",
            )
            if item.aggregated_output is not None:
                content = [ContentBlock(kind="text", text=item.aggregated_output)]
        elif itype == "mcp_tool_call":
            is_error = bool(item.error and item.error != _RAW_NULL) or status == "failed"
            if item.result and item.result != _RAW_NULL:
                blocks = _decode_mcp_result(item.result).content
                if blocks and blocks != _RAW_NULL:
                    content = _map_blocks(_decode_blocks(blocks), blocks)
        elif itype == "web_search":
            is_error = status not in ("", "completed")
        else:  # file_change, todo_list
            is_error = status not in ("", "completed")
        return self._tool_result(ts, prov, item.id or "", is_error, content, raw_item)

    def _wrapped_line(self, line: bytes, lineno: int) -> list[Event]:
        """A line of a logger's capture of ``codex exec --json``."""
        if not self.meta_sent and self.header is None and _is_logger_header(line):
            self.header = (line, lineno)
            return []
        try:
            rec = _decode_wrapped(line)
        except _DecodeErrors as exc:
            return [self._unknown("", line, lineno, f"invalid JSON: {exc}")]
        ts = _unix_time(rec.timestamp_unix)
        out: list[Event] = []
        log_type = rec.log_type or ""
        if log_type == "stream_output" and rec.data:
            if self.header is not None and not _is_thread_start(rec.data):
                out.extend(self._flush_header(None, 0))
            self._exec(rec.data, ts, line, lineno, out)
            return out
        if self.header is not None:
            out.extend(self._flush_header(None, 0))
        if log_type == "session_end":
            if not self.meta_sent:
                out.append(self._sparse_meta(ts, line, lineno))
            self._close(out)
            out.append(self._system(ts, line, lineno, log_type, Raw(line)))
            return out
        out.append(self._unknown(log_type, line, lineno, f'unrecognized log_type "{log_type}"'))
        return out

    def _flush_header(self, thread_id: str | None, lineno: int, line: bytes = b"") -> list[Event]:
        """Emit the held logger header as the session's meta (and its prompt).

        With *thread_id* the meta also covers the ``thread.started`` line *lineno*.
        """
        assert self.header is not None
        head, head_no = self.header
        self.header = None
        self.meta_sent = True
        try:
            h = _decode_wrap_header(head)
        except _DecodeErrors:
            h = _WrapHeader()
        ts = _unix_time(h.timestamp_unix)
        if thread_id is not None:
            raw = [Raw(head), Raw(line)] if self.options.keep_raw else None
            prov = Provenance(line=head_no, end_line=lineno, raw=raw)
        else:
            prov = self.prov(head, head_no)
        meta = Meta(
            harness=HARNESS,
            harness_version=self.options.harness_version,
            session_id=thread_id or "",
            cwd=h.workspace or "",
        )
        out = [self._meta_event(ts, prov, meta)]
        if h.prompt:
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    provenance=self.prov(head, head_no),
                    user_message=UserMessage(
                        origin=Origin.HUMAN, content=[ContentBlock(kind="text", text=h.prompt)]
                    ),
                )
            )
        return out


#: exec --json tool items: the rollout tool name and kind each stands for.
_EXEC_TOOLS: Final[dict[str, tuple[str, str]]] = {
    "command_execution": ("exec_command", ToolKind.EXECUTE),
    "file_change": ("apply_patch", ToolKind.EDIT),
    "web_search": ("web_search", ToolKind.FETCH),
    "mcp_tool_call": ("", ToolKind.OTHER),
    "todo_list": ("update_plan", ToolKind.THINK),
}
