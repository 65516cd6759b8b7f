"""``agentminutes export``: plan the work, run it in worker processes, commit it to the manifest.

A run goes:

1. **Targets** — transcripts and folders (every transcript-like file under them), or
   the harnesses' own folders as ``sessions`` finds them, with its filters.
2. **Plan** — each transcript's fingerprint (size, ``mtime_ns``, sha256 of the first
   KiB) against the manifest: unchanged ones are left alone; new and changed ones are
   exported, a changed one whole (a transcript that grew is parsed again from line 1:
   the fold of its last messages may have changed).
3. **Replace** — the part files holding rows of changed transcripts are rewritten
   without them (copy-on-write; see :mod:`agentminutes.export.dataset`), and the
   manifest is committed.
4. **Export** — the transcripts, in chunks, each chunk in one worker process
   (``--jobs``; one transcript at a time per worker, its events streamed to the part
   files, so memory stays bounded by one transcript per worker); each finished chunk
   is committed to the manifest. A run with little work (:data:`INLINE_FILES`,
   :data:`INLINE_BYTES`) runs in this process: starting workers would cost more.

A transcript that cannot be exported gets a ``failures`` row and an error line on
stderr; the run goes on and ends with exit status 1.

``--format atif`` runs the same plan with another writer: each worker writes one
ATIF trajectory document per session (:mod:`agentminutes.export.trajectories`) into
``DIR/atif``, whose own manifest makes its runs incremental the same way, and whose
``failures.jsonl`` holds the failures. It needs no pyarrow: this module imports the
Parquet machinery only for the Parquet dataset.
"""

from __future__ import annotations

import functools
import os
import resource
import secrets
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Final

from agentminutes.discovery.walk import transcripts_under
from agentminutes.errors import (
    AgentminutesError,
    DetectError,
    OptionError,
    ParseError,
    UsageError,
)
from agentminutes.export.manifest import (
    Entry,
    Fingerprint,
    Manifest,
    RunRecord,
    delete_files,
    fingerprint,
    new_run_id,
)
from agentminutes.formats import offered
from agentminutes.harness import ParseOptions
from agentminutes.harness.base import detects
from agentminutes.pipeline.batch import Stage
from agentminutes.pipeline.processes import default_jobs, worker_context

if TYPE_CHECKING:
    from agentminutes.formats.atif import LossReport
    from agentminutes.stages.detectors import DetectorSet

__all__ = (
    "FORMATS",
    "ExportOptions",
    "ExportResult",
    "atif_chunk",
    "export_chunk",
    "export_command",
    "export_dataset",
)

#: What ``export`` writes: the Parquet dataset (the default), or a document per session in
#: each format the formats' table offers to ``export`` (ATIF trajectories).
FORMATS: Final = ("parquet", *offered("export"))

#: A chunk of work: at most this many transcripts, and about this many bytes.
CHUNK_FILES: Final = 64
CHUNK_BYTES: Final = 32 << 20
#: How often the manifest is saved while chunks complete (it is always saved at the end).
SAVE_EVERY_S: Final = 2.0
#: Work this small (transcripts to export, and bytes of them and of part files to rewrite)
#: runs in this process: starting worker processes, each importing pyarrow and the
#: parsers, costs more than a second; an incremental run that touches a few files would
#: spend most of its time on that.
INLINE_FILES: Final = 16
INLINE_BYTES: Final = 16 << 20


@dataclass(frozen=True)
class ExportOptions:
    """How transcripts are parsed for the dataset (picklable: a worker rebuilds the stages)."""

    harness: str = "auto"
    permissive: bool = False
    harness_version: str = ""
    text_form: str = "bare"
    promote: tuple[str, ...] = ()
    max_payload_bytes: int = 0
    #: Secrets become markers before they reach the dataset (``--no-redact`` turns it off).
    redact: bool = True
    redact_patterns: tuple[str, ...] = ()
    redact_config: str = ""
    #: The run's marker key, hex (the same in every worker; never recorded).
    redact_key: str = ""

    def stages(self) -> list[Stage]:
        """The stage chain a worker runs each transcript through.

        The redaction's detectors are compiled once per process (see
        :func:`_detector_set`); each call gets its own stage, with its own counts.
        """
        from agentminutes.stages import build_stages
        from agentminutes.stages.redact import Redaction, Redactor

        redaction = None
        if self.redact:
            detectors = _detector_set(
                self.redact_patterns, self.redact_config, _file_state(self.redact_config)
            )
            key = bytes.fromhex(self.redact_key) or secrets.token_bytes(32)
            # Finished files: the prefilter of one batch runs while the next is parsed.
            redaction = Redaction(Redactor(detectors, key, prefilter="large"), overlap=True)
        return build_stages(
            promote=self.promote, max_payload_bytes=self.max_payload_bytes, redaction=redaction
        )

    def parse_options(self) -> ParseOptions:
        return ParseOptions(
            permissive=self.permissive,
            harness_version=self.harness_version,
            text_form=self.text_form,
        )

    def recorded(self) -> dict[str, object]:
        """The options as the manifest keeps them: a dataset is made with one set."""
        return {
            "harness": self.harness,
            "permissive": self.permissive,
            "harness_version": self.harness_version,
            "text_form": self.text_form,
            "promote": list(self.promote),
            "max_payload_bytes": self.max_payload_bytes,
            "redact": self.redact,
            "redact_patterns": list(self.redact_patterns),
            "redact_config": self.redact_config,
        }


def _file_state(path: str) -> tuple[int, int]:
    """A config file's size and modification time: an edited file is read again."""
    if not path:
        return (0, 0)
    try:
        st = os.stat(path)
    except OSError:
        return (-1, 0)  # redact() says why it cannot be read
    return (st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _detector_set(patterns: tuple[str, ...], config: str, state: tuple[int, int]) -> DetectorSet:
    """The redaction's detectors, compiled once per process and options.

    Compiling the built-in detectors' expressions (both text and bytes forms) costs
    about as much as exporting a small transcript; a worker exports hundreds.
    *state* is the config file's (see :func:`_file_state`), part of the cache key.
    """
    from agentminutes.stages import redact

    return redact(patterns=patterns, config=config or None).redactor.detectors


# -- the worker side ------------------------------------------------------------------------------


@dataclass
class Item:
    """One transcript to export: its path, whether a folder walk found it, its planned size."""

    path: str
    walked: bool
    size: int


@dataclass
class Outcome:
    """What exporting one transcript came to."""

    path: str
    status: str
    harness: str = ""
    sessions: int = 0
    events: int = 0
    error: str = ""
    error_type: str = ""
    line: int = 0


@dataclass
class ChunkJob:
    root: str
    name: str
    items: list[Item]
    options: ExportOptions


@dataclass
class ChunkResult:
    name: str
    files: dict[str, list[str]]
    outcomes: list[Outcome]
    max_rss_kb: int
    #: Secrets redacted in the chunk, by detector.
    redacted: dict[str, int] = field(default_factory=dict)
    #: What the ATIF lens could not carry, over the chunk's sessions (ATIF only).
    loss: LossReport | None = None


def _stages(options: ExportOptions, redacted: Counter[str]) -> list[Stage]:
    """A transcript's stage chain, its redactions tallied into *redacted* (the chunk's)."""
    from agentminutes.stages import Redaction

    stages = options.stages()
    for stage in stages:
        if isinstance(stage, Redaction):
            stage.redactor.counts = redacted
    return stages


def _as_error(path: str, exc: BaseException) -> BaseException:
    """*exc* as the failure recorded: an unexpected exception is an internal error naming
    the file (one line, never a traceback)."""
    if isinstance(exc, AgentminutesError | MemoryError):
        return exc
    return AgentminutesError(f"{path}: internal error: {type(exc).__name__}: {exc}")


def _failed(item: Item, path: str, exc: BaseException, harness: str) -> Outcome:
    """The outcome of a transcript whose export raised *exc*: a file a folder walk met
    that is no transcript is skipped; anything else failed, with its error line."""
    if item.walked and isinstance(exc, DetectError):
        return Outcome(path, "skipped", error="no harness detected")
    exc = _as_error(path, exc)
    line = exc.line if isinstance(exc, ParseError) and exc.line else 0
    if isinstance(exc, ParseError) and exc.harness:
        harness = exc.harness
    return Outcome(
        path,
        "failed",
        harness or "unknown",
        error=str(exc),
        error_type=type(exc).__name__,
        line=line,
    )


def export_chunk(job: ChunkJob) -> ChunkResult:
    """Export a chunk of transcripts into one set of part files (what a worker runs)."""
    from agentminutes.export import dataset
    from agentminutes.export.tables import TranscriptRows, failure_batch

    options = job.options
    writer = dataset.PartWriter(job.root, job.name)
    outcomes: list[Outcome] = []
    broken: list[str] = []
    redacted: Counter[str] = Counter()
    for item in job.items:
        stages = _stages(options, redacted)
        rows = TranscriptRows(
            item.path,
            harness=options.harness,
            options=options.parse_options(),
            stages=stages,
            limit=item.size,
        )
        path = rows.transcript
        sessions = events = 0
        try:
            for table, batch in rows.batches():
                writer.add(path, table, batch)
                if table == "events":
                    events += batch.num_rows
                elif table == "sessions":
                    sessions += batch.num_rows
        except Exception as exc:
            writer.discard(path)
            if writer.flushed(path):
                broken.append(path)
            outcome = _failed(item, path, exc, rows.harness)
            if outcome.status == "failed":
                error = _as_error(path, exc)
                writer.add(path, "failures", failure_batch(path, error, rows.harness))
            outcomes.append(outcome)
            continue
        outcomes.append(Outcome(path, "ok", rows.harness, sessions, events))
    files = writer.close()
    if broken:
        files = _drop_rows(job.root, job.name, files, broken)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return ChunkResult(job.name, files, outcomes, rss, dict(redacted))


def atif_chunk(job: ChunkJob) -> ChunkResult:
    """Write a chunk of transcripts' ATIF trajectories, a document per session (what a
    worker runs for ``--format atif``)."""
    from agentminutes.export import trajectories
    from agentminutes.export.transcripts import TranscriptEvents
    from agentminutes.formats.atif import LossReport

    options = job.options
    outcomes: list[Outcome] = []
    files: dict[str, list[str]] = {}
    redacted: Counter[str] = Counter()
    loss = LossReport()
    for item in job.items:
        source = TranscriptEvents(
            item.path,
            harness=options.harness,
            options=options.parse_options(),
            stages=_stages(options, redacted),
            limit=item.size,
        )
        path = source.transcript
        try:
            written = trajectories.write_transcript(job.root, source)
        except Exception as exc:
            outcomes.append(_failed(item, path, exc, source.harness))
            continue
        for rel in written.files:
            files[rel] = [path]
        loss = loss.added(written.loss)
        outcomes.append(Outcome(path, "ok", written.harness, written.sessions, written.events))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return ChunkResult(job.name, files, outcomes, rss, dict(redacted), loss)


def _drop_rows(
    root: str, name: str, files: dict[str, list[str]], broken: list[str]
) -> dict[str, list[str]]:
    """Take the rows written before a transcript failed back out of the chunk's files."""
    from agentminutes.export import dataset

    out: dict[str, list[str]] = {}
    for i, (rel, owners) in enumerate(sorted(files.items())):
        if rel.startswith("failures/") or not set(owners) & set(broken):
            out[rel] = owners
            continue
        new_rel, left = dataset.remove_transcripts(root, rel, broken, f"{name}-f{i}")
        delete_files(root, [rel])
        if new_rel is not None:
            out[new_rel] = left
    return out


@dataclass
class RewriteJob:
    root: str
    rel: str
    drop: list[str]
    name: str


def rewrite_part(job: RewriteJob) -> tuple[str, str | None, list[str]]:
    """Rewrite one part file without some transcripts' rows (what a worker runs)."""
    from agentminutes.export import dataset

    new_rel, left = dataset.remove_transcripts(job.root, job.rel, job.drop, job.name)
    return job.rel, new_rel, left


# -- targets ------------------------------------------------------------------------------------


@dataclass
class Targets:
    """The transcripts a run covers, and what finding them left out."""

    items: list[tuple[str, bool]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: What the session scan skipped and why (files with no conversation …), one line each.
    details: list[str] = field(default_factory=list)


def resolve(
    targets: Sequence[str | os.PathLike[str]] | None,
    to: str,
    *,
    harness: str,
    root: str | None,
    cwd: str | None,
    session_id: str | None,
    since: str | None,
    until: str | None,
    all_subagents: bool,
    env: Mapping[str, str] | None = None,
) -> Targets:
    """The transcripts to export: *targets* (files, and folders walked), or a session scan."""
    out = Targets()
    seen: set[str] = set()

    def add(path: str, walked: bool) -> None:
        full = os.path.abspath(path)
        if full not in seen:
            seen.add(full)
            out.items.append((full, walked))

    if targets:
        if cwd or session_id or since or until or root:
            raise UsageError(
                "--cwd, --session-id, --since, --until and --root choose sessions in the "
                "harnesses' folders; give them without TARGETs (with --root for another folder)"
            )
        skip = os.path.abspath(to)
        for target in targets:
            path = os.fspath(target)
            if os.path.isdir(path):
                for found in transcripts_under(path, skip):
                    add(found, True)
            elif os.path.lexists(path):
                add(path, False)
            else:
                raise UsageError(f"{path}: no such file or folder")
        return out
    from agentminutes.discovery.sessions import Scan

    if root and detects(harness):
        raise UsageError("--root requires --harness")
    scan = Scan(
        None if detects(harness) else harness,
        root,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=all_subagents,
        env=env,
    )
    for ref in scan:
        add(ref.path, False)
        for sub in ref.subagent_paths or ():
            add(sub, False)
    for err in scan.errors:
        if err.path and os.path.isfile(err.path):
            add(err.path, False)  # exported like the rest: its failure gets its row
        else:
            out.errors.append(str(err))
    out.details = scan.details()
    return out


# -- the run ------------------------------------------------------------------------------------


@dataclass
class ExportResult:
    """What a run did. ``failures`` are ``(transcript, error line)`` of transcripts that failed."""

    root: str
    transcripts: int = 0
    exported: int = 0
    unchanged: int = 0
    failed: int = 0
    skipped: int = 0
    events: int = 0
    replaced: int = 0
    wall_s: float = 0.0
    #: Secrets redacted, by detector (``None`` when redaction was off).
    redacted: Counter[str] | None = None
    #: ``--format atif``: what the lens could not carry, over the sessions exported now.
    loss: LossReport | None = None
    #: What a transcript's output is made of, for the summary line.
    holds: str = "rows"
    failures: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: What finding the transcripts skipped and why, one line each (not failures).
    details: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.errors

    def summary(self) -> str:
        """One line: what was exported, left alone, failed and skipped, and how fast."""
        parts = [f"{self.exported} exported", f"{self.unchanged} unchanged"]
        if self.replaced:
            parts[0] += f" ({self.replaced} replacing their earlier {self.holds})"
        parts.append(f"{self.failed} failed")
        if self.skipped:
            parts.append(f"{self.skipped} skipped (no harness detected)")
        if self.errors:
            parts.append(f"{len(self.errors)} unreadable")
        return (
            f"{_plural(self.transcripts, 'transcript')}: {', '.join(parts)}; "
            f"{self.events} events in {self.wall_s:.1f} s into {self.root}"
        )


def _plural(n: int, word: str) -> str:
    return f"1 {word}" if n == 1 else f"{n} {word}s"


def _chunks(items: list[Item], jobs: int) -> list[list[Item]]:
    """Group the work: files of close modification times together (their rows share date
    partitions), at most :data:`CHUNK_FILES` files and about :data:`CHUNK_BYTES` a chunk,
    and enough chunks to keep every worker busy."""
    total = sum(i.size for i in items)
    target = max(1 << 20, min(CHUNK_BYTES, total // max(1, jobs * 4) + 1))
    out: list[list[Item]] = []
    chunk: list[Item] = []
    size = 0
    for item in items:
        if chunk and (len(chunk) >= CHUNK_FILES or size + item.size > target):
            out.append(chunk)
            chunk, size = [], 0
        chunk.append(item)
        size += item.size
    if chunk:
        out.append(chunk)
    # The largest chunks first, so one big transcript does not finish last alone.
    out.sort(key=lambda c: -sum(i.size for i in c))
    return out


class _Progress:
    """A rich progress bar on a terminal; nothing otherwise (the summary line follows)."""

    def __init__(self, stream: IO[str], enabled: bool | None, total: int, nbytes: int) -> None:
        self.bar: Any = None
        self.task: Any = None
        if enabled is None:
            enabled = stream.isatty()
        if not enabled or not total:
            return
        try:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                ProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.text import Text
        except ImportError:
            return

        class TranscriptRate(ProgressColumn):
            """Transcripts a second (rich's speed column says bytes: the bar counts files)."""

            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("" if speed is None else f"{speed:,.1f}/s")

        self.bar = Progress(
            TextColumn("export"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("transcripts"),
            TranscriptRate(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=True,
        )
        self.task = self.bar.add_task("export", total=total)
        self.bar.start()
        self.nbytes = nbytes

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


#: What a format's worker processes import once, in the forkserver, before forking.
_PRELOAD: Final = {
    "parquet": (
        "agentminutes.export._preload",  # first: pyarrow without pandas
        "agentminutes.export.command",
        "agentminutes.export.tables",
    ),
    "atif": ("agentminutes.export.command", "agentminutes.export.trajectories"),
}


def _pool(jobs: int, fmt: str) -> ProcessPoolExecutor:
    # Workers fork from a server that has imported the export machinery once, never from
    # this process: it may hold pyarrow, whose native threads the thread count misses.
    ctx = worker_context(_PRELOAD[fmt], fork=False)
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx)


class _Inline:
    """The pool's interface, run in this process (``--jobs 1``)."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass


def export_dataset(
    targets: Sequence[str | os.PathLike[str]] | None = None,
    *,
    to: str | os.PathLike[str],
    harness: str = "auto",
    root: str | os.PathLike[str] | None = None,
    cwd: str | None = None,
    session_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
    all_subagents: bool = False,
    jobs: int | None = None,
    permissive: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    redact: bool = True,
    redact_patterns: Sequence[str] = (),
    redact_config: str | None = None,
    progress: bool | None = False,
    on_error: Callable[[str], None] | None = None,
    env: Mapping[str, str] | None = None,
    format: str = "parquet",
) -> ExportResult:
    """Export transcripts into the Parquet dataset at *to*, only what is new or changed.

    With ``format="atif"``, into ATIF v1.8 trajectory documents under ``to/atif``
    instead, one per session (:mod:`agentminutes.export.trajectories`), the same way:
    the same targets, plan, workers and manifest; no pyarrow needed.

    Args:
        targets: transcripts and folders (walked for transcripts); ``None`` for the
            harnesses' own folders, as :func:`agentminutes.scan` finds them with
            *harness*, *root*, *cwd*, *session_id*, *since*, *until*, *all_subagents*.
        to: the dataset folder (created if missing).
        format: ``parquet`` (the dataset) or ``atif`` (trajectory documents).
        jobs: worker processes (default: the CPUs available; 1 runs in this process).
        progress: a progress bar on stderr (``None``: when stderr is a terminal).
        on_error: told each failed transcript's error line as it happens.
        permissive, harness_version, text_form, promote, max_payload_bytes: as for
            :func:`agentminutes.events`; a dataset keeps the options it was made with.
        redact, redact_patterns, redact_config: secrets in the events' texts become
            markers (:func:`agentminutes.stages.redact`), by default; the markers are
            keyed by ``$AGENTMINUTES_REDACT_KEY`` if set, else by a key drawn per run.

    Raises:
        UsageError: contradicting options, a missing target, pyarrow not installed (for
            Parquet), or a dataset made with another schema version or other options.
    """
    started = time.monotonic()
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if format not in FORMATS:
        raise OptionError(f'unknown export format "{format}" (want {" or ".join(FORMATS)})')
    atif = format == "atif"
    if not atif:
        from agentminutes.export import schemas

        schemas.require_pyarrow()
    if jobs is not None and jobs < 1:
        raise OptionError("--jobs must be at least 1")
    ParseOptions(text_form=text_form)  # checks it before the workers start
    from agentminutes.stages import KEY_ENV

    key = (os.environ if env is None else env).get(KEY_ENV, "").encode() or secrets.token_bytes(32)
    options = ExportOptions(
        harness=harness or "auto",
        permissive=permissive,
        harness_version=harness_version,
        text_form=text_form,
        promote=tuple(promote),
        max_payload_bytes=max_payload_bytes,
        redact=redact,
        redact_patterns=tuple(redact_patterns),
        redact_config=os.path.abspath(redact_config) if redact_config else "",
        redact_key=key.hex(),
    )
    options.stages()  # check the names, patterns and config now
    folder = os.path.abspath(os.fspath(to))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UsageError(f"{folder}: not a folder (--to takes the dataset's folder)")
    found = resolve(
        targets,
        folder,
        harness=options.harness,
        root=os.fspath(root) if root is not None else None,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=all_subagents,
        env=env,
    )
    if atif:
        from agentminutes.export import trajectories

        target = folder
        folder = os.path.join(folder, trajectories.FOLDER)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"{folder}: cannot create the dataset folder: {exc.strerror or exc}"
        ) from None
    if atif:
        manifest = Manifest.load(folder) or Manifest(
            schema_version=trajectories.SCHEMA_VERSION, options=options.recorded()
        )
        if manifest.schema_version != trajectories.SCHEMA_VERSION:
            raise UsageError(
                f"{folder} holds trajectories of {manifest.schema_version or 'no version'}; "
                f"this agentminutes writes {trajectories.SCHEMA_VERSION}: export into a new "
                f"folder than {target}"
            )
    else:
        from agentminutes.export import dataset

        dataset.check_schema_document(folder)
        manifest = Manifest.load(folder) or Manifest(options=options.recorded())
    if manifest.options != options.recorded():
        raise UsageError(
            f"{folder} was exported with other options ({_options_text(manifest.options)}); "
            "export into a new folder, or run with the same options"
        )
    if atif:
        trajectories.collect_garbage(folder, manifest.owners())
    else:
        dataset.collect_garbage(folder, manifest.owners())
        dataset.write_schema_document(folder)

    result = ExportResult(
        root=folder,
        transcripts=len(found.items),
        errors=list(found.errors),
        details=list(found.details),
        holds="trajectories" if atif else "rows",
    )
    if redact:
        result.redacted = Counter()
    report = on_error or (lambda line: None)
    for line in found.errors:
        report(line)

    # Plan: what is new or changed.
    work: list[tuple[Item, Fingerprint]] = []
    changed: list[str] = []
    for path, walked in found.items:
        entry = manifest.transcripts.get(path)
        try:
            fp = fingerprint(path)
        except OSError:
            fp = Fingerprint(-1, 0, "")
        if entry is not None and entry.fingerprint == fp and fp.size >= 0:
            result.unchanged += 1
            if entry.status == "failed":
                result.failed += 1
                result.failures.append((path, entry.error))
                report(entry.error)
            elif entry.status == "skipped":
                result.skipped += 1
            continue
        if entry is not None:
            changed.append(path)
        work.append((Item(path, walked, max(fp.size, 0)), fp))
    work.sort(key=lambda w: (w[1].mtime_ns, w[0].path))

    jobs = jobs or default_jobs()
    run = new_run_id()
    stream = sys.stderr
    nbytes = sum(i.size for i, _ in work)
    bar = _Progress(stream, progress, len(work), nbytes)
    affected = sorted({rel for path in changed for rel in manifest.transcripts[path].files})
    workers = _workers(jobs, len(work), nbytes + (0 if atif else _sizes(folder, affected)))
    pool: ProcessPoolExecutor | _Inline = _pool(workers, format) if workers else _Inline()
    worker_rss = 0
    try:
        if changed:
            result.replaced = len(changed)
            if atif:
                _drop_documents(folder, manifest, changed)
            else:
                _replace(folder, manifest, changed, affected, run, pool)
        fingerprints = {i.path: fp for i, fp in work}
        chunks = _chunks([i for i, _ in work], jobs)
        pending: set[Future[ChunkResult]] = set()
        queue = iter(enumerate(chunks))
        last_save = time.monotonic()

        def submit_next() -> None:
            for n, items in queue:
                job = ChunkJob(folder, f"{run}-{n:05d}", items, options)
                pending.add(pool.submit(atif_chunk if atif else export_chunk, job))
                return

        for _ in range(jobs * 2):
            submit_next()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                pending.discard(future)
                chunk = _result_of(future)
                worker_rss = max(worker_rss, chunk.max_rss_kb)
                _commit(manifest, chunk, fingerprints, result, report)
                bar.advance(len(chunk.outcomes))
                submit_next()
            if time.monotonic() - last_save >= SAVE_EVERY_S:
                manifest.save(folder)
                last_save = time.monotonic()
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        manifest.save(folder)
        bar.close()
        raise
    pool.shutdown(wait=True)
    bar.close()
    result.wall_s = time.monotonic() - started
    manifest.last_run = RunRecord(
        started=started_at,
        wall_s=round(result.wall_s, 3),
        jobs=jobs,
        workers=workers,
        transcripts=result.transcripts,
        exported=result.exported,
        unchanged=result.unchanged,
        failed=result.failed,
        skipped=result.skipped,
        events=result.events,
        parent_max_rss_kb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        worker_max_rss_kb=worker_rss,
    )
    manifest.save(folder)
    if atif:
        trajectories.write_failures(folder, manifest)
    return result


def _result_of(future: Future[ChunkResult]) -> ChunkResult:
    """A chunk's result; a worker that broke (killed, out of disk) is one error line."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        raise AgentminutesError(
            "export: a worker process died (killed, or out of memory); "
            "what finished is kept, run again to go on"
        ) from None
    except OSError as exc:
        raise AgentminutesError(f"export: cannot write the dataset: {exc}") from None
    except AgentminutesError:
        raise
    except Exception as exc:
        raise AgentminutesError(f"export: internal error: {type(exc).__name__}: {exc}") from None


def _options_text(options: Mapping[str, object]) -> str:
    shown = {k: v for k, v in options.items() if v not in ("", "auto", "bare", False, 0, [], None)}
    return ", ".join(f"{k}={v}" for k, v in sorted(shown.items())) or "the defaults"


def _commit(
    manifest: Manifest,
    chunk: ChunkResult,
    fingerprints: Mapping[str, Fingerprint],
    result: ExportResult,
    report: Callable[[str], None],
) -> None:
    """Adopt a finished chunk's files and outcomes into the manifest."""
    files_of: dict[str, list[str]] = {}
    for rel, owners in chunk.files.items():
        for owner in owners:
            files_of.setdefault(owner, []).append(rel)
    if result.redacted is not None:
        result.redacted.update(chunk.redacted)
    if chunk.loss is not None:
        result.loss = chunk.loss if result.loss is None else result.loss.added(chunk.loss)
    for out in chunk.outcomes:
        manifest.transcripts[out.path] = Entry(
            fingerprint=fingerprints[out.path],
            status=out.status,
            harness=out.harness,
            sessions=out.sessions,
            events=out.events,
            files=sorted(files_of.get(out.path, [])),
            error=out.error,
            error_type=out.error_type,
            line=out.line,
        )
        if out.status == "ok":
            result.exported += 1
            result.events += out.events
        elif out.status == "failed":
            result.failed += 1
            result.failures.append((out.path, out.error))
            report(out.error)
        else:
            result.skipped += 1


def _workers(jobs: int, files: int, nbytes: int) -> int:
    """Worker processes for a run: none (this process) for one transcript or little work.

    *nbytes* counts the transcripts to parse and the part files to rewrite.
    """
    if jobs <= 1 or files <= 1:
        return 0
    if files <= INLINE_FILES and nbytes <= INLINE_BYTES:
        return 0
    return min(jobs, files)


def _sizes(folder: str, rels: Sequence[str]) -> int:
    total = 0
    for rel in rels:
        try:
            total += os.stat(os.path.join(folder, rel)).st_size
        except OSError:
            continue  # rewriting it says what is wrong
    return total


def _drop_documents(folder: str, manifest: Manifest, changed: list[str]) -> None:
    """Take the trajectories of *changed* transcripts out of the export, and commit that."""
    stale = [rel for path in changed for rel in manifest.transcripts[path].files]
    for path in changed:
        del manifest.transcripts[path]
    manifest.save(folder)
    delete_files(folder, stale)


def _replace(
    folder: str,
    manifest: Manifest,
    changed: list[str],
    affected: list[str],
    run: str,
    pool: ProcessPoolExecutor | _Inline,
) -> None:
    """Take the rows of *changed* transcripts out of *affected* part files, and commit that."""
    owners = manifest.owners()
    drop = set(changed)
    jobs = [
        RewriteJob(folder, rel, sorted(drop & set(owners[rel])), f"{run}-r{i:05d}")
        for i, rel in enumerate(affected)
    ]
    futures = [pool.submit(rewrite_part, job) for job in jobs]
    renamed: dict[str, str | None] = {}
    for future in futures:
        old, new, _ = future.result()
        renamed[old] = new
    for path in changed:
        del manifest.transcripts[path]
    for entry in manifest.transcripts.values():
        if any(rel in renamed for rel in entry.files):
            kept = (renamed.get(rel, rel) for rel in entry.files)
            entry.files = sorted({rel for rel in kept if rel is not None})
    manifest.save(folder)
    delete_files(folder, renamed)


def export_command(
    targets: Sequence[str] | None,
    *,
    to: str,
    harness: str = "auto",
    root: str | None = None,
    cwd: str | None = None,
    session_id: str | None = None,
    since: str | None = None,
    until: str | None = None,
    all_subagents: bool = False,
    jobs: int | None = None,
    permissive: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] | None = None,
    max_payload_bytes: int = 0,
    redact: bool = False,
    no_redact: bool = False,
    redact_pattern: Sequence[str] | None = None,
    redact_config: str | None = None,
    fmt: str = "parquet",
) -> int:
    """``agentminutes export``: run, report failures as they happen, end with the summary line.

    Secrets are redacted unless *no_redact* (a warning says so). ``--format atif`` also
    says, before the summary, what the ATIF lens could not carry in the sessions it wrote.
    """
    from agentminutes.stages.redact import redaction_choice

    if fmt != "atif":
        from agentminutes.export._preload import arrow_without_pandas

        arrow_without_pandas()  # this process is ours: no pandas (see the module)
    redaction_choice(
        redact,
        no_redact,
        patterns=redact_pattern or (),
        config=redact_config,
        default=True,
        where="into the dataset",
    )

    def report(line: str) -> None:
        # sys.stderr looked up now: under the progress bar it is the bar's, which
        # prints the line above itself.
        print(f"agentminutes: {line}", file=sys.stderr, flush=True)

    result = export_dataset(
        targets or None,
        to=to,
        harness=harness,
        root=root,
        cwd=cwd,
        session_id=session_id,
        since=since,
        until=until,
        all_subagents=all_subagents,
        jobs=jobs,
        permissive=permissive,
        harness_version=harness_version,
        text_form=text_form,
        promote=tuple(promote or ()),
        max_payload_bytes=max_payload_bytes,
        redact=not no_redact,
        redact_patterns=tuple(redact_pattern or ()),
        redact_config=redact_config,
        progress=None,
        on_error=report,
        format=fmt,
    )
    if result.redacted is not None:
        from agentminutes.stages.redact import summary

        print(f"agentminutes: export: {summary(result.redacted)}", file=sys.stderr)
    if fmt == "atif":
        from agentminutes.formats.atif import LossReport

        loss = result.loss or LossReport()
        print(f"agentminutes: export: atif: {loss.summary(most=5)}", file=sys.stderr)
    for line in result.details:
        print(f"agentminutes: export: {line}", file=sys.stderr)
    print(f"agentminutes: export: {result.summary()}", file=sys.stderr)
    return 0 if result.ok else 1
