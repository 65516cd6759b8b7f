"""Discovery: find session transcripts in the harnesses' own folders (``agentminutes sessions``).

:func:`scan` goes through the default roots of every harness (or one
harness's roots, or an explicit root) and yields a :class:`SessionRef` per
session, filtered by id, working directory and activity window;
:func:`locate` resolves one session id to its transcript and subagent
transcripts without a full scan. The layouts themselves are in
:mod:`agentminutes.discovery.layouts`, the roots in :mod:`agentminutes.discovery.roots`.

Filters, as in the reference CLI: the window keeps a session whose activity
interval (first in-band timestamp to the file's modification time) meets
``[since, until]``, ends included; ``session_id`` matches the recorded
session id or subagent id; ``cwd`` matches the recorded working directory
after lexical cleaning (a session that records none never matches, and is
counted apart). Per-file problems do not stop a scan: each becomes a
:class:`~agentminutes.ScanError` in :attr:`Scan.errors` (and goes to
``on_error`` at once), and the scan goes on.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from datetime import datetime
from typing import IO

import msgspec

from agentminutes import timestamps
from agentminutes.discovery.layouts import (
    IdentityCache,
    Item,
    Locator,
    Root,
    ScanContext,
    SessionRef,
    clean,
    locator,
    wanted_cwd,
)
from agentminutes.errors import (
    AgentminutesError,
    OptionError,
    ScanError,
    SourceError,
    UsageError,
)
from agentminutes.pipeline.processes import default_jobs
from agentminutes.schema import Meta

__all__ = (
    "SKIP_ROOT_MISSING",
    "Scan",
    "ScanProgress",
    "SessionRef",
    "harness_roots",
    "locate",
    "locate_sync",
    "scan",
    "sessions_command",
)

#: Why a harness was not searched: none of its default roots exists (not counted as a skip).
SKIP_ROOT_MISSING = "root does not exist"

When = datetime | str | int | None


def _instant(value: When, *, end_of_day: bool) -> int | None:
    """A window bound as nanoseconds: a datetime (naive = local), a CLI string, or ns."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return int(value.timestamp() * 1_000_000) * 1000
    if isinstance(value, int):
        return value
    try:
        return timestamps.parse_when(value, end_of_day=end_of_day)
    except ValueError as exc:
        raise OptionError(str(exc)) from None


def _discovery_harnesses() -> list[str]:
    """Harnesses with default roots, line and document formats alike, in registry order.

    Line formats come first, in the order the reference scans them.
    """
    from agentminutes.harness.registry import harnesses

    return [h.name for h in harnesses() if h.roots is not None and locator(h.name)]


def harness_roots(
    harness: str, root: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> list[Root]:
    """The folders to search for *harness*: *root* alone, or its default and archive roots."""
    if root is not None:
        return [Root(os.fspath(root))]
    from agentminutes.discovery.roots import archive_roots, default_roots
    from agentminutes.harness.registry import described

    entry = described(harness)
    if entry is None or entry.roots is None:
        raise UsageError(
            f"{harness} has no default folder: give a root (an export file, a database, "
            "or a folder of them)"
        )
    roots = [Root(str(p)) for p in default_roots(harness, env)]
    return roots + [Root(str(p), archive=True) for p in archive_roots(harness, env)]


def _locator(harness: str) -> Locator:
    found = locator(harness)
    if found is None:
        from agentminutes.harness import adapter_class

        adapter_class(harness)  # an unknown name: the registry's error
        raise UsageError(f'harness "{harness}" has no session folders to search')
    return found


class Scan:
    """A session scan: iterate it (``for`` or ``async for``) for :class:`SessionRef` s.

    Build it with :func:`scan`. After (or during) iteration the counters say
    what happened: :attr:`matched` sessions yielded, :attr:`filtered` left out
    by ``session_id``/``cwd`` (and by the window in lookup mode),
    :attr:`no_cwd` of those for recording no cwd, :attr:`skipped` files by
    reason (a file with no conversation in it is one), :attr:`absent` harnesses
    whose default folders do not exist here (neither a skip nor an error), and
    :attr:`errors`, the files that could not be read.
    """

    def __init__(
        self,
        harness: str | None = None,
        root: str | os.PathLike[str] | None = None,
        *,
        cwd: str | None = None,
        session_id: str | None = None,
        since: When = None,
        until: When = None,
        all_subagents: bool = False,
        env: Mapping[str, str] | None = None,
        on_error: Callable[[ScanError], None] | None = None,
        on_file: Callable[[str], None] | None = None,
        identity: IdentityCache | None = None,
        jobs: int = 1,
    ) -> None:
        if root is not None and not harness:
            raise UsageError("--root requires --harness")
        self.harness = harness or ""
        self.cwd = cwd or ""
        self.session_id = session_id or ""
        self.env = os.environ if env is None else env
        self.on_error = on_error
        self.ctx = ScanContext(
            since=_instant(since, end_of_day=False),
            until=_instant(until, end_of_day=True),
            on_skip=self._skipped,
            on_file=on_file,
            nested=all_subagents,
            identity=identity,
        )
        self.matched = 0
        self.filtered = 0
        self.no_cwd = 0
        #: Why sessions were filtered out: ``window`` (lookup mode), ``session_id``, ``cwd``.
        self.filtered_by: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        #: Harnesses none of whose default folders exists (a scan of every harness).
        self.absent: list[str] = []
        self.searched: list[str] = []
        self.errors: list[ScanError] = []
        #: Worker processes that may read the transcripts read whole (see :meth:`_prefetch`).
        self.jobs = jobs
        self._source: Callable[[], Iterator[Item]] = self._everything
        self._lookup = False
        #: The one harness's locator and roots (``None``: every harness's default folders).
        self._one: tuple[Locator, list[Root]] | None = None
        if self.harness:
            loc = _locator(self.harness)
            roots = harness_roots(self.harness, root, self.env)
            self._one = (loc, roots)
            if self.session_id:
                self._lookup = True
                self._source = lambda: self._locate(loc, roots)
            else:
                if root is not None:
                    try:
                        os.stat(roots[0].path)
                    except OSError as exc:
                        text = exc.strerror or str(exc)
                        raise SourceError(f"stat {roots[0].path}: {text.lower()}") from None
                self._source = lambda: self._roots(loc, roots)

    def _skipped(self, path: str, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    @property
    def skipped_files(self) -> int:
        """How many files the layouts (and missing default roots) excluded."""
        return sum(self.skipped.values())

    # -- sources ---------------------------------------------------------------------------

    def _everything(self) -> Iterator[Item]:
        for harness in _discovery_harnesses():
            self.searched.append(harness)
            loc = _locator(harness)
            try:
                roots = harness_roots(harness, None, self.env)
            except (AgentminutesError, OSError, KeyError) as exc:  # one harness's problem
                yield ScanError(harness, str(exc))
                continue
            live = [r for r in roots if not r.archive]
            if not any(_present(r.path) for r in live):
                # A harness not installed here: ordinary, so no skip and no error; the
                # summary speaks of it only when no harness has a folder at all.
                self.absent.append(harness)
                live = []
            yield from self._roots(loc, live + [r for r in roots if r.archive], quiet=True)

    def _roots(self, loc: Locator, roots: list[Root], *, quiet: bool = False) -> Iterator[Item]:
        """Scan *roots*; a missing default root is skipped quietly (explicit ones were checked)."""
        for root in roots:
            if not os.path.lexists(root.path) or (quiet and not _present(root.path)):
                continue
            try:
                os.stat(root.path)
            except OSError as exc:
                text = exc.strerror or str(exc)
                yield ScanError(loc.harness, f"stat {root.path}: {text.lower()}", root.path)
                continue
            scan = loc.scan_archive if root.archive else loc.scan
            yield from scan(root.path, self.ctx)

    def _locate(self, loc: Locator, roots: list[Root]) -> Iterator[Item]:
        found: list[SessionRef] = []
        try:
            for root in roots:
                ref = loc.locate(
                    root.path, self.session_id, archive=root.archive, nested=self.ctx.nested
                )
                if ref is not None:
                    found.append(ref)
        except ScanError as exc:
            yield exc
            return
        if len(found) > 1:
            listed = " ".join(r.path for r in found)
            yield ScanError(
                loc.harness,
                f'session "{self.session_id}" is in several roots: [{listed}]',
            )
            return
        yield from found

    # -- iteration -------------------------------------------------------------------------

    # -- identities read ahead by worker processes --------------------------------------------

    def _whole_readers(self) -> Iterator[tuple[Locator, list[Root]]]:
        """The harnesses in this scan whose identity read decodes a whole transcript.

        An adapter that holds a transcript to its end before it emits (Antigravity's
        step sort: ``drain``) is read whole to tell a session's identity; the others
        read a head of a few KiB, which no worker process would make cheaper.
        """
        from agentminutes.harness import adapter_class

        if self._one is not None:
            chosen = [self._one]
        else:
            chosen = []
            for harness in _discovery_harnesses():
                try:
                    roots = harness_roots(harness, None, self.env)
                except (AgentminutesError, OSError, KeyError):
                    continue
                if any(_present(r.path) for r in roots):
                    chosen.append((_locator(harness), roots))
        for loc, roots in chosen:
            try:
                whole = hasattr(adapter_class(loc.harness), "drain")
            except AgentminutesError:
                continue
            if whole:
                yield loc, [r for r in roots if _present(r.path)]

    def _prefetch(self) -> IdentityCache | None:
        """Read ahead, in worker processes, the identities this scan will read whole.

        A first walk of the folders of :meth:`_whole_readers` names the transcripts
        (none is opened); when their bytes make workers pay
        (:func:`~agentminutes.pipeline.processes.pays`), the workers read their
        identities and the scan then takes each from them, for a file of the same
        size and time. A transcript a worker could not identify is read again by
        the scan itself, so its error or skip is reported as without workers.
        """
        from agentminutes.pipeline.processes import in_order, pays

        named: list[tuple[str, str, os.stat_result]] = []
        for loc, roots in self._whole_readers():

            def note(path: str, st: os.stat_result, harness: str = loc.harness) -> tuple[Meta, str]:
                named.append((harness, path, st))
                return Meta(harness=harness), ""  # a stand-in: this walk yields nothing

            walk = ScanContext(nested=self.ctx.nested, identity=note)
            for r in roots:
                scan = loc.scan_archive if r.archive else loc.scan
                for _ in scan(r.path, walk):
                    pass
        sizes = [st.st_size for _, _, st in named]
        if not pays(self.jobs, sizes):
            return None
        items = [(harness, path) for harness, path, _ in named]
        read = in_order(_identity_or_none, items, sizes, self.jobs, preload=(__name__,))
        known = {
            path: (st.st_size, st.st_mtime_ns, got)
            for (_, path, st), got in zip(named, read, strict=True)
            if got is not None
        }

        def identity(path: str, st: os.stat_result) -> tuple[Meta, str] | None:
            got = known.pop(path, None)
            if got is None or got[0] != st.st_size or got[1] != st.st_mtime_ns:
                return None
            return got[2]

        return identity

    def __iter__(self) -> Iterator[SessionRef]:
        if self.jobs > 1 and not self._lookup and self.ctx.identity is None:
            self.ctx.identity = self._prefetch()
        want_cwd = wanted_cwd(self.cwd) if self.cwd else ""
        for item in self._source():
            if isinstance(item, ScanError):
                self.errors.append(item)
                if self.on_error is not None:
                    self.on_error(item)
                continue
            if self._lookup and self.ctx.windowed() and not self.ctx.includes(*item.window()):
                self._filter("window")
                continue
            meta = item.meta
            if self.session_id and self.session_id not in (meta.session_id, meta.subagent_id):
                self._filter("session_id")
                continue
            if want_cwd:
                if not meta.cwd:
                    self._filter("cwd")
                    self.no_cwd += 1
                    continue
                if clean(meta.cwd) != want_cwd:
                    self._filter("cwd")
                    continue
            self.matched += 1
            yield item

    async def __aiter__(self) -> AsyncIterator[SessionRef]:
        """The same refs, the folder walk and head reads done on a thread of the scan's own
        (at most 50 ms a step: a cancellation returns within one), which ends with it."""
        from agentminutes.pipeline.worker import StepThread

        it = iter(self)
        done = False
        worker = StepThread("agentminutes-scan")
        try:
            while not done:
                batch, done = await worker.run(lambda: _take(it))
                for ref in batch:
                    yield ref
        finally:
            worker.close()

    def _filter(self, why: str) -> None:
        self.filtered += 1
        self.filtered_by[why] = self.filtered_by.get(why, 0) + 1

    def details(self) -> list[str]:
        """Why files were skipped and sessions filtered out, one line each (none when nothing was)."""
        out = []
        if self.searched and len(self.absent) == len(self.searched):
            out.append(
                "no transcripts folder of any harness here ("
                + ", ".join(self.searched)
                + "); --harness NAME --root DIR reads another folder"
            )
        if self.skipped:
            reasons = sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
            out.append("skipped files: " + ", ".join(f"{n} {why}" for why, n in reasons))
        if self.filtered:
            names = {"window": "outside --since/--until", "session_id": "by --session-id"}
            parts = []
            for why in ("session_id", "cwd", "window"):
                n = self.filtered_by.get(why, 0)
                if not n:
                    continue
                if why == "cwd":
                    text = f"{n} by --cwd"
                    if self.no_cwd:
                        text += f" ({self.no_cwd} without recorded cwd)"
                else:
                    text = f"{n} {names[why]}"
                parts.append(text)
            out.append("filtered out: " + ", ".join(parts))
        return out

    def summary(self) -> str:
        """The one-line account ``agentminutes sessions`` prints on stderr."""
        text = f"{_plural(self.matched, 'session')}, {self.filtered} filtered out"
        if self.no_cwd:
            text += f" ({self.no_cwd} without recorded cwd)"
        skips = _plural(self.skipped_files, "skipped file")
        return f"{text}, {skips}, {_plural(len(self.errors), 'error')}"


def _identity_or_none(item: tuple[str, str]) -> tuple[Meta, str] | None:
    """A worker process's read of one transcript's identity; ``None`` when it fails (the
    scan then reads it itself, and reports what it meets as it would without workers)."""
    from agentminutes.discovery.layouts.base import read_identity

    try:
        return read_identity(*item)
    except Exception:  # any failure: the scan reads the file again and reports it
        return None


#: Longest a listed path waits in the output buffer (``sessions`` to a pipe or file).
_FLUSH_SECONDS = 0.05

#: Refs handed over per worker-thread hop in async iteration.
_BATCH = 32


def _take(it: Iterator[SessionRef]) -> tuple[list[SessionRef], bool]:
    """The next refs (up to a batch, or what 50 ms found) and whether the scan is over."""
    out: list[SessionRef] = []
    deadline = time.monotonic() + 0.05
    for ref in it:
        out.append(ref)
        if len(out) >= _BATCH or time.monotonic() > deadline:
            return out, False
    return out, True


def _present(path: str) -> bool:
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # it exists but cannot be stat'ed: the scan reports that
    return True


def _plural(n: int, word: str) -> str:
    return f"1 {word}" if n == 1 else f"{n} {word}s"


def scan(
    harness: str | None = None,
    root: str | os.PathLike[str] | None = None,
    *,
    cwd: str | None = None,
    session_id: str | None = None,
    since: When = None,
    until: When = None,
    all_subagents: bool = False,
    env: Mapping[str, str] | None = None,
    on_error: Callable[[ScanError], None] | None = None,
) -> Scan:
    """Find session transcripts: every harness's default folders, one harness's, or *root*.

    Iterate the result with ``async for`` (the walk runs in a worker thread)
    or ``for``; each item is a :class:`SessionRef`. Per-file problems are
    collected in ``.errors`` (and passed to *on_error* as they happen) and
    the scan goes on; ``.skipped``, ``.filtered`` and ``.no_cwd`` count the rest.

    Args:
        harness: one harness (``"claude-code"`` …); ``None`` for every harness
            that has default folders (a missing folder is counted, not an error).
        root: search this folder (or, for a data-export harness, this file)
            instead of the harness's default folders; needs *harness*.
        cwd: keep sessions whose recorded working directory is this path.
        session_id: keep the session (or subagent) with this id; with
            *harness*, resolved directly instead of by a scan.
        since, until: keep sessions active in this window: a ``datetime``
            (naive means local time), RFC 3339, or ``YYYY-MM-DD`` (a local day;
            *until* includes the whole day).
        all_subagents: Claude Code: also list subagent transcripts nested
            below ``subagents/`` (workflow agents), which the reference skips.
        env: the environment to take roots from (default ``os.environ``).

    Raises:
        UsageError: *root* without *harness*, an unknown harness, a bad time.
        SourceError: an explicit *root* that does not exist.
    """
    return Scan(
        harness,
        root,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=all_subagents,
        env=env,
        on_error=on_error,
    )


def locate_sync(
    harness: str,
    session_id: str,
    *,
    root: str | os.PathLike[str] | None = None,
    all_subagents: bool = False,
    env: Mapping[str, str] | None = None,
) -> SessionRef | None:
    """Synchronous twin of :func:`locate`."""
    loc = _locator(harness)
    found: list[SessionRef] = []
    for r in harness_roots(harness, root, env if env is not None else os.environ):
        ref = loc.locate(r.path, session_id, archive=r.archive, nested=all_subagents)
        if ref is not None:
            found.append(ref)
    if len(found) > 1:
        listed = " ".join(r.path for r in found)
        raise ScanError(harness, f'session "{session_id}" is in several roots: [{listed}]')
    if not found:
        return None
    ref = found[0]
    if all_subagents and ref.meta.harness == "claude-code":
        from agentminutes.harness.claude_code.layout import ClaudeCodeLocator

        ctx = ScanContext(nested=True)
        session_dir = ref.path[: -len(".jsonl")]
        ref.subagent_paths = (
            ClaudeCodeLocator().subagents(session_dir if os.path.isdir(session_dir) else "", ctx)
            or None
        )
    return ref


async def locate(
    harness: str,
    session_id: str,
    *,
    root: str | os.PathLike[str] | None = None,
    all_subagents: bool = False,
    env: Mapping[str, str] | None = None,
) -> SessionRef | None:
    """Find one session by id: its transcript (``.path``) and subagent transcripts.

    Resolved from the folder layout (a file or folder named by the id) and
    confirmed by the id the transcript records; no full scan. Returns
    ``None`` when the harness's folders (or *root*) hold no such session.

    Raises:
        ScanError: an invalid or ambiguous id, or a transcript that cannot be
            read or records another id.
        UsageError: an unknown harness, or one without session folders.
    """
    from agentminutes.pipeline.worker import off_loop

    def run() -> SessionRef | None:
        return locate_sync(harness, session_id, root=root, all_subagents=all_subagents, env=env)

    return await off_loop(run, "agentminutes-locate")


# -- the command ---------------------------------------------------------------------------------


class ScanProgress:
    """A progress line on a terminal's stderr once a scan has run for a second (``sessions``,
    ``usage``): *line* with ``{files}``, the transcripts read so far."""

    def __init__(self, stream: IO[str], line: str = "scanning… {files} transcripts read") -> None:
        self.stream = stream
        self.line = line
        self.tty = stream.isatty()
        self.files = 0
        self.shown = False
        self._next = time.monotonic() + 1.0

    def file(self, path: str) -> None:
        """Count one transcript read (*path*); redraw the line at most ten times a second."""
        self.files += 1
        if not self.tty:
            return
        now = time.monotonic()
        if now >= self._next:
            self._next = now + 0.1
            text = self.line.format(files=self.files)
            self.stream.write(f"\ragentminutes: {text}\x1b[K")
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        """Take the line away (before the output or a message is written)."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


def sessions_command(
    *,
    harness: str,
    root: str | None,
    cwd: str,
    session_id: str,
    since: str,
    until: str,
    fmt: str,
    all_subagents: bool,
    jobs: int | None = None,
) -> int:
    """``agentminutes sessions``: list, filter, print; the summary on stderr. Returns the status.

    Transcripts read whole to tell their identity (Antigravity's) are read by *jobs*
    worker processes (default: one per CPU) once they hold enough bytes."""
    err = sys.stderr
    progress = ScanProgress(err)

    out = sys.stdout.buffer

    def report(exc: ScanError) -> None:
        progress.clear()
        out.flush()  # the paths listed before it come first, on a terminal or in one log
        print(f"agentminutes: {exc}", file=err, flush=True)

    found = Scan(
        harness or None,
        root or None,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=all_subagents,
        on_error=report,
        on_file=progress.file,
        jobs=default_jobs() if jobs is None else jobs,
    )
    if fmt not in ("paths", "json", "jsonl"):
        raise OptionError(f'unknown format "{fmt}" (want paths, json, or jsonl)')
    encoder = msgspec.json.Encoder()
    kept: list[SessionRef] = []
    last_path = ""
    # Lines go out as they are found, at least every 50 ms (each its own write where a
    # progress line shares the terminal): a flush per line cost 3 % of listing 5,000.
    flushed = time.monotonic()
    for ref in found:
        if fmt == "json":
            kept.append(ref)
            continue
        progress.clear()
        if fmt == "jsonl":
            out.write(encoder.encode(ref) + b"\n")
        else:
            lines = [ref.path] if ref.path != last_path else []
            lines += ref.subagent_paths or []
            last_path = ref.path
            if lines:
                out.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
        now = time.monotonic()
        if progress.tty or now - flushed >= _FLUSH_SECONDS:
            out.flush()
            flushed = now
    out.flush()
    progress.clear()
    if fmt == "json":
        out.write(msgspec.json.format(encoder.encode(kept), indent=2) + b"\n")
        out.flush()
    for line in found.details():
        print(f"agentminutes: {line}", file=err)
    print(f"agentminutes: {found.summary()}", file=err)
    return 1 if found.errors else 0
