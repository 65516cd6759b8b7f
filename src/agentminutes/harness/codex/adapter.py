"""The Codex adapter: detection, dispatch on the transcript's shape, pretty-printed records."""

from __future__ import annotations

import re
from typing import ClassVar, Final

from agentminutes.harness.base import BOM, Confidence
from agentminutes.harness.codex.exec_stream import ExecStreamMixin
from agentminutes.harness.codex.legacy import LegacyMixin
from agentminutes.harness.codex.records import _decode_probe, _decode_sniff, _DecodeErrors
from agentminutes.harness.codex.shape import (
    _EXEC,
    _LEGACY,
    _ROLLOUT,
    _WRAPPED,
    _has_rollout_record,
    _shape_of,
)
from agentminutes.harness.codex.vocabulary import HARNESS, RECORD_TYPES
from agentminutes.schema import Event

__all__ = ("CodexAdapter",)


def _is_record(line: bytes) -> bool:
    """Whether *line* is a JSON object (of any shape)."""
    try:
        _decode_probe(line)
    except _DecodeErrors:
        return False
    return True


# A JSON string literal on one line (JSON strings cannot hold raw newlines).
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*"')


class CodexAdapter(ExecStreamMixin, LegacyMixin):
    """Parses Codex CLI rollouts (modern and legacy) and ``codex exec --json`` streams."""

    name: ClassVar[str] = HARNESS
    last_checked: ClassVar[str] = "0.171.0"
    #: Codex's ``input_tokens`` already include the cached ones.

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        if head.startswith(BOM):
            head = head[3:]
        first, _, rest = head.partition(b"\n")
        first = first.strip()
        try:
            rec = _decode_sniff(first)
        except _DecodeErrors:
            rec = None
        if rec is not None:
            p = rec.payload
            if (
                rec.type == "session_meta"
                and p is not None
                and (p.session_id or p.id)
                and p.cli_version
            ):
                return Confidence.CERTAIN
            if rec.type in RECORD_TYPES and rec.timestamp:
                return Confidence.POSSIBLE
        shape, conf = _shape_of(first, rest)
        if shape and shape != _ROLLOUT:
            return conf
        if b'"payload"' in head and b'"cli_version"' in head:
            return Confidence.POSSIBLE
        if b'"log_type"' in head and b'"stream_output"' in head and b'"thread.started"' in head:
            return Confidence.POSSIBLE
        if b'"payload"' in head and _has_rollout_record(rest):
            # Not Codex-shaped at the top, but rollout records follow: a
            # drifted Codex format, which parsing then reports loudly.
            return Confidence.POSSIBLE
        return Confidence.NO_MATCH

    # -- parsing -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        if self.meta_sent and self.shape == _ROLLOUT and not self.pretty:
            return self._rollout(line, lineno)
        events = self._shaped(line, lineno)
        return events if self.meta_sent and not self.early else self.opened(events)

    def finish(self) -> list[Event]:
        out: list[Event] = []
        if self.gather is not None:
            start, parts, _ = self.gather
            self.gather = None
            record = b"\n".join(parts)
            out.append(
                self._unknown("", record, start, "incomplete multi-line record at end of input")
            )
        if self.header is not None:
            out.extend(self._flush_header(None, 0))
        self._close(out)
        # Held lines before a first record that never came (or came only now) go out too.
        return [*self.opened(out), *self.release()] if self.early else out

    def _shaped(self, line: bytes, lineno: int) -> list[Event]:
        """*line* read as the transcript's shape, which its first record decides."""
        if self.pretty or (not self.shape and line == b"{"):
            self.pretty = True
            return self._gather(line, lineno)
        shape = self.shape
        if shape == _ROLLOUT:
            return self._rollout(line, lineno)
        if not shape:
            shape = _shape_of(line, None)[0]
            if not shape and not _is_record(line):
                # A comment or a cut line above the first record: no evidence of a shape.
                return self._rollout(line, lineno)
            shape = self.shape = shape or _ROLLOUT
            if shape == _ROLLOUT:
                return self._rollout(line, lineno)
        if shape == _EXEC:
            return self._exec_line(line, lineno)
        if shape == _WRAPPED:
            return self._wrapped_line(line, lineno)
        return self._legacy_line(line, lineno)

    # -- pretty-printed records ----------------------------------------------

    def _gather(self, line: bytes, lineno: int) -> list[Event]:
        """Collect a record written over several lines (a pretty-printed rollout)."""
        if self.gather is None:
            self.gather = (lineno, [], 0)
        start, parts, depth = self.gather
        parts.append(line)
        bare = _STRING.sub(b"", line)
        depth += bare.count(b"{") + bare.count(b"[") - bare.count(b"}") - bare.count(b"]")
        if depth > 0:
            self.gather = (start, parts, depth)
            return []
        self.gather = None
        record = b"\n".join(parts)
        if not self.shape:
            self.shape = _shape_of(record, None)[0] or _ROLLOUT
        if self.shape == _ROLLOUT:
            events = self._rollout(record, start)
        elif self.shape == _LEGACY:
            events = self._legacy_line(record, start)
        elif self.shape == _EXEC:
            events = self._exec_line(record, start)
        else:
            events = self._wrapped_line(record, start)
        for ev in events:
            p = ev.provenance
            if p is not None and p.line == start:
                p.end_line = lineno
        pending = self.pending
        if pending is not None and pending[0] == start:
            pending[1] = lineno
        return events
