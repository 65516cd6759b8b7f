"""What the Gemini CLI readers share: where a record came from, the adapter's state, its meta."""

from __future__ import annotations

from msgspec import Raw

from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import BaseAdapter, ParseOptions, SkipHook
from agentminutes.harness.gemini_cli.records import _Record
from agentminutes.schema import Event, Provenance
from agentminutes.timestamps import valid_timestamp


class _Held:
    """A ``gemini`` message that a later record may still re-append."""

    def __init__(self, message_id: str, record: bytes, first: int) -> None:
        self.message_id = message_id
        self.record = record
        self.first = first
        self.last = first
        self.raw: list[bytes] = []
        self.thinking = 0


class _Src:
    """Where a record came from: its line range and its bytes."""

    __slots__ = ("first", "last", "raw")

    def __init__(self, first: int, last: int, raw: bytes) -> None:
        self.first = first
        self.last = last
        self.raw = raw


class _Rejected(Exception):
    """Carries the unknown event a rejected record became (permissive mode)."""

    def __init__(self, event: Event) -> None:
        self.event = event


class GeminiCommon(BaseAdapter):
    """State and helpers shared by the readers of the Gemini CLI shapes.

    :class:`~agentminutes.harness.gemini_cli.GeminiCliAdapter` is this and its mixins.
    """

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        #: ``"jsonl"`` or ``"document"`` once the first line has shown which.
        self.mode = ""
        self.meta_sent = False
        #: Lines of a whole-file document, kept until end of input.
        self.document: list[tuple[int, bytes]] = []
        self.held: _Held | None = None
        #: Every message id already turned into events.
        self.seen: set[str] = set()
        #: The conversation's message ids as the recorder now has them (for rewrites), in
        #: order: a dict as an ordered set, so the membership test per message is O(1).
        self.current: dict[str, None] = {}
        self.calls_sent: set[str] = set()
        self.results_sent: set[str] = set()

    def _reject(self, record_type: str, src: _Src, reason: str) -> _Rejected:
        return _Rejected(self.unknown_or_fail(record_type, src.raw, src.first, reason))

    def _prov(self, src: _Src) -> Provenance:
        raw = [Raw(src.raw)] if self.options.keep_raw else None
        return Provenance(line=src.first, end_line=src.last, raw=raw)

    def _said(self, src: _Src, timestamp: str, id: str, message_id: str = "") -> Stamp:
        """What an event of the record *src* carries: its time, its ids, its lines of its own."""
        return Stamp(timestamp, self._prov(src), id=id, message_id=message_id)

    def _ensure_meta(self, src: _Src, out: list[Event], rec: _Record | None = None) -> None:
        if self.meta_sent:
            return
        self.meta_sent = True
        subagent = rec is not None and rec.kind == "subagent"
        session_id = (rec.session_id or "") if rec is not None else ""
        out.append(
            self.session_meta(
                self._prov(src),
                timestamp=valid_timestamp(rec.start_time) if rec is not None else "",
                session_id=session_id,
                subagent_id=session_id if subagent else "",
                is_subagent=subagent,
            )
        )
