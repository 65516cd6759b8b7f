"""The ``follow --state`` file: per-transcript progress, recorded batch by batch.

Two files. ``STATE`` is one JSON document, versioned, one entry per
transcript (keyed by the name the follower reports it under: the path it
was first followed at)::

    {
      "agentminutes_follow_state": 1,
      "journal": "9f0c…",                 # pairs the document with its journal
      "transcripts": {
        "/home/me/.claude/projects/-src-app/4f3f5eae-….jsonl": {
          "harness": "claude-code",
          "offset": 1720561,            # bytes, just past the last newline delivered
          "line": 940,                  # lines up to that offset
          "dev": 2049, "ino": 1311,     # identity of the file read
          "head_len": 1024, "head_sha256": "…",   # fingerprint of its first bytes
          "marker_sha256": "…",         # the 32 bytes just before the offset
          "path": "…",                  # where the file is now, when it moved
          "adapter": "…base64…",        # the adapter's snapshot() at snapshot_offset
          "snapshot_offset": 1603220, "snapshot_line": 901,
          "flushed": ["…sha256…"],      # events a stop already wrote from held state
          "agentminutes_version": "…"   # the version whose adapter wrote the snapshot
        }
      }
    }

``STATE.journal`` holds what happened since the document was written: one
line per delivered batch (``{"t": name, "e": entry}``, or ``{"t": name,
"forget": true}`` for a transcript that ended), appended with one
``write`` and no ``fsync``. So a follower killed at any moment (SIGKILL, a
crash loop) resumes after the last batch it delivered — the duplicates a
kill costs are at most the batch in flight — while the work per batch stays
the size of one entry, not of the whole state. Loading reads the document,
then the journal's complete lines (a torn last line is ignored). The
document is rewritten (temporary file, fsync, rename, fsync of the folder)
when the journal has grown past the document's size and at exit, and the
journal is then emptied; a follower starting with no state file writes an
empty one at once (so a follower killed early still resumes), one starting
with a state goes on appending to its journal. Its first line names the document it belongs to: a journal left
beside another document is ignored.

An entry moves forward only for events the sink has taken (see
:mod:`agentminutes.live.follower`). The adapter's snapshot is recorded with
every batch while it is small (:data:`SNAPSHOT_SMALL_BYTES`: most
transcripts up to a few MB); a larger one only every
:data:`SNAPSHOT_GROWTH` times its own size of new input (a snapshot costs
time in proportion to the adapter's state, which grows with the
transcript). A follower resuming at ``offset`` restores the snapshot and
reads the lines between ``snapshot_offset`` and ``offset`` again, writing
none of their events. (So for a large transcript killed with SIGKILL whose
file is truncated or removed before the next follower reads it, the events
its adapter held are those of the older snapshot.) The snapshot is a pickle: a state file is trusted
input, like a cache, and is unpickled only by the version that wrote it
(another version replays the transcript up to the offset instead).
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

__all__ = (
    "SNAPSHOT_FIELDS",
    "SNAPSHOT_GROWTH",
    "STATE_VERSION",
    "FollowState",
    "encode_snapshot",
    "read_progress",
)

STATE_VERSION: Final = 1
#: An adapter whose snapshot is at most this big is snapshot with every batch recorded.
SNAPSHOT_SMALL_BYTES: Final = 16 << 10
#: A larger one, once this many times its size of input was read since the last...
SNAPSHOT_GROWTH: Final = 8
#: ... and never more often than every this many bytes.
SNAPSHOT_MIN_BYTES: Final = 256 << 10
#: The entry fields that describe the snapshot; an update without them keeps the last ones.
SNAPSHOT_FIELDS: Final = ("adapter", "snapshot_offset", "snapshot_line")
#: The journal is folded into the document once it is larger than this, or than the document.
JOURNAL_MIN_BYTES: Final = 1 << 20


class FollowState:
    """Progress per transcript, loaded from and recorded to one state file and its journal."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self.journal_path = self.path + ".journal"
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False
        self._journal_id = ""
        self._journal_fd = -1
        self._journal_bytes = 0
        self._doc_bytes = 0
        self._synced_at = time.monotonic()
        #: Where the journal's complete lines end (a record a kill tore is cut off there).
        self._journal_end = -1
        self._check_folder()
        self._load()
        if self._journal_end >= 0:
            self._reopen_journal()
        else:
            self.save(force=True, durable=bool(self.entries))

    # -- loading ---------------------------------------------------------------------

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
            data = b""
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot read the state file: {exc.strerror}") from None
        if data.strip():
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
            self._journal_id = str(doc.get("journal", ""))
        self._replay_journal()

    def _replay_journal(self) -> None:
        try:
            with open(self.journal_path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise UsageError(f"{self.journal_path}: cannot read: {exc.strerror}") from None
        end = data.rfind(b"\n") + 1
        lines = data[:end].split(b"\n")
        lines.pop()
        if not lines:
            return
        try:
            header = json.loads(lines[0])
        except ValueError:
            header = None
        if not isinstance(header, dict) or not self._journal_id:
            return
        if header.get("journal") != self._journal_id:
            return  # the journal of another state document
        self._journal_end = end
        for raw in lines[1:]:
            try:
                record = json.loads(raw)
                name = record["t"]
            except (ValueError, KeyError, TypeError):
                continue
            if record.get("forget"):
                self.entries.pop(name, None)
            elif isinstance(record.get("e"), dict):
                self._merge(name, record["e"])

    # -- reading -----------------------------------------------------------------------

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

    # -- recording -------------------------------------------------------------------

    def _merge(self, key: str, entry: dict[str, Any]) -> None:
        old = self.entries.get(key)
        if old is not None and "adapter" not in entry:
            for name in SNAPSHOT_FIELDS:
                if name in old:
                    entry[name] = old[name]
        self.entries[key] = entry

    def update(self, key: str, entry: dict[str, Any]) -> None:
        """Record the progress of transcript *key*: in memory, and a line of the journal.

        An *entry* without the snapshot fields keeps the snapshot recorded last.
        """
        entry["agentminutes_version"] = __version__
        self._append({"t": key, "e": entry})
        self._merge(key, dict(entry))
        self.dirty = True

    def move(self, key: str, path: str) -> None:
        """Record that transcript *key*'s file is at *path* now; its progress is unchanged.

        Recorded as soon as a follower knows where the file went, not with the next
        batch: a follower started from this state then finds the transcript at *path*
        even if the file is rewritten before anything more is delivered. The entry
        keeps the version that wrote its snapshot.
        """
        old = self.entries.get(key)
        if old is None or old.get("path", key) == path:
            return
        entry = dict(old)
        if path == key:
            entry.pop("path", None)
        else:
            entry["path"] = path
        self._append({"t": key, "e": entry})
        self.entries[key] = entry
        self.dirty = True

    def forget(self, key: str) -> None:
        """Drop transcript *key* (it ended: what it held was written)."""
        if key in self.entries:
            del self.entries[key]
            self._append({"t": key, "forget": True})
            self.dirty = True

    def _append(self, record: dict[str, Any]) -> None:
        if self._journal_fd < 0:
            return
        data = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        view = memoryview(data)
        while view:
            n = os.write(self._journal_fd, view)
            view = view[n:]
        self._journal_bytes += len(data)

    # -- saving --------------------------------------------------------------------------

    def save_if_due(self, interval: float = 1.0) -> None:
        """At most every *interval* seconds: make the journal durable, fold it when large."""
        if not self.dirty or time.monotonic() - self._synced_at < interval:
            return
        self._synced_at = time.monotonic()
        if self._journal_bytes > max(JOURNAL_MIN_BYTES, 2 * self._doc_bytes):
            self.save()
        elif self._journal_fd >= 0:
            os.fsync(self._journal_fd)

    def _reopen_journal(self) -> None:
        """Go on appending to the journal loaded (no rewrite: a resumed follower starts fast)."""
        self._journal_fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        size = os.fstat(self._journal_fd).st_size
        if size > self._journal_end:
            os.ftruncate(self._journal_fd, self._journal_end)  # a record a kill tore
        self._journal_bytes = self._journal_end
        self._doc_bytes = os.path.getsize(self.path)

    def save(self, *, force: bool = False, durable: bool = True) -> None:
        """Fold the journal into the document, written atomically, and empty the journal.

        *durable* (the default) fsyncs the document and its folder; a new,
        empty state file needs not be.
        """
        self._synced_at = time.monotonic()
        if not (self.dirty or force):
            return
        journal_id = os.urandom(16).hex()
        doc = {
            "agentminutes_follow_state": STATE_VERSION,
            "agentminutes_version": __version__,
            "journal": journal_id,
            "transcripts": self.entries,
        }
        data = json.dumps(doc, indent=1, sort_keys=True).encode() + b"\n"
        folder = os.path.dirname(self.path)
        tmp = os.path.join(folder, f".{os.path.basename(self.path)}.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot write the state file: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                if durable:
                    os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        if durable:
            _fsync_folder(folder)
        self._doc_bytes = len(data)
        self._journal_id = journal_id
        self._start_journal()
        self.dirty = False

    def _start_journal(self) -> None:
        """An empty journal headed by the document's id (replacing the old one atomically)."""
        if self._journal_fd >= 0:
            os.close(self._journal_fd)
            self._journal_fd = -1
        header = json.dumps({"journal": self._journal_id}).encode() + b"\n"
        tmp = self.journal_path + f".{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, header)
            os.replace(tmp, self.journal_path)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        os.close(fd)
        self._journal_fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        self._journal_bytes = len(header)

    def close(self) -> None:
        """Fold the journal in and release it."""
        self.save()
        if self._journal_fd >= 0:
            os.close(self._journal_fd)
            self._journal_fd = -1


def read_progress(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """The entries a state file records now, its journal folded in; read only.

    For looking at a follower's progress from outside (tests, monitoring) while
    it runs or after it was killed: the document alone may lag its journal.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read() or b"{}")
    except (OSError, ValueError):
        return {}
    entries: dict[str, dict[str, Any]] = dict(doc.get("transcripts") or {})
    try:
        with open(path + ".journal", "rb") as f:
            data = f.read()
    except OSError:
        return entries
    lines = data[: data.rfind(b"\n") + 1].split(b"\n")[:-1]
    try:
        if not lines or json.loads(lines[0]).get("journal") != doc.get("journal"):
            return entries
    except ValueError:
        return entries
    for raw in lines[1:]:
        try:
            record = json.loads(raw)
            name = record["t"]
        except (ValueError, KeyError, TypeError):
            continue
        if record.get("forget"):
            entries.pop(name, None)
        elif isinstance(record.get("e"), dict):
            entry = record["e"]
            old = entries.get(name)
            if old is not None and "adapter" not in entry:
                entry.update({k: old[k] for k in SNAPSHOT_FIELDS if k in old})
            entries[name] = entry
    return entries


def _fsync_folder(folder: str) -> None:
    with contextlib.suppress(OSError):
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def encode_snapshot(snapshot: bytes | None) -> str | None:
    """An adapter snapshot as it is stored in the state file."""
    return base64.b64encode(snapshot).decode() if snapshot is not None else None
