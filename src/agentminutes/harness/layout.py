"""Where a harness keeps its sessions on disk: the layout base every harness folder builds on.

A harness's layout (``harness/<name>/layout.py``, a :class:`Locator` subclass
its description names) knows that harness's folders under a root (the roots
themselves are declared beside it, in the description): which files are
session transcripts, which are a session's subagent transcripts and
sidecars, and which are neither. It can

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

A layout is path logic only. What only a conversion can tell (a transcript's
identity from its head, the conversations in a database, the events of a
transcript) it asks its :class:`Reader`, which discovery supplies
(:mod:`agentminutes.discovery.layouts`, a layer above the harnesses: it reads
through the pipeline). So a harness folder holds its own layout and no module
here imports the pipeline.

For the four harnesses the reference CLI (agentminutes 0.8.0) knows, the
layouts, orders, skip counts and errors are the reference's: paths are joined
and cleaned as Go's ``filepath.Join`` does, folders are listed by name, and
the records are equal value for value. Beyond it: flat Copilot
``session-state/<id>.jsonl`` files (an older layout) are sessions, and with
``nested`` Claude Code subagents below ``subagents/`` (workflow agents in
``subagents/workflows/<run>/``) count as subagents too (the reference skips
them, and their usage with them).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

import msgspec

from agentminutes import timestamps
from agentminutes.errors import ScanError
from agentminutes.schema import Meta, TaskSkip

if TYPE_CHECKING:
    from agentminutes.harness.base import ConversationInfo, Document, DocumentAdapter
    from agentminutes.schema import Event

__all__ = (
    "SKIP_NO_CONVERSATION",
    "Gathered",
    "IdentityCache",
    "Item",
    "Locator",
    "Reader",
    "Root",
    "ScanContext",
    "SessionRef",
    "check_session_id",
    "clean",
    "is_dir_entry",
    "is_dir_path",
    "is_transcript_name",
    "join",
    "list_entries",
    "os_cause",
    "path_exists",
    "walk_files",
    "wanted_cwd",
)


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


def is_transcript_name(name: str, patterns: tuple[str, ...]) -> bool:
    """True when file *name* matches one of *patterns* and is not a sidecar."""
    if name.startswith(".") or name.endswith(".meta.json"):
        return False
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


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


# -- the reader and the locators --------------------------------------------------------------


class Reader(Protocol):
    """What a layout asks of a conversion: the reads that need a harness's parser.

    Discovery supplies the one it uses (:data:`agentminutes.discovery.layouts.base.READER`);
    a layout made without one can still name paths (``subagents``, ``sidecars``).
    """

    def ref(self, harness: str, path: str, ctx: ScanContext | None = None) -> SessionRef | None:
        """Stat *path* and read its identity; ``None`` when *ctx*'s window leaves it out.

        Raises:
            ScanError: the file cannot be stat'ed, read or identified.
        """
        ...

    def route(self, path: str, harness: str) -> tuple[Document, type[DocumentAdapter]] | None:
        """The opened whole-document source at *path* and its adapter (``None``: a line transcript).

        *harness* is the harness it must be, or ``"auto"`` to detect it.

        Raises:
            AgentminutesError: it cannot be opened, or is not that harness's.
        """
        ...

    def opened(self, path: str, kind: str) -> Document:
        """*path* opened as a document of *kind* (``"json"``, ``"folder"``) without detection."""
        ...

    def conversations(
        self, document: Document, adapter: type[DocumentAdapter]
    ) -> list[ConversationInfo]:
        """The conversations *document* holds, listed without building events.

        Raises:
            ParseError: the document does not parse.
        """
        ...

    def release(self, document: Document) -> None:
        """Close what opening *document* held."""
        ...

    def events(self, harness: str, path: str) -> Iterator[Event]:
        """The events of the line transcript at *path*, converted as ``convert`` does.

        Raises:
            AgentminutesError: it does not parse.
        """
        ...


class Locator:
    """One harness's layout. Subclasses set ``harness`` and ``join`` and implement ``scan``.

    Discovery makes each locator with its :class:`Reader` and, for a layout any
    harness may use (:class:`~agentminutes.harness.files_layout.FilesLocator`),
    sets :attr:`harness` and :attr:`patterns` from the harness's description.
    """

    harness: str = ""
    #: How subagent transcripts are joined to their parent (``stats --include-subagents``).
    join: ClassVar[str] = "inline"
    #: ``fnmatch`` patterns of the harness's transcript file names (its description's).
    patterns: tuple[str, ...] = ()

    def __init__(self, reader: Reader | None = None) -> None:
        self._reader = reader

    @property
    def reader(self) -> Reader:
        """Who reads identities and documents for this layout (given when it was made)."""
        if self._reader is None:
            raise TypeError(
                f"{type(self).__name__} was made without a reader: "
                "get it from agentminutes.discovery.layouts.locator()"
            )
        return self._reader

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
        self,
        root: str,
        ctx: ScanContext,
        visit: Callable[[str, os.DirEntry[str], ScanContext], Iterator[Item]],
    ) -> Iterator[Item]:
        """What *visit* finds in each entry (its path, the entry) of each project folder under
        *root* (see :meth:`_projects`); a folder that cannot be listed is its error."""
        for project in self._projects(root, ctx):
            if isinstance(project, ScanError):
                yield project
                continue
            folder, entries = project
            for e in entries:
                yield from visit(join(folder, e.name), e, ctx)

    def _folder_transcript(self, folder: str, name: str, what: str, ctx: ScanContext) -> str | None:
        """The transcript *name* of the session folder *folder*, the rest of it skipped as its
        sidecars; ``None`` (the whole folder skipped) when there is none. *what* names the
        folder in the skips (``"session"``)."""
        transcript = join(folder, name)
        if not path_exists(transcript):
            ctx.skip_tree(folder, True, f"{what} directory without transcript")
            return None
        for file in walk_files(folder):
            if file != transcript:
                ctx.skip(file, f"{what} sidecar")
        return transcript

    def _ref(self, path: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            ref = self.reader.ref(self.harness, path, ctx)
        except ScanError as exc:
            yield exc
            return
        if ref is not None:
            yield ref

    def _strict_ref(self, path: str) -> SessionRef:
        """The session of the transcript at *path*, read with no window (raises ScanError)."""
        ref = self.reader.ref(self.harness, path)
        assert ref is not None  # no window: always built
        return ref

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
