"""Modern Codex rollouts: one ``{timestamp, type, payload}`` envelope a line."""

from __future__ import annotations

from msgspec import Raw

from agentminutes.harness.codex.common import CodexCommon
from agentminutes.harness.codex.content import (
    _content_blocks,
    _input_value,
    _map_blocks,
    _plain_text,
    _timestamp,
    _tool_output,
)
from agentminutes.harness.codex.records import (
    _decode_base_only,
    _decode_blocks,
    _decode_envelope,
    _decode_event_msg,
    _decode_extras,
    _decode_instructions,
    _decode_item,
    _decode_item_type,
    _decode_raw_list,
    _decode_session_meta,
    _decode_tool_search,
    _decode_turn_context,
    _decode_usage,
    _DecodeErrors,
    _EventMsg,
    _Item,
    _lead,
    _SessionMeta,
)
from agentminutes.harness.codex.vocabulary import (
    _DUPLICATE_EVENTS,
    _LBRACE,
    _RAW_NULL,
    _SPACE,
    HARNESS,
    HARNESS_PREFIXES,
    RECORD_TYPES,
)
from agentminutes.schema import (
    NO_RAW,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    ToolKind,
    ToolResult,
    UserMessage,
)


class RolloutMixin(CodexCommon):
    """Reads modern rollout records and the conversation items they carry."""

    # -- modern rollouts -----------------------------------------------------

    def _rollout(self, line: bytes, lineno: int) -> list[Event]:
        try:
            rec = _decode_envelope(line)
        except _DecodeErrors as exc:
            return [self._unknown("", line, lineno, f"invalid JSON: {exc}")]
        rtype = rec.type or ""
        if rtype not in RECORD_TYPES:
            return [self._unknown(rtype, line, lineno, f'unrecognized record type "{rtype}"')]
        ts = _timestamp(rec.timestamp) if rec.timestamp else ""
        out: list[Event] = []
        if not self.meta_sent:
            if rtype == "session_meta":
                return self._first_meta(rec.payload, ts, line, lineno)
            out.append(self._sparse_meta(ts, line, lineno))
        if rtype == "response_item":
            self._response_item(rec.payload, ts, line, lineno, out)
        elif rtype == "event_msg":
            self._event_msg(rec.payload, ts, line, lineno, out)
        elif rtype == "turn_context":
            payload = rec.payload
            if payload:
                try:
                    model = _decode_turn_context(payload).model
                except _DecodeErrors:
                    model = None
                if model:
                    self.model = model
            out.append(self._system(ts, line, lineno, "turn_context", payload))
        elif rtype == "session_meta":
            out.append(self._system(ts, line, lineno, "session_meta", rec.payload))
            payload = rec.payload
            if payload:
                try:
                    base = _decode_base_only(payload).base_instructions
                except _DecodeErrors:
                    base = NO_RAW
                self._base_instructions(base, payload, ts, lineno, out)
        else:
            out.append(self._system(ts, line, lineno, rtype, rec.payload))
        return out

    def _first_meta(self, payload: Raw, ts: str, line: bytes, lineno: int) -> list[Event]:
        self.meta_sent = True
        try:
            sm = (
                _decode_session_meta(payload)
                if payload and payload != _RAW_NULL
                else _SessionMeta()
            )
        except _DecodeErrors as exc:
            sparse = self._meta_event(
                ts,
                self.prov(line, lineno),
                Meta(harness=HARNESS, harness_version=self.options.harness_version),
            )
            reason = f"malformed session_meta: {exc}"
            return [sparse, self._unknown("session_meta", line, lineno, reason)]
        version = sm.cli_version or ""
        if version:
            self.version = version
        subagent = sm.thread_source == "subagent"
        meta = Meta(
            harness=HARNESS,
            harness_version=version or self.options.harness_version,
            session_id=sm.session_id or sm.id or "",
            subagent_id=(sm.id or "") if subagent else "",
            is_subagent=subagent,
            cwd=sm.cwd or "",
            git_branch=(sm.git.branch or "") if sm.git is not None else "",
        )
        out = [self._meta_event(ts, self.prov(line, lineno), meta)]
        self._base_instructions(sm.base_instructions, payload, ts, lineno, out)
        return out

    def _base_instructions(
        self, base: Raw, payload: Raw, ts: str, lineno: int, out: list[Event]
    ) -> None:
        """The system prompt a session_meta records, as its own system event."""
        if _lead(base) != _LBRACE:
            return
        try:
            text = _decode_instructions(base).text
        except _DecodeErrors:
            return
        if text:
            out.append(
                Event(
                    kind=EventKind.SYSTEM,
                    timestamp=ts,
                    provenance=Provenance(line=lineno, end_line=lineno),
                    system=SystemEvent(
                        subtype="session_meta/base_instructions", text=text, details=payload
                    ),
                )
            )

    def _event_msg(self, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            if payload == _RAW_NULL:
                msg: _EventMsg | None = _EventMsg()
            else:
                msg = _decode_event_msg(payload) if payload else None
        except _DecodeErrors as exc:
            out.append(self._unknown("event_msg", line, lineno, f"malformed event_msg: {exc}"))
            return
        if msg is None:
            out.append(self._unknown("event_msg", line, lineno, "event_msg record has no payload"))
            return
        sub = msg.type or ""
        if sub in _DUPLICATE_EVENTS or sub.endswith("_delta"):
            self.skip("event_msg/" + sub, lineno)
            return
        if sub == "token_count":
            info = msg.info
            if info is not None and info.last_token_usage and info.last_token_usage != _RAW_NULL:
                try:
                    usage = _decode_usage(info.last_token_usage)
                except _DecodeErrors as exc:
                    out.append(
                        self._unknown("event_msg", line, lineno, f"malformed token usage: {exc}")
                    )
                    return
                self._add_usage(usage)
            out.append(self._system(ts, line, lineno, sub, payload))
        elif sub == "task_started" or sub == "task_complete":
            self._close(out)
            out.append(self._system(ts, line, lineno, sub, payload))
        elif sub == "error" or sub == "stream_error":
            out.append(
                self._system(ts, line, lineno, sub, payload, text=msg.message or "", level="error")
            )
        else:
            out.append(self._system(ts, line, lineno, sub, payload))

    def _response_item(
        self, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        try:
            item = _decode_item(payload) if payload else _Item()
        except _DecodeErrors as exc:
            # tool_search_call carries object arguments, which the reference
            # cannot type; it leaves the open assistant message open, and so
            # do we, so that both agree on what that message carries.
            if self._tool_search_call(payload, ts, line, lineno, out):
                return
            out.append(
                self._unknown("response_item", line, lineno, f"malformed response_item: {exc}")
            )
            return
        if self.pending is not None:
            self._close(out)
        self._item(item, payload, ts, line, lineno, out)

    def _item(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        """One conversation item (a response_item payload, or a bare legacy line)."""
        itype = item.type or ""
        if itype == "message":
            self._message(item, payload, ts, line, lineno, out)
        elif itype == "reasoning":
            try:
                text = _plain_text(_content_blocks(item.content))
            except _DecodeErrors:
                text = ""
            if not text:
                try:
                    text = _plain_text(_content_blocks(item.summary))
                except _DecodeErrors:
                    text = ""
            out.append(
                Event(
                    kind=EventKind.THINKING,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    thinking=Thinking(text=text, signature=item.encrypted_content or ""),
                )
            )
        elif itype == "function_call" or itype == "custom_tool_call":
            source = item.arguments if itype == "function_call" else item.input
            out.append(
                self._tool_call(
                    ts,
                    self.prov(line, lineno),
                    item.call_id or "",
                    item.name or "",
                    _input_value(source),
                )
            )
        elif itype == "function_call_output" or itype == "custom_tool_call_output":
            self._tool_output(item, payload, ts, line, lineno, out)
        elif itype == "local_shell_call":
            out.append(
                self._tool_call(
                    ts,
                    self.prov(line, lineno),
                    item.call_id or item.id or "",
                    "local_shell",
                    item.action,
                    ToolKind.EXECUTE,
                )
            )
        elif itype == "web_search_call":
            self._paired(
                ts,
                line,
                lineno,
                item.id or f"web_search_call:L{lineno}",
                "web_search",
                ToolKind.FETCH,
                item.action,
                bool(item.status) and item.status != "completed",
                payload,
                out,
            )
        elif itype == "agent_message":
            try:
                text = _plain_text(_content_blocks(item.content))
            except _DecodeErrors as exc:
                out.append(
                    self._unknown(
                        "response_item", line, lineno, f"malformed agent_message content: {exc}"
                    )
                )
                return
            out.append(self._system(ts, line, lineno, "agent_message", payload, text=text))
        elif itype == "ghost_snapshot":
            # The harness's own undo snapshot (a git commit), never shown to the model.
            out.append(self._system(ts, line, lineno, "ghost_snapshot", payload))
        elif itype == "tool_search_call":
            self._tool_search_call(payload, ts, line, lineno, out)
        elif itype == "tool_search_output":
            self._tool_search_output(item, payload, ts, line, lineno, out)
        elif itype == "image_generation_call":
            try:
                prompt = _decode_extras(payload).revised_prompt
            except _DecodeErrors:
                prompt = NO_RAW
            self._paired(
                ts,
                line,
                lineno,
                item.id or f"image_generation_call:L{lineno}",
                "image_generation",
                ToolKind.OTHER,
                prompt,
                bool(item.status) and item.status not in ("completed", "generating"),
                payload,
                out,
            )
        else:
            out.append(
                self._unknown(
                    "response_item", line, lineno, f'unrecognized response_item type "{itype}"'
                )
            )

    def _paired(
        self,
        ts: str,
        line: bytes,
        lineno: int,
        call_id: str,
        name: str,
        kind: str,
        tool_input: Raw,
        is_error: bool,
        enrichment: Raw,
        out: list[Event],
    ) -> None:
        """A tool call and its result recorded by one record."""
        out.append(self._tool_call(ts, self.prov(line, lineno), call_id, name, tool_input, kind))
        out.append(
            Event(
                kind=EventKind.TOOL_RESULT,
                timestamp=ts,
                provenance=self.prov(line, lineno),
                tool_result=ToolResult(
                    tool_call_id=call_id, tool_name=name, is_error=is_error, enrichment=enrichment
                ),
            )
        )

    def _message(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        content = item.content
        try:
            decoded = _decode_blocks(content) if content else None
            blocks = _map_blocks(decoded, content)
        except _DecodeErrors as exc:
            out.append(
                self._unknown("response_item", line, lineno, f"malformed message content: {exc}")
            )
            return
        role = item.role or ""
        if role == "user":
            first = ""
            if isinstance(decoded, str):
                first = decoded
            elif decoded and decoded[0] is not None:
                first = decoded[0].text or ""
            origin = (
                Origin.HARNESS
                if first.lstrip(_SPACE).startswith(HARNESS_PREFIXES)
                else Origin.HUMAN
            )
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    provenance=self.prov(line, lineno),
                    user_message=UserMessage(origin=origin, content=blocks),
                )
            )
        elif role == "assistant":
            self._open_assistant(ts, line, lineno, blocks)
        elif role == "developer" or role == "system":
            out.append(
                self._system(ts, line, lineno, "message/" + role, payload, text=_plain_text(blocks))
            )
        else:
            out.append(
                self._unknown("response_item", line, lineno, f'unrecognized message role "{role}"')
            )

    def _tool_output(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        output = item.output
        try:
            content, is_error = _tool_output(output)
        except _DecodeErrors as exc:
            out.append(
                self._unknown("response_item", line, lineno, f"malformed tool output: {exc}")
            )
            return
        if item.success is not None:
            is_error = not item.success
        out.append(
            self._tool_result(
                ts, self.prov(line, lineno), item.call_id or "", is_error, content, payload
            )
        )

    def _tool_search_call(
        self, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> bool:
        """A ``tool_search_call`` (the model looking up deferred tools); False if it is not one."""
        try:
            item = _decode_tool_search(payload)
            itype = _decode_item_type(payload)
        except _DecodeErrors:
            return False
        if itype != "tool_search_call":
            return False
        call_id = item.call_id or item.id or f"tool_search_call:L{lineno}"
        out.append(
            self._tool_call(
                ts,
                self.prov(line, lineno),
                call_id,
                "tool_search",
                _input_value(item.arguments),
                ToolKind.SEARCH,
            )
        )
        return True

    def _tool_search_output(
        self, item: _Item, payload: Raw, ts: str, line: bytes, lineno: int, out: list[Event]
    ) -> None:
        """The tool definitions a ``tool_search_call`` loaded, one content block each."""
        try:
            tools = _decode_extras(payload).tools
            blocks = (
                [ContentBlock(kind="other", raw=r) for r in _decode_raw_list(tools)]
                if (tools and tools != _RAW_NULL)
                else []
            )
        except _DecodeErrors as exc:
            out.append(
                self._unknown("response_item", line, lineno, f"malformed tool output: {exc}")
            )
            return
        failed = bool(item.status) and item.status != "completed"
        out.append(
            self._tool_result(
                ts, self.prov(line, lineno), item.call_id or "", failed, blocks or None, payload
            )
        )
