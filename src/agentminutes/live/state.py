"""The ``follow --state`` file: per-transcript progress, saved atomically.

The file is JSON, versioned, one entry per transcript (keyed by absolute
path)::

    {
      "agentminutes_follow_state": 1,
      "transcripts": {
        "/home/me/.claude/projects/-src-app/4f3f5eae-….jsonl": {
          "harness": "claude-code",
          "offset": 1720561,            # bytes, just past the last newline delivered
          "line": 940,                  # lines up to that offset
          "dev": 2049, "ino": 1311,     # identity of the file read
          "head_len": 1024, "head_sha256": "…",   # fingerprint of its first bytes
          "marker_sha256": "…",         # the 32 bytes just before the offset
          "adapter": "…base64…",        # the adapter's snapshot() at that offset
          "flushed": ["…sha256…"],      # events a stop already wrote from held state
          "agentminutes_version": "…"   # the version whose adapter wrote the snapshot
        }
      }
    }

It is written as Vector writes its checkpoints: to a temporary file in the
same folder, fsync, rename over the old one, fsync the folder. An entry moves
forward only for events the sink has taken (see :mod:`agentminutes.live.follower`).
The adapter snapshot is a pickle: a state file is trusted input, like a cache,
and is unpickled only by the version that wrote it (another version replays
the transcript up to the offset instead).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import time
from typing import Any, Final

from agentminutes._version import __version__
from agentminutes.errors import UsageError

__all__ = ("STATE_VERSION", "FollowState")

STATE_VERSION: Final = 1


class FollowState:
    """Progress per transcript, loaded from and saved to one file."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self._saved_at = time.monotonic()
        self._check_folder()
        self._load()

    def _check_folder(self) -> None:
        # Checked before anything is followed: a state that cannot be saved would
        # fail only at the first save, after events were already written.
        folder = os.path.dirname(self.path)
        if not os.path.isdir(folder):
            raise UsageError(f"{self.path}: cannot keep the state file: no such directory {folder}")
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{self.path}: cannot keep the state file: {folder} is not writable")

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot read the state file: {exc.strerror}") from None
        if not data.strip():
            return
        try:
            doc = json.loads(data)
            version = doc["agentminutes_follow_state"]
            entries = doc["transcripts"]
        except (ValueError, KeyError, TypeError):
            raise UsageError(f"{self.path}: not an agentminutes follow state file") from None
        if not isinstance(version, int) or version > STATE_VERSION:
            raise UsageError(
                f"{self.path}: state file version {version} is newer than this agentminutes "
                f"reads ({STATE_VERSION}); upgrade agentminutes or start a new state file"
            )
        if not isinstance(entries, dict):
            raise UsageError(f"{self.path}: not an agentminutes follow state file")
        self.entries = entries

    def get(self, key: str) -> dict[str, Any] | None:
        """The saved entry for transcript *key*, or ``None``."""
        return self.entries.get(key)

    def adapter_snapshot(self, entry: dict[str, Any]) -> bytes | None:
        """The adapter snapshot of *entry*, when this version wrote it."""
        raw = entry.get("adapter")
        if not raw or entry.get("agentminutes_version") != __version__:
            return None
        try:
            return base64.b64decode(raw)
        except ValueError:
            return None

    def update(self, key: str, entry: dict[str, Any]) -> None:
        """Record the progress of transcript *key* (saved by the next :meth:`save`)."""
        entry["agentminutes_version"] = __version__
        self.entries[key] = entry
        self.dirty = True

    def save_if_due(self, interval: float = 1.0) -> None:
        """:meth:`save`, at most once per *interval* seconds."""
        if self.dirty and time.monotonic() - self._saved_at >= interval:
            self.save()

    def save(self) -> None:
        """Write the file atomically, if anything changed since the last save."""
        self._saved_at = time.monotonic()
        if not self.dirty:
            return
        doc = {
            "agentminutes_follow_state": STATE_VERSION,
            "agentminutes_version": __version__,
            "transcripts": self.entries,
        }
        data = json.dumps(doc, indent=1, sort_keys=True).encode() + b"\n"
        folder = os.path.dirname(self.path)
        tmp = os.path.join(folder, f".{os.path.basename(self.path)}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        self.dirty = False


def encode_snapshot(snapshot: bytes | None) -> str | None:
    """An adapter snapshot as it is stored in the state file."""
    return base64.b64encode(snapshot).decode() if snapshot is not None else None
