"""Where each harness keeps its sessions on disk: one locator per harness.

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
``session_meta``. No second parser reads transcript heads.

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Final, NamedTuple

import msgspec

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError, ParseError, ScanError
from agentminutes.harness import ParseOptions, adapter_class
from agentminutes.pipeline.conversion import feed_lines
from agentminutes.pipeline.sources import LineSplitter
from agentminutes.schema import Event, EventKind, Meta, TaskSkip

__all__ = (
    "LOCATORS",
    "Gathered",
    "Locator",
    "Root",
    "ScanContext",
    "SessionRef",
    "TaskSkip",
    "build_ref",
    "check_session_id",
    "clean",
    "join",
    "locator",
    "read_identity",
)

#: Read size for identity reads: a transcript's first record is usually a few KiB.
_HEAD_BYTES: Final = 64 * 1024


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
        for file in _walk_files(path):
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


def join(*parts: str) -> str:
    """Join and clean path parts as Go's ``filepath.Join`` does (empty parts ignored)."""
    kept = [p for p in parts if p]
    if not kept:
        return ""
    return clean("/".join(kept))


def _entries(path: str) -> list[os.DirEntry[str]]:
    """A folder's entries sorted by name (raises ``OSError``)."""
    with os.scandir(path) as it:
        return sorted(it, key=lambda e: e.name)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _walk_files(top: str) -> Iterator[str]:
    """Every non-directory entry under *top*, depth first by name; symlinks are not followed."""
    try:
        entries = _entries(top)
    except OSError:
        return
    for e in entries:
        path = join(top, e.name)
        if _is_dir(e):
            yield from _walk_files(path)
        else:
            yield path


def _cause(op: str, path: str, exc: OSError) -> str:
    """An OS error in Go's words: ``open /x: no such file or directory``."""
    text = exc.strerror or str(exc)
    return f"{op} {path}: {text[:1].lower()}{text[1:]}"


def _exists(path: str) -> bool:
    """``os.Stat`` succeeds (symlinks followed)."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def _is_dir_path(path: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


# -- identity -----------------------------------------------------------------------------------


def read_identity(harness: str, path: str) -> tuple[Meta, str]:
    """The ``session_meta`` of a transcript's head and its timestamp, read through the adapter.

    Lines are fed one at a time until the adapter emits its first event, so a
    large transcript costs its first records only (a format whose adapter
    holds everything until the end, such as Antigravity's step sort, is read
    whole, as a full parse would).

    Raises:
        ParseError: the head does not parse, yields no events, or does not open
            with ``session_meta``.
        OSError: the file cannot be read.
    """
    adapter = adapter_class(harness)(ParseOptions())
    splitter = LineSplitter()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(_HEAD_BYTES)
            lines = splitter.push(chunk) if chunk else splitter.flush()
            for item in lines:
                events = feed_lines(adapter, [item])
                if events:
                    return _identity(harness, events[0])
            if not chunk:
                break
    finish: Callable[[], Iterator[Event] | list[Event]] = getattr(adapter, "drain", adapter.finish)
    for ev in finish():
        return _identity(harness, ev)
    raise ParseError(harness, "no events in transcript")


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
        raise ScanError(harness, _cause("stat", path, exc), path) from None
    try:
        meta, started = read_identity(harness, path)
    except ParseError as exc:
        raise ScanError(harness, str(exc), path) from None
    except OSError as exc:
        raise ScanError(harness, _cause("open", path, exc), path) from None
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
        try:
            projects = _entries(root)
        except OSError as exc:
            yield self._error(root, exc)
            return
        for proj in projects:
            folder = join(root, proj.name)
            if not _is_dir(proj):
                ctx.skip(folder, "not a project directory")
                continue
            try:
                yield folder, _entries(folder)
            except OSError as exc:
                yield self._error(folder, exc)

    def _ref(self, path: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            ref = build_ref(self.harness, path, ctx)
        except ScanError as exc:
            yield exc
            return
        if ref is not None:
            yield ref

    def _error(self, path: str, exc: OSError, op: str = "open") -> ScanError:
        return ScanError(self.harness, _cause(op, path, exc), path)

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


def _strict_ref(harness: str, path: str) -> SessionRef:
    ref = build_ref(harness, path)
    assert ref is not None  # no window: always built
    return ref


class ClaudeCodeLocator(Locator):
    """``<root>/<project>/<session>.jsonl``; subagents in ``<session>/subagents/agent-*.jsonl``.

    The project folder's name is the working directory with every character
    other than letters, digits and ``-`` replaced (lossy), so ``--cwd`` uses
    the recorded cwd, never the folder name. A session folder without its
    transcript (the parent file was deleted) yields each subagent transcript
    as a session of its own.
    """

    harness = "claude-code"
    join = "layout"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        for project in self._projects(root, ctx):
            if isinstance(project, ScanError):
                yield project
            else:
                yield from self._project(*project, ctx)

    def _project(
        self, folder: str, entries: list[os.DirEntry[str]], ctx: ScanContext
    ) -> Iterator[Item]:
        sessions: dict[str, str] = {}
        dirs: dict[str, str] = {}
        for e in entries:
            path = join(folder, e.name)
            if _is_dir(e):
                dirs[e.name] = path
            elif e.name.endswith(".jsonl"):
                sessions[e.name[: -len(".jsonl")]] = path
            else:
                ctx.skip(path, "not a session transcript")
        for stem in sorted(sessions):
            subagents = self.subagents(dirs.get(stem, ""), ctx)
            for item in self._ref(sessions[stem], ctx):
                if isinstance(item, SessionRef):
                    item.subagent_paths = subagents or None
                yield item
        for stem in sorted(dirs):
            if stem in sessions:
                continue
            for agent in self.subagents(dirs[stem], ctx):
                yield from self._ref(agent, ctx)

    def subagents(self, session_dir: str, ctx: ScanContext) -> list[str]:
        """The subagent transcripts in a session folder (``""`` for none), skipping the rest."""
        if not session_dir:
            return []
        try:
            entries = _entries(session_dir)
        except OSError:
            ctx.skip(session_dir, "unreadable session directory")
            return []
        agents: list[str] = []
        nested: list[str] = []
        for e in entries:
            path = join(session_dir, e.name)
            if e.name != "subagents":
                ctx.skip_tree(path, _is_dir(e), "session directory sidecar")
                continue
            try:
                subs = _entries(path)
            except OSError:
                ctx.skip(path, "unreadable subagents directory")
                continue
            for s in subs:
                sub = join(path, s.name)
                if _is_dir(s):
                    if ctx.nested:
                        nested.extend(self._nested(sub, ctx))
                    else:
                        ctx.skip_tree(sub, True, "not a subagent transcript")
                elif _is_agent(s.name):
                    agents.append(sub)
                else:
                    ctx.skip(sub, "not a subagent transcript")
        return sorted(agents) + nested

    def _nested(self, folder: str, ctx: ScanContext) -> list[str]:
        found: list[str] = []
        for path in _walk_files(folder):
            if _is_agent(os.path.basename(path)):
                found.append(path)
            else:
                ctx.skip(path, "not a subagent transcript")
        return found

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        check_session_id(session_id)
        matches = []
        try:
            projects = _entries(root)
        except OSError:
            projects = []
        for proj in projects:
            candidate = join(root, proj.name, session_id + ".jsonl")
            if _is_dir_path(join(root, proj.name)) and os.path.lexists(candidate):
                matches.append(candidate)
        path = self._resolve(root, session_id, matches)
        if path is None:
            return None
        session_dir = path[: -len(".jsonl")]
        ctx = ScanContext(nested=nested)
        subagents = self.subagents(session_dir if _is_dir_path(session_dir) else "", ctx)
        ref = _strict_ref(self.harness, path)
        ref.subagent_paths = subagents or None
        return self._confirm(ref, session_id)

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        paths = parent.subagent_paths
        if paths is None:
            session_dir = parent.path[: -len(".jsonl")] if parent.path.endswith(".jsonl") else ""
            paths = self.subagents(session_dir if _is_dir_path(session_dir) else "", ctx)
        return Gathered(join=self.join, subagents=[_strict_ref(self.harness, p) for p in paths])

    def sidecars(self, ref: SessionRef) -> list[str]:
        if not ref.path.endswith(".jsonl") or ref.meta.is_subagent:
            return []
        session_dir = ref.path[: -len(".jsonl")]
        return list(_walk_files(session_dir)) if _is_dir_path(session_dir) else []

    def nested_count(self, parent: SessionRef) -> int:
        """How many nested subagent transcripts a non-nested gather leaves out."""
        if not parent.path.endswith(".jsonl"):
            return 0
        subagents = join(parent.path[: -len(".jsonl")], "subagents")
        if not _is_dir_path(subagents):
            return 0
        return sum(
            1
            for path in _walk_files(subagents)
            if os.path.dirname(path) != subagents and _is_agent(os.path.basename(path))
        )


def _is_agent(name: str) -> bool:
    return name.startswith("agent-") and name.endswith(".jsonl")


class CodexLocator(Locator):
    """``<root>/YYYY/MM/DD/rollout-<time>-<id>.jsonl``; archived: ``archived_sessions/rollout-…``.

    A rollout anywhere under the root is a session. With a time window, a
    ``YYYY/MM/DD`` folder whose day lies more than a day outside the window is
    not walked at all. Subagent rollouts (multi-agent sessions) are sessions
    of their own whose in-band ``session_id`` is the parent's; ``gather`` finds
    them by that id.
    """

    harness = "codex"
    join = "session_id"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        yield from self._dir(root, (), ctx)

    def _dir(self, folder: str, parts: tuple[str, ...], ctx: ScanContext) -> Iterator[Item]:
        try:
            entries = _entries(folder)
        except OSError as exc:
            yield self._error(folder, exc)
            return
        for e in entries:
            path = join(folder, e.name)
            if _is_dir(e):
                sub = (*parts, e.name)
                if len(sub) == 3 and _prunable(sub, ctx):
                    continue
                yield from self._dir(path, sub, ctx)
            elif e.name.startswith("rollout-") and e.name.endswith(".jsonl"):
                yield from self._ref(path, ctx)
            else:
                ctx.skip(path, "not a session transcript")

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        check_session_id(session_id)
        pattern = f"rollout-*-{session_id}.jsonl"
        matches = _glob_levels(root, 3, pattern)
        if archive:
            matches += _glob_levels(root, 0, pattern)
        path = self._resolve(root, session_id, matches)
        if path is None:
            return None
        ref = _strict_ref(self.harness, path)
        if ref.meta.is_subagent and ref.meta.subagent_id == session_id:
            return ref
        return self._confirm(ref, session_id)

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        """Rollouts that record the parent's session id and are subagents, in scan order.

        Live roots are scanned as given (a missing one is reported in
        ``skipped``, as an unreadable candidate), archive roots only where they
        exist; day folders more than a day before the parent's start are pruned.
        """
        out = Gathered(join=self.join)
        sid = parent.meta.session_id
        if parent.meta.is_subagent or not sid:
            return out
        since = timestamps.to_ns(parent.started_at) if parent.started_at else None
        window = ScanContext(since=since, nested=ctx.nested, on_file=ctx.on_file)
        for root in roots:
            if root.archive and not _exists(root.path):
                continue
            scan = self.scan_archive if root.archive else self.scan
            for item in scan(root.path, window):
                if isinstance(item, ScanError):
                    if item.path:
                        out.skipped.append(
                            TaskSkip(path=item.path, reason=f"unreadable candidate: {item.cause}")
                        )
                        continue
                    raise item
                if (
                    item.meta.is_subagent
                    and item.meta.session_id == sid
                    and item.path != parent.path
                ):
                    out.subagents.append(item)
        return out


def _glob_levels(root: str, depth: int, pattern: str) -> list[str]:
    """``<root>/*/…/*/<pattern>`` with *depth* ``*`` levels (hidden names match, as in Go)."""
    folders = [root]
    for _ in range(depth):
        nxt: list[str] = []
        for folder in folders:
            try:
                nxt.extend(join(folder, e.name) for e in _entries(folder))
            except OSError:
                continue
        folders = [f for f in nxt if _is_dir_path(f)]
    found: list[str] = []
    for folder in folders:
        try:
            entries = _entries(folder)
        except OSError:
            continue
        found.extend(join(folder, e.name) for e in entries if fnmatch.fnmatchcase(e.name, pattern))
    return sorted(found)


def _prunable(parts: tuple[str, ...], ctx: ScanContext) -> bool:
    """Whether a ``YYYY/MM/DD`` folder lies wholly outside the window, with a day of slack."""
    if not ctx.windowed():
        return False
    try:
        y, m, d = (int(p) for p in parts)
    except ValueError:
        return False
    day = timestamps.local_midnight_ns(y, m, d)
    if day is None:
        return False
    hour = 3600 * 1_000_000_000
    if ctx.since is not None and day + 48 * hour < ctx.since:
        return True
    return ctx.until is not None and day - 24 * hour > ctx.until


class CopilotLocator(Locator):
    """``<root>/<session id>/events.jsonl`` plus sidecars (``workspace.yaml``, ``checkpoints/`` …).

    Hidden folders (``.session-operation-locks``) are not sessions. Beyond the
    reference: a flat ``<root>/<id>.jsonl`` (the layout of late-2025 releases)
    is a session too. Archive root: ``history-session-state/session_<id>_<ms>.json``,
    the legacy whole-document sessions.
    """

    harness = "copilot"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            entries = _entries(root)
        except OSError as exc:
            yield self._error(root, exc)
            return
        for e in entries:
            folder = join(root, e.name)
            if not _is_dir(e):
                if _FLAT_SESSION.fullmatch(e.name):
                    yield from self._session(folder, e.name[: -len(".jsonl")], ctx)
                else:
                    ctx.skip(folder, "not a session directory")
                continue
            if e.name.startswith("."):
                ctx.skip_tree(folder, True, "not a session directory")
                continue
            transcript = join(folder, "events.jsonl")
            if not _exists(transcript):
                ctx.skip_tree(folder, True, "session directory without transcript")
                continue
            for file in _walk_files(folder):
                if file != transcript:
                    ctx.skip(file, "session sidecar")
            yield from self._session(transcript, e.name, ctx)

    def _session(self, path: str, name: str, ctx: ScanContext) -> Iterator[Item]:
        for item in self._ref(path, ctx):
            if isinstance(item, SessionRef) and not item.meta.session_id:
                item.meta.session_id = name
            yield item

    def scan_archive(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            entries = _entries(root)
        except OSError as exc:
            yield self._error(root, exc)
            return
        for e in entries:
            path = join(root, e.name)
            if _is_dir(e) or not _LEGACY_SESSION.fullmatch(e.name):
                ctx.skip_tree(path, _is_dir(e), "not a session document")
                continue
            yield from self._ref(path, ctx)

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        if archive:
            return super().locate(root, session_id, archive=True, nested=nested)
        check_session_id(session_id)
        transcript = join(root, session_id, "events.jsonl")
        if not _exists(transcript):
            flat = join(root, session_id + ".jsonl")
            if not os.path.isfile(flat):
                return None
            transcript = flat
        ref = _strict_ref(self.harness, transcript)
        if not ref.meta.session_id:
            ref.meta.session_id = session_id
        return self._confirm(ref, session_id)

    def sidecars(self, ref: SessionRef) -> list[str]:
        folder = os.path.dirname(ref.path)
        if os.path.basename(ref.path) != "events.jsonl":
            return []
        return [f for f in _walk_files(folder) if f != ref.path]


_FLAT_SESSION = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F-]{27}\.jsonl")
_LEGACY_SESSION = re.compile(r"session_.+\.json")

#: An Antigravity conversation's transcript, relative to its folder.
_AG_TRANSCRIPT: Final = ".system_generated/logs/transcript_full.jsonl"
_CHILD_ID = re.compile(r'"conversationId":\s*"([^"]+)"')


class AntigravityLocator(Locator):
    """``<root>/<conversation id>/.system_generated/logs/transcript_full.jsonl`` plus artifacts.

    The transcript records no session id or cwd: the conversation's folder name
    is its session id. Subagent conversations are named only in the parent's
    ``invoke_subagent`` results (a content join), and are followed recursively.
    """

    harness = "antigravity"
    join = "content"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            entries = _entries(root)
        except OSError as exc:
            yield self._error(root, exc)
            return
        for e in entries:
            folder = join(root, e.name)
            if not _is_dir(e):
                ctx.skip(folder, "not a conversation directory")
                continue
            transcript = join(folder, _AG_TRANSCRIPT)
            if not _exists(transcript):
                ctx.skip_tree(folder, True, "conversation directory without transcript")
                continue
            for file in _walk_files(folder):
                if file != transcript:
                    ctx.skip(file, "conversation sidecar")
            for item in self._ref(transcript, ctx):
                if isinstance(item, SessionRef):
                    item.meta.session_id = e.name
                yield item

    def locate(
        self, root: str, session_id: str, *, archive: bool = False, nested: bool = False
    ) -> SessionRef | None:
        check_session_id(session_id)
        transcript = join(root, session_id, _AG_TRANSCRIPT)
        if not _exists(transcript):
            return None
        ref = _strict_ref(self.harness, transcript)
        ref.meta.session_id = session_id
        return ref

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        out = Gathered(join=self.join)
        root = next((r.path for r in roots if not r.archive), "")
        if not parent.meta.session_id:
            parent.meta.session_id = conversation_id_of(parent.path)
        seen = {parent.meta.session_id}

        def walk(ref: SessionRef) -> None:
            for child_id in self._children(ref.path):
                if child_id in seen:
                    continue
                seen.add(child_id)
                child = self.locate(root, child_id)
                if child is None:
                    out.skipped.append(
                        TaskSkip(path=child_id, reason="child conversation not found under root")
                    )
                    continue
                out.subagents.append(child)
                walk(child)

        walk(parent)
        return out

    def _children(self, path: str) -> list[str]:
        from agentminutes.pipeline.conversion import Conversion, open_sync_chunks

        ids: list[str] = []
        conv = Conversion(name=path, harness=self.harness)
        try:
            for ev in conv.iter_events(open_sync_chunks(path)):
                res = ev.tool_result
                if res is None or res.tool_name != "invoke_subagent":
                    continue
                text = "\n".join(b.text for b in res.content or () if b.kind == "text")
                ids.extend(m[1] for m in _CHILD_ID.finditer(text))
        except ParseError as exc:
            raise ScanError(self.harness, str(exc.with_path("")), path) from None
        except AgentminutesError as exc:
            raise ScanError(self.harness, str(exc), path) from None
        return ids

    def sidecars(self, ref: SessionRef) -> list[str]:
        folder = conversation_folder(ref.path)
        if not folder:
            return []
        return [f for f in _walk_files(folder) if f != ref.path]


def conversation_folder(path: str) -> str:
    """The conversation folder an Antigravity transcript sits in, or ``""`` outside the layout."""
    suffix = "/" + _AG_TRANSCRIPT
    cleaned = clean(path)
    if not cleaned.endswith(suffix):
        return ""
    folder = cleaned[: -len(suffix)]
    return folder if os.path.basename(folder) not in ("", ".", "..") else ""


def conversation_id_of(path: str) -> str:
    """An Antigravity transcript's conversation id (its folder name), or ``""`` outside the layout."""
    return os.path.basename(conversation_folder(path))


class GeminiCliLocator(Locator):
    """``<root>/<project>/chats/session-<time>-<id>.json[l]``; subagents in ``chats/<parent id>/``.

    ``<project>`` is a hash (older releases) or a name of the project folder.
    Everything else in a project folder (``logs.json``, ``/chat save``
    checkpoints, tool checkpoints, shell history) is skipped: those are not
    session recordings.
    """

    harness = "gemini-cli"
    join = "layout"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        for project in self._projects(root, ctx):
            if isinstance(project, ScanError):
                yield project
                continue
            folder, entries = project
            for e in entries:
                path = join(folder, e.name)
                if e.name == "chats" and _is_dir(e):
                    yield from self._chats(path, ctx)
                else:
                    ctx.skip_tree(path, _is_dir(e), "not a chat recording")

    def _chats(self, folder: str, ctx: ScanContext) -> Iterator[Item]:
        try:
            entries = _entries(folder)
        except OSError as exc:
            yield self._error(folder, exc)
            return
        dirs = {e.name: join(folder, e.name) for e in entries if _is_dir(e)}
        used: set[str] = set()
        for e in entries:
            path = join(folder, e.name)
            if _is_dir(e):
                continue
            if not _GEMINI_SESSION.fullmatch(e.name):
                ctx.skip(path, "not a chat recording")
                continue
            for item in self._ref(path, ctx):
                if isinstance(item, SessionRef):
                    sid = item.meta.session_id
                    if sid and sid in dirs:
                        used.add(sid)
                        item.subagent_paths = self._subagents(dirs[sid], ctx) or None
                yield item
        for name in sorted(dirs):
            if name not in used:
                for path in self._subagents(dirs[name], ctx):
                    yield from self._ref(path, ctx)

    def _subagents(self, folder: str, ctx: ScanContext) -> list[str]:
        found = []
        for path in _walk_files(folder):
            if path.endswith(".jsonl") and os.path.dirname(path) == folder:
                found.append(path)
            else:
                ctx.skip(path, "not a subagent recording")
        return found

    def gather(self, roots: list[Root], parent: SessionRef, ctx: ScanContext) -> Gathered:
        paths = parent.subagent_paths
        if paths is None:
            folder = join(os.path.dirname(parent.path), parent.meta.session_id)
            ok = bool(parent.meta.session_id) and _is_dir_path(folder)
            paths = self._subagents(folder, ScanContext()) if ok else []
        return Gathered(join=self.join, subagents=[_strict_ref(self.harness, p) for p in paths])


_GEMINI_SESSION = re.compile(r"session-.+\.jsonl?")


class PiLocator(Locator):
    """``<root>/--<cwd with / as ->--/<time>_<session id>.jsonl``."""

    harness = "pi"
    join = "inline"

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        for project in self._projects(root, ctx):
            if isinstance(project, ScanError):
                yield project
                continue
            folder, entries = project
            for e in entries:
                path = join(folder, e.name)
                if not _is_dir(e) and e.name.endswith(".jsonl"):
                    yield from self._ref(path, ctx)
                else:
                    ctx.skip_tree(path, _is_dir(e), "not a session transcript")


class DocumentLocator(Locator):
    """The conversations of whole-document sources (data exports, ``turns.db``) under a root.

    Such a harness has no default folder: the root is an export file, or a
    folder searched recursively for files of the harness's format (detected
    from their heads; other files are skipped). Each conversation is a session
    whose ``path`` is its file; ``--conversation`` (``conversation=``) takes its
    ``meta.session_id``.
    """

    join = "inline"

    def __init__(self, harness: str) -> None:
        self.harness = harness

    def scan(self, root: str, ctx: ScanContext) -> Iterator[Item]:
        if not _is_dir_path(root):
            yield from self._document(root, ctx, named=True)
            return
        for path in _walk_files(root):
            yield from self._document(path, ctx, named=False)

    def _document(self, path: str, ctx: ScanContext, *, named: bool) -> Iterator[Item]:
        from agentminutes.pipeline.documents import DocumentConversion, route

        try:
            found = route(path, self.harness if named else "auto")
        except AgentminutesError as exc:
            if named:
                yield ScanError(self.harness, str(exc), path)
            else:
                ctx.skip(path, f"not a {self.harness} document")
            return
        if found.document is None or found.adapter is None or found.adapter.name != self.harness:
            if named:
                yield ScanError(self.harness, f"not a {self.harness} document", path)
            else:
                ctx.skip(path, f"not a {self.harness} document")
            return
        if ctx.on_file is not None:
            ctx.on_file(path)
        try:
            st = os.stat(path)
            listed = DocumentConversion(found.document, found.adapter).conversations()
        except OSError as exc:
            yield ScanError(self.harness, _cause("open", path, exc), path)
            return
        except ParseError as exc:
            yield ScanError(self.harness, str(exc.with_path("")), path)
            return
        except AgentminutesError as exc:
            yield ScanError(self.harness, str(exc), path)
            return
        finally:
            found.document.release()
        mod_time = timestamps.format_local_ns(st.st_mtime_ns)
        for conv in listed:
            ref = SessionRef(
                meta=Meta(harness=self.harness, session_id=conv.id),
                path=path,
                started_at=timestamps.normalize(conv.created) if conv.created else "",
                mod_time=mod_time,
                size_bytes=st.st_size,
                updated_at=timestamps.normalize(conv.updated) if conv.updated else "",
            )
            if not ctx.windowed() or ctx.includes(*ref.window()):
                yield ref


#: Every harness with a layout, by name.
LOCATORS: dict[str, Locator] = {
    loc.harness: loc
    for loc in (
        AntigravityLocator(),
        ClaudeCodeLocator(),
        CodexLocator(),
        CopilotLocator(),
        GeminiCliLocator(),
        PiLocator(),
    )
}


def locator(harness: str) -> Locator | None:
    """The locator of *harness*, or ``None`` for a harness discovery does not know.

    Whole-document harnesses (data exports, ``turns.db``) get a
    :class:`DocumentLocator`, which needs an explicit root.
    """
    found = LOCATORS.get(harness)
    if found is not None:
        return found
    from agentminutes.harness import document_adapter_class

    return DocumentLocator(harness) if document_adapter_class(harness) is not None else None
