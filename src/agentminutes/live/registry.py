"""The transcripts a follower knows: by name, by path, by file identity; their saved entries.

A transcript's *name* is what its events are reported and recorded under:
the path it was first followed at. Its *path* is where its file is now (a
rename within the followed folders changes the path, not the name). Its
*identity* is the file: device and inode, which cannot be reused while the
file is open, and the fingerprint of its first bytes, which tells the file
from another given the same inode number once it is not (released, or
across a restart).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from agentminutes.live.config import FollowConfig, Mark
from agentminutes.live.tail import sha256_hex
from agentminutes.live.transcript import Transcript
from agentminutes.pipeline.batch import Batch

__all__ = ("Registry",)


class Registry:
    """Transcripts by name, path and identity, and which saved entry each continues."""

    def __init__(self, config: FollowConfig) -> None:
        self.config = config
        #: The transcripts followed now, by name.
        self.files: dict[str, Transcript] = {}
        #: ... by the path their file has now.
        self.by_path: dict[str, Transcript] = {}
        #: Whose path vanished: kept open a moment, looked for under another name.
        self.vanished: set[Transcript] = set()
        self._by_inode: dict[tuple[int, int], Transcript] = {}
        self._indexed: dict[Transcript, tuple[int, int]] = {}
        self._names: set[str] = set()
        #: Names of transcripts that ended in this run.
        self._ended: set[str] = set()
        self._skipped_ended: dict[str, int] = {}
        self._entries_by_inode: dict[tuple[int, int], list[str]] | None = None
        #: (device, inode) of the files whose transcripts ended or failed.
        self._retired_files: set[tuple[int, int]] = set()

    @property
    def followed(self) -> int:
        """How many transcripts were followed in all (ended ones too), by name."""
        return len(self._names)

    @property
    def skipped(self) -> dict[str, int]:
        """Skipped native records so far, over every transcript, by record type."""
        out = dict(self._skipped_ended)
        for tr in self.files.values():
            if tr.adapter is not None:
                for k, v in tr.adapter.skipped.items():
                    out[k] = out.get(k, 0) + v
        return out

    def find(self, name_or_path: str) -> Transcript | None:
        """The transcript known by *name_or_path*, if any."""
        return self.files.get(name_or_path) or self.by_path.get(os.path.abspath(name_or_path))

    # -- coming and going ------------------------------------------------------------

    def add(self, tr: Transcript) -> None:
        self.files[tr.name] = tr
        self.by_path[tr.tail.path] = tr
        self._names.add(tr.name)

    def retire(self, tr: Transcript, status: str) -> None:
        """*tr* is no longer followed (*status*: ``ended`` or ``failed``)."""
        tr.status = status
        tr.tail.close()
        self._ended.add(tr.name)
        self.vanished.discard(tr)
        if self.files.get(tr.name) is tr:
            del self.files[tr.name]
        if self.by_path.get(tr.tail.path) is tr:
            del self.by_path[tr.tail.path]
        ident = self._indexed.pop(tr, None)
        if ident is not None and self._by_inode.get(ident) is tr:
            del self._by_inode[ident]
        if ident is not None and _names_file(tr.tail.path, ident):
            # A rescan that finds this file again (same device and inode) must not
            # follow it from its start: it ended (done, failed) as this file. (A file
            # removed or moved away is not remembered: its inode may be reused.)
            self._retired_files.add(ident)
        if tr.adapter is not None:
            for k, v in tr.adapter.skipped.items():
                self._skipped_ended[k] = self._skipped_ended.get(k, 0) + v

    def retired(self, st: os.stat_result) -> bool:
        """Whether the file *st* describes is one whose transcript ended or failed."""
        return (st.st_dev, st.st_ino) in self._retired_files

    def index(self, tr: Transcript) -> None:
        """Know *tr* by the device and inode of the file it has open (after each read)."""
        ident = (tr.tail.dev, tr.tail.ino)
        if not ident[1] or self._indexed.get(tr) == ident:
            return
        old = self._indexed.get(tr)
        if old is not None and self._by_inode.get(old) is tr:
            del self._by_inode[old]
        self._indexed[tr] = ident
        self._by_inode[ident] = tr

    def unlink_path(self, tr: Transcript) -> None:
        """*tr*'s path no longer names its file."""
        if self.by_path.get(tr.tail.path) is tr:
            del self.by_path[tr.tail.path]

    def move(self, tr: Transcript, path: str) -> None:
        """*tr*'s file is at *path* now (its name stays)."""
        self.unlink_path(tr)
        tr.tail.repoint(path)
        tr.vanished_at = None
        self.vanished.discard(tr)
        self.by_path[path] = tr

    def rename(self, tr: Transcript, name: str) -> None:
        """Report *tr* under *name* from now on."""
        if self.files.get(tr.name) is tr:
            del self.files[tr.name]
        tr.name = name
        self.files[name] = tr
        self._names.add(name)

    def same_file(self, path: str, st: os.stat_result) -> Transcript | None:
        """The followed transcript whose file *path* names, reached under another name.

        Returns ``None`` for another file, or for another name (a hard link) of a
        file still at its own path; the caller then does not follow *path*
        twice: see :meth:`linked`.
        """
        known = self._by_inode.get((st.st_dev, st.st_ino))
        if known is None or known.tail.path == path or known.status not in ("new", "active"):
            return None
        if self.linked(known, st):
            return None
        # While the file is open its inode cannot have been reused: it is the file,
        # renamed (truncated meanwhile, perhaps: reading it tells). Released, only its
        # first bytes can tell it from another file given the same inode number.
        if known.tail.is_open:
            return known
        if not known.tail.ino and known.entry is not None:
            # Not opened yet (attached to its saved entry, not read): the entry's
            # fingerprint is what its first bytes are known by.
            return known if _head_matches(path, known.entry) else None
        return known if known.tail.same_head(path) else None

    def linked(self, known: Transcript, st: os.stat_result) -> bool:
        """Whether *known*'s own path still names the file of *st* (two names, one file)."""
        try:
            there = os.stat(known.tail.path)
        except OSError:
            return False
        return (there.st_dev, there.st_ino) == (st.st_dev, st.st_ino)

    def is_alias(self, path: str, st: os.stat_result) -> bool:
        """Whether *path* is another name of a file followed at its own path (a hard link)."""
        known = self._by_inode.get((st.st_dev, st.st_ino))
        return (
            known is not None
            and known.tail.path != path
            and known.status in ("new", "active")
            and self.linked(known, st)
        )

    # -- saved entries -------------------------------------------------------------------

    def attach_entry(self, tr: Transcript) -> None:
        """Give *tr* the saved state entry of its file, if there is one.

        By name first; else by identity: a file followed under another name that
        was renamed while no follower ran (its device, inode and first bytes
        agree) takes that name back, and its new path is recorded at once. A file still where a moved transcript was
        last seen (same path, device and inode) takes that name back whatever
        its first bytes: it was rewritten while no follower ran, and is read
        again from its start under its name, as an unmoved file is.
        """
        state = self.config.state
        if state is None or tr.entry is not None:
            return
        # A name that ended in this run has its entry forgotten once that is delivered:
        # what the entry says is of the content that ended, not of the file there now.
        entry = state.get(tr.name) if tr.name not in self._ended else None
        try:
            st = os.stat(tr.tail.path)
        except OSError:
            st = None
        if entry is not None and entry.get("path", tr.name) in (tr.name, tr.tail.path):
            tr.entry = entry
            self._index_entry(tr, entry, st)
            return
        if st is None:
            return
        if self._entries_by_inode is None:
            self._entries_by_inode = {}
            for name, saved in state.entries.items():
                key = (int(saved.get("dev", 0) or 0), int(saved.get("ino", 0) or 0))
                self._entries_by_inode.setdefault(key, []).append(name)
        for name in self._entries_by_inode.get((st.st_dev, st.st_ino), ()):
            found = state.entries.get(name)
            if found is None or name in self.files or name in self._ended:
                continue
            if found.get("path") == tr.tail.path or _head_matches(tr.tail.path, found):
                self.rename(tr, name)
                tr.entry = found
                self._index_entry(tr, found, st)
                # Seen where it went: recorded now, so a rewrite before the next batch
                # is a truncation of this transcript for a later follower too.
                state.move(name, tr.tail.path)
                return

    def _index_entry(
        self, tr: Transcript, entry: dict[str, Any], st: os.stat_result | None
    ) -> None:
        """Know *tr* by its saved file identity before it is opened, if its path names that file.

        Between attaching and opening the file, it may be renamed again: found at
        its next path, it is this transcript (:meth:`same_file`), not a new one.
        """
        if st is None or (st.st_dev, st.st_ino) != (entry.get("dev"), entry.get("ino")):
            return
        if tr.tail.ino or tr in self._indexed:
            return
        ident = (st.st_dev, st.st_ino)
        self._indexed[tr] = ident
        self._by_inode.setdefault(ident, tr)

    def orphan_batches(self, target_of: Callable[[str], object]) -> list[Batch]:
        """For each saved entry no transcript continues (its file is gone), a batch of what
        its adapter held; delivered, the entry is forgotten. Only entries of paths
        *target_of* places in this follow's targets."""
        state = self.config.state
        if state is None:
            return []
        out = []
        for name, entry in list(state.entries.items()):
            where = str(entry.get("path", name))
            if name in self.files or target_of(where) is None:
                continue
            events = Transcript(self.config, name, path=where).held_in_entry(entry)
            self.config.notice(f"{name}: no longer there; wrote what it held")
            mark = Mark(name, str(entry.get("harness", "")), forget=True, done=True, path=where)
            out.append(Batch(events, mark))
        return out


def _names_file(path: str, ident: tuple[int, int]) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == ident


def _head_matches(path: str, entry: dict[str, Any]) -> bool:
    """Whether the file at *path* begins with the bytes a saved entry fingerprinted."""
    try:
        size = int(entry["head_len"])
        with open(path, "rb") as f:
            return sha256_hex(f.read(size)) == str(entry["head_sha256"])
    except (OSError, KeyError, ValueError, TypeError):
        return False
