"""The Gemini CLI adapter: detection, and JSONL recordings read record by record."""

from __future__ import annotations

from typing import ClassVar

import msgspec
from msgspec import Raw

from agentminutes.harness.base import BOM, Confidence
from agentminutes.harness.gemini_cli.common import _Rejected, _Src
from agentminutes.harness.gemini_cli.document import DocumentMixin, _sniff_document
from agentminutes.harness.gemini_cli.records import (
    _DECODE_ERRORS,
    _decode_fields,
    _decode_list,
    _decode_record,
    _decode_str,
    _Record,
)
from agentminutes.harness.gemini_cli.vocabulary import (
    _BOOKKEEPING,
    HARNESS,
    MODEL_TYPES,
    NOTICE_TYPES,
)
from agentminutes.schema import Event, EventKind, SystemEvent

__all__ = ("GeminiCliAdapter",)


class GeminiCliAdapter(DocumentMixin):
    """Parses Gemini CLI chat recordings (JSONL and legacy JSON), checkpoints and ``logs.json``."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.61.0"

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(BOM):
            head = head[3:]
        head = head.lstrip()
        first = head.split(b"\n", 1)[0].strip()
        try:
            rec = _decode_record(first)
        except _DECODE_ERRORS:
            return _sniff_document(head)
        if rec.session_id and rec.project_hash:
            return Confidence.CERTAIN
        if rec.id and rec.type in NOTICE_TYPES | MODEL_TYPES | {"user"} and rec.timestamp:
            return Confidence.POSSIBLE
        if rec.set or rec.rewind_to:
            return Confidence.POSSIBLE
        if first.startswith(b"{"):
            return _sniff_document(head)
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    @property
    def whole_document(self) -> bool:
        return self.mode == "document"

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.mode == "document":
            self.document.append((lineno, line))
            return []
        try:
            rec = _decode_record(line)
        except msgspec.ValidationError as exc:
            if not self.mode:
                return self._start_document(line, lineno)
            return [self.unknown_or_fail("", line, lineno, f"invalid record: {exc}")]
        except msgspec.DecodeError as exc:
            if not self.mode:
                return self._start_document(line, lineno)
            return [self.unknown_or_fail("", line, lineno, f"invalid JSON: {exc}")]
        if not self.mode:
            if not (rec.session_id or rec.id or rec.set or rec.rewind_to):
                return self._start_document(line, lineno)
            self.mode = "jsonl"
        src = _Src(lineno, lineno, line)
        out: list[Event] = []
        try:
            self._record(rec, src, out)
        except _Rejected as r:
            out.append(r.event)
        return out

    def finish(self) -> list[Event]:
        out: list[Event] = []
        try:
            if self.mode == "document":
                self._document(out)
            self._release(out)
        except _Rejected as r:
            out.append(r.event)
        return out

    # -- JSONL records -----------------------------------------------------

    def _record(self, rec: _Record, src: _Src, out: list[Event]) -> None:
        if rec.id:
            self._message(rec, src, out)
        elif rec.set:
            self._set(rec, src, out)
        elif rec.rewind_to is not None:
            self._rewind(rec.rewind_to, src, out)
        elif rec.session_id:
            self._header(rec, src, out, details=Raw(src.raw))
        else:
            raise self._reject("", src, "record is neither metadata, a message nor an update")

    def _set(self, rec: _Record, src: _Src, out: list[Event]) -> None:
        try:
            fields = _decode_fields(rec.set) or {}
        except _DECODE_ERRORS as exc:
            raise self._reject("$set", src, f"malformed $set: {exc}") from None
        if "messages" in fields:
            self._history_rewrite(fields["messages"], src, out)
            return
        if set(fields) <= _BOOKKEEPING:
            self.skip("$set", src.first)
            return
        self._ensure_meta(src, out)
        text = ""
        summary = fields.get("summary")
        if summary is not None:
            try:
                text = _decode_str(summary)
            except _DECODE_ERRORS:
                text = ""
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self._prov(src),
                system=SystemEvent(subtype="metadata_update", text=text, details=Raw(src.raw)),
            )
        )

    def _history_rewrite(self, messages: Raw, src: _Src, out: list[Event]) -> None:
        self._release(out)
        self._ensure_meta(src, out)
        try:
            items = _decode_list(messages) or []
            recs = [_decode_record(item) for item in items]
        except _DECODE_ERRORS as exc:
            raise self._reject("$set", src, f"malformed history in $set: {exc}") from None
        ids = [r.id or "" for r in recs]
        new_set = set(ids)
        kept = sum(1 for i in ids if i in self.seen)
        removed = sum(1 for i in self.current if i not in new_set)
        text = f"{len(ids)} messages: {kept} kept, {len(ids) - kept} added, {removed} removed"
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self._prov(src),
                system=SystemEvent(subtype="history_rewrite", text=text, details=Raw(src.raw)),
            )
        )
        self.current = {}
        for r, item in zip(recs, items, strict=True):
            self._message(r, _Src(src.first, src.last, bytes(item)), out, replayed=True)

    def _rewind(self, target: str, src: _Src, out: list[Event]) -> None:
        self._release(out)
        self._ensure_meta(src, out)
        if target in self.current:
            ids = list(self.current)
            self.current = dict.fromkeys(ids[: ids.index(target)])
        else:
            self.current = {}
        out.append(
            Event(
                kind=EventKind.SYSTEM,
                provenance=self._prov(src),
                system=SystemEvent(subtype="rewind", text=target, details=Raw(src.raw)),
            )
        )
