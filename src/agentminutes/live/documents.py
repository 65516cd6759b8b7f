"""``follow`` for whole-document sources: an OpenCode database, a Cline task folder.

These are not appended to line by line: a database takes commits, a task
folder's JSON documents are rewritten whole. Their adapters offer a *tail*
(:class:`~agentminutes.harness.base.Tailing`, declared by ``tail=True`` in the
harness's description) whose ``poll()`` returns, per session, the events
that became settled since the last poll, reading only what changed, and whose
``flush()`` returns what is still held at a stop. :class:`DocumentFollower`
drives one tail: it stats the files the tail names (the database and its WAL;
the task's documents) every :data:`POLL_S` seconds, polls the tail when they
changed, and yields one batch per session and poll. Its batches are marked
like a multi-transcript follow (one envelope per line), the transcript being
``<database>#<session id>`` for a database and the folder for a task.

It has the surface :func:`agentminutes.live.runner.run_follow` drives
(``batches``, ``stop``, ``prime``, ``skipped``); resuming from ``--state`` is
not offered for these sources.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Final, cast

from agentminutes.errors import DetectError, UsageError
from agentminutes.harness import ParseOptions
from agentminutes.harness.base import DocumentTail, Tailing, detects
from agentminutes.live.follower import Mark
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.verbatim import safe_events

__all__ = ("POLL_S", "DocumentFollower", "document_follower")

#: How often the tail's files are stat-ed (s).
POLL_S: Final = 0.05


def _stderr_notice(message: str) -> None:
    print(f"agentminutes: {message}", file=sys.stderr, flush=True)


@dataclass
class _Config:
    notice: Callable[[str], None] = _stderr_notice


@dataclass
class DocumentFollower:
    """Follows one document source through its adapter's tail."""

    path: str
    harness: str
    tail: DocumentTail
    idle_exit: float | None = None
    config: _Config = field(default_factory=_Config)
    multi: bool = True
    files: dict[str, None] = field(default_factory=dict)
    _stopping: bool = False
    _flush: bool = True
    _signature: tuple[tuple[int, int], ...] | None = None

    def stop(self, *, flush: bool = True) -> None:
        """End the follow: read what changed, then (*flush*) write what is held."""
        self._stopping = True
        self._flush = self._flush and flush

    @property
    def stopping(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stopping

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records of the last conversion, by record type."""
        return dict(getattr(self.tail.adapter, "skipped", {}))

    def _key(self, session: str) -> str:
        return f"{self.path}#{session}" if os.path.isfile(self.path) else self.path

    def _batches(self, found: list[tuple[str, list[Any]]]) -> list[Batch]:
        out = []
        for session, events in found:
            key = self._key(session)
            self.files[key] = None
            if events:
                out.append(Batch(safe_events(events), Mark(key, self.harness)))
        return out

    def _changed(self) -> bool:
        signature = []
        for p in self.tail.watched():
            try:
                st = os.stat(p)
                signature.append((st.st_size, st.st_mtime_ns))
            except OSError:
                signature.append((-1, 0))
        new = tuple(signature)
        if new == self._signature:
            return False
        self._signature = new
        return True

    def prime(self) -> list[Batch]:
        """What the source holds now (read before the event loop starts)."""
        self._changed()
        return self._batches(self.tail.poll())

    async def batches(self) -> AsyncGenerator[Batch, None]:
        """Batches as the source changes, until :meth:`stop` or ``idle_exit``."""
        import anyio

        if self._signature is None:
            self._changed()
            for batch in self._batches(self.tail.poll()):
                yield batch
        last = time.monotonic()
        while not self._stopping:
            if self.idle_exit is not None and time.monotonic() - last >= self.idle_exit:
                break
            await anyio.sleep(POLL_S)
            if self._changed():
                last = time.monotonic()
                for batch in self._batches(self.tail.poll()):
                    yield batch
            else:
                yield Batch([], None)  # a tick
        for batch in self._batches(self.tail.poll() if self._changed() else []):
            yield batch
        if self._flush:
            for batch in self._batches(self.tail.flush()):
                yield batch


def _line_transcript(path: str, harness: str) -> bool:
    """Whether *path* is a regular file that is surely no document source.

    Told from its first bytes as :func:`~agentminutes.pipeline.documents.route`
    tells it (no container, no document format detected), without loading
    the document pipeline: a follower of one transcript writes its first
    events sooner. ``False`` sends *path* on to ``route``, which decides.
    """
    from agentminutes.harness import (
        SNIFF_BYTES,
        detect,
        document_adapter_class,
        is_document_adapter,
    )
    from agentminutes.pipeline.sources import container_of

    if not os.path.isfile(path):
        return False
    if not detects(harness):
        return document_adapter_class(harness) is None
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return False
    if container_of(head) is not None:
        return False
    if not head:
        return True
    try:
        cls, _ = detect(head)
    except DetectError:
        return True  # no format at all: the line follower reports it
    return not is_document_adapter(cls)


def document_follower(
    paths: list[str],
    *,
    harness: str,
    state: str | None,
    idle_exit: float | None,
    options: ParseOptions,
) -> DocumentFollower | None:
    """A follower for *paths* when they are one document source that can be followed.

    ``None`` for anything else (line transcripts, folders of transcripts),
    which the line follower takes.

    Raises:
        UsageError: a document source that cannot be followed, or ``--state``.
    """
    if len(paths) != 1:
        return None
    path = os.path.abspath(os.path.expanduser(paths[0]))
    if not os.path.exists(path) or _line_transcript(path, harness):
        return None
    from agentminutes.errors import AgentminutesError
    from agentminutes.pipeline.documents import route

    try:
        found = route(path, harness)
    except AgentminutesError:
        # A folder of transcripts, or a transcript not written yet (empty): the line
        # follower takes it, and says what is wrong with it if anything is.
        return None
    if found.document is None or found.adapter is None:
        return None
    adapter = found.adapter(options)
    from agentminutes.harness.registry import described

    declared = described(adapter.name)
    if declared is None or not declared.tail:
        raise UsageError(
            f"{path}: a {found.adapter.name} source is a whole document (an export), "
            "not one that grows; use convert"
        )
    if state is not None:
        raise UsageError(f"{path}: --state is not supported when following a {adapter.name} source")
    if idle_exit is not None and idle_exit <= 0:
        raise UsageError("idle exit must be a positive number of seconds")
    doc_path = found.document.path or path
    tail = cast(Tailing, adapter).tail(found.document)
    return DocumentFollower(doc_path, adapter.name, tail, idle_exit=idle_exit)
