"""``agentminutes run`` and :func:`agentminutes.capture`: one headless agent run, captured.

The command runs as a child process; the harness's transcript folders (every
line harness's, without ``--harness``) are followed from before it starts, so
the sessions it creates are read from their first line. Which sessions are
the command's: the transcripts that were not there when it started, and any
whose session id the command printed on its standard output (a resumed
session: its new lines only). When the command exits, each of its sessions
is ended (:meth:`~agentminutes.Following.done`, its subagents first), the
follow reads what is left and stops, and each session is archived with its
subagents and sidecars (``--archive``) as soon as its end is told.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from agentminutes.errors import AgentminutesError, SourceError, UsageError

if TYPE_CHECKING:
    from agentminutes.api import Ended, Following, Started
    from agentminutes.discovery.archive import ArchiveResult
    from agentminutes.live.config import Envelope

__all__ = ("Capture", "capture", "run_main")

#: A session id as harnesses print them (a UUID, or Codex's 019… UUIDv7).
_SESSION_ID: Final = re.compile(
    rb"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


@dataclass
class Capture:
    """One captured run: iterate it for the :class:`~agentminutes.Envelope` s of its sessions.

    After the ``async with`` block: ``returncode`` (the command's exit status),
    ``sessions`` (their ids, in the order they started), ``transcripts`` (every
    transcript, subagents' too), ``archived`` (one
    :class:`~agentminutes.ArchiveResult` per session, with *archive*) and
    ``errors`` (a transcript that could not be read, each told once).
    """

    command: list[str]
    harness: str
    returncode: int | None = None
    sessions: list[str] = field(default_factory=list)
    transcripts: list[str] = field(default_factory=list)
    archived: list[ArchiveResult] = field(default_factory=list)
    errors: list[AgentminutesError] = field(default_factory=list)
    _following: Following | None = None
    _before: frozenset[str] = frozenset()
    _printed: set[str] = field(default_factory=set)
    _harness_of: dict[str, str] = field(default_factory=dict)

    def _ours(self, transcript: str, session_id: str) -> bool:
        return transcript not in self._before or session_id in self._printed

    def __aiter__(self) -> Capture:
        return self

    async def __anext__(self) -> Envelope:
        following = self._following
        assert following is not None, "iterate a Capture inside its async with block"
        while True:
            env = await following.__anext__()
            if self._ours(env.transcript, env.session_id):
                return env


def _existing(targets: Sequence[str], patterns: tuple[str, ...]) -> frozenset[str]:
    """The transcript files under *targets* now (before the command starts)."""
    from agentminutes.live.config import transcript_files

    found: set[str] = set()
    for folder in targets:
        found.update(
            p for p, _ in transcript_files(folder.rstrip("/"), patterns, known=(), skip_dirs=())
        )
    return frozenset(found)


def _roots(harness: str, env: Mapping[str, str]) -> tuple[list[str], tuple[str, ...]]:
    """The folders to follow (``/``-ended: folders, existing or not) and the name patterns
    (every line harness's folders, without a harness)."""
    from agentminutes.discovery.roots import default_roots, transcript_patterns

    patterns = transcript_patterns(harness)
    if harness not in ("", "auto"):
        return [f"{p}/" for p in default_roots(harness, env)], patterns
    from agentminutes.harness.registry import harnesses

    folders: list[str] = []
    for described in harnesses():
        if described.reads == "lines" and described.roots is not None:
            folders += [
                f"{p}/" for p in default_roots(described.name, env) if f"{p}/" not in folders
            ]
    return folders, patterns


@asynccontextmanager
async def capture(
    command: Sequence[str],
    *,
    harness: str = "auto",
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    archive: str | os.PathLike[str] | None = None,
    output: Callable[[bytes], None] | None = None,
    on_error: Callable[[AgentminutesError], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    on_end: Callable[[Ended], None] | None = None,
) -> AsyncIterator[Capture]:
    """Run a headless agent *command* and follow the sessions it creates, from their first line.

    Use as ``async with agentminutes.capture(["claude", "-p", "…"], harness="claude-code",
    archive="runs/") as run: async for envelope in run: …``; after the block,
    ``run.returncode`` is the command's exit status. *env* is the command's
    environment and where the harness's folders are found (default
    ``os.environ``; a temporary ``HOME`` isolates a run). *output* gets the
    command's standard output as it comes (default: dropped; it is read to
    find a session id the command prints). *archive*: each session is copied
    there with its subagents and sidecars once its end is told. *on_error*:
    a transcript that could not be read (kept in ``run.errors`` too); *on_end*:
    each transcript's end. Leaving the block early (``break``) still waits for
    the command and reads its sessions to their end; a cancellation kills it.
    """
    import anyio

    from agentminutes.api import _off_loop, follow_many

    if not command:
        raise UsageError("run needs a command to run")
    env_map = dict(os.environ if env is None else env)
    targets, patterns = await _off_loop(lambda: _roots(harness, env_map))
    before = await _off_loop(lambda: _existing(targets, patterns))
    run = Capture(list(command), harness, _before=before)
    ends, to_archive = anyio.create_memory_object_stream[tuple[str, str]](1000)

    def ended(end: Ended) -> None:
        if not run._ours(end.transcript, end.session_id):
            return
        if on_end is not None:
            on_end(end)
        if not end.is_subagent and end.session_id and archive is not None:
            ends.send_nowait((end.session_id, end.harness))

    def started(start: Started) -> None:
        if run._ours(start.transcript, start.session_id):
            run.transcripts.append(start.transcript)
            if not start.is_subagent and start.session_id and start.session_id not in run.sessions:
                run.sessions.append(start.session_id)

    def failed(error: AgentminutesError) -> None:
        if getattr(error, "path", None) in before:
            return
        run.errors.append(error)
        if on_error is not None:
            on_error(error)

    following = follow_many(
        targets,
        harness=harness,
        env=env_map,
        from_end=True,
        on_start=started,
        on_end=ended,
        on_error=failed,
        on_notice=on_notice,
    )
    run._following = following

    async def archive_each() -> None:
        from agentminutes.discovery.archive import archive as archive_session

        assert archive is not None
        async with to_archive:
            async for session_id, name in to_archive:
                result = await archive_session(
                    archive, harness=name, session_id=session_id, env=env_map
                )
                run.archived.append(result)

    async def agent(process: Any) -> None:
        stdout = process.stdout
        assert stdout is not None
        async for chunk in stdout:
            run._printed.update(m.decode() for m in _SESSION_ID.findall(chunk))
            if output is not None:
                output(chunk)
        run.returncode = await process.wait()
        # The command exited: its sessions end (subagents first), the rest is read, stop.
        for session_id in list(run.sessions):
            following.done(session_id)
        for transcript in list(run.transcripts):
            following.done(transcript)
        following.stop()

    try:
        async with following, anyio.create_task_group() as tg:
            if archive is not None:
                tg.start_soon(archive_each)
            else:
                to_archive.close()
            process = await anyio.open_process(
                list(command),
                env=env_map,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=None,
            )
            async with process:
                tg.start_soon(agent, process)
                try:
                    yield run
                    async for _ in run:  # what the caller did not take: read to the end
                        pass
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        if process.returncode is None:
                            process.kill()
                            await process.wait()
                    raise
                finally:
                    ends.close()
    except FileNotFoundError as exc:
        raise SourceError(f"{command[0]}: cannot run it ({exc.strerror})") from None


def run_main(
    *,
    command: Sequence[str],
    harness: str = "auto",
    to: str = "-",
    archive: str | None = None,
) -> int:
    """``agentminutes run``: the command's exit status (its output goes to stderr when the
    events go to stdout)."""
    import anyio

    from agentminutes.live.config import Mark, stderr_notice
    from agentminutes.live.runner import envelope_encoder, open_sink
    from agentminutes.pipeline.batch import Batch

    events_to_stdout = to in ("", "-")

    def output(chunk: bytes) -> None:
        stream = sys.stderr.buffer if events_to_stdout else sys.stdout.buffer
        stream.write(chunk)
        stream.flush()

    def failed(error: AgentminutesError) -> None:
        stderr_notice(f"{error}; no longer following it")

    async def main() -> int:
        async with (
            open_sink(
                to, envelope_encoder(), on_delivered=lambda _mark: None, notice=stderr_notice
            ) as sink,
            capture(
                command,
                harness=harness,
                archive=archive,
                output=output,
                on_error=failed,
                on_notice=stderr_notice,
            ) as run,
        ):
            async for env in run:
                mark = Mark(
                    env.transcript,
                    env.harness,
                    identity=env.id.split(":", 1)[0],
                    session_id=env.session_id,
                    is_subagent=env.is_subagent,
                )
                await sink.send(Batch([env.event], mark))
        for result in run.archived:
            for line in result.errors:
                stderr_notice(f"archive: {line}")
        if run.errors or any(result.errors for result in run.archived):
            return run.returncode or 1
        return run.returncode if run.returncode is not None else 1

    try:
        return anyio.run(main)
    except BaseExceptionGroup as group:
        exc: BaseException = group
        while isinstance(exc, BaseExceptionGroup):
            exc = exc.exceptions[0]
        raise exc from None
