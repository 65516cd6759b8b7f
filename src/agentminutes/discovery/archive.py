"""Capture sessions into a folder: ``agentminutes archive`` (copies, normalized JSON, a manifest).

Harnesses delete old transcripts (Claude Code's retention removes sessions
after 30 days by default), so the step after a headless agent run is to
capture what it wrote. For each selected session this copies

* the transcript, its subagent transcripts (Claude Code subagents, workflow
  agents nested below ``subagents/`` included; Codex subagent rollouts;
  Antigravity child conversations; Gemini CLI subagent recordings) and
* the sidecar files that belong to it (the rest of a Claude Code session
  folder, such as ``*.meta.json`` and ``tool-results/``; a Copilot session
  folder's ``workspace.yaml``, ``checkpoints/`` …; an Antigravity
  conversation's artifacts)

into the target folder at the same path relative to the harness's root, so
the target is itself a root (``sessions --harness H --root DIR`` lists it).
Beside each copied transcript goes its normalized session,
``<file>.agentminutes.json`` (what ``convert`` writes), and the folder's
``MANIFEST.json`` records every file: path, size, sha256, source path,
harness, session id, role and when it was copied.

Rules:

* **Sources are only read.** Files are opened read-only; nothing is moved,
  touched or locked.
* **Whole lines only.** A JSONL file is copied up to its last newline, so a
  transcript the agent is still writing is captured without a torn record.
* **Idempotent.** A file whose copy is current is left alone. A JSONL source
  that grew by appending (its first *N* bytes are still the *N* bytes
  copied) has only its new complete lines appended to the copy. A source
  that changed any other way (rewritten, truncated, or a sidecar edited in
  place), or a copy that no longer matches the manifest, is **reported and
  left as it is**: the archive never silently overwrites what it holds.
* **Modes as any program's.** New copies, normalized sessions and the
  manifest are created with mode 0666 less the umask (a private archive is
  ``umask 077`` away); a rewritten normalized session or manifest keeps the
  mode it had.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Final, NamedTuple

import msgspec

from agentminutes import timestamps
from agentminutes.discovery.layouts import Root, ScanContext, SessionRef, join, locator
from agentminutes.discovery.sessions import Scan, When, harness_roots
from agentminutes.errors import AgentminutesError, ParseError, ScanError, UsageError
from agentminutes.pipeline.batch import Stage
from agentminutes.sinks.output import new_file, replace_file, write_file

__all__ = (
    "MANIFEST",
    "ArchiveResult",
    "Conflict",
    "ManifestEntry",
    "archive",
    "archive_sync",
)

#: The manifest's file name in the archive folder.
MANIFEST: Final = "MANIFEST.json"
#: The suffix of a transcript's normalized session, written beside the copy.
NORMALIZED_SUFFIX: Final = ".agentminutes.json"
_LOCK: Final = ".agentminutes-archive.lock"
_CHUNK: Final = 1 << 20


class ManifestEntry(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One archived file: where it is (relative to the archive), what it holds, where from."""

    path: str
    size: int
    sha256: str
    source: str
    copied_at: str
    harness: str
    session_id: str = ""
    #: ``transcript``, ``subagent``, ``sidecar``, or ``normalized`` (a transcript's session JSON).
    role: str


class Manifest(msgspec.Struct, kw_only=True):
    """``MANIFEST.json``: every file the archive holds, sorted by path."""

    agentminutes_archive: int = 1
    files: list[ManifestEntry] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class Conflict:
    """A source that changed under its earlier copy (or a copy changed in the archive)."""

    source: str
    copy: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}: {self.reason}; the archived copy {self.copy} is kept as it was"


@dataclass
class ArchiveResult:
    """What an archive run did. ``ok`` is false when anything was reported."""

    to: str
    sessions: list[str] = field(default_factory=list)
    copied: list[str] = field(default_factory=list)
    extended: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    normalized: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.conflicts and not self.errors

    def summary(self) -> str:
        return (
            f"{_plural(len(self.sessions), 'session')}: {len(self.copied)} files copied, "
            f"{len(self.extended)} extended, {len(self.unchanged)} unchanged, "
            f"{len(self.conflicts)} changed under their copy, {len(self.normalized)} normalized, "
            f"{_plural(len(self.errors), 'error')}"
        )


def _plural(n: int, word: str) -> str:
    return f"1 {word}" if n == 1 else f"{n} {word}s"


def _now() -> str:
    return timestamps.format_ns(time.time_ns())


# -- copying --------------------------------------------------------------------------------------


def _sha_of(path: str, limit: int | None = None) -> tuple[str, int]:
    """sha256 and length of a file's first *limit* bytes (all of it by default)."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while limit is None or n < limit:
            want = _CHUNK if limit is None else min(_CHUNK, limit - n)
            chunk = f.read(want)
            if not chunk:
                break
            h.update(chunk)
            n += len(chunk)
    return h.hexdigest(), n


def _whole_lines(src: IO[bytes], out: IO[bytes], h: hashlib._Hash, lines: bool) -> int:
    """Copy *src* from where it is to its end into *out*; JSONL up to the last newline only."""
    written = 0
    pending = b""
    while chunk := src.read(_CHUNK):
        _check()
        if lines:
            data = pending + chunk
            cut = data.rfind(b"\n") + 1
            pending = data[cut:]
            data = data[:cut]
        else:
            data = chunk
        if data:
            out.write(data)
            h.update(data)
            written += len(data)
    return written


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class _Copy:
    status: str  # "copied", "extended", "unchanged", "pending" or "conflict"
    entry: ManifestEntry | None = None
    reason: str = ""


def _copy(
    source: str, dest: str, rel: str, prev: ManifestEntry | None, meta: tuple[str, str, str]
) -> _Copy:
    """Bring the copy at *dest* up to date with *source*, by the archive's rules."""
    harness, session_id, role = meta
    lines = source.endswith(".jsonl")

    def entry(size: int, sha: str) -> ManifestEntry:
        return ManifestEntry(
            path=rel,
            size=size,
            sha256=sha,
            source=source,
            copied_at=_now(),
            harness=harness,
            session_id=session_id,
            role=role,
        )

    with open(source, "rb") as src:
        st = os.fstat(src.fileno())
        if os.path.lexists(dest):
            held_sha, held_size = _sha_of(dest)
            if prev is not None and (held_size, held_sha) != (prev.size, prev.sha256):
                return _Copy(
                    "conflict", reason=f"the archived copy {rel} differs from its manifest entry"
                )
            if prev is not None and prev.source != source:
                return _Copy("conflict", reason=f"{rel} already holds a copy of {prev.source}")
            h = hashlib.sha256()
            got = 0
            while got < held_size:
                chunk = src.read(min(_CHUNK, held_size - got))
                if not chunk:
                    break
                h.update(chunk)
                got += len(chunk)
            if got < held_size:
                return _Copy("conflict", reason=f"it shrank below the {held_size} bytes copied")
            if h.hexdigest() != held_sha:
                return _Copy(
                    "conflict", reason=f"its first {held_size} bytes are not the ones copied"
                )
            more = src.read(1)
            if not more:
                return _Copy("unchanged", entry=prev or entry(held_size, held_sha))
            if not lines:
                return _Copy("conflict", reason="it grew, and is not an append-only line file")
            src.seek(held_size)
            undo = getattr(_current, "undo", None)
            if undo is not None:
                undo.extended.append((dest, held_size))
            with open(dest, "ab") as out:
                added = _whole_lines(src, out, h, lines=True)
                out.flush()
                os.fsync(out.fileno())
            _keep_mtime(dest, st)
            if not added:
                return _Copy("unchanged", entry=prev or entry(held_size, held_sha))
            return _Copy("extended", entry=entry(held_size + added, h.hexdigest()))
        folder = os.path.dirname(dest)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = new_file(folder)  # mode 0666 less the umask, as any new file
        try:
            h = hashlib.sha256()
            with os.fdopen(fd, "wb") as out:
                size = _whole_lines(src, out, h, lines=lines)
                out.flush()
                os.fsync(out.fileno())
            if lines and size == 0:
                os.unlink(tmp)
                return _Copy("pending")
            _keep_mtime(tmp, st)
            _check()
            os.replace(tmp, dest)
            undo = getattr(_current, "undo", None)
            if undo is not None:
                undo.created.append(dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    _fsync_dir(folder)
    return _Copy("copied", entry=entry(size, h.hexdigest()))


def _keep_mtime(path: str, st: os.stat_result) -> None:
    """Give a copy its source's modification time (the archive is a root to scan by time)."""
    with contextlib.suppress(OSError):
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _normalize(copy: str, harness: str, permissive: bool, redaction: Stage | None) -> None:
    """Write the normalized session of the transcript copy *copy* beside it (atomically)."""
    import anyio

    from agentminutes.formats.json import SessionJsonSink
    from agentminutes.harness import ParseOptions
    from agentminutes.pipeline.batch import apply_stages
    from agentminutes.pipeline.conversion import Conversion, open_chunks

    target = copy + NORMALIZED_SUFFIX
    undo = getattr(_current, "undo", None)
    if undo is not None and not os.path.exists(target):
        undo.created.append(target)
    conv = Conversion(
        name=copy, harness=harness, options=ParseOptions(permissive=permissive), path=copy
    )
    with replace_file(target, fsync=True) as out:

        async def run() -> None:
            sink = SessionJsonSink(out)
            batches = conv.batches(open_chunks(copy))
            if redaction is not None:
                batches = apply_stages(batches, [redaction])
            async for batch in batches:
                _check()
                await sink.send(batch)
            sink.finish(conv.skipped)
            await sink.aclose()

        anyio.run(run)


# -- selecting -------------------------------------------------------------------------------------


def _root_of(path: str, roots: list[Root]) -> str | None:
    best = None
    for r in roots:
        base = os.path.abspath(r.path)
        if os.path.abspath(path).startswith(base.rstrip(os.sep) + os.sep) and (
            best is None or len(base) > len(best)
        ):
            best = base
    return best


@dataclass
class _File:
    source: str
    role: str
    session_id: str


def _session_files(harness: str, ref: SessionRef, roots: list[Root]) -> list[_File]:
    """The transcripts and sidecars of *ref*'s session: parent, subagents (nested too), sidecars."""
    loc = locator(harness)
    assert loc is not None
    sid = ref.meta.session_id
    files = [_File(ref.path, "transcript", sid)]
    subs: list[SessionRef] = []
    if not ref.meta.is_subagent:
        try:
            subs = loc.gather(roots, ref, ScanContext(nested=True)).subagents
        except ScanError:
            subs = [_bare(p, ref) for p in ref.subagent_paths or []]
    files += [_File(s.path, "subagent", sid) for s in subs]
    seen = {f.source for f in files}
    for owner in [ref, *subs]:
        for side in loc.sidecars(owner):
            if side not in seen:
                seen.add(side)
                files.append(_File(side, "sidecar", sid))
    return files


def _bare(path: str, parent: SessionRef) -> SessionRef:
    return SessionRef(meta=parent.meta, path=path, mod_time="", size_bytes=0)


def _select(
    harness: str,
    roots: list[Root],
    root: str | os.PathLike[str] | None,
    session_id: str | None,
    cwd: str | None,
    since: When,
    env: Mapping[str, str],
    fail: Callable[[str], None],
) -> Iterator[SessionRef]:
    if session_id:
        from agentminutes.discovery.sessions import locate_sync

        ref = locate_sync(harness, session_id, root=root, all_subagents=True, env=env)
        if ref is None:
            where = " ".join(r.path for r in roots if not r.archive or os.path.exists(r.path))
            raise UsageError(f'{harness}: no session "{session_id}" under {where}')
        yield ref
        return
    assert cwd is not None
    want = os.path.normpath(os.path.abspath(os.path.expanduser(cwd)))
    yield from Scan(
        harness,
        root,
        cwd=want,
        since=since,
        all_subagents=True,
        env=env,
        on_error=lambda exc: fail(str(exc)),
    )


# -- the run -----------------------------------------------------------------------------------------


def archive_sync(
    to: str | os.PathLike[str],
    *,
    harness: str,
    session_id: str | None = None,
    cwd: str | None = None,
    since: When = None,
    root: str | os.PathLike[str] | None = None,
    permissive: bool = False,
    env: Mapping[str, str] | None = None,
    on_report: Callable[[str], None] | None = None,
    redaction: Stage | None = None,
    jobs: int = 1,
) -> ArchiveResult:
    """Synchronous twin of :func:`archive`.

    With *jobs* above 1 and no *redaction*, the normalized sessions are written by
    that many worker processes once the transcripts to normalize hold enough bytes
    (:func:`~agentminutes.pipeline.processes.pays`); the reports then come at the
    end of the run, in the order one process makes them, and the result is the same.
    """
    return _archive(
        None,
        to,
        harness=harness,
        session_id=session_id,
        cwd=cwd,
        since=since,
        root=root,
        permissive=permissive,
        env=env,
        on_report=on_report,
        redaction=redaction,
        jobs=jobs,
    )


class _Cancelled(Exception):
    """The async caller was cancelled: the run stops and undoes what it did."""


class _Undo:
    """What this run changed in the archive, to put back if it is cancelled."""

    def __init__(self, cancel: threading.Event | None) -> None:
        self.cancel = cancel
        self.created: list[str] = []
        self.extended: list[tuple[str, int]] = []

    def check(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise _Cancelled

    def undo(self) -> None:
        for path in reversed(self.created):
            with contextlib.suppress(OSError):
                os.unlink(path)
        for path, size in reversed(self.extended):
            with contextlib.suppress(OSError):
                os.truncate(path, size)


#: The run under way in this thread (checked between chunks), if it can be cancelled.
_current = threading.local()


def _check() -> None:
    undo = getattr(_current, "undo", None)
    if undo is not None:
        undo.check()


def _archive(
    cancel: threading.Event | None,
    to: str | os.PathLike[str],
    *,
    harness: str,
    session_id: str | None,
    cwd: str | None,
    since: When,
    root: str | os.PathLike[str] | None,
    permissive: bool,
    env: Mapping[str, str] | None,
    on_report: Callable[[str], None] | None,
    redaction: Stage | None,
    jobs: int = 1,
) -> ArchiveResult:
    from agentminutes.harness import document_adapter_class

    if document_adapter_class(harness) is not None:
        # A database holds other sessions (and, for OpenCode, account tables) beside the
        # one asked for: copying its bytes is not archiving a session.
        raise UsageError(
            f"archive copies transcript files; {harness} sessions live in a database, an "
            "export or a folder of documents: keep their normalized form with "
            "`agentminutes convert --all SOURCE`"
        )
    if bool(session_id) == bool(cwd):
        raise UsageError("archive needs exactly one of --session-id and --cwd")
    if since and not cwd:
        raise UsageError("--since selects among the sessions of a --cwd; it needs --cwd")
    env = os.environ if env is None else env
    target = os.path.abspath(os.fspath(to))
    roots = harness_roots(harness, root, env)
    for r in roots:
        base = os.path.abspath(r.path)
        if target == base or target.startswith(base.rstrip(os.sep) + os.sep):
            raise UsageError(
                f"--to {to} is inside the {harness} folder {r.path}; archive elsewhere"
            )
    try:
        os.makedirs(target, exist_ok=True)
        lock = open(join(target, _LOCK), "a")  # noqa: SIM115 (held for the whole run)
    except OSError as exc:
        raise UsageError(f"--to {to}: {exc.strerror or exc}") from None
    result = ArchiveResult(to=target)

    def say(text: str) -> None:
        if on_report is not None:
            on_report(text)

    def failed(text: str) -> None:
        result.errors.append(text)
        say(text)

    # With worker processes (not for a run that can be cancelled, whose undo list is
    # this process's, nor for a redaction, whose counts are): reports and
    # normalizations are logged in the order met, and replayed once the copies are done.
    log: list[tuple[str, Any]] | None = (
        [] if jobs > 1 and cancel is None and redaction is None else None
    )

    def report(text: str) -> None:
        if log is not None:
            log.append((_REPORT, text))
        else:
            say(text)

    def fail(text: str) -> None:
        if log is not None:
            log.append((_FAIL, text))
        else:
            failed(text)

    later = None if log is None else (lambda job: log.append((_NORMALIZE, job)))

    undo = _Undo(cancel)
    with lock:
        # Another archive run into the same folder waits here: one writer per manifest.
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = _read_manifest(target)
        held = {e.path: e for e in manifest.files}
        before = dict(held) if os.path.exists(join(target, MANIFEST)) else None
        _current.undo = undo
        try:
            for ref in _select(harness, roots, root, session_id, cwd, since, env, fail):
                result.sessions.append(ref.meta.session_id or ref.path)
                for f in _session_files(harness, ref, roots):
                    undo.check()
                    _archive_file(
                        f,
                        harness,
                        roots,
                        target,
                        held,
                        result,
                        permissive,
                        report,
                        fail,
                        redaction,
                        later,
                    )
                undo.check()
            if log is not None:
                _replay(log, jobs, harness, permissive, held, result, say, failed)
            _write_manifest(target, held)
        except _Cancelled:
            undo.undo()
            if before is None:
                with contextlib.suppress(OSError):
                    os.unlink(join(target, MANIFEST))
            else:
                _write_manifest(target, before)
            raise
        except BaseException:
            _write_manifest(target, held)
            raise
        finally:
            _current.undo = None
    return result


def _archive_file(
    f: _File,
    harness: str,
    roots: list[Root],
    target: str,
    held: dict[str, ManifestEntry],
    result: ArchiveResult,
    permissive: bool,
    report: Callable[[str], None],
    fail: Callable[[str], None],
    redaction: Stage | None = None,
    later: Callable[[_Normalize], None] | None = None,
) -> None:
    """Copy *f* into the archive and, for a transcript, write its normalized session (or,
    given *later*, hand that on to it)."""
    base = _root_of(f.source, roots)
    if base is None:
        fail(f"{f.source}: outside the {harness} folders; not archived")
        return
    rel = os.path.relpath(os.path.abspath(f.source), base)
    dest = join(target, rel)
    try:
        done = _copy(f.source, dest, rel, held.get(rel), (harness, f.session_id, f.role))
    except OSError as exc:
        fail(f"{f.source}: {exc.strerror or exc}")
        return
    if done.status == "conflict":
        conflict = Conflict(f.source, dest, done.reason)
        result.conflicts.append(conflict)
        report(str(conflict))
        return
    if done.entry is not None:
        held[rel] = done.entry
    if done.status in ("copied", "extended", "unchanged"):
        getattr(result, done.status).append(dest)
    if f.role == "sidecar" or done.status == "pending":
        return
    job = _Normalize(dest, rel + NORMALIZED_SUFFIX, f.source, f.session_id, done.status)
    if later is not None:
        later(job)
    elif not _current_json(job, held):
        error = _normalized_or_error(harness, permissive, redaction, dest)
        _normalize_done(job, error, harness, held, result, fail)


class _Normalize(NamedTuple):
    """A transcript copy whose normalized session is to be written beside it."""

    dest: str
    json_rel: str
    source: str
    session_id: str
    #: What copying it did: an unchanged copy whose normalized session is current is done.
    status: str


def _current_json(job: _Normalize, held: dict[str, ManifestEntry]) -> bool:
    """Whether *job*'s copy was unchanged and its normalized session is there already."""
    return (
        job.status == "unchanged"
        and job.json_rel in held
        and os.path.exists(job.dest + NORMALIZED_SUFFIX)
    )


def _normalized_or_error(
    harness: str, permissive: bool, redaction: Stage | None, dest: str
) -> str | None:
    """Write *dest*'s normalized session; the error's text when it cannot be (in a worker too)."""
    try:
        _normalize(dest, harness, permissive, redaction)
    except (AgentminutesError, OSError) as exc:
        return str(exc.with_path(dest)) if isinstance(exc, ParseError) else str(exc)
    return None


def _normalize_done(
    job: _Normalize,
    error: str | None,
    harness: str,
    held: dict[str, ManifestEntry],
    result: ArchiveResult,
    fail: Callable[[str], None],
) -> None:
    """Account for *job*'s normalized session (or *error*): the manifest, the result, the report."""
    if error is not None:
        fail(f"not normalized: {error}")
        with contextlib.suppress(OSError):
            os.unlink(job.dest + NORMALIZED_SUFFIX)
        held.pop(job.json_rel, None)
        return
    sha, size = _sha_of(job.dest + NORMALIZED_SUFFIX)
    held[job.json_rel] = ManifestEntry(
        path=job.json_rel,
        size=size,
        sha256=sha,
        source=job.source,
        copied_at=_now(),
        harness=harness,
        session_id=job.session_id,
        role="normalized",
    )
    result.normalized.append(job.dest + NORMALIZED_SUFFIX)


_REPORT: Final = "report"
_FAIL: Final = "fail"
_NORMALIZE: Final = "normalize"


def _replay(
    log: list[tuple[str, Any]],
    jobs: int,
    harness: str,
    permissive: bool,
    held: dict[str, ManifestEntry],
    result: ArchiveResult,
    say: Callable[[str], None],
    failed: Callable[[str], None],
) -> None:
    """Normalize the copies *log* names, in worker processes where that pays, and replay
    *log*: each report and each normalization's outcome where one process meets it.

    A copy met a second time (a file two selected sessions share) is decided when
    its turn comes, as one process decides it: left alone once its first
    normalization is there, written again (here) if that failed.
    """
    from functools import partial

    from agentminutes.pipeline.processes import file_bytes, in_order, pays

    first: dict[int, _Normalize] = {}
    seen: set[str] = set()
    for i, (kind, item) in enumerate(log):
        if kind == _NORMALIZE and item.dest not in seen:
            seen.add(item.dest)
            if not _current_json(item, held):
                first[i] = item
    dests = [job.dest for job in first.values()]
    sizes = [file_bytes(d) for d in dests]
    write = partial(_normalized_or_error, harness, permissive, None)
    outcomes = (
        in_order(write, dests, sizes, jobs, preload=(__name__,))
        if pays(jobs, sizes)
        else (write(dest) for dest in dests)
    )
    with contextlib.closing(outcomes):  # left early (an error, Ctrl-C): the workers stop now
        for i, (kind, item) in enumerate(log):
            if kind == _REPORT:
                say(item)
            elif kind == _FAIL:
                failed(item)
            elif i in first:
                _normalize_done(item, next(outcomes), harness, held, result, failed)
            elif not _current_json(item, held):
                _normalize_done(item, write(item.dest), harness, held, result, failed)


def _read_manifest(target: str) -> Manifest:
    path = join(target, MANIFEST)
    if not os.path.exists(path):
        return Manifest()
    try:
        with open(path, "rb") as f:
            return msgspec.json.decode(f.read(), type=Manifest)
    except (OSError, msgspec.DecodeError) as exc:
        raise UsageError(f"{path}: not a readable archive manifest: {exc}") from None


def _write_manifest(target: str, held: dict[str, ManifestEntry]) -> None:
    manifest = Manifest(files=[held[k] for k in sorted(held)])
    data = msgspec.json.format(msgspec.json.encode(manifest), indent=2) + b"\n"
    path = join(target, MANIFEST)
    if os.path.exists(path):
        with open(path, "rb") as f:
            if f.read() == data:
                return
    write_file(path, data, fsync=True)


async def archive(
    to: str | os.PathLike[str],
    *,
    harness: str,
    session_id: str | None = None,
    cwd: str | None = None,
    since: When = None,
    root: str | os.PathLike[str] | None = None,
    permissive: bool = False,
    env: Mapping[str, str] | None = None,
    on_report: Callable[[str], None] | None = None,
    redaction: Stage | None = None,
) -> ArchiveResult:
    """Copy sessions, with their subagent transcripts and sidecars, into the folder *to*.

    Select one session by *session_id*, or every session whose recorded
    working directory is *cwd* (active since *since*, if given). Files keep
    their path relative to the harness's root; each transcript copy gets its
    normalized session beside it (``<file>.agentminutes.json``) and
    ``MANIFEST.json`` lists every file with its size, sha256, source and copy
    time. Running it again adds only what changed: new files, and the new
    complete lines of transcripts that grew. A source that changed in any
    other way is reported (in ``.conflicts``, and to *on_report*) and its
    copy kept. Sources are only read; a transcript still being written is
    copied up to its last complete line. *redaction* (an
    :func:`agentminutes.stages.redact` stage) redacts the normalized sessions;
    the copies stay byte for byte the sources.

    Raises:
        UsageError: no or both selections, an unknown harness, *to* inside the
            harness's folders, or no session with that id.
    """
    from agentminutes.pipeline.worker import StepThread

    cancel = threading.Event()

    def run() -> ArchiveResult:
        return _archive(
            cancel,
            to,
            harness=harness,
            session_id=session_id,
            cwd=cwd,
            since=since,
            root=root,
            permissive=permissive,
            env=env,
            on_report=on_report,
            redaction=redaction,
        )

    # Cancelled, the run stops at its next chunk or file and undoes what it did: the
    # archive is as it was, no lock or temporary file is left, no thread goes on.
    worker = StepThread("agentminutes-archive")
    try:
        return await worker.run(run, on_cancel=cancel.set)
    finally:
        worker.close()
