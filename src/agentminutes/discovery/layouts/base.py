"""What every layout shares: session records, the scan context, identity reads, the Locator base.

Where each harness keeps its sessions on disk: one locator per harness (its own module here).

A locator knows one harness's folder layout under a root (the roots
themselves come from :mod:`agentminutes.discovery.roots`): which files are session
transcripts, which are a session's subagent transcripts and sidecars, and
which are neither. It can

* ``scan`` a root: every regular file under it ends as part of a yielded
  :class:`SessionRef` (main or subagent transcript), a counted skip with a
  stable reason, or a yielded :class:`~agentminutes.ScanError`; the scan goes
  on after an error. Files that a ``since``/``until`` window excludes are left
  out without notice (Codex day folders outside the window are not walked);
* ``locate`` one session by id without a full scan (a file or folder name,
  confirmed by the identity in the transcript);
* ``gather`` the subagent transcripts of a parent, by the harness's own join
  (``layout``, ``session_id``, ``content`` or ``inline``);
* name a session's ``sidecars`` (files that belong to it but are not
  transcripts), for ``archive``.

A transcript's identity is read from its head through the harness's own
adapter: lines are fed one at a time until the first event, which must be
``session_meta`` (the adapter may tell it from the opening record's envelope,
without building the first turn's events). No second parser reads transcript
heads.

For the four harnesses the reference CLI (agentminutes 0.8.0) knows, the
layouts, orders, skip counts and errors are the reference's: paths are joined
and cleaned as Go's ``filepath.Join`` does, folders are listed by name, and
the records are equal value for value. Beyond it: flat Copilot
``session-state/<id>.jsonl`` files (an older layout) are sessions, and with
``nested`` Claude Code subagents below ``subagents/`` (workflow agents in
``subagents/workflows/<run>/``) count as subagents too (the reference skips
them, and their usage with them)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Final, NamedTuple

import msgspec

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError, NoConversationError, ParseError, ScanError
from agentminutes.harness import ParseOptions, adapter_class
from agentminutes.harness.base import Adapter, HeadIdentity
from agentminutes.pipeline.conversion import Rewrite, adapter_line, feed_lines
from agentminutes.schema import Event, EventKind, Meta, TaskSkip

__all__ = (
    "SKIP_NO_CONVERSATION",
    "Gathered",
    "IdentityCache",
    "Item",
    "Locator",
    "Root",
    "ScanContext",
    "SessionRef",
    "build_ref",
    "check_session_id",
    "clean",
    "is_dir_entry",
    "is_dir_path",
    "join",
    "list_entries",
    "os_cause",
    "path_exists",
    "read_identity",
    "strict_ref",
    "walk_files",
    "wanted_cwd",
)


#: Read size for identity reads: a transcript's first record is usually a few KiB.
_HEAD_BYTES: Final = 64 * 1024
#: The first read of a head: most transcripts open with a record that names the session
#: in well under this, and splitting 64 KiB into lines costs more than reading it.
_FIRST_READ_BYTES: Final = 8 * 1024


class SessionRef(msgspec.Struct, omit_defaults=True, kw_only=True):
    """One session transcript found on disk (what ``agentminutes sessions`` prints).

    ``meta`` is the transcript's ``session_meta`` (completed from the layout
    where the format records nothing: an Antigravity conversation's id is its
    folder name); ``started_at`` the timestamp of that first event (RFC 3339,
    empty when it has none); ``mod_time`` the file's modification time in the
    local time zone; ``size_bytes`` the main transcript's size.
    ``subagent_paths`` are the transcripts of the subagents the harness wrote
    beside it (Claude Code, Gemini CLI), each parseable on its own.

    For a conversation inside a data export or database, ``path`` is that
    file, ``meta.session_id`` the conversation id, ``started_at`` its creation
    and ``updated_at`` its last update.
    """

    meta: Meta
    path: str
    subagent_paths: list[str] | None = None
    started_at: str = ""
    mod_time: str
    size_bytes: int
    updated_at: str = ""

    def window(self) -> tuple[int, int]:
        """The session's activity interval (nanoseconds): first timestamp to last write."""
        mod = timestamps.to_ns(self.mod_time) or 0
        end = (timestamps.to_ns(self.updated_at) if self.updated_at else None) or mod
        start = (timestamps.to_ns(self.started_at) if self.started_at else None) or end
        return start, max(end, start)


@dataclass
class Gathered:
    """A parent's subagent transcripts, how they were joined, and what was left out."""

    join: str
    subagents: list[SessionRef] = field(default_factory=list)
    skipped: list[TaskSkip] = field(default_factory=list)


SkipListener = Callable[[str, str], None]

#: The skip reason of a file that holds no conversation (empty, or summaries and
#: file-history snapshots only): ordinary in a real home, so not an error.
SKIP_NO_CONVERSATION = "no conversation"

#: A source of known identities: ``(path, stat)`` to the ``(meta, first timestamp)`` a
#: transcript's head gave when it last had that size and time, or ``None`` to read it.
IdentityCache = Callable[[str, os.stat_result], "tuple[Meta, str] | None"]


@dataclass
class ScanContext:
    """What a scan keeps: a time window (ns, ``None`` for open) and who hears of skips."""

    since: int | None = None
    until: int | None = None
    #: Told ``(path, reason)`` once per file a layout rule excludes.
    on_skip: SkipListener | None = None
    #: Told each candidate transcript's path before its identity is read (progress).
    on_file: Callable[[str], None] | None = None
    #: Claude Code: also subagents nested below ``subagents/`` (workflow agents).
    nested: bool = False
    #: Identities already known (``agentminutes usage``'s cache): a file it knows is
    #: not opened at all.
    identity: IdentityCache | None = None

    def skip(self, path: str, reason: str) -> None:
        if self.on_skip is not None:
            self.on_skip(path, reason)

    def skip_tree(self, path: str, is_dir: bool, reason: str) -> None:
        """Count *path*, or every file under it when it is a folder, as skipped."""
        if self.on_skip is None:
            return
        if not is_dir:
            self.on_skip(path, reason)
            return
        for file in walk_files(path):
            self.on_skip(file, reason)

    def includes(self, start: int, end: int) -> bool:
        """Whether an activity interval ``[start, end]`` meets the window, ends included."""
        if self.since is not None and end < self.since:
            return False
        return not (self.until is not None and start > self.until)

    def windowed(self) -> bool:
        return self.since is not None or self.until is not None


# -- paths, as Go writes them ---------------------------------------------------------------


def clean(path: str) -> str:
    """Lexically clean *path* as Go's ``filepath.Clean`` does (``""`` becomes ``"."``)."""
    if not path:
        return "."
    out = os.path.normpath(path)
    if out.startswith("//"):
        out = "/" + out.lstrip("/")
    return out


def wanted_cwd(path: str) -> str:
    """A ``--cwd`` value as recorded working directories are compared with it.

    ``~`` is expanded and a relative path (``.``) taken from the current folder;
    a Windows path (``C:\\src``) is kept as written. ``--cwd`` means the same in
    every command: the recorded working directory *is* this folder (after
    lexical cleaning), not a folder below it.
    """
    path = os.path.expanduser(path)
    if not (os.path.isabs(path) or _WINDOWS_ABSOLUTE.match(path)):
        path = os.path.abspath(path)
    return clean(path)


_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:)?[\\/]")


def join(*parts: str) -> str:
    """Join and clean path parts as Go's ``filepath.Join`` does (empty parts ignored)."""
    kept = [p for p in parts if p]
    if not kept:
        return ""
    return clean("/".join(kept))


def list_entries(path: str) -> list[os.DirEntry[str]]:
    """A folder's entries sorted by name (raises ``OSError``)."""
    with os.scandir(path) as it:
        return sorted(it, key=lambda e: e.name)


def is_dir_entry(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def walk_files(top: str) -> Iterator[str]:
    """Every non-directory entry under *top*, depth first by name; symlinks are not followed."""
    try:
        entries = list_entries(top)
    except OSError:
        return
    for e in entries:
        path = join(top, e.name)
        if is_dir_entry(e):
            yield from walk_files(path)
        else:
            yield path


def os_cause(op: str, path: str, exc: OSError) -> str:
    """An OS error in Go's words: ``open /x: no such file or directory``."""
    text = exc.strerror or str(exc)
    return f"{op} {path}: {text[:1].lower()}{text[1:]}"


def path_exists(path: str) -> bool:
    """``os.Stat`` succeeds (symlinks followed)."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def is_dir_path(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


# -- identity -----------------------------------------------------------------------------------


def read_identity(harness: str, path: str) -> tuple[Meta, str]:
    """The ``session_meta`` of a transcript's head and its timestamp, read through the adapter.

    Lines are given one at a time to the adapter until it emits its first
    event, so a large transcript costs its first records only (a format whose
    adapter holds everything until the end, such as Antigravity's step sort,
    is read whole, as a full parse would). Each line is first offered to the
    adapter's :meth:`~agentminutes.harness.base.Adapter.head_identity`, which
    tells the opening record from its envelope without building the events
    of the first turn; from the first line it cannot tell, lines are fed.

    Raises:
        NoConversationError: the file makes no event at all (empty, or summaries only).
        ParseError: the head does not parse, or does not open with ``session_meta``.
        OSError: the file cannot be read.
    """
    adapter = adapter_class(harness)(ParseOptions(check_verbatim=False))  # identity only
    asking = True
    # The file descriptor itself, not a buffered file object: listing thousands
    # of transcripts pays for the object's set-up more than for the read.
    fd = os.open(path, os.O_RDONLY)  # not inherited by children (PEP 446)
    try:
        for item in _head_lines(fd):
            if asking:
                told = _head_identity(adapter, *item)
                if told == "passed":
                    continue
                if told is not None:
                    return _identity(harness, told)
                asking = False
            events = feed_lines(adapter, [item], checked=False)
            if events:
                return _identity(harness, events[0])
    finally:
        os.close(fd)
    finish: Callable[[], Iterator[Event] | list[Event]] = getattr(adapter, "drain", adapter.finish)
    for ev in finish():
        return _identity(harness, ev)
    raise NoConversationError(harness)


def _head_lines(fd: int) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of an open file, read as they are asked for (a last one without a newline too).

    A line is cut out only when it is asked for: an identity is usually told by
    the first line or two of the first read, and splitting the whole read
    would cost more than the rest of it.
    """
    lineno = 0
    held: list[bytes] = []  # the pieces of a line longer than one read
    size = _FIRST_READ_BYTES
    while chunk := os.read(fd, size):
        size = _HEAD_BYTES
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            lineno += 1
            if held:
                held.append(chunk[start:end])
                yield lineno, b"".join(held)
                held = []
            else:
                yield lineno, chunk[start:end]
            start = end + 1
        if start < len(chunk):
            held.append(chunk[start:])
    if held:
        yield lineno + 1, b"".join(held)


def _head_identity(adapter: Adapter, lineno: int, raw: bytes) -> HeadIdentity:
    """The adapter's :meth:`head_identity` of a raw line, cleaned as :func:`feed_lines` feeds it."""
    line = adapter_line(adapter, raw, lineno)
    if not line:
        return "passed"  # blank or white space only: feed_lines passes over it too
    if not line.isascii() or b"\\u" in line:
        rewrite = Rewrite.of(line)
        if rewrite is not None:
            line = rewrite.fed
    return adapter.head_identity(line, lineno)


def _identity(harness: str, ev: Event) -> tuple[Meta, str]:
    if ev.kind != EventKind.SESSION_META or ev.session_meta is None:
        raise ParseError(harness, f'first event is "{ev.kind}", not session_meta')
    return ev.session_meta, ev.timestamp


def build_ref(harness: str, path: str, ctx: ScanContext | None = None) -> SessionRef | None:
    """Stat *path* and read its identity; ``None`` when *ctx*'s time window leaves it out.

    Raises:
        ScanError: the file cannot be stat'ed, read or identified.
    """
    if ctx is not None and ctx.on_file is not None:
        ctx.on_file(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise ScanError(harness, os_cause("stat", path, exc), path) from None
    known = ctx.identity(path, st) if ctx is not None and ctx.identity is not None else None
    try:
        meta, started = known if known is not None else read_identity(harness, path)
    except NoConversationError as exc:
        if ctx is None or ctx.on_skip is None:
            raise ScanError(harness, str(exc), path) from None
        ctx.skip(path, SKIP_NO_CONVERSATION)
        return None
    except ParseError as exc:
        raise ScanError(harness, str(exc), path) from None
    except OSError as exc:
        raise ScanError(harness, os_cause("open", path, exc), path) from None
    except AgentminutesError as exc:
        raise ScanError(harness, str(exc), path) from None
    ref = SessionRef(
        meta=meta,
        path=path,
        started_at=timestamps.normalize(started) if started else "",
        mod_time=timestamps.format_local_ns(st.st_mtime_ns),
        size_bytes=st.st_size,
    )
    if ctx is not None and ctx.windowed() and not ctx.includes(*ref.window()):
        return None
    return ref


_BAD_ID = re.compile(r"[/\\*?\[]|\.\.")


def check_session_id(session_id: str) -> None:
    """Refuse an id that could leave a root or widen a match when put into a path or pattern.

    Raises:
        ScanError: ``invalid session id "…"`` (no harness named, as the reference says it).
    """
    if not session_id:
        raise ScanError("", "empty session id")
    if _BAD_ID.search(session_id):
        raise ScanError("", f'invalid session id "{session_id}"')


Item = SessionRef | ScanError


class Root(NamedTuple):
    """A folder to search: a live root, or an *archive* of finished sessions."""

    path: str
    archive: bool = False


# -- the locators -------------------------------------------------------------------------------


class Locator:
    """One harness's layout. Subclasses set ``harness`` and ``join`` and implement ``scan``."""

    harness: str = ""
    #: How subagent transcripts are joined to their parent (``stats --include-subagents``).
    join: ClassVar[str] = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        """Every session under *root* (a live root), in the layout's order."""
        raise NotImplementedError

    def scan_archive(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        """Every session under an archive root (finished sessions); by default as :meth:`scan`."""
        return self.scan(root, ctx)

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        """The session *session_id* under *root*, or ``None`` when there is none.

        Raises:
            ScanError: an invalid or ambiguous id, an unreadable transcript, or
                one that records another id.
        """
        check_session_id(session_id)
        for item in (self.scan_archive if archive else self.scan)(root, ScanContext()):
            if isinstance(item, SessionRef) and session_id in (
                item.meta.session_id,
                item.meta.subagent_id,
            ):
                return item
        return None

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        """The subagent transcripts of *parent* (none where subagents are inline)."""
        return Gathered(join=self.join)

    def sidecars(self, ref: SessionRef) -> list[str]:
        """Files besides its transcripts that belong to the session of *ref* (for ``archive``)."""
        return []

    def _projects(
        self, root: str, ctx: ScanContext
    ) -> Iterator[tuple[str, list[os.DirEntry[str]]] | ScanError]:
        """Each project folder directly under *root*, with its entries, in name order.

        Files beside the project folders are counted as skipped; a folder that
        cannot be listed is yielded as its :class:`ScanError` and the walk goes on.
        """
        projects = yield from self._listing(root)
        if projects is None:
            return
        for proj in projects:
            folder = join(root, proj.name)
            if not is_dir_entry(proj):
                ctx.skip(folder, "not a project directory")
                continue
            try:
                yield folder, list_entries(folder)
            except OSError as exc:
                yield self._error(folder, exc)

    def _project_entries(
        self, root: str, ctx: ScanContext
    ) -> Iterator[tuple[str, os.DirEntry[str]] | ScanError]:
        """Each entry of each project folder under *root* (see :meth:`_projects`), with its path."""
        for project in self._projects(root, ctx):
            if isinstance(project, ScanError):
                yield project
                continue
            folder, entries = project
            for e in entries:
                yield join(folder, e.name), e

    def _ref(self, path: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            ref = build_ref(self.harness, path, ctx)
        except ScanError as exc:
            yield exc
            return
        if ref is not None:
            yield ref

    def _error(self, path: str, exc: OSError, op: str = "open") -> ScanError:
        return ScanError(self.harness, os_cause(op, path, exc), path)

    def _listing(self, folder: str) -> Generator[ScanError, None, list[os.DirEntry[str]] | None]:
        """*folder*'s entries (``yield from`` it); ``None`` once its :class:`ScanError` is yielded."""
        try:
            return list_entries(folder)
        except OSError as exc:
            yield self._error(folder, exc)
            return None

    def _resolve(self, root: str, session_id: str, matches: list[str]) -> str | None:
        if not matches:
            return None
        if len(matches) > 1:
            listed = " ".join(sorted(matches))
            raise ScanError(
                self.harness, f'session "{session_id}" is ambiguous under {root}: [{listed}]'
            )
        return matches[0]

    def _confirm(self, ref: SessionRef, session_id: str) -> SessionRef:
        if ref.meta.session_id != session_id:
            raise ScanError(
                self.harness,
                f'{ref.path} records session id "{ref.meta.session_id}", not "{session_id}"',
            )
        return ref


def strict_ref(harness: str, path: str) -> SessionRef:
    ref = build_ref(harness, path)
    assert ref is not None  # no window: always built
    return ref
