"""Whole-file Gemini CLI documents: legacy ``session-*.json``, checkpoints and ``logs.json``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TypeVar

import msgspec
from msgspec import Raw

from agentminutes.harness._gemini_wire import decode_content
from agentminutes.harness._whole_json import JsonDocument
from agentminutes.harness.base import Confidence
from agentminutes.harness.gemini_cli.common import _Rejected, _Src
from agentminutes.harness.gemini_cli.messages import MessagesMixin
from agentminutes.harness.gemini_cli.records import (
    _DECODE_ERRORS,
    _decode_list,
    _decode_log_entry,
    _decode_named,
    _decode_record,
    _decode_tool_checkpoint,
    _decode_top,
    _Record,
)
from agentminutes.schema import ContentBlock, Event, EventKind, Origin, SystemEvent, UserMessage
from agentminutes.timestamps import valid_timestamp

_T = TypeVar("_T")


class DocumentMixin(MessagesMixin):
    """Buffers a whole-file JSON document and converts it at end of input."""

    # -- whole-file documents ---------------------------------------------

    def _start_document(self, line: bytes, lineno: int) -> list[Event]:
        self.mode = "document"
        self.document.append((lineno, line))
        return []

    def _document(self, out: list[Event]) -> None:
        doc = _Document(self.document)
        self.document = []
        first = doc.src(0, len(doc.buf))
        try:
            top = _decode_top(doc.buf)
        except _DECODE_ERRORS as exc:
            line = doc.error_line(str(exc))
            raise _Rejected(
                self.unknown_or_fail("", doc.buf, line, f"invalid JSON document: {exc}")
            ) from None
        if isinstance(top, dict):
            if "messages" in top or ("sessionId" in top and "projectHash" in top):
                self._legacy_session(top, doc, first, out)
            elif "clientHistory" in top or "toolCall" in top:
                self._tool_checkpoint(doc, first, out)
            elif "history" in top:
                self._contents(top["history"], doc, b"history", first, out)
            else:
                raise self._reject("", first, "unrecognized JSON document")
            return
        if not top:
            self._ensure_meta(first, out)
            return
        probe = bytes(top[0])
        if b'"messageId"' in probe and b'"message"' in probe:
            self._logs(top, doc, first, out)
        else:
            self._contents(None, doc, None, first, out, items=top)

    def _elements(
        self,
        doc: _Document,
        key: bytes | None,
        items: list[Raw],
        first: _Src,
        decode: Callable[[Raw], _T],
        what: str,
    ) -> Iterator[tuple[_T, _Src]]:
        """Each of *items*, the array at *key* (``None``: the document), decoded, and where it stands.

        An element that does not decode is rejected as a malformed *what*.
        """
        spans = doc.record_spans(key, len(items))
        for item, span in zip(items, spans, strict=True):
            src = doc.src(*span) if span else first
            try:
                value = decode(item)
            except _DECODE_ERRORS as exc:
                raise self._reject("", src, f"malformed {what}: {exc}") from None
            yield value, src

    def _legacy_session(
        self, top: dict[str, Raw], doc: _Document, first: _Src, out: list[Event]
    ) -> None:
        header = {k: v for k, v in top.items() if k != "messages"}
        try:
            rec = _decode_record(msgspec.json.encode(header))
        except _DECODE_ERRORS as exc:  # a header field of the wrong type (a number for a time)
            raise self._reject("", first, f"malformed session header: {exc}") from None
        self._header(rec, first, out, details=Raw(msgspec.json.encode(header)))
        messages = top.get("messages")
        items = (_decode_list(messages) if messages else None) or []
        for rec, src in self._elements(doc, b"messages", items, first, _decode_record, "message"):
            self._message(rec, src, out)

    def _contents(
        self,
        raw: Raw | None,
        doc: _Document,
        key: bytes | None,
        first: _Src,
        out: list[Event],
        *,
        items: list[Raw] | None = None,
    ) -> None:
        """A list of Gemini API contents ``{role, parts}`` (a saved chat's history)."""
        self._ensure_meta(first, out)
        if items is None:
            try:
                items = (_decode_list(raw) if raw else None) or []
            except _DECODE_ERRORS as exc:
                raise self._reject("", first, f"malformed history: {exc}") from None
        for content, src in self._elements(doc, key, items, first, decode_content, "content"):
            role = content.role or ""
            if role == "user":
                self._user(_Record(type="user", parts=content.parts), src, out)
            elif role == "model":
                rec = _Record(type="model", parts=content.parts)
                self._model_parts(rec, src, out, "", thinking_from=0)
                kept = [Raw(src.raw)] if self.options.keep_raw else None
                out.append(self._assistant(rec, src, "", kept))
            else:
                raise self._reject(role, src, f'unrecognized content role "{role}"')

    def _tool_checkpoint(self, doc: _Document, first: _Src, out: list[Event]) -> None:
        try:
            cp = _decode_tool_checkpoint(doc.buf)
            name = _decode_named(cp.tool_call).name if cp.tool_call else None
        except _DECODE_ERRORS as exc:
            raise self._reject("", first, f"malformed checkpoint: {exc}") from None
        self._contents(cp.client_history, doc, b"clientHistory", first, out)
        if cp.tool_call:
            out.append(
                Event(
                    kind=EventKind.SYSTEM,
                    id=cp.message_id or "",
                    provenance=self._prov(first),
                    system=SystemEvent(
                        subtype="checkpoint/tool_call",
                        text=name or "",
                        details=cp.tool_call,
                    ),
                )
            )

    def _logs(self, items: list[Raw], doc: _Document, first: _Src, out: list[Event]) -> None:
        session = None
        for entry, src in self._elements(doc, None, items, first, _decode_log_entry, "log entry"):
            if entry.type != "user":
                raise self._reject(
                    entry.type or "", src, f'unrecognized log entry type "{entry.type or ""}"'
                )
            if not self.meta_sent:
                self._ensure_meta(src, out, _Record(session_id=entry.session_id))
            ts = valid_timestamp(entry.timestamp)
            if entry.session_id != session:
                session = entry.session_id
                out.append(
                    Event(
                        kind=EventKind.SYSTEM,
                        timestamp=ts,
                        provenance=self._prov(src),
                        system=SystemEvent(subtype="logs/session", text=session or ""),
                    )
                )
            out.append(
                Event(
                    kind=EventKind.USER_MESSAGE,
                    timestamp=ts,
                    id="" if entry.message_id is None else str(entry.message_id),
                    provenance=self._prov(src),
                    user_message=UserMessage(
                        origin=Origin.HUMAN,
                        content=[ContentBlock(kind="text", text=entry.message or "")],
                    ),
                )
            )


class _Document(JsonDocument):
    """A buffered whole-file JSON document and where its parts sit."""

    __slots__ = ()

    def src(self, start: int, end: int) -> _Src:
        return _Src(self.line(start), self.line(max(start, end - 1)), self.buf[start:end])


def _sniff_document(head: bytes) -> Confidence:
    """Grade a head that is not one JSON record per line: a whole-file document."""
    if head.startswith(b"{"):
        if b'"sessionId"' in head and b'"projectHash"' in head:
            return Confidence.CERTAIN
        if b'"clientHistory"' in head and b'"toolCall"' in head:
            return Confidence.CERTAIN
        # A saved chat ({history: contents}) or a tool checkpoint whose UI history
        # fills the head ({history: [{type, text, id}], clientHistory, toolCall}).
        if re.match(rb'\{\s*"history"\s*:\s*\[\s*(?:\]|\{\s*"(?:role|type)")', head):
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH
    if head.startswith(b"["):
        if re.match(rb'\[\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"messageId"\s*:\s*\d', head):
            # A prompt log (logs.json): Qwen Code writes the same; only its folder tells.
            return Confidence.POSSIBLE
        if re.match(rb'\[\s*\{\s*"role"\s*:\s*"(?:user|model)"\s*,\s*"parts"\s*:', head):
            return Confidence.POSSIBLE
    return Confidence.NO_MATCH
