"""The Claude Code adapter: records to events, folding each API message's snapshots into one."""

from __future__ import annotations

from typing import Any, ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._row_set import RowDigests
from agentminutes.harness.base import (
    BaseAdapter,
    Confidence,
    HeadIdentity,
    ParseOptions,
    SkipHook,
    first_line,
    tool_call,
)
from agentminutes.harness.claude_code.content import (
    Blocks,
    _bare_attachment_text,
    _blocks,
    _content_block,
    _fetch_info,
    _inner_blocks,
    _message_usage,
    _plain_text,
    _strip_reminder,
    _typed_blocks,
)
from agentminutes.harness.claude_code.records import (
    _EMPTY_MESSAGE,
    _Attachment,
    _Block,
    _decode_attachment,
    _decode_fast_record,
    _decode_kind,
    _decode_lean_record,
    _decode_message,
    _decode_record,
    _decode_str,
    _FastMessage,
    _Message,
    _Record,
)
from agentminutes.harness.claude_code.vocabulary import (
    CONVERSATION_TYPES,
    HARNESS,
    LOOSE_TOOL_TYPES,
    QUIET_TYPES,
    REQUEST_TYPES,
    SKIP_TYPES,
    TOOL_KINDS,
)
from agentminutes.schema import (
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    TokenUsage,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

try:  # CPython's own BLAKE2 module: hashlib would load OpenSSL at start-up for it
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without it
    from hashlib import blake2b

__all__ = ("ClaudeCodeAdapter",)

#: The block types the one-pass decode reads in a user and an assistant message
#: (the others keep their verbatim JSON, which only the step-by-step path has).
_USER_KINDS: Final = frozenset({"text", "tool_result"})
_ASSISTANT_KINDS: Final = frozenset({"text", "thinking", "tool_use"})
#: The event kinds a user record gives: a projected read that wants none of them
#: (``ParseOptions.kinds``) does not look into user records' content.
_FROM_USER: Final = frozenset({EventKind.USER_MESSAGE, EventKind.TOOL_RESULT})
#: What a lean read may want: a projected read of none but these decodes each record
#: with the lean decoder (records.py) and builds no event of the other kinds.
_LEAN_KINDS: Final = frozenset(
    {EventKind.SESSION_META, EventKind.ASSISTANT_MESSAGE, EventKind.UNKNOWN}
)
#: The record types a lean read passes over on their type alone once the session is
#: open (its ``session_meta`` out, its version known): none of them gives a wanted
#: event or state one depends on (an assistant message's fold, ids and model come
#: from assistant records only). Counted as ``<type>/unread`` skips; the documented
#: skips keep their own names.
_UNREAD_TYPES: Final = (CONVERSATION_TYPES | LOOSE_TOOL_TYPES | REQUEST_TYPES) - {"assistant"}
_QUIET_OR_SKIPPED: Final = SKIP_TYPES | QUIET_TYPES
#: The skip each of them is counted as.
_UNREAD_SKIPS: Final = {kind: f"{kind}/unread" for kind in _UNREAD_TYPES}


class _Fold:
    """The records of one assistant API message seen so far."""

    __slots__ = (
        "first_line",
        "last_line",
        "message_id",
        "model",
        "parent_uuid",
        "raw",
        "stop_reason",
        "text",
        "timestamp",
        "usage",
        "uuid",
    )

    def __init__(self, message_id: str, rec: _Record, msg: _Message, lineno: int) -> None:
        self.message_id = message_id
        self.uuid = rec.uuid or ""
        self.parent_uuid = rec.parent_uuid or ""
        self.timestamp = valid_timestamp(rec.timestamp)
        self.model = msg.model or ""
        self.first_line = lineno
        self.last_line = lineno
        self.stop_reason = ""
        self.usage: TokenUsage | None = None
        self.text: list[ContentBlock] = []
        self.raw: list[Raw] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)


class ClaudeCodeAdapter(BaseAdapter):
    """Parses Claude Code session transcripts (main sessions and subagents)."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "2.1.332"  # the newest release checked (the lab, fixtures/lab)
    _config_attrs: ClassVar[frozenset[str]] = BaseAdapter._config_attrs | {
        "lean",
        "want_user",
        "want_tools",
        "want_thinking",
        "want_system",
        "lean_feed",
        "lean_pass",
        "lean_read",
    }

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        # What a projected read (ParseOptions.kinds) wants built: the events of other
        # kinds are not built, and the state only they depend on (tool names, the
        # calls a re-recorded branch repeats) not kept; every record is still
        # decoded as a full read decodes it, so what is malformed is still reported.
        wanted = self.projected
        self.want_user = wanted is None or not wanted.isdisjoint(_FROM_USER)
        self.want_tools = wanted is None or not wanted.isdisjoint(
            {EventKind.TOOL_CALL, EventKind.TOOL_RESULT}
        )
        self.want_thinking = wanted is None or EventKind.THINKING in wanted
        self.want_system = wanted is None or EventKind.SYSTEM in wanted
        #: Wanting only requests' events: records are read with the lean decoder first.
        self.lean = wanted is not None and wanted <= _LEAN_KINDS
        #: A lean read that keeps no record (``keep_raw``) and writes no verbatim JSON
        #: (``check_verbatim``) is fed each line as it is, first (see feed_lines).
        self.lean_feed = (
            self._lean_feed
            if self.lean and not self.options.keep_raw and not self.options.check_verbatim
            else None
        )
        #: Such a read's look at a record still in the bytes it was read in (see
        #: feed_lines): a record it passes over is never copied out of them.
        self.lean_pass = self._lean_pass if self.lean_feed is not None else None
        #: And its feed of a line lean_pass looked at already and did not pass over.
        self.lean_read = self._lean_read if self.lean_feed is not None else None
        self.meta_sent = False
        self.fold: _Fold | None = None
        # Re-recorded copies: Claude Code re-appends earlier rows with their
        # uuids on a second compaction, and re-records an already answered API
        # message (same message id, new uuids) on a rewound branch. Both are
        # counted as duplicates instead of being accounted twice. A re-appended
        # row is the same record again: same uuid, type and timestamp (other
        # fields, such as ``slug``, may be added to the copy); a *different*
        # record that merely reuses a uuid is kept, as the reference keeps it.
        # Rows are remembered by a 64-bit digest of that identity, kept in a
        # compact set (a long transcript has millions: see _row_set); two rows
        # with digests alike are about as likely as n**2 / 2**65 (1e-7 for 1.5
        # million rows). Not Python's hash(): it changes from process to
        # process, and this set is part of the state a follower saves and
        # another process restores.
        self.seen_rows = RowDigests()
        self.closed_ids: set[str] = set()
        self.answered: set[str] = set()
        self.recopied_calls: set[str] = set()
        self.pending_loose: dict[str, list[str]] = {}
        # Whether the last user turn was typed by a person: a queued command
        # shown right after one is delivered in its "human turn" rendering.
        self.human_turn = False

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = first_line(head)
        try:
            rec = _decode_record(first)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if b'"parentUuid"' in head and b'"sessionId"' in head:
                return Confidence.POSSIBLE
            return Confidence.NO_MATCH
        kind = rec.type or ""
        from agentminutes.harness._qwen_records import is_qwen_record

        if is_qwen_record(first):  # Qwen Code's records share the envelope, not the message shape
            return Confidence.NO_MATCH
        if kind in CONVERSATION_TYPES and rec.session_id and rec.uuid:
            return Confidence.CERTAIN
        if kind in SKIP_TYPES and (
            rec.session_id or kind in ("file-history-snapshot", "file-history-delta")
        ):
            return Confidence.CERTAIN
        if kind in CONVERSATION_TYPES or kind in SKIP_TYPES or kind == "summary":
            return Confidence.POSSIBLE
        if kind in ("teleported-from", "fork-context-ref"):
            # Bookkeeping no other harness writes: a file of it alone is still Claude Code's.
            return Confidence.POSSIBLE
        if kind and (rec.session_id or b'"parentUuid"' in first or b'"leafUuid"' in first):
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    def restore(self, state: bytes) -> None:
        super().restore(state)
        seen: object = self.seen_rows
        if isinstance(seen, set):  # state saved before the compact set: the digests as ints
            self.seen_rows = RowDigests(d.to_bytes(8, "big") for d in seen)

    # -- parsing -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            # One pass for the common record (a lean read's own, when it is one);
            # whatever that decoder refuses is read step by step, as the reference
            # reads it (see records.py).
            rec: _Record = _decode_lean_record(line) if self.lean else _decode_fast_record(line)
        except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError):
            try:
                rec = _decode_record(line)
            except (msgspec.ValidationError, msgspec.DecodeError) as exc:
                event = self.undecodable(exc, line, lineno)
                return [event] if self.meta_sent else self.hold(event)
        return self._record(rec, line, lineno)

    def _lean_feed(self, line: bytes, lineno: int) -> list[Event] | None:
        """:meth:`feed` for a line the lean decoder reads as it is; ``None``, nothing
        done, for any other (the pipeline then feeds it as a full read does).

        Once the session is open, a record is first decoded for its type alone:
        one that is not an assistant's (nor of a type no rule knows) is passed
        over, its other fields unchecked (see ``_UNREAD_TYPES``). Most of a
        transcript's bytes are user records (tool results). A line with the token
        ``"assistant"`` near its start (an assistant record's role) goes to the lean
        decoder at once: only a hint, which decoder goes first, never what is read.
        """
        if self._lean_pass(line, line, 0, len(line), lineno):
            return []
        return self._lean_read(line, lineno)

    def _lean_read(self, line: bytes, lineno: int) -> list[Event] | None:
        """:meth:`_lean_feed` of a line :meth:`_lean_pass` did not pass over."""
        try:
            rec = _decode_lean_record(line)
        except (
            msgspec.ValidationError,
            msgspec.DecodeError,
            UnicodeDecodeError,
        ):  # msgspec < 0.19 on invalid UTF-8
            return None
        return self._record(rec, line, lineno)

    def _lean_pass(
        self, data: bytes, view: bytes | memoryview, start: int, end: int, lineno: int
    ) -> bool:
        """Whether a lean read passes over the record ``data[start:end]`` (*view* is
        *data*, or a memoryview of it): once the session is open, a record decoded for
        its type alone that is not an assistant's (nor of a type no rule knows) is
        counted as a skip and nothing else is done. ``False``: feed it (a record that
        does not decode is left to the feed, which reports it).
        """
        if not (self.meta_sent and self.version):
            return False
        hint = start + 800
        if data.find(b'"assistant"', start, hint if hint < end else end) >= 0:
            return False
        try:
            kind = _decode_kind(view[start:end]).type or ""
        except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError):
            return False
        unread = _UNREAD_SKIPS.get(kind)
        if unread is not None:
            self.skip(unread, lineno)
            return True
        if kind in _QUIET_OR_SKIPPED:
            self.skip(kind, lineno)
            return True
        return False

    def _record(self, rec: _Record, line: bytes, lineno: int) -> list[Event]:
        kind = rec.type or ""
        if kind in SKIP_TYPES or kind in QUIET_TYPES:
            self.skip(kind, lineno)
            return []
        if kind in REQUEST_TYPES:
            return self._request_record(kind, rec, line, lineno)
        if kind not in CONVERSATION_TYPES and kind not in LOOSE_TOOL_TYPES:
            reason = f'unrecognized record type "{kind}"'
            event = self.unknown_or_fail(kind, line, lineno, reason)
            return [event] if self.meta_sent else self.hold(event)
        uuid = rec.uuid
        if uuid and not self.seen_rows.add(_row_digest(uuid, kind, rec.timestamp)):
            self.skip(f"{kind}/duplicate", lineno)
            return []
        if not self.version and rec.version:
            self.version = rec.version
        out: list[Event] = []
        if not self.meta_sent:
            self.meta_sent = True
            out.extend(self.opening(self._meta(rec, line, lineno)))
        if kind == "user":
            if self.want_user:
                self._user(rec, line, lineno, out)
            else:
                # A projected read that wants neither (usage): the record's identity,
                # version and row digest are taken above; its content is not looked
                # into, so a malformed message or tool result there is not reported.
                self.human_turn = False
        elif kind == "assistant":
            self._assistant(rec, line, lineno, out)
        elif kind == "attachment":
            attached = self._attachment(rec, line, lineno)
            if attached is not None:
                out.append(attached)
        elif kind == "system":
            if self.want_system:
                out.append(self._system(rec, line, lineno))
        elif kind == "cost-state":
            if self.want_system:
                out.append(
                    Event(
                        kind=EventKind.SYSTEM,
                        provenance=self.prov(line, lineno),
                        system=SystemEvent(subtype="cost-state", details=Raw(line)),
                    )
                )
        elif self.want_tools:
            out.append(self._loose_tool(rec, line, lineno))
        return out

    def _request_record(self, kind: str, rec: _Record, line: bytes, lineno: int) -> list[Event]:
        """An ``api-request*`` record as a ``system`` event of its type (see REQUEST_TYPES)."""
        try:
            request = _decode_request(line)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            event = self.undecodable(exc, line, lineno)
            return [event] if self.meta_sent else self.hold(event)
        address = request.shapeHash if kind == "api-request-shape" else request.hash
        if address and not self.seen_rows.add(_row_digest(address, kind, "")):
            self.skip(f"{kind}/duplicate", lineno)
            return []
        if not self.want_system:
            return []
        event = Event(
            kind=EventKind.SYSTEM,
            timestamp=valid_timestamp(rec.timestamp),
            provenance=self.prov(line, lineno),
            system=SystemEvent(
                subtype=kind, text=_request_summary(kind, request), details=Raw(line)
            ),
        )
        return [event] if self.meta_sent else self.hold(event)

    def head_identity(self, line: bytes, lineno: int) -> HeadIdentity:
        """The opening record told from its envelope, as :meth:`feed` tells it.

        ``feed`` opens the stream on the first record of a conversation or
        loose tool type, and its ``session_meta`` comes from that record's
        envelope alone (the same decoder ``feed`` falls back on, whose fields
        its one-pass decoder shares); the records it skips before it change
        nothing but counts. Anything else (a line that does not decode, an
        unrecognized type, a nesting too deep) is left to ``feed``.
        """
        if self.meta_sent:
            return None
        try:
            rec = _decode_record(line)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None
        kind = rec.type or ""
        if kind in SKIP_TYPES or kind in QUIET_TYPES:
            return "passed"
        if kind in CONVERSATION_TYPES or kind in LOOSE_TOOL_TYPES:
            return self._meta(rec, line, lineno)
        return None

    def finish(self) -> list[Event]:
        if self.fold is None:
            return self.release()
        return [self._close_fold()]

    def _event(
        self,
        kind: str,
        rec: _Record,
        line: bytes,
        lineno: int,
        message_id: str = "",
        **payload: Any,
    ) -> Event:
        """An event of *kind* from the record *rec* (line *lineno*): its time, ids and line.

        Each event gets provenance of its own, as a record's several events always have.
        """
        return Event(
            kind=kind,
            timestamp=valid_timestamp(rec.timestamp),
            id=rec.uuid or "",
            parent_id=rec.parent_uuid or "",
            message_id=message_id,
            provenance=self.prov(line, lineno),
            **payload,
        )

    def _meta(self, rec: _Record, line: bytes, lineno: int) -> Event:
        return Event(
            kind=EventKind.SESSION_META,
            timestamp=valid_timestamp(rec.timestamp),
            provenance=self.prov(line, lineno),
            session_meta=Meta(
                harness=HARNESS,
                harness_version=rec.version or self.options.harness_version,
                session_id=rec.session_id or "",
                subagent_id=rec.agent_id or "",
                is_subagent=bool(rec.is_sidechain),
                cwd=rec.cwd or "",
                git_branch=rec.git_branch or "",
            ),
        )

    def _message(self, rec: _Record, line: bytes, lineno: int) -> tuple[_Message, Blocks]:
        """Decode a record's message and all of its content blocks, or reject the record."""
        # The one-pass decoder gives a typed message where the field's declared type is Raw.
        message: object = rec.message
        if isinstance(message, _FastMessage):
            kinds = _USER_KINDS if rec.type == "user" else _ASSISTANT_KINDS
            blocks = _typed_blocks(message.content, kinds)
            if blocks is not None:
                return message, blocks
        if not isinstance(message, Raw):
            # A null or absent message, or a block that needs its verbatim JSON:
            # the record read step by step, as the reference reads it.
            rec = _decode_record(line)
        if not rec.message:
            raise self._reject(rec, line, lineno, f"{rec.type} record has no message")
        try:
            msg = _decode_message(rec.message) or _EMPTY_MESSAGE
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self._reject(rec, line, lineno, f"malformed {rec.type} message: {exc}") from None
        try:
            return msg, _blocks(msg.content)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self._reject(rec, line, lineno, f"malformed {rec.type} content: {exc}") from None

    def _reject(self, rec: _Record, line: bytes, lineno: int, reason: str) -> _Rejected:
        return _Rejected(self.unknown_or_fail(rec.type or "", line, lineno, reason))

    def _user(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        try:
            _, blocks = self._message(rec, line, lineno)
        except _Rejected as r:
            out.append(r.event)
            return
        content: list[ContentBlock] = []
        results = False
        if isinstance(blocks, str):
            content.append(ContentBlock(kind="text", text=blocks))
        else:
            for b, raw in blocks:
                if b is not None and b.type == "tool_result":
                    call_id = b.tool_use_id or ""
                    results = True
                    if call_id in self.recopied_calls and call_id in self.answered:
                        continue  # the re-recorded branch's copy of an earlier result
                    ev = self._tool_result(rec, b, line, lineno)
                    out.append(ev)
                    if ev.kind != EventKind.UNKNOWN:
                        self.answered.add(call_id)
                    continue
                content.append(_content_block(b, raw))
        origin_kind = rec.origin.kind if rec.origin is not None else "human"
        self.human_turn = bool(content or not results) and not (
            rec.is_meta or rec.is_compact_summary or origin_kind != "human"
        )
        if not content and results:
            if not any(ev.provenance is not None and ev.provenance.line == lineno for ev in out):
                self.skip("user/duplicate", lineno)
            return
        origin = Origin.HARNESS if rec.is_meta else Origin.HUMAN
        out.append(
            self._event(
                EventKind.USER_MESSAGE,
                rec,
                line,
                lineno,
                user_message=UserMessage(origin=origin, content=content or None),
            )
        )

    def _tool_result(self, rec: _Record, b: _Block, line: bytes, lineno: int) -> Event:
        blocks: list[ContentBlock] = []
        try:
            inner = _inner_blocks(b)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return self.unknown_or_fail(
                "user", line, lineno, f"malformed tool_result content: {exc}"
            )
        if isinstance(inner, str):
            blocks.append(ContentBlock(kind="text", text=inner))
        else:
            blocks.extend(_content_block(block, raw) for block, raw in inner)
        call_id = b.tool_use_id or ""
        enrichment = rec.tool_use_result
        return self._event(
            EventKind.TOOL_RESULT,
            rec,
            line,
            lineno,
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=self.tool_names.get(call_id, ""),
                is_error=bool(b.is_error),
                content=blocks or None,
                fetch=_fetch_info(enrichment),
                enrichment=enrichment,
            ),
        )

    def _assistant(self, rec: _Record, line: bytes, lineno: int, out: list[Event]) -> None:
        self.human_turn = False
        try:
            msg, blocks = self._message(rec, line, lineno)
        except _Rejected as r:
            out.append(r.event)
            return
        if rec.is_api_error_message:
            if not self.want_system:
                return
            text = blocks if isinstance(blocks, str) else _plain_text(blocks)
            out.append(
                self._event(
                    EventKind.SYSTEM,
                    rec,
                    line,
                    lineno,
                    system=SystemEvent(
                        subtype="api_error", level="error", text=text, details=Raw(line)
                    ),
                )
            )
            return
        message_id = msg.id or ""
        fold = self.fold
        if fold is not None and fold.message_id != message_id:
            out.append(self._close_fold())
            fold = None
        if fold is None:
            if message_id in self.closed_ids:
                self._recopied(rec, blocks, line, lineno, message_id, out)
                return
            fold = self.fold = _Fold(message_id, rec, msg, lineno)
        fold.last_line = lineno
        if msg.stop_reason:
            fold.stop_reason = msg.stop_reason
        try:
            usage = _message_usage(msg)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            out.append(self.unknown_or_fail("assistant", line, lineno, f"malformed usage: {exc}"))
            return
        if usage is not None:
            fold.usage = usage
        if self.options.keep_raw:
            if fold.raw is None:
                fold.raw = []
            fold.raw.append(Raw(line))
        if isinstance(blocks, str):
            fold.text.append(ContentBlock(kind="text", text=blocks))
            return
        for b, raw in blocks:
            if b is None:
                out.append(
                    self.unknown_or_fail(
                        "assistant", line, lineno, 'unrecognized assistant content block ""'
                    )
                )
                return
            btype = b.type
            if btype == "text":
                fold.text.append(ContentBlock(kind="text", text=b.text or ""))
            elif btype == "thinking":
                if not self.want_thinking:
                    continue
                out.append(
                    self._event(
                        EventKind.THINKING,
                        rec,
                        line,
                        lineno,
                        message_id=message_id,
                        thinking=Thinking(text=b.thinking or "", signature=b.signature or ""),
                    )
                )
            elif btype == "tool_use":
                if not self.want_tools:
                    continue
                out.append(self._call(rec, b, line, lineno, message_id))
            elif btype == "fallback":
                if not self.want_system:
                    continue
                out.append(
                    self._event(
                        EventKind.SYSTEM,
                        rec,
                        line,
                        lineno,
                        message_id=message_id,
                        system=SystemEvent(subtype="assistant/fallback", details=raw),
                    )
                )
            else:
                out.append(
                    self.unknown_or_fail(
                        "assistant", line, lineno, f'unrecognized assistant content block "{btype}"'
                    )
                )
                return

    def _call(self, rec: _Record, b: _Block, line: bytes, lineno: int, message_id: str) -> Event:
        """The ``tool_call`` of the ``tool_use`` block *b*, its tool's name remembered for its result."""
        call_id = b.id or ""
        name = b.name or ""
        self.name_call(call_id, name)
        return self._event(
            EventKind.TOOL_CALL,
            rec,
            line,
            lineno,
            message_id=message_id,
            tool_call=tool_call(call_id, name, b.input, TOOL_KINDS),
        )

    def _recopied(
        self,
        rec: _Record,
        blocks: Blocks,
        line: bytes,
        lineno: int,
        message_id: str,
        out: list[Event],
    ) -> None:
        """A record of an API message whose fold already closed: a re-recorded copy.

        Its usage and text were accounted by the message's one
        ``assistant_message``; tool calls it repeats are remembered (so their
        repeated results are recognized too) and any call not seen before is
        still emitted, so nothing new is lost.
        """
        emitted = len(out)
        for b, _ in blocks if not isinstance(blocks, str) and self.want_tools else ():
            if b is None or b.type != "tool_use":
                continue
            call_id = b.id or ""
            if call_id in self.tool_names:
                self.recopied_calls.add(call_id)
                continue
            out.append(self._call(rec, b, line, lineno, message_id))
        if len(out) == emitted:
            self.skip("assistant/duplicate", lineno)

    def _loose_tool(self, rec: _Record, line: bytes, lineno: int) -> Event:
        """An early top-level ``tool_use`` / ``tool_result`` record."""
        name = rec.name or ""
        if rec.type == "tool_use":
            call_id = rec.id or rec.uuid or f"line-{lineno}"
            self.name_call(call_id, name)
            self.pending_loose.setdefault(name, []).append(call_id)
            return self._event(
                EventKind.TOOL_CALL,
                rec,
                line,
                lineno,
                tool_call=tool_call(call_id, name, rec.input, TOOL_KINDS),
            )
        call_id = rec.tool_use_id or ""
        if not call_id:
            pending = self.pending_loose.get(name)
            call_id = pending.pop(0) if pending else rec.uuid or f"line-{lineno}"
        content: list[ContentBlock] | None = None
        if rec.output:
            try:
                text = _decode_str(rec.output)
                content = [ContentBlock(kind="text", text=text)]
            except (msgspec.DecodeError, msgspec.ValidationError):
                content = [ContentBlock(kind="other", raw=rec.output)]
        self.answered.add(call_id)
        return self._event(
            EventKind.TOOL_RESULT,
            rec,
            line,
            lineno,
            tool_result=ToolResult(
                tool_call_id=call_id,
                tool_name=self.tool_names.get(call_id, name),
                content=content,
            ),
        )

    def _close_fold(self) -> Event:
        fold = self.fold
        assert fold is not None
        self.fold = None
        if fold.message_id:
            self.closed_ids.add(fold.message_id)
        return Event(
            kind=EventKind.ASSISTANT_MESSAGE,
            timestamp=fold.timestamp,
            id=fold.uuid,
            parent_id=fold.parent_uuid,
            message_id=fold.message_id,
            provenance=Provenance(line=fold.first_line, end_line=fold.last_line, raw=fold.raw),
            assistant_message=AssistantMessage(
                model=fold.model,
                content=fold.text or None,
                stop_reason=fold.stop_reason,
                usage=fold.usage,
            ),
        )

    def _system(self, rec: _Record, line: bytes, lineno: int) -> Event:
        text = ""
        if rec.content and self.options.system_text:
            try:
                text = _decode_str(rec.content)
            except (msgspec.DecodeError, msgspec.ValidationError):
                text = ""
        return self._event(
            EventKind.SYSTEM,
            rec,
            line,
            lineno,
            system=SystemEvent(
                subtype=rec.subtype or "", level=rec.level or "", text=text, details=Raw(line)
            ),
        )

    def _attachment(self, rec: _Record, line: bytes, lineno: int) -> Event | None:
        if not rec.attachment:
            return self.unknown_or_fail(
                "attachment", line, lineno, "attachment record has no attachment"
            )
        try:
            att = _decode_attachment(rec.attachment)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            return self.unknown_or_fail("attachment", line, lineno, f"malformed attachment: {exc}")
        if not self.want_system:
            return None
        text = self._attachment_text(rec, att) if self.options.system_text else ""
        return self._event(
            EventKind.SYSTEM,
            rec,
            line,
            lineno,
            system=SystemEvent(
                subtype=f"attachment/{att.type or ''}", text=text, details=Raw(line)
            ),
        )

    def _attachment_text(self, rec: _Record, att: _Attachment) -> str:
        """A system event's text for an attachment, in the chosen ``--text-form``.

        Where the record keeps what the harness rendered for the model
        (``rendered``; for a queued command right after a typed prompt,
        ``renderedInHumanTurn``), "delivered" is that rendering verbatim and
        "bare" the same without its ``<system-reminder>`` wrapper; otherwise
        both are the attachment's own text.
        """
        parts = rec.rendered
        if att.type == "queued_command" and self.human_turn and rec.rendered_in_human_turn:
            parts = rec.rendered_in_human_turn
        if parts:
            texts = [p.content for p in parts if p is not None and p.content]
            if self.options.text_form == "delivered":
                return "\n\n".join(texts)
            text = "\n\n".join(t for t in map(_strip_reminder, texts) if t)
            if text:
                return text
        return _bare_attachment_text(att)


class _Rejected(Exception):
    """Carries the unknown event a rejected record became (permissive mode)."""

    def __init__(self, event: Event) -> None:
        self.event = event


def _row_digest(uuid: str, kind: str, timestamp: str | None) -> bytes:
    """A digest of a row's identity that is the same in every process."""
    key = f"{uuid}\x00{kind}\x00{timestamp or ''}".encode("utf-8", "surrogatepass")
    return blake2b(key, digest_size=8).digest()


class _ShapeTool(msgspec.Struct):
    name: str = ""


class _Shape(msgspec.Struct):
    system: list[Raw] | str | None = None
    tools: list[_ShapeTool] | None = None


class _RequestParams(msgspec.Struct):
    model: str = ""


class _RequestRecord(msgspec.Struct):
    """The fields of an ``api-request*`` record the event's summary and dedup read."""

    shapeHash: str = ""
    hash: str = ""
    shape: _Shape | None = None
    params: _RequestParams | None = None
    tail: list[str] | None = None
    querySource: str = ""


_decode_request = msgspec.json.Decoder(_RequestRecord).decode


def _request_summary(kind: str, request: _RequestRecord) -> str:
    """One line saying what the record holds (the whole record is the event's details)."""
    if kind == "api-request-shape":
        shape = request.shape or _Shape()
        system = shape.system
        blocks = len(system) if isinstance(system, list) else int(bool(system))
        tools = [t.name for t in shape.tools or ()]
        return f"system prompt ({blocks} blocks), {len(tools)} tools: {', '.join(tools)}"
    if kind == "api-request-blob":
        return f"message {request.hash}"
    model = request.params.model if request.params else ""
    tail = len(request.tail or ())
    source = f", {request.querySource}" if request.querySource else ""
    return f"request to {model or 'the model'}{source}: shape {request.shapeHash[:12]}, {tail} new messages"
