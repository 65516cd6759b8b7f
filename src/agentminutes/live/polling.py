"""When to look at files and folders that no notification reports: a schedule.

Where notification cannot see changes (see :mod:`agentminutes.live.watch`),
each transcript is looked at on a timer: every :data:`FAST_POLL_S` while it
grows, backing off (a quarter of the time it has been idle) to
:data:`SLOW_POLL_S`. Looks more than :data:`POLL_TICK_S` away fall on a
multiple of it, so the idle files are looked at together, on a few wake-ups
a second; an idle file that was released costs one ``stat`` per look.
Folders are looked at every :data:`POLL_DIRS_S`: a changed modification time
means entries came or went.
"""

from __future__ import annotations

import heapq
import math
import os
from collections.abc import Mapping
from typing import Final

from agentminutes.live.transcript import Transcript
from agentminutes.live.watch import FAST_POLL_S, SLOW_POLL_S

__all__ = ("POLL_DIRS_S", "POLL_TICK_S", "PollSchedule")

#: How often the folders of polled roots are looked at for new entries (s).
POLL_DIRS_S: Final = 1.0
#: Polled files idle for a while are looked at on ticks this far apart (s).
POLL_TICK_S: Final = 0.1


class PollSchedule:
    """Polled transcripts and folders, and when each is looked at next."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Transcript]] = []
        self._seq = 0
        #: Polled folders and the modification time they had when last looked at.
        self.dirs: dict[str, int] = {}
        self._dirs_checked = 0.0

    def schedule(self, tr: Transcript, now: float) -> None:
        """Look at *tr* again soon if it grew lately, later the longer it was idle."""
        wait = min(SLOW_POLL_S, max(FAST_POLL_S, (now - tr.last_active) / 4))
        at = now + wait
        if wait >= POLL_TICK_S:
            at = math.ceil(at / POLL_TICK_S) * POLL_TICK_S
        tr.poll_at = at
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, tr))

    def add_folder(self, folder: str, by_path: Mapping[str, Transcript], now: float) -> None:
        """Poll *folder* from now on: the transcripts under it (of *by_path*), its folders."""
        prefix = folder.rstrip(os.sep) + os.sep
        for path, tr in by_path.items():
            if path == folder or path.startswith(prefix):
                tr.polled = True
                self.schedule(tr, now)
        if os.path.isdir(folder):
            for top, _dirs, _files in os.walk(folder):
                self.remember_dir(top)
        else:
            self.remember_dir(folder)

    def remember_dir(self, folder: str) -> None:
        """Poll *folder* (it exists or not) from its modification time now."""
        try:
            self.dirs[folder] = os.stat(folder).st_mtime_ns
        except OSError:
            self.dirs[folder] = -1

    def next_at(self) -> float | None:
        """When the next look is due (monotonic), or ``None``."""
        at = self._heap[0][0] if self._heap else None
        if self.dirs:
            dirs_at = self._dirs_checked + POLL_DIRS_S
            at = dirs_at if at is None else min(at, dirs_at)
        return at

    def due(self, now: float) -> tuple[list[Transcript], list[str]]:
        """The transcripts to read now, and the folders whose entries changed."""
        out: list[Transcript] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, tr = heapq.heappop(heap)
            if at != tr.poll_at or tr.status not in ("new", "active"):
                continue  # rescheduled since, or no longer followed
            if tr.status == "active" and not tr.tail.is_open and tr.vanished_at is None:
                # An idle file released long ago: one stat says whether it changed.
                try:
                    st = os.stat(tr.tail.path)
                except OSError:
                    st = None
                if st is not None and tr.tail.unchanged(st):
                    self.schedule(tr, now)
                    continue
            out.append(tr)
        changed: list[str] = []
        if self.dirs and now - self._dirs_checked >= POLL_DIRS_S:
            self._dirs_checked = now
            for folder, mtime in list(self.dirs.items()):
                try:
                    now_mtime = os.stat(folder).st_mtime_ns
                except OSError:
                    now_mtime = -1
                if now_mtime != mtime:
                    self.dirs[folder] = now_mtime
                    changed.append(folder)
        return out, changed
