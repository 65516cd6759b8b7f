"""Several transcripts in one process: ``convert`` and ``stats`` over a list of paths.

``xargs agentminutes convert`` (without ``-n1``) pays one interpreter start-up
for the whole list instead of one per transcript. With several transcripts
(or ``--paths-from``) each one's result is one line of the output — the
whole-session JSON document ``--all`` writes, or one stats object — or one
file of its own in ``--to-dir``. A transcript that fails does not stop the
others: its error goes to stderr as one line naming it, and the run exits 1
once they are all done. A session's line is written only once it is complete,
so a transcript failing half-way leaves no partial line behind.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import IO, NamedTuple

from agentminutes.errors import AgentminutesError, OptionError, UsageError, one_line, source_name

__all__ = (
    "ALL_EXTENSION",
    "Made",
    "Outcome",
    "made",
    "output_name",
    "read_paths",
    "replayed",
    "run_many",
    "transcript_list",
)

#: The ending of ``--to-dir``'s file for ``--all`` (each format's is in its table,
#: :data:`agentminutes.formats.FORMATS`).
ALL_EXTENSION = ".sessions.jsonl"
#: The transcript extensions dropped from a file's name to make its output's stem.
_SOURCE_EXTENSIONS = (".jsonl", ".json", ".zip", ".db", ".sqlite")


def read_paths(source: str) -> list[str]:
    """The transcript paths in *source* (``"-"``: stdin), one per line; blank lines skipped.

    Raises:
        UsageError: the list cannot be read.
    """
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise UsageError(f"--paths-from {source}: {exc.strerror or exc}") from None
    # Paths are bytes to the system: undecodable ones come back as they were written.
    return [os.fsdecode(line) for line in data.split(b"\n") if line.strip(b"\r \t")]


def transcript_list(transcripts: Sequence[str] | None, paths_from: str | None) -> list[str]:
    """The transcripts to read: the arguments, then those listed in *paths_from*.

    Raises:
        UsageError: none at all, or ``-`` (stdin) given beside other transcripts.
    """
    paths = list(transcripts or [])
    if paths_from is not None:
        if paths_from == "-" and "-" in paths:
            raise UsageError(
                '--paths-from - reads paths from stdin; "-" cannot also be a transcript'
            )
        paths += [p.rstrip("\r") for p in read_paths(paths_from)]
    if not paths:
        if paths_from is not None:
            raise UsageError(f"--paths-from {paths_from}: lists no transcript")
        raise OptionError("missing TRANSCRIPT (a transcript path, several, or --paths-from FILE)")
    if len(paths) > 1 and "-" in paths:
        raise UsageError('"-" (stdin) is a transcript only on its own; give the others as paths')
    return paths


def output_name(transcript: str, extension: str) -> str:
    """The file ``--to-dir`` writes *transcript*'s result to: ``STEM.HASH`` and *extension*.

    HASH (8 hex digits of the SHA-256 of the transcript's real path) keeps
    apart transcripts with the same name in different folders (Copilot CLI's
    ``events.jsonl``, Antigravity's ``transcript_full.jsonl``), also across the
    several processes ``xargs`` may start; the same transcript always gets
    the same name, so a re-run replaces its file.
    """
    if transcript == "-":
        return "stdin" + extension
    base = os.path.basename(transcript.rstrip("/" + os.sep)) or "transcript"
    for ext in _SOURCE_EXTENSIONS:
        if base.endswith(ext) and len(base) > len(ext):
            base = base[: -len(ext)]
            break
    import hashlib  # here: OpenSSL loads with it, and one transcript's run names no file

    real = os.path.realpath(transcript)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:8]
    return f"{base}.{digest}{extension}"


class Outcome:
    """What a run over several transcripts did: their counts and the failures."""

    def __init__(self) -> None:
        self.transcripts = 0
        self.failed = 0
        self.sessions = 0
        self.events = 0
        self.skipped: dict[str, int] = {}

    def add(self, sessions: int, events: int, skipped: dict[str, int]) -> None:
        """Count one transcript's sessions, events and skipped records."""
        self.sessions += sessions
        self.events += events
        for k, v in skipped.items():
            self.skipped[k] = self.skipped.get(k, 0) + v

    def summary(self) -> str:
        """The stderr line after the run."""
        failed = f" ({self.failed} failed)" if self.failed else ""
        text = (
            f"agentminutes: {self.transcripts} transcripts{failed}, {self.sessions} sessions, "
            f"{self.events} events, {sum(self.skipped.values())} skipped records"
        )
        if self.skipped:
            text += " (" + ", ".join(f"{k} {v}" for k, v in sorted(self.skipped.items())) + ")"
        return text


def _error_line(transcript: str, exc: BaseException) -> str:
    text = str(exc)
    shown = source_name(transcript)
    if not text.startswith(shown):
        text = f"{shown}: {text}"
    return f"Error: {one_line(text)}"


#: Converts one transcript: writes its result to the stream, returns (sessions, events, skips).
OneRun = Callable[[str, IO[bytes]], Awaitable[tuple[int, int, dict[str, int]]]]


async def run_many(
    transcripts: Sequence[str],
    one: OneRun,
    *,
    output: str | None,
    to_dir: str | None,
    extension: str,
) -> Outcome:
    """Run *one* over every transcript: each result a line of *output*, or a file in *to_dir*.

    A transcript's result is made in memory and written whole, so one that
    fails midway leaves nothing of itself behind; its error is printed and
    the others go on.
    """
    from agentminutes.sinks.output import open_output

    outcome = Outcome()
    if to_dir is None:
        with open_output(output, atomic=output is not None, inputs=transcripts) as stream:
            for transcript in transcripts:
                outcome.transcripts += 1
                held = io.BytesIO()
                if await _one_guarded(transcript, one, held, outcome):
                    stream.write(held.getvalue())
                    if output is None:
                        stream.flush()
        return outcome
    try:
        os.makedirs(to_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--to-dir {to_dir}: {exc.strerror or exc}") from None
    for transcript in transcripts:
        outcome.transcripts += 1
        target = os.path.join(to_dir, output_name(transcript, extension))
        try:
            with open_output(target, atomic=True, inputs=[transcript]) as file:
                done = await _one_guarded(transcript, one, file, outcome, reraise=True)
        except AgentminutesError as exc:  # the output file itself (raised on closing it)
            _failed(transcript, exc, outcome)
            continue
        except _Failed:
            continue  # reported; the atomic file was not put in place
        if done:
            sys.stdout.write(f"{transcript}\t{target}\n")
            sys.stdout.flush()
    return outcome


class _Failed(Exception):
    """A transcript failed and was reported; undo its output."""


def _failed(transcript: str, exc: BaseException, outcome: Outcome) -> None:
    outcome.failed += 1
    print(_error_line(transcript, exc), file=sys.stderr, flush=True)


async def _one_guarded(
    transcript: str, one: OneRun, stream: IO[bytes], outcome: Outcome, *, reraise: bool = False
) -> bool:
    """Run *one* on *transcript*; report a failure (and with *reraise*, raise :class:`_Failed`)."""
    try:
        counts = await one(transcript, stream)
    except AgentminutesError as exc:
        _failed(transcript, exc, outcome)
        if reraise:
            raise _Failed from None
        return False
    outcome.add(*counts)
    return True


# -- several transcripts read by worker processes ------------------------------------------------

Counts = tuple[int, int, dict[str, int]]


class Made(NamedTuple):
    """One transcript's result as a worker process made it, to be replayed in order.

    ``data`` is what it wrote, ``said`` what it printed on stderr meanwhile (notes,
    warnings), and ``counts`` its sessions, events and skipped records; or
    ``error``, the text of the error that stopped it.
    """

    transcript: str
    data: bytes
    said: str
    counts: Counts
    error: str | None


def made(transcript: str, run: Callable[[IO[bytes]], Counts]) -> Made:
    """Run *run* (one transcript's work, writing to the stream it is given) in a worker.

    What it prints on stderr is kept with its result, so the parent prints it
    where one process would have, before the transcript's own result or error
    line.
    """
    import contextlib

    held = io.BytesIO()
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        try:
            counts = run(held)
        except AgentminutesError as exc:
            return Made(transcript, b"", said.getvalue(), (0, 0, {}), str(exc))
    return Made(transcript, held.getvalue(), said.getvalue(), counts, None)


class _Reported(AgentminutesError):
    """A worker's error, told by its text (``str()`` of the error it met)."""


def replayed(results: Iterator[Made]) -> OneRun:
    """A :data:`OneRun` that hands :func:`run_many` the results workers made, in order.

    :func:`run_many` asks for every transcript in turn (one whose output file
    could not be opened is passed over), so the results are taken in step.
    """

    async def one(transcript: str, stream: IO[bytes]) -> Counts:
        for result in results:
            if result.transcript == transcript:
                break
        else:  # pragma: no cover - run_many asks in the order the results come
            raise RuntimeError(f"{transcript}: no result from the worker processes")
        if result.said:
            sys.stderr.write(result.said)
            sys.stderr.flush()
        if result.error is not None:
            raise _Reported(result.error)
        stream.write(result.data)
        return result.counts

    return one
