"""Linux inotify, through ctypes: one descriptor the event loop waits on, no thread.

:class:`InotifyTree` keeps watches on folder trees (every folder of a
recursive root, or one folder) and turns the kernel's events into the paths
they name. It is what makes an idle follower free (the descriptor becomes
readable only when something changed: no timer, no wake-up) and a busy one
prompt (no polling step between a write and its event).

What the kernel tells and this module relies on:

* a watch on a folder reports its entries: created, modified, deleted,
  moved in and out (with a cookie pairing the two halves of a rename);
* a folder created (or moved in) under a recursive root gets its own watch
  here, synchronously, when its event is read; files created in it before
  that are found by the caller's scan of the folder, which this module asks
  for by naming the folder among the changed paths;
* ``IN_Q_OVERFLOW``: events were dropped; the caller looks at everything again;
* a root that does not exist yet is waited for by watching its nearest
  existing ancestor for the next component of its path.
"""

from __future__ import annotations

import errno
import os
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import ctypes

__all__ = ("Changes", "InotifyTree", "inotify_available")

IN_MODIFY: Final = 0x00000002
IN_ATTRIB: Final = 0x00000004
IN_MOVED_FROM: Final = 0x00000040
IN_MOVED_TO: Final = 0x00000080
IN_CREATE: Final = 0x00000100
IN_DELETE: Final = 0x00000200
IN_DELETE_SELF: Final = 0x00000400
IN_MOVE_SELF: Final = 0x00000800
IN_Q_OVERFLOW: Final = 0x00004000
IN_IGNORED: Final = 0x00008000
IN_ONLYDIR: Final = 0x01000000
IN_ISDIR: Final = 0x40000000
IN_NONBLOCK: Final = os.O_NONBLOCK
IN_CLOEXEC: Final = os.O_CLOEXEC

#: What a watched folder reports: its entries' content and names, and itself going away.
TREE_MASK: Final = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CREATE
    | IN_DELETE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
#: What an ancestor of a missing root reports: a folder appearing in it (or it going away).
ANCESTOR_MASK: Final = IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR

_EVENT: Final = struct.Struct("iIII")
_READ_BYTES: Final = 1 << 16

_libc: ctypes.CDLL | None = None


def _lib() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        # Imported here, when a watch is first set: a follower writes what is on disk
        # before that, and ctypes is a few milliseconds of its start.
        import ctypes

        # The process's own symbols include the C library's (no ctypes.util lookup: it
        # imports half the standard library).
        lib = ctypes.CDLL(None, use_errno=True)
        lib.inotify_init1.argtypes = [ctypes.c_int]
        lib.inotify_init1.restype = ctypes.c_int
        lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        lib.inotify_add_watch.restype = ctypes.c_int
        lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.inotify_rm_watch.restype = ctypes.c_int
        _libc = lib
    return _libc


def inotify_available() -> bool:
    """Whether this platform has inotify (Linux with a C library that exports it)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return hasattr(_lib(), "inotify_init1")
    except OSError:
        return False


def _oserror(what: str, path: str = "") -> OSError:
    import ctypes

    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}", path or None)


@dataclass(slots=True)
class Changes:
    """What one read of the descriptor found."""

    #: Paths whose entry changed: files, and folders.
    paths: set[str] = field(default_factory=set)
    #: The folders among them (created, moved in or out, removed): scan what is there now.
    dirs: set[str] = field(default_factory=set)
    #: Events were lost (queue overflow) or a watch could not be set: look at everything.
    everything: bool = False
    #: Why a root cannot be watched any more (the caller polls it instead).
    failed: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Root:
    path: str
    recursive: bool
    #: Watching the root itself (else an ancestor, waiting for the root to appear).
    present: bool = False


class InotifyTree:
    """Watches on folder trees through one inotify descriptor.

    :meth:`add_root` watches a folder (and, *recursive*, every folder under
    it, including those created later) or, while it does not exist, waits for
    it. :meth:`read` drains the descriptor, which the event loop waits on with
    ``anyio.wait_readable(tree.fd)``.
    """

    def __init__(self) -> None:
        fd = _lib().inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise _oserror("inotify_init1")
        self.fd: int = int(fd)
        self._roots: list[_Root] = []
        #: watch descriptor → the folder it watches, and back
        self._dirs: dict[int, str] = {}
        self._wd_of: dict[str, int] = {}
        self._ancestor_wds: set[int] = set()

    # -- watches ---------------------------------------------------------------

    def add_root(self, path: str, *, recursive: bool) -> None:
        """Watch *path*; raises :class:`OSError` when a watch cannot be set (limits)."""
        self._roots.append(_Root(os.path.abspath(path), recursive))
        self._resettle(Changes())

    @property
    def roots(self) -> list[tuple[str, bool, bool]]:
        """``(path, recursive, present)`` of each root."""
        return [(r.path, r.recursive, r.present) for r in self._roots]

    def _watch(self, path: str, mask: int) -> int:
        wd = _lib().inotify_add_watch(self.fd, os.fsencode(path), mask)
        if wd < 0:
            raise _oserror("inotify_add_watch", path)
        self._dirs[wd] = path
        self._wd_of[path] = wd
        return int(wd)

    def _watch_tree(self, top: str, recursive: bool, changes: Changes) -> None:
        """Watch *top* (and the folders under it); folders found are reported for scanning."""
        try:
            self._watch(top, TREE_MASK)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return  # gone again already; its parent's event says so
            raise
        self._ancestor_wds.discard(self._wd_of[top])
        if not recursive:
            return
        try:
            entries = list(os.scandir(top))
        except OSError:
            return
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                changes.dirs.add(entry.path)
                self._watch_tree(entry.path, recursive, changes)

    def _settle(self, root: _Root, changes: Changes) -> None:
        """Watch *root* if it exists, else wait for it (see :meth:`_watch_ancestors`)."""
        if os.path.isdir(root.path):
            if not root.present:
                root.present = True
                changes.paths.add(root.path)
                changes.dirs.add(root.path)
            self._watch_tree(root.path, root.recursive, changes)
        else:
            root.present = False

    def _resettle(self, changes: Changes) -> None:
        """Watch each root that exists now, and the nearest existing ancestor of the others.

        A folder created between looking and watching raises no event for the
        new watch: look again after each new watch until nothing changes.
        """
        for _ in range(64):
            for root in self._roots:
                if not (root.present and root.path in self._wd_of):
                    self._settle(root, changes)
            if not self._watch_ancestors():
                return

    def _watch_ancestors(self) -> bool:
        """Watch the nearest existing ancestor of each missing root, and no other ancestor.

        Returns whether a new ancestor watch was set.
        """
        needed: set[str] = set()
        for root in self._roots:
            if root.present:
                continue
            parent = os.path.dirname(root.path)
            while not os.path.isdir(parent):
                up = os.path.dirname(parent)
                if up == parent:
                    break
                parent = up
            needed.add(parent)
        for wd in list(self._ancestor_wds):
            if self._dirs.get(wd) not in needed:
                self._drop(wd)
                _lib().inotify_rm_watch(self.fd, wd)
        added = False
        for parent in needed:
            if parent in self._wd_of:
                continue  # watched already (as an ancestor, or in a tree: its events suffice)
            try:
                self._ancestor_wds.add(self._watch(parent, ANCESTOR_MASK))
                added = True
            except OSError as exc:
                if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                    raise
        return added

    def _drop(self, wd: int) -> None:
        path = self._dirs.pop(wd, None)
        if path is not None and self._wd_of.get(path) == wd:
            del self._wd_of[path]
        self._ancestor_wds.discard(wd)

    def _forget_under(self, path: str) -> None:
        """Stop watching the folders at or under *path* (moved out of the tree)."""
        prefix = path.rstrip(os.sep) + os.sep
        for wd, p in list(self._dirs.items()):
            if p == path or p.startswith(prefix):
                self._drop(wd)
                _lib().inotify_rm_watch(self.fd, wd)
        for p in [p for p in self._wd_of if p == path or p.startswith(prefix)]:
            del self._wd_of[p]

    def _root_of(self, path: str) -> _Root | None:
        for root in self._roots:
            if path == root.path or path.startswith(root.path.rstrip(os.sep) + os.sep):
                return root
        return None

    # -- events ----------------------------------------------------------------

    def read(self) -> Changes:
        """Drain the descriptor; what changed (empty when nothing was waiting)."""
        changes = Changes()
        chunks = []
        while True:
            try:
                chunk = os.read(self.fd, _READ_BYTES)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        moved_out: list[tuple[str, int]] = []
        resettle = False
        pos = 0
        while pos + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
            raw = data[pos + _EVENT.size : pos + _EVENT.size + length]
            pos += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                changes.everything = resettle = True
                continue
            folder = self._dirs.get(wd)
            if folder is None:
                continue
            if mask & IN_IGNORED:  # the folder is gone (deleted, or its filesystem unmounted)
                self._drop(wd)
                changes.paths.add(folder)
                changes.dirs.add(folder)
                resettle = True
                continue
            if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                root = self._root_of(folder)
                if mask & IN_MOVE_SELF and root is not None and root.path == folder:
                    # A root moved away: its watches would go on reporting under old paths.
                    self._forget_under(folder)
                    changes.paths.add(folder)
                    changes.dirs.add(folder)
                    resettle = True
                continue  # a folder inside a tree: its parent's event tells what happened
            if wd in self._ancestor_wds:
                resettle = True  # the next component of a missing root may have appeared
                continue
            name = os.fsdecode(raw.rstrip(b"\0"))
            path = os.path.join(folder, name) if name else folder
            changes.paths.add(path)
            if not mask & IN_ISDIR:
                continue
            changes.dirs.add(path)
            if mask & (IN_CREATE | IN_MOVED_TO):
                resettle = resettle or not all(r.present for r in self._roots)
                root = self._root_of(path)
                if root is not None and root.recursive:
                    try:
                        self._watch_tree(path, True, changes)
                    except OSError as exc:
                        changes.failed[root.path] = f"cannot watch {path} ({exc.strerror})"
            elif mask & IN_MOVED_FROM:
                old = self._wd_of.get(path)
                if old is not None:
                    moved_out.append((path, old))
        for path, wd in moved_out:
            # A folder moved within the tree was watched again under its new path above
            # (the kernel keeps the watch; only the path it is known by changes). One moved
            # out of the tree would go on reporting under paths it no longer has.
            if self._dirs.get(wd) == path:
                self._forget_under(path)
            else:
                prefix = path.rstrip(os.sep) + os.sep
                for p in [p for p in self._wd_of if p == path or p.startswith(prefix)]:
                    if self._dirs.get(self._wd_of[p]) != p:
                        del self._wd_of[p]
        if resettle:
            try:
                self._resettle(changes)
            except OSError as exc:
                for root in self._roots:
                    if not root.present:
                        changes.failed[root.path] = f"cannot watch it ({exc.strerror})"
        return changes

    def close(self) -> None:
        """Release the descriptor and every watch with it."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self._dirs.clear()
        self._wd_of.clear()

    def watched(self) -> Iterable[str]:
        """The folders watched now (for tests and diagnostics)."""
        return list(self._dirs.values())
