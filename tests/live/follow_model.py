"""A model-based test of ``follow``: a Hypothesis state machine against the real follower.

The system under test is ``agentminutes follow ROOT --state STATE`` in a
subprocess, reading real transcripts (from ``fixtures/``) that the rules write
into ROOT on disk: whole lines, half a line and its rest, truncation,
copytruncate, delete and recreate, renames within ROOT and out of it, new
transcripts and subagent transcripts in new folders, pausing the follower
(SIGTERM with ``--state``, then a new follower), killing it (SIGKILL, then a
new follower) — as Vector tests its file source against a model.

The model keeps, per transcript *name* (the path it was first followed at:
a transcript renamed within ROOT keeps it), the contents its file had, one
per *generation* (a truncation or a replacement starts a new one). A name is
the follower's only when the follower can know the file is the one it
followed: a move a follower saw (notified while it ran, or finding the file
at its new path by device, inode and first bytes when it starts) is recorded
in the state at once, and a truncation after that is a new generation of the
same name. A transcript that moved while no follower ran and is truncated
before a follower saw it at its new path is a new transcript, named by its
new path: its first bytes no longer match, and an inode number alone is no
proof (it is reused once a file is gone). Its old name ends with what it had,
as if it had been moved out. The
invariant, checked when the follower is stopped (SIGINT) at the end: the
events delivered under each name are ``convert --format jsonl`` of each of
its generations' complete lines, in order — exactly, when every follower
was stopped with a signal; when one was killed, each event at least once
and nothing else.

Before a rule destroys content (truncation, deletion, a move out of ROOT)
the model waits until the follower has delivered every event the lines on
disk complete (what an adapter still holds may come later) and recorded
where the file is: a file truncated before any reader saw it loses its
lines for every tailer.

``tests/live/test_follow_model.py`` runs a few examples in CI;
``scripts/follow_model.py`` runs many.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import msgspec
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from agentminutes.harness import ParseOptions, detect
from agentminutes.live.state import read_progress
from agentminutes.pipeline.conversion import Conversion, clean_line, feed_record

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"

#: Real transcripts the rules write from: (path under fixtures/, role).
SOURCES: tuple[tuple[str, str], ...] = (
    ("claude-code/fasthooks-main.jsonl", "main"),
    ("claude-code/profilesite-18cb2580.jsonl", "main"),
    ("claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl", "main"),
    (
        "codex/nitta-dotfiles/rollout-2025-09-19T01-53-52-1d480e7c-6376-47af-8312-9a0cf1eef4a6.jsonl",
        "main",
    ),
    ("codex/feipi/rollout-2026-06-19T12-32-38-019ede26-ff03-7a82-bb34-cfab716a498a.jsonl", "main"),
    ("pi/constructed/v3-fork-tools.jsonl", "main"),
    ("claude-code/subagents/agent-aef063ba534d73153.jsonl", "subagent"),
)
#: How long the model waits for the follower to deliver what is on disk (s).
CATCH_UP_S = 30.0

_enc = msgspec.json.Encoder()


def _canon(event: Any) -> str:
    return json.dumps(event, sort_keys=True, separators=(",", ":"))


def _lines(rel: str) -> list[bytes]:
    return (FIXTURES / rel).read_bytes().splitlines(keepends=True)


_SOURCE_LINES = {rel: _lines(rel) for rel, _ in SOURCES}
_cache: dict[bytes, tuple[list[str], list[str]]] = {}


def expected_events(content: bytes) -> tuple[list[str], list[str]]:
    """``convert --format jsonl`` of *content*'s complete lines, and the part of it that
    comes out before the end of input (what an adapter does not hold back), canonical."""
    content = content[: content.rfind(b"\n") + 1]
    hit = _cache.get(content)
    if hit is not None:
        return hit
    if not content.strip():
        return [], []
    whole = [
        _canon(json.loads(_enc.encode(ev)))
        for ev in Conversion(name="model").iter_events(iter([content]))
    ]
    cls, _ = detect(content[:65536])
    adapter = cls(ParseOptions(live=True), on_skip=None)
    early: list[str] = []
    for lineno, raw in enumerate(content.split(b"\n")[:-1], 1):
        line = clean_line(raw, lineno)
        if line:
            events = feed_record(adapter, line, lineno)
            early.extend(_canon(json.loads(_enc.encode(ev))) for ev in events)
    _cache[content] = (whole, early)
    return whole, early


@dataclass
class Generation:
    """One content a transcript name had: a source's lines, written so far."""

    source: str
    written: int = 0  # whole lines of the source written
    partial: bytes = b""  # the first part of the next line, written
    content: bytes = b""  # everything written (a frozen generation keeps its last)

    def next_line(self) -> bytes | None:
        lines = _SOURCE_LINES[self.source]
        return lines[self.written] if self.written < len(lines) else None


@dataclass
class FileModel:
    """A transcript file on disk and the name its events are delivered under."""

    name: str
    path: str
    gens: list[Generation] = field(default_factory=list)
    #: Written to since a pausing follower last read everything.
    unread: bool = False

    @property
    def gen(self) -> Generation:
        return self.gens[-1]


class _Run:
    """One follower process: its stdout lines as they come."""

    def __init__(self, cmd: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.lines: list[bytes] = []
        self.stderr = b""
        self._out = threading.Thread(target=self._read, daemon=True)
        self._out.start()
        self._err = threading.Thread(target=self._read_err, daemon=True)
        self._err.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def wait_ready(self, journal: str, timeout: float = 30.0) -> None:
        """Wait until the follower has its state journal open (its signal handlers are set)."""
        deadline = time.monotonic() + timeout
        fds = f"/proc/{self.proc.pid}/fd"
        while time.monotonic() < deadline and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                if any(os.readlink(os.path.join(fds, fd)) == journal for fd in os.listdir(fds)):
                    return
            time.sleep(0.005)

    def end(self, sig: int, timeout: float = 30.0) -> int:
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"the follower did not exit after {signal.Signals(sig).name}"
            ) from None
        self.close()
        return rc

    def close(self) -> None:
        self._out.join(10)
        self._err.join(10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


class FollowMachine(RuleBasedStateMachine):
    """Rules that change transcripts on disk and stop, pause and kill the follower."""

    #: Counters the script reports (examples, steps), across every example run.
    examples: ClassVar[int] = 0
    steps: ClassVar[int] = 0
    command: ClassVar[list[str]] = [sys.executable, "-m", "agentminutes"]

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="follow-model-")
        self.root = os.path.join(self.tmp, "root")
        self.outside = os.path.join(self.tmp, "outside")
        os.makedirs(self.root)
        os.makedirs(self.outside)
        self.state = os.path.join(self.tmp, "state.json")
        self.files: dict[str, FileModel] = {}  # by path
        #: Every generation delivered under each name, in order.
        self.history: dict[str, list[Generation]] = {}
        self.runs: list[_Run] = []
        self.run: _Run | None = None
        self.killed = False
        self._ids = itertools.count(1)
        self._sources = itertools.cycle([rel for rel, role in SOURCES if role == "main"])
        self.log: list[str] = []
        FollowMachine.examples += 1

    # -- the follower --------------------------------------------------------------

    def _start(self) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        cmd = [*self.command, "follow", self.root, "--state", self.state]
        self.run = _Run(cmd, env)
        self.runs.append(self.run)

    def _delivered(self) -> dict[str, list[str]]:
        """Events delivered so far, by transcript name (a torn last line of a kill skipped)."""
        out: dict[str, list[str]] = {}
        for run in self.runs:
            for raw in list(run.lines):
                try:
                    env = json.loads(raw)
                except ValueError:
                    assert run.proc.returncode == -signal.SIGKILL, f"not JSON: {raw[:120]!r}"
                    continue
                out.setdefault(env["transcript"], []).append(_canon(env["event"]))
        return out

    def _want(self, name: str, *, final: bool) -> list[str]:
        """What must have been delivered under *name*: ended generations whole, the
        current one as far as its lines complete events (*final*: whole too)."""
        gens = self.history[name]
        want: list[str] = []
        for i, gen in enumerate(gens):
            whole, early = expected_events(gen.content)
            live = i == len(gens) - 1 and any(fm.gen is gen for fm in self.files.values())
            want.extend(early if live and not final else whole)
        return want

    def _recorded(self) -> dict[str, dict[str, Any]]:
        """The follower's recorded progress per name (the state and its journal, read only:
        the follower may be appending to the journal right now)."""
        return read_progress(self.state)

    def _read_all_of(
        self, fm: FileModel, entries: dict[str, dict[str, Any]], *, where: bool = True
    ) -> bool:
        """Whether the follower recorded reading *fm*'s current content to its last line
        (and, *where*, that the file is at its current path)."""
        content = fm.gen.content[: fm.gen.content.rfind(b"\n") + 1]
        if not content.strip():
            return True
        entry = entries.get(fm.name)
        if entry is None or entry.get("offset") != len(content):
            return False
        if where and not self._known_at(fm, entries):
            return False
        head = content[: int(entry.get("head_len", 0))]
        return hashlib.sha256(head).hexdigest() == entry.get("head_sha256")

    @staticmethod
    def _known_at(fm: FileModel, entries: dict[str, dict[str, Any]]) -> bool:
        """Whether the follower knows *fm*'s file is where it is now: it never moved, or
        the state records its move (where the file is, when it moved)."""
        if fm.path == fm.name:
            return True
        entry = entries.get(fm.name)
        return entry is not None and entry.get("path", fm.name) == fm.path

    def _catch_up(self, files: list[FileModel]) -> None:
        """Wait until the follower read *files* to their last line and delivered their events."""
        if self.run is None:
            return
        deadline = time.monotonic() + CATCH_UP_S
        while True:
            got = self._delivered()
            missing = {
                fm.name: sum(
                    (
                        Counter(self._want(fm.name, final=False)) - Counter(got.get(fm.name, []))
                    ).values()
                )
                for fm in files
            }
            entries = self._recorded()
            unread = [fm.name for fm in files if not self._read_all_of(fm, entries)]
            if not any(missing.values()) and not unread:
                return
            if self.run.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"the follower did not read and deliver what is on disk: missing {missing}, "
                    f"not read to the end {unread}; steps: {self.log}; {self._report(got)}"
                )
            time.sleep(0.01)

    def _settled(self, fm: FileModel) -> None:
        """Before destroying *fm*'s content: every reader must have seen it."""
        if self.run is not None:
            self._catch_up([fm])
        else:
            assert not fm.unread

    # -- writing --------------------------------------------------------------------

    def _new_file(self, path: str, source: str, lines: int) -> FileModel:
        fm = FileModel(name=path, path=path, gens=[Generation(source)])
        self.files[path] = fm
        self.history.setdefault(path, []).append(fm.gen)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab"):
            pass
        self._append(fm, lines)
        return fm

    def _write(self, fm: FileModel, data: bytes) -> None:
        with open(fm.path, "ab", buffering=0) as f:
            f.write(data)
        fm.gen.content += data
        fm.unread = True

    def _append(self, fm: FileModel, n: int) -> None:
        gen = fm.gen
        for _ in range(n):
            line = gen.next_line()
            if line is None:
                return
            self._write(fm, line[len(gen.partial) :])
            gen.partial = b""
            gen.written += 1

    def _restart_gen(self, fm: FileModel) -> FileModel:
        """*fm*'s path holds new content from now on, read from its start: the file model
        whose name it is delivered under.

        The same name when the follower knows the file is at this path (after
        :meth:`_settled`, a running follower does); else (moved while no follower ran,
        no follower saw it since) a new transcript named by the path, and *fm*'s name
        ends with what it had.
        """
        source = next(self._sources)
        while source == fm.gen.source:
            source = next(self._sources)
        if self._known_at(fm, self._recorded()):
            fm.gens.append(Generation(source))
            self.history[fm.name].append(fm.gen)
            return fm
        assert self.run is None, "a running follower that caught up knows where the file is"
        new = FileModel(name=fm.path, path=fm.path, gens=[Generation(source)])
        self.files[fm.path] = new
        self.history.setdefault(new.name, []).append(new.gen)
        return new

    def _pick(self, data: st.DataObject, *, growing: bool = False) -> FileModel:
        paths = sorted(self.files)
        if growing:
            paths = [p for p in paths if self.files[p].gen.next_line() is not None]
        return self.files[data.draw(st.sampled_from(paths), label="file")]

    def _fresh_path(self, data: st.DataObject) -> str:
        n = next(self._ids)
        folder = data.draw(st.sampled_from(["p1", "p2", f"new{n}"]), label="folder")
        return os.path.join(self.root, folder, f"s{n}.jsonl")

    # -- rules ------------------------------------------------------------------------

    @initialize(lines=st.integers(0, 6))
    def begin(self, lines: int) -> None:
        self._new_file(os.path.join(self.root, "p1", "s0.jsonl"), next(self._sources), lines)
        self._start()
        self.log.append(f"begin({lines})")

    @rule(data=st.data(), lines=st.integers(0, 8))
    def new_transcript(self, data: st.DataObject, lines: int) -> None:
        path = self._fresh_path(data)
        self._new_file(path, next(self._sources), lines)
        self.log.append(f"new {os.path.relpath(path, self.root)} +{lines}")
        FollowMachine.steps += 1

    @precondition(
        lambda self: any(
            fm.gen.source.startswith("claude-code/") and fm.path == fm.name
            for fm in self.files.values()
        )
    )
    @rule(data=st.data(), lines=st.integers(1, 8))
    def new_subagent(self, data: st.DataObject, lines: int) -> None:
        parents = sorted(
            p
            for p, fm in self.files.items()
            if fm.gen.source.startswith("claude-code/") and fm.path == fm.name
        )
        parent = data.draw(st.sampled_from(parents), label="parent")
        stem = os.path.splitext(parent)[0]
        path = os.path.join(stem, "subagents", f"agent-a{next(self._ids)}.jsonl")
        source = next(rel for rel, role in SOURCES if role == "subagent")
        self._new_file(path, source, lines)
        self.log.append(f"subagent {os.path.relpath(path, self.root)} +{lines}")
        FollowMachine.steps += 1

    @precondition(lambda self: any(fm.gen.next_line() is not None for fm in self.files.values()))
    @rule(data=st.data(), n=st.integers(1, 12))
    def append_lines(self, data: st.DataObject, n: int) -> None:
        fm = self._pick(data, growing=True)
        self._append(fm, n)
        self.log.append(f"append {os.path.relpath(fm.path, self.root)} +{n}")
        FollowMachine.steps += 1

    @precondition(
        lambda self: any(
            fm.gen.next_line() is not None and not fm.gen.partial for fm in self.files.values()
        )
    )
    @rule(data=st.data())
    def append_partial(self, data: st.DataObject) -> None:
        fm = self._pick(data, growing=True)
        if fm.gen.partial:
            return
        line = fm.gen.next_line()
        assert line is not None
        cut = max(1, len(line) // 2)
        self._write(fm, line[:cut])
        fm.gen.partial = line[:cut]
        self.log.append(f"partial {os.path.relpath(fm.path, self.root)}")
        FollowMachine.steps += 1

    @precondition(lambda self: any(fm.gen.partial for fm in self.files.values()))
    @rule(data=st.data())
    def complete_partial(self, data: st.DataObject) -> None:
        choices = sorted(p for p, fm in self.files.items() if fm.gen.partial)
        fm = self.files[data.draw(st.sampled_from(choices), label="file")]
        self._append(fm, 1)
        self.log.append(f"complete {os.path.relpath(fm.path, self.root)}")
        FollowMachine.steps += 1

    def _destroyable(self) -> bool:
        return any(self.run is not None or not fm.unread for fm in self.files.values())

    def _pick_destroyable(self, data: st.DataObject) -> FileModel | None:
        paths = sorted(p for p, fm in self.files.items() if self.run is not None or not fm.unread)
        if not paths:
            return None
        return self.files[data.draw(st.sampled_from(paths), label="file")]

    @precondition(_destroyable)
    @rule(data=st.data(), copy=st.booleans())
    def truncate(self, data: st.DataObject, copy: bool) -> None:
        fm = self._pick_destroyable(data)
        if fm is None:
            return
        self._settled(fm)
        if copy:  # copytruncate: the content is copied aside (not a transcript name), then cut
            shutil.copyfile(fm.path, fm.path + ".1")
        os.truncate(fm.path, 0)
        new = self._restart_gen(fm)
        self.log.append(
            f"{'copy' if copy else ''}truncate {os.path.relpath(fm.path, self.root)}"
            + ("" if new is fm else " (a new transcript: its move was never seen)")
        )
        FollowMachine.steps += 1

    @precondition(lambda self: any(fm.path == fm.name for fm in self.files.values()))
    @rule(data=st.data(), lines=st.integers(0, 6))
    def delete_and_recreate(self, data: st.DataObject, lines: int) -> None:
        paths = sorted(
            p
            for p, fm in self.files.items()
            if fm.path == fm.name and (self.run is not None or not fm.unread)
        )
        if not paths:
            return
        fm = self.files[data.draw(st.sampled_from(paths), label="file")]
        self._settled(fm)
        os.unlink(fm.path)
        self._restart_gen(fm)
        with open(fm.path, "wb"):
            pass
        self._append(fm, lines)
        self.log.append(f"recreate {os.path.relpath(fm.path, self.root)} +{lines}")
        FollowMachine.steps += 1

    def _renamable(self) -> list[str]:
        """Files a rename keeps the name of, for the follower: those it has read.

        A file renamed before any follower saw it is known by its new path only; one
        renamed while no follower runs is known again by its inode and first bytes, as
        its last follower recorded them (so it must have recorded them: an entry).
        """
        if self.run is not None:
            return sorted(self.files)
        entries = self._recorded()
        return sorted(
            p
            for p, fm in self.files.items()
            if not fm.unread
            and fm.name in entries
            and self._read_all_of(fm, entries, where=False)
            and fm.gen.content.strip()
        )

    @precondition(lambda self: bool(self._renamable()))
    @rule(data=st.data())
    def rename_within(self, data: st.DataObject) -> None:
        choices = self._renamable()
        if not choices:
            return
        fm = self.files[data.draw(st.sampled_from(choices), label="file")]
        self._catch_up([fm])
        if b"\n" not in fm.gen.content and self.run is not None:
            # No complete line yet: the follower records nothing for a file before its first
            # line, so whether it saw the file under its old name depends on timing (a rename
            # right after the start can come before its first scan). Either name is right.
            return
        new = self._fresh_path(data)
        os.makedirs(os.path.dirname(new), exist_ok=True)
        os.rename(fm.path, new)
        del self.files[fm.path]
        self.log.append(
            f"rename {os.path.relpath(fm.path, self.root)} -> {os.path.relpath(new, self.root)}"
        )
        fm.path = new
        self.files[new] = fm
        FollowMachine.steps += 1

    @precondition(lambda self: len(self.files) > 1 and self._destroyable())
    @rule(data=st.data())
    def rename_out(self, data: st.DataObject) -> None:
        fm = self._pick_destroyable(data)
        if fm is None:
            return
        self._settled(fm)
        os.rename(fm.path, os.path.join(self.outside, f"moved{next(self._ids)}.jsonl"))
        del self.files[fm.path]  # its generation ends: it is not followed any more
        self.log.append(f"move out {os.path.relpath(fm.path, self.root)}")
        FollowMachine.steps += 1

    @precondition(lambda self: self.run is not None)
    @rule()
    def pause(self) -> None:
        assert self.run is not None
        rc = self.run.end(signal.SIGTERM)
        if rc == -signal.SIGTERM:
            # Signalled while the interpreter was still starting, before any of our code
            # ran: its default action killed it, as SIGKILL would have.
            self.killed = True
        else:
            assert rc == 0, self.run.stderr.decode(errors="replace")
            for fm in self.files.values():
                fm.unread = False  # a pausing follower reads everything on disk first
        self.run = None
        self.log.append("pause")
        FollowMachine.steps += 1

    @precondition(lambda self: self.run is None)
    @rule()
    def resume(self) -> None:
        self._start()
        self.log.append("resume")
        FollowMachine.steps += 1

    @precondition(lambda self: self.run is not None)
    @rule(delay=st.sampled_from([0.0, 0.05, 0.3]))
    def kill_and_restart(self, delay: float) -> None:
        assert self.run is not None
        time.sleep(delay)
        self.run.end(signal.SIGKILL)
        self.killed = True
        self._start()
        self.log.append(f"kill after {delay}s, restart")
        FollowMachine.steps += 1

    @invariant()
    def nothing_foreign(self) -> None:
        """Every event delivered is one of an expected generation's (checked as it goes)."""
        got = self._delivered()
        for name, events in got.items():
            assert name in self.history, f"events under {name}, which no transcript has"
            allowed = {e for gen in self.history[name] for e in expected_events(gen.content)[0]}
            extra = [e for e in events if e not in allowed]
            assert not extra, f"{name}: {len(extra)} events of no content it had: {extra[:1]}"

    def _report(self, got: dict[str, list[str]]) -> str:
        """What each follower said, and how many events came under each name."""
        counts = {os.path.relpath(n, self.root): len(v) for n, v in got.items()}
        said = [
            f"run {i} (exit {run.proc.returncode}): "
            + run.stderr.decode(errors="replace").replace(self.root + "/", "")[-1500:]
            for i, run in enumerate(self.runs)
        ]
        return f"delivered {counts}; " + " | ".join(said)

    def teardown(self) -> None:
        try:
            if self.run is None:
                self._start()
            assert self.run is not None
            self.run.wait_ready(self.state + ".journal")
            rc = self.run.end(signal.SIGINT)
            err = self.run.stderr.decode(errors="replace")
            assert rc == 0, err
            for run in self.runs:
                assert b"Traceback" not in run.stderr, run.stderr.decode(errors="replace")
            got = self._delivered()
            for name in self.history:
                want = self._want(name, final=True)
                have = got.get(name, [])
                if self.killed:
                    missing = Counter(want) - Counter(have)
                    assert not missing, (
                        f"{name}: lost {sum(missing.values())}; {self.log}; {self._report(got)}"
                    )
                    assert set(have) <= set(want), f"{name}: foreign events; {self.log}"
                else:
                    assert have == want, (
                        f"{name}: delivered {len(have)} events, expected {len(want)}"
                        f" (first difference at {_first_difference(have, want)}); steps: {self.log};"
                        f" {self._report(got)}"
                    )
            assert set(got) <= set(self.history)
        finally:
            for run in self.runs:
                if run.proc.poll() is None:
                    run.proc.kill()
                    run.proc.wait()
                run.close()
            with contextlib.suppress(OSError):
                shutil.rmtree(self.tmp)


def _first_difference(a: list[str], b: list[str]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))
