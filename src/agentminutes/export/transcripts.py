"""One transcript's sessions as event batches: what both exports read a transcript with.

:class:`TranscriptEvents` parses one transcript — a line transcript is one session,
a data export or ``turns.db`` one per conversation — through the run's stages, and
hands out each session's events in batches followed by a :class:`SessionEnd`. The
Parquet rows (:mod:`agentminutes.export.tables`) and the ATIF trajectories
(:mod:`agentminutes.export.trajectories`) are both made from it, so both exports see
the same sessions, identities and partition days. No pyarrow here.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, Final, NamedTuple

import msgspec

from agentminutes.harness import ParseOptions
from agentminutes.harness.base import detects
from agentminutes.pipeline.batch import Batch, Stage
from agentminutes.schema import Event, Meta

__all__ = ("NS_PER_DAY", "SessionEnd", "TranscriptEvents", "partition_day")

NS_PER_DAY: Final = 86_400 * 1_000_000_000


def partition_day(first_ns: int | None, mtime_ns: int) -> int:
    """A session's partition day (days since the epoch): its first timestamp's UTC day, or
    the transcript's modification day when no event has one."""
    return (first_ns if first_ns is not None else mtime_ns) // NS_PER_DAY


class SessionEnd(NamedTuple):
    """The end of one session's events: the records the adapter skipped, its title."""

    skipped: dict[str, int]
    title: str


class _Title(msgspec.Struct):
    type: str = ""
    custom_title: str | None = msgspec.field(default=None, name="customTitle")
    ai_title: str | None = msgspec.field(default=None, name="aiTitle")


_decode_title = msgspec.json.Decoder(_Title).decode
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


class _TitleTap:
    """Claude Code session titles (``custom-title``, ``ai-title`` records), read off the
    chunks on their way to the adapter, which skips those records."""

    def __init__(self) -> None:
        self.custom = ""
        self.ai = ""
        self._carry = b""

    def chunks(self, source: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in source:
            self._scan(chunk)
            yield chunk

    def _scan(self, chunk: bytes) -> None:
        if b'-title"' not in chunk and not self._carry:
            return
        data = self._carry + chunk if self._carry else chunk
        last = data.rfind(b"\n")
        self._carry = data[last + 1 :] if b'-title"' in data[last + 1 :] else b""
        pos = data.find(b'-title"')
        while 0 <= pos <= last:
            start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            self._line(data[start:end])
            pos = data.find(b'-title"', end)

    def _line(self, line: bytes) -> None:
        try:
            rec = _decode_title(line)
        except _DECODE_ERRORS:
            return
        if rec.type == "custom-title" and rec.custom_title:
            self.custom = rec.custom_title
        elif rec.type == "ai-title" and rec.ai_title:
            self.ai = rec.ai_title

    def title(self) -> str:
        return self.custom or self.ai


def _bounded_chunks(path: str, limit: int) -> Iterator[bytes]:
    """The file's first *limit* bytes (its size when the run was planned), in chunks.

    When those bytes end inside a line and the file has grown since, the agent is
    still writing that line: it is left for the next run (the transcript's
    fingerprint has changed by then), so no half record is parsed.
    """
    from agentminutes.pipeline.sources import CHUNK_BYTES, open_error

    err = open_error(path)
    if err is not None:
        raise err
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size > limit:
            limit = _line_end_before(f, limit)
        left = limit
        while left > 0:
            chunk = f.read(min(CHUNK_BYTES, left))
            if not chunk:
                return
            left -= len(chunk)
            yield chunk


def _line_end_before(f: BinaryIO, limit: int) -> int:
    """The offset just past the last newline in the file's first *limit* bytes (0: none)."""
    end = limit
    while end > 0:
        start = max(0, end - (64 << 10))
        f.seek(start)
        block = f.read(end - start)
        found = block.rfind(b"\n")
        if found >= 0:
            f.seek(0)
            return start + found + 1
        end = start
    f.seek(0)
    return 0


class TranscriptEvents:
    """One transcript's sessions: :meth:`parts` parses it and streams them.

    A :class:`~agentminutes.AgentminutesError` (a line no rule accepts, an
    undetectable or unreadable file) propagates after the parts before it: the
    caller decides what to keep. *limit* reads only the file's first bytes (its size
    when the run was planned; see :func:`_bounded_chunks`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        harness: str = "auto",
        options: ParseOptions | None = None,
        stages: Sequence[Stage] = (),
        limit: int | None = None,
    ) -> None:
        self.transcript = os.path.abspath(os.fspath(path))
        self.limit = limit
        self.requested_harness = harness
        self.harness = "" if detects(harness) else harness
        self.options = options or ParseOptions()
        self.stages = list(stages)
        self.size = 0
        self.mtime_ns = 0
        self._layout: list[str] | None = None

    def _stat(self) -> None:
        try:
            st = os.stat(self.transcript)
        except OSError:
            return
        self.size, self.mtime_ns = st.st_size, st.st_mtime_ns

    def parts(self) -> Iterator[list[Event] | SessionEnd]:
        """Parse the transcript: each session's events, in batches, then its :class:`SessionEnd`.

        :attr:`harness` is the detected harness once the first batch is out.
        """
        from agentminutes.pipeline.conversion import Conversion, open_sync_chunks, source_name
        from agentminutes.pipeline.document_sources import DocumentConversion, route
        from agentminutes.pipeline.sync import staged

        self._stat()
        found = route(self.transcript, self.requested_harness)
        if found.document is not None:
            assert found.adapter is not None
            self.harness = found.adapter.name
            docs = DocumentConversion(found.document, found.adapter, self.options)
            for doc in docs.sessions():
                for batch in staged(iter([Batch(doc.events)]), self.stages):
                    yield batch.events
                yield SessionEnd(doc.skipped, doc.conversation.title)
            return
        conv = Conversion(
            name=source_name(self.transcript),
            harness=self.requested_harness,
            options=self.options,
            # A format sorted whole (Antigravity's steps) is streamed once a first read
            # proves the file already in order: memory stays bounded by a batch.
            path=self.transcript,
        )
        tap = _TitleTap()
        source = (
            open_sync_chunks(self.transcript)
            if self.limit is None
            else _bounded_chunks(self.transcript, self.limit)
        )
        for batch in staged(conv.iter_batches(tap.chunks(source)), self.stages):
            if conv.adapter is not None and not self.harness:
                self.harness = conv.adapter.name
            yield batch.events
        if conv.adapter is not None:
            self.harness = conv.adapter.name
        title = tap.title() if self.harness == "claude-code" else ""
        yield SessionEnd(conv.skipped, title)

    def identity(self, meta: Meta) -> Meta:
        """*meta*, completed from the layout where the format records no id (an Antigravity
        conversation's id is its folder's name)."""
        if not meta.session_id and meta.harness == "antigravity":
            from agentminutes.harness.antigravity.layout import conversation_id_of

            return msgspec.structs.replace(meta, session_id=conversation_id_of(self.transcript))
        return meta

    def layout_subagents(self) -> list[str]:
        """Subagent ids the harness's layout puts beside this transcript (Claude Code's
        ``<session>/subagents/agent-*.jsonl``), as ``stats --include-subagents`` joins them."""
        if self._layout is not None:
            return self._layout
        self._layout = []
        if self.harness != "claude-code" or not self.transcript.endswith(".jsonl"):
            return self._layout
        session_dir = self.transcript[: -len(".jsonl")]
        if not os.path.isdir(os.path.join(session_dir, "subagents")):
            return self._layout
        from agentminutes.harness.claude_code.layout import ClaudeCodeLocator
        from agentminutes.harness.layout import ScanContext

        for path in ClaudeCodeLocator().subagents(session_dir, ScanContext(nested=True)):
            name = os.path.basename(path)
            self._layout.append(name[len("agent-") : -len(".jsonl")])
        return self._layout
