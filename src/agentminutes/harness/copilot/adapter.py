"""The Copilot CLI adapter: detection, and ``events.jsonl`` read record by record."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import msgspec

from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    BOM,
    BaseAdapter,
    Confidence,
    ParseOptions,
    SkipHook,
    tool_call,
)
from agentminutes.harness.copilot.envelope import _Bad, _go_message, _read_envelope
from agentminutes.harness.copilot.events import (
    _content_id,
    _is_null,
    _join,
    _telemetry,
    _unknown,
)
from agentminutes.harness.copilot.legacy import _is_legacy_head, _legacy, _starts_document
from agentminutes.harness.copilot.records import (
    _DECODERS,
    _AssistantMessage,
    _Binary,
    _Content,
    _ContentRef,
    _Context,
    _decode_binary,
    _decode_envelope,
    _decode_head,
    _decode_str,
    _Delivered,
    _Envelope,
    _ReasoningBlock,
    _SessionStart,
    _ToolExecution,
    _ToolRequest,
    _UserMessage,
)
from agentminutes.harness.copilot.vocabulary import (
    HARNESS,
    SNIFF_TYPES,
    TELEMETRY_PREFIXES,
    TELEMETRY_TYPES,
    TEXT_TYPES,
    TOOL_KINDS,
)
from agentminutes.schema import (
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    FetchInfo,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

__all__ = ("CopilotAdapter",)


class CopilotAdapter(BaseAdapter):
    """Parses GitHub Copilot CLI session transcripts (events.jsonl and the legacy JSON)."""

    name: ClassVar[str] = HARNESS
    #: Newest Copilot CLI release among the transcripts this adapter was checked on.
    last_checked: ClassVar[str] = "1.0.102"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.meta_sent = False
        #: Tool name by toolCallId, from tool requests (always) and execution starts (first).
        self.names: dict[str, str] = {}
        #: Skill bodies by ``sha256:<hex>`` content id.
        self.skills: dict[str, str] = {}
        #: A skill event waiting for the next record: ``(line number, line, body)``.
        self.held: tuple[int, bytes, str] | None = None
        #: The legacy single-document session, buffered: ``(line number, line)``.
        self.document: list[tuple[int, bytes]] | None = None
        self.started = False

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(BOM):
            head = head[3:]
        first = head.split(b"\n", 1)[0].strip()
        try:
            rec = _decode_head(first)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if head.lstrip().startswith(b"{") and _is_legacy_head(head):
                return Confidence.CERTAIN
            if b'"copilotVersion"' in head and b'"producer"' in head:
                return Confidence.POSSIBLE
            return Confidence.NO_MATCH
        kind = rec.type or ""
        data = rec.data
        if (
            kind == "session.start"
            and data is not None
            and data.session_id
            and (data.producer == "copilot-agent" or data.copilot_version)
        ):
            return Confidence.CERTAIN
        if kind in SNIFF_TYPES and rec.id and rec.timestamp and rec.parent_id:
            return Confidence.POSSIBLE
        if not kind and _is_legacy_head(head):
            return Confidence.CERTAIN
        return Confidence.NO_MATCH

    # -- reading -------------------------------------------------------------

    @property
    def whole_document(self) -> bool:
        return self.document is not None

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.started and self.held is None and self.document is None:
            # The common case, kept short: an exact-case envelope, nothing held.
            try:
                env = _decode_envelope(line)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return self._line(line, lineno)
            out: list[Event] = []
            self._record(env, line, lineno, out)
            return out
        if self.document is not None:
            self.document.append((lineno, line))
            return []
        if not self.started:
            self.started = True
            if line.startswith(b"{") and _starts_document(line):
                self.document = [(lineno, line)]
                return []
        return self._line(line, lineno)

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if self.document is not None:
            lines, self.document = self.document, None
            converted = _legacy(self, lines)
            if converted is not None:
                return converted
            # Not a JSON document after all: read the lines as events.
            for lineno, line in lines:
                out.extend(self._line(line, lineno))
        if self.held is not None:
            out.append(self._release(None))
        return out

    def _line(self, line: bytes, lineno: int) -> list[Event]:
        out: list[Event] = []
        try:
            read = _read_envelope(line)
        except _Bad as bad:
            if self.held is not None:
                out.append(self._release(None))
            if not self.options.permissive:
                raise self.error(bad.reason, lineno) from None
            out.append(_unknown("", bad.reason, line, lineno, bad.is_json))
            return out
        if read is None:
            return out
        env, line = read
        if self.held is not None:
            out.append(self._release(env))
        self._record(env, line, lineno, out)
        return out

    # -- one record ----------------------------------------------------------

    def _record(self, env: _Envelope, line: bytes, lineno: int, out: list[Event]) -> None:
        kind = env.type or ""
        ts = valid_timestamp(env.timestamp)
        prov = self.prov(line, lineno)
        event = Stamp(
            ts, prov, id=env.id or "", parent_id=env.parent_id or "", agent_id=env.agent_id or ""
        )
        if not self.meta_sent:
            self.meta_sent = True
            if kind == "session.start":
                self._session_start(env, line, lineno, event, out)
                return
            out.append(self.session_meta(Provenance(line=lineno, end_line=lineno), timestamp=ts))
        if kind == "assistant.message":
            self._assistant(env, line, lineno, event, out)
        elif kind == "tool.execution_complete":
            self._tool_result(env, line, lineno, event, out)
        elif kind == "tool.execution_start":
            data = self._data(env, _ToolExecution, line, lineno, out)
            if data is not None:
                call_id, name = data.tool_call_id, data.tool_name
                if call_id and name and call_id not in self.names:
                    self.names[call_id] = name
                out.append(event.system(_telemetry(kind, env.data)))
        elif kind == "user.message":
            data = self._data(env, _UserMessage, line, lineno, out)
            if data is not None:
                source = data.source or ""
                origin = Origin.HARNESS if source.startswith("agent-") else Origin.HUMAN
                block = ContentBlock(kind="text", text=data.content or "")
                out.append(event.user_message(UserMessage(origin=origin, content=[block])))
        elif kind in TEXT_TYPES:
            shape, field = TEXT_TYPES[kind]
            data = self._data(env, shape, line, lineno, out)
            if data is not None:
                text = getattr(data, field) or ""
                system = SystemEvent(subtype=kind, text=text, details=env.data)
                out.append(event.system(system))
        elif kind == "skill.invoked" or kind == "skill.invoked_ref":
            self._skill(env, line, lineno, event, out)
        elif kind == "assistant.reasoning":
            data = self._data(env, _Content, line, lineno, out)
            if data is not None:
                thinking = Thinking(text=data.content or "")
                out.append(event.thinking(thinking))
        elif kind in TELEMETRY_TYPES or kind.startswith(TELEMETRY_PREFIXES):
            # A later session.start too: the meta came from the first record.
            out.append(event.system(_telemetry(kind, env.data)))
        else:
            reason = f'unrecognized record type "{kind}"'
            out.append(self.unknown_or_fail(kind, line, lineno, reason))

    def _data(
        self, env: _Envelope, shape: type[Any], line: bytes, lineno: int, out: list[Event]
    ) -> Any:
        """The record's ``data`` decoded as *shape*, or ``None`` when it is malformed
        (then the record became an ``unknown``, or this raised in strict mode)."""
        kind = env.type or ""
        try:
            data = _DECODERS[shape](env.data) if env.data else None
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            reason = f"malformed {kind}: {_go_message(shape, exc)}"
            out.append(self.unknown_or_fail(kind, line, lineno, reason))
            return None
        if not env.data:
            reason = f"malformed {kind}: unexpected end of JSON input"
            out.append(self.unknown_or_fail(kind, line, lineno, reason))
            return None
        return data if data is not None else shape()

    def _session_start(
        self, env: _Envelope, line: bytes, lineno: int, event: Stamp, out: list[Event]
    ) -> None:
        sparse: list[Event] = []
        data = self._data(env, _SessionStart, line, lineno, sparse)
        if data is None:
            meta = Meta(harness=HARNESS, harness_version=self.options.harness_version)
            out.append(event.session_meta(meta))
            out.extend(sparse)
            return
        self.version = data.copilot_version or ""
        context = data.context or _Context()
        meta = Meta(
            harness=HARNESS,
            harness_version=self.effective_version,
            session_id=data.session_id or "",
            cwd=context.cwd or "",
            git_branch=context.branch or "",
        )
        out.append(event.session_meta(meta))

    def _assistant(
        self, env: _Envelope, line: bytes, lineno: int, event: Stamp, out: list[Event]
    ) -> None:
        data: _AssistantMessage | None = self._data(env, _AssistantMessage, line, lineno, out)
        if data is None:
            return
        message_id = data.message_id or ""
        # The reply's parts carry its message id; the record's other ids stand.
        reply = dataclasses.replace(event, message_id=message_id)
        reasoning = data.reasoning_blocks
        if reasoning is not None:
            for block in reasoning.blocks or ():
                b = block or _ReasoningBlock()
                if b.type == "thinking":
                    thinking = Thinking(text=b.thinking or "", signature=b.signature or "")
                elif b.type == "reasoning":
                    text = _join(b.content) or _join(b.summary)
                    thinking = Thinking(text=text, signature=b.encrypted_content or "")
                else:
                    reason = (
                        f'unrecognized reasoning block type "{b.type or ""}" '
                        f'(provider "{reasoning.provider or ""}")'
                    )
                    out.append(self.unknown_or_fail("assistant.message", line, lineno, reason))
                    return
                out.append(reply.thinking(thinking))
        elif data.reasoning_text or data.reasoning_opaque:
            thinking = Thinking(
                text=data.reasoning_text or "", signature=data.reasoning_opaque or ""
            )
            out.append(reply.thinking(thinking))
        names = self.names
        for request in data.tool_requests or ():
            r = request or _ToolRequest()
            call_id, name = r.tool_call_id or "", r.name or ""
            names[call_id] = name
            out.append(reply.tool_call(tool_call(call_id, name, r.arguments, TOOL_KINDS)))
        content = [ContentBlock(kind="text", text=data.content)] if data.content else None
        message = AssistantMessage(model=data.model or "", content=content)
        out.append(reply.assistant_message(message))

    def _tool_result(
        self, env: _Envelope, line: bytes, lineno: int, event: Stamp, out: list[Event]
    ) -> None:
        data: _ToolExecution | None = self._data(env, _ToolExecution, line, lineno, out)
        if data is None:
            return
        blocks: list[ContentBlock] = []
        result = data.result
        if result is not None:
            raw = result.content
            if raw and not _is_null(raw):
                try:
                    text = _decode_str(raw)
                    blocks.append(ContentBlock(kind="text", text=text or ""))
                except msgspec.ValidationError:
                    blocks.append(ContentBlock(kind="other", raw=raw))
            for item in result.binary_results_for_llm or ():
                try:
                    binary = _decode_binary(item) or _Binary()
                except msgspec.ValidationError as exc:
                    reason = f"malformed {env.type}: {_go_message(_ToolExecution, exc)}"
                    out.append(self.unknown_or_fail(env.type or "", line, lineno, reason))
                    return
                kind = "image" if binary.type == "image" else "other"
                blocks.append(ContentBlock(kind=kind, mime_type=binary.mime_type or "", raw=item))
        error = data.error
        if error is not None and not blocks and error.message:
            blocks.append(ContentBlock(kind="text", text=error.message))
        shell = data.shell_execution
        is_error = (
            data.success is False
            or (shell is not None and bool(shell.exit_code))
            or error is not None
        )
        call_id = data.tool_call_id or ""
        name = self.names.get(call_id, "")
        fetch = None
        telemetry = data.tool_telemetry
        if telemetry is not None and TOOL_KINDS.get(name) == ToolKind.FETCH:
            restricted, metrics = telemetry.restricted_properties, telemetry.metrics
            url = (restricted.url if restricted is not None else None) or ""
            status = (metrics.http_status_code if metrics is not None else None) or 0
            if url or status:
                fetch = FetchInfo(url=url, status_code=status)
        out.append(
            event.tool_result(
                ToolResult(
                    tool_call_id=call_id,
                    tool_name=name,
                    is_error=is_error,
                    content=blocks or None,
                    fetch=fetch,
                    enrichment=env.data,
                ),
            )
        )

    # -- skills: a body is delivered wrapped, as the next record says ----------

    def _skill(
        self, env: _Envelope, line: bytes, lineno: int, event: Stamp, out: list[Event]
    ) -> None:
        kind = env.type or ""
        if kind == "skill.invoked":
            data = self._data(env, _Content, line, lineno, out)
            if data is None:
                return
            body = data.content or ""
            if body:
                self.skills[_content_id(body)] = body
        else:
            ref = self._data(env, _ContentRef, line, lineno, out)
            if ref is None:
                return
            body = self.skills.get(ref.content_id or "", "")
        if body:
            self.held = (lineno, line, body)
            return
        out.append(event.system(_telemetry(kind, env.data)))

    def _release(self, following: _Envelope | None) -> Event:
        """The held skill event, its text wrapped if *following* delivers that body."""
        assert self.held is not None
        lineno, line, body = self.held
        self.held = None
        text = body
        if following is not None and following.type == "skill.context_delivered_ref":
            try:
                delivered = _DECODERS[_Delivered](following.data) if following.data else None
            except (msgspec.ValidationError, msgspec.DecodeError):
                delivered = None
            if delivered is not None and delivered.content_id == _content_id(body):
                text = (delivered.prefix or "") + body + (delivered.suffix or "")
        read = _read_envelope(line)
        assert read is not None
        env = read[0]
        return Event(
            kind=EventKind.SYSTEM,
            timestamp=valid_timestamp(env.timestamp),
            id=env.id or "",
            parent_id=env.parent_id or "",
            agent_id=env.agent_id or "",
            provenance=self.prov(line, lineno),
            system=SystemEvent(subtype=env.type or "", text=text, details=env.data),
        )
