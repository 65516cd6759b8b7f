"""``agentminutes archive``: copies in the harness's layout, normalized JSON, a manifest; idempotent.

Runs on the home of ``fixtures/sessions/home.tsv`` (copied per test, so the
sources can be changed), on a transcript another thread is still writing,
and twice in a row.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import agentminutes
from agentminutes.discovery.archive import MANIFEST, archive_sync
from agentminutes.errors import UsageError
from conftest import FIXTURES, canon, convert_json
from session_home import build_home

EF958 = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
PROJECT = ".claude/projects/-experiments-worktrees"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_home(tmp_path_factory.mktemp("archive") / "home")


@pytest.fixture
def home(pristine: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(pristine, dest, symlinks=True)
    return dest


def _env(home: Path) -> dict[str, str]:
    return {"HOME": str(home)}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(to: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((to / MANIFEST).read_text())
    assert data["agentminutes_archive"] == 1
    return {e["path"]: e for e in data["files"]}


def _sources(home: Path) -> dict[str, tuple[str, int]]:
    out = {}
    for p in sorted(home.rglob("*")):
        if p.is_file():
            out[str(p)] = (_sha(p), p.stat().st_mtime_ns)
    return out


def test_a_session_with_subagents_and_sidecars(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    before = _sources(home)
    result = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    assert result.ok
    assert result.sessions == [EF958]
    files = sorted(str(p.relative_to(to)) for p in to.rglob("*") if p.is_file())
    assert files == [
        f"-experiments-worktrees/{EF958}.jsonl",
        f"-experiments-worktrees/{EF958}.jsonl.agentminutes.json",
        f"-experiments-worktrees/{EF958}/subagents/agent-a36efb2a1231c41e2.jsonl",
        f"-experiments-worktrees/{EF958}/subagents/agent-a36efb2a1231c41e2.jsonl.agentminutes.json",
        f"-experiments-worktrees/{EF958}/subagents/agent-a36efb2a1231c41e2.meta.json",
        f"-experiments-worktrees/{EF958}/tool-results/toolu_01.txt",
        ".agentminutes-archive.lock",
        MANIFEST,
    ]
    entries = _manifest(to)
    assert sorted(entries) == files[:-2]
    roles = {p: e["role"] for p, e in entries.items()}
    assert roles[f"-experiments-worktrees/{EF958}.jsonl"] == "transcript"
    assert (
        roles[f"-experiments-worktrees/{EF958}/subagents/agent-a36efb2a1231c41e2.jsonl"]
        == "subagent"
    )
    assert roles[f"-experiments-worktrees/{EF958}/tool-results/toolu_01.txt"] == "sidecar"
    for rel, e in entries.items():
        assert (e["size"], e["sha256"]) == ((to / rel).stat().st_size, _sha(to / rel))
        assert e["harness"] == "claude-code"
        assert e["session_id"] == EF958
        if e["role"] != "normalized":
            source = Path(e["source"])
            assert source == home / ".claude/projects" / rel
            assert _sha(source) == e["sha256"]
            assert (to / rel).stat().st_mtime_ns == source.stat().st_mtime_ns
    normalized = json.loads(
        (to / f"-experiments-worktrees/{EF958}.jsonl.agentminutes.json").read_bytes()
    )
    assert canon(normalized) == canon(convert_json(home / PROJECT / f"{EF958}.jsonl"))
    assert _sources(home) == before  # never modifies the sources
    # The archive is a Claude Code root of its own.
    again = [r.meta.session_id for r in agentminutes.scan("claude-code", to)]
    assert again == [EF958]


def test_twice_in_a_row_adds_nothing(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    first = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    manifest = (to / MANIFEST).read_bytes()
    second = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    assert (len(first.copied), len(first.normalized)) == (4, 2)
    assert (second.copied, second.extended, second.normalized) == ([], [], [])
    assert len(second.unchanged) == 4
    assert second.ok
    assert (to / MANIFEST).read_bytes() == manifest


def test_a_transcript_growing_while_it_is_archived(home: Path, tmp_path: Path) -> None:
    """A writer thread appends records (each in two writes) while archive runs again and again."""
    to = tmp_path / "archive"
    live = home / PROJECT / f"{EF958}.jsonl"
    lines = live.read_bytes().splitlines(keepends=True)
    head, rest = lines[:5], lines[5:]
    live.write_bytes(b"".join(head))
    done = threading.Event()

    def writer() -> None:
        with open(live, "ab") as f:
            for line in rest:
                half = len(line) // 2
                f.write(line[:half])
                f.flush()
                time.sleep(0.002)
                f.write(line[half:])
                f.flush()
                time.sleep(0.001)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    copy = to / "-experiments-worktrees" / f"{EF958}.jsonl"
    runs = []
    while not done.is_set() or not runs:
        result = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
        assert result.ok, result.conflicts
        runs.append(result)
        held = copy.read_bytes()
        assert held.endswith(b"\n")  # whole lines only
        assert live.read_bytes().startswith(held)  # a prefix of what was written
        entry = _manifest(to)[f"-experiments-worktrees/{EF958}.jsonl"]
        assert (entry["size"], entry["sha256"]) == (len(held), hashlib.sha256(held).hexdigest())
    thread.join()
    assert len(runs) >= 3  # several runs met the transcript mid-write
    final = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    assert copy.read_bytes() == live.read_bytes()
    assert final.ok
    assert any(r.extended for r in [*runs, final])  # appended, never rewritten
    normalized = json.loads(
        (to / f"-experiments-worktrees/{EF958}.jsonl.agentminutes.json").read_bytes()
    )
    assert canon(normalized) == canon(convert_json(live))
    after = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    assert (after.copied, after.extended, after.normalized) == ([], [], [])


def test_an_appended_line_extends_the_copy(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    sub = home / PROJECT / EF958 / "subagents" / "agent-a36efb2a1231c41e2.jsonl"
    first = sub.read_bytes().splitlines(keepends=True)[-1]
    with open(sub, "ab") as f:
        f.write(first + first[:10])  # one more line, and the start of another
    again = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    copy = to / "-experiments-worktrees" / EF958 / "subagents" / "agent-a36efb2a1231c41e2.jsonl"
    assert again.extended == [str(copy)]
    assert copy.read_bytes() == sub.read_bytes()[:-10]
    assert again.normalized == [str(copy) + ".agentminutes.json"]


def test_a_source_changed_under_its_copy_is_reported(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    live = home / PROJECT / f"{EF958}.jsonl"
    copy = to / "-experiments-worktrees" / f"{EF958}.jsonl"
    held = copy.read_bytes()
    data = live.read_bytes()
    live.write_bytes(data.replace(b'"type"', b'"type" ', 1))  # rewritten, not appended
    sidecar = home / PROJECT / EF958 / "tool-results" / "toolu_01.txt"
    sidecar.write_text("edited in place\n")
    (home / PROJECT / EF958 / "tool-results" / "toolu_02.txt").write_text("new\n")
    reports: list[str] = []
    result = archive_sync(
        to, harness="claude-code", session_id=EF958, env=_env(home), on_report=reports.append
    )
    assert not result.ok
    assert sorted(c.source for c in result.conflicts) == sorted([str(live), str(sidecar)])
    assert copy.read_bytes() == held  # never silently overwritten
    assert "toolu_02.txt" in " ".join(result.copied)
    assert any("are not the ones copied" in r for r in reports)
    # The command line says so and exits 1.
    live.write_bytes(data[: len(data) // 2])
    p = subprocess.run(
        [sys.executable, "-m", "agentminutes", "archive", "--harness", "claude-code",
         "--session-id", EF958, "--to", str(to)],
        capture_output=True, text=True, env={**os.environ, "HOME": str(home)}, check=False,
    )  # fmt: skip
    assert p.returncode == 1
    assert (
        f"agentminutes: archive: {live}: it shrank below the {len(held)} bytes copied" in p.stderr
    )
    assert "Traceback" not in p.stderr


def test_a_copy_changed_in_the_archive_is_reported(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    meta = to / "-experiments-worktrees" / EF958 / "subagents" / "agent-a36efb2a1231c41e2.meta.json"
    meta.write_text("{}")
    result = archive_sync(to, harness="claude-code", session_id=EF958, env=_env(home))
    assert [c.reason for c in result.conflicts] == [
        f"the archived copy -experiments-worktrees/{EF958}/subagents/agent-a36efb2a1231c41e2.meta.json "
        "differs from its manifest entry"
    ]
    assert meta.read_text() == "{}"


def test_by_cwd_and_since(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    result = archive_sync(to, harness="claude-code", cwd="/workspace", env=_env(home))
    # The home's unreadable transcript is reported and stops nothing; its empty one
    # (no conversation) is no error.
    assert not result.conflicts
    assert [e.rsplit(": ", 1)[-1] for e in result.errors] == [
        "invalid character (byte 0) at line 1",
    ]
    assert sorted(p for p in _manifest(to) if p.endswith(".jsonl")) == [
        "-order/s-y.jsonl",
        "-order/s.jsonl",
        "-order/s.y.jsonl",
    ]
    since = {
        day: archive_sync(
            tmp_path / day,
            harness="claude-code",
            cwd="/Users/marklin/workspace/",
            since=day,
            env=_env(home),
        ).sessions
        for day in ("2026-03-01", "2026-04-02")
    }
    assert since == {"2026-03-01": ["d45db2bf-d60b-4801-a95b-f5f61f4bda64"], "2026-04-02": []}


def test_codex_subagent_rollouts_come_along(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    parent = "019ddc5f-977f-7fd3-a392-a6477e6b25b2"
    result = archive_sync(to, harness="codex", session_id=parent, env=_env(home))
    assert result.ok
    roles = {p: e["role"] for p, e in _manifest(to).items()}
    assert roles == {
        "2026/04/30/rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl": "transcript",
        "2026/04/30/rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl.agentminutes.json": "normalized",
        "2026/06/19/rollout-2026-06-19T12-40-00-c0000001-0000-7000-8000-000000000001.jsonl": "subagent",
        "2026/06/19/rollout-2026-06-19T12-40-00-c0000001-0000-7000-8000-000000000001.jsonl.agentminutes.json": "normalized",
    }


def test_antigravity_child_conversations_come_along(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    result = archive_sync(to, harness="antigravity", session_id="parent-1", env=_env(home))
    assert result.ok
    logs = ".system_generated/logs/transcript_full.jsonl"
    roles = {p: e["role"] for p, e in _manifest(to).items() if e["role"] != "normalized"}
    assert roles == {
        f"parent-1/{logs}": "transcript",
        f"child-1/{logs}": "subagent",
        f"grandchild-1/{logs}": "subagent",
        "child-1/artifacts/count.md": "sidecar",
    }


def test_a_copilot_session_folder(home: Path, tmp_path: Path) -> None:
    to = tmp_path / "archive"
    sid = "aaaabbbb-1111-2222-3333-ccccddddeeee"
    result = archive_sync(to, harness="copilot", session_id=sid, env=_env(home))
    assert result.ok
    assert sorted(_manifest(to)) == [
        f"{sid}/events.jsonl",
        f"{sid}/events.jsonl.agentminutes.json",
        f"{sid}/workspace.yaml",
    ]


def test_a_transcript_that_does_not_parse_is_kept_but_not_normalized(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    sid = EF958
    (root / "-p").mkdir(parents=True)
    whole = (FIXTURES / f"claude-code/ccl/{sid}.jsonl").read_bytes()
    (root / "-p" / f"{sid}.jsonl").write_bytes(whole + b'{"type":"weird.thing","data":{}}\n')
    to = tmp_path / "archive"
    strict = archive_sync(to, harness="claude-code", session_id=sid, root=root)
    assert not strict.ok
    assert strict.copied
    assert not strict.normalized
    assert strict.errors[0].startswith("not normalized: ")
    assert not (to / "-p" / f"{sid}.jsonl.agentminutes.json").exists()
    permissive = archive_sync(to, harness="claude-code", session_id=sid, root=root, permissive=True)
    assert permissive.ok
    assert permissive.normalized


def test_usage_errors(home: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="exactly one of --session-id and --cwd"):
        archive_sync(tmp_path / "a", harness="claude-code", env=_env(home))
    with pytest.raises(UsageError, match="needs --cwd"):
        archive_sync(tmp_path / "a", harness="claude-code", session_id=EF958, since="2026-01-01")
    with pytest.raises(UsageError, match="is inside the claude-code folder"):
        archive_sync(
            home / ".claude/projects/x", harness="claude-code", session_id=EF958, env=_env(home)
        )
    with pytest.raises(UsageError, match='no session "nope"'):
        archive_sync(tmp_path / "a", harness="claude-code", session_id="nope", env=_env(home))
    p = subprocess.run(
        [sys.executable, "-m", "agentminutes", "archive", "--harness", "claude-code", "--to", str(tmp_path / "b")],
        capture_output=True, text=True, env={**os.environ, "HOME": str(home)}, check=False,
    )  # fmt: skip
    assert (p.returncode, p.stderr) == (
        1,
        "Error: archive needs exactly one of --session-id and --cwd\n",
    )


def test_the_async_twin(home: Path, tmp_path: Path) -> None:
    import anyio

    async def run() -> Any:
        return await agentminutes.archive(
            tmp_path / "a", harness="claude-code", session_id=EF958, env=_env(home)
        )

    result = anyio.run(run)
    assert result.ok
    assert result.sessions == [EF958]


def test_worker_processes_archive_as_one_process(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentminutes.pipeline import processes

    # Two more sessions of the same folder: one whose last record no rule reads (its
    # copy is kept, its normalized session refused), one that normalizes.
    project = home / ".claude" / "projects" / "-order"
    whole = (project / "s.jsonl").read_bytes()
    (project / "s-weird.jsonl").write_bytes(whole + b'{"type":"weird.thing","data":{}}\n')
    (project / "s-again.jsonl").write_bytes(whole)
    monkeypatch.setattr(processes, "PARALLEL_BYTES", 1)
    started: list[int] = []
    real = processes.in_order

    def spy(*args: Any, **kwargs: Any) -> Any:
        started.append(len(args[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(processes, "in_order", spy)
    runs = []
    for jobs in (1, 2):
        to = tmp_path / f"archive{jobs}"
        said: list[str] = []
        result = archive_sync(
            to,
            harness="claude-code",
            cwd="/workspace",
            env=_env(home),
            on_report=said.append,
            jobs=jobs,
        )
        files = {
            str(p.relative_to(to)): p.read_bytes()
            for p in sorted(to.rglob("*"))
            if p.is_file() and p.name != MANIFEST
        }
        manifest = {k: {**v, "copied_at": ""} for k, v in _manifest(to).items()}
        done = [result.sessions, result.copied, result.normalized, result.errors, said]
        runs.append(([[x.replace(str(to), "TO") for x in xs] for xs in done], files, manifest))
    assert started == [5]  # every transcript copied, normalized by the workers
    assert runs[0] == runs[1]
    errors = runs[0][0][3]
    assert runs[0][0][4] == errors  # each reported as it would be by one process
    assert len(errors) == 2
    assert errors[0].startswith("not normalized: TO/-order/s-weird.jsonl: ")
    assert errors[1].endswith("invalid character (byte 0) at line 1")
    assert len(runs[0][0][2]) == 4
