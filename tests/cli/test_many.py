"""``convert`` and ``stats`` over several transcripts in one process, as real CLI runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import FIXTURES, run_cli

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CODEX = FIXTURES / "codex" / "agent-sessions" / "codex_050_legacy.jsonl"
COPILOT = FIXTURES / "copilot" / "agent-sessions" / "copilot_small_0.0.420.jsonl"
CHATGPT = FIXTURES / "chatgpt" / "conversations.json"
THREE = (CC, CODEX, COPILOT)


def test_several_transcripts_are_one_session_per_line_equal_to_each_alone() -> None:
    proc = run_cli("convert", *THREE)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    for line, path in zip(lines, THREE, strict=True):
        alone = run_cli("convert", path)
        assert json.loads(line) == json.loads(alone.stdout)
    assert b"3 transcripts, 3 sessions" in proc.stderr


def test_one_transcript_keeps_its_single_file_output() -> None:
    proc = run_cli("convert", CC)
    assert proc.stdout.startswith(b'{\n  "agentminutes_schema"')
    # --paths-from always writes one result per line, even for one path.
    listed = run_cli("convert", "--paths-from", "-", stdin=f"{CC}\n".encode())
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count(b"\n") == 1
    assert json.loads(listed.stdout) == json.loads(proc.stdout)


def test_stats_one_object_per_line() -> None:
    proc = run_cli("stats", *THREE)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert rows == [json.loads(run_cli("stats", p).stdout) for p in THREE]


def test_a_failing_transcript_is_named_and_the_others_written(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"this is not a transcript\n")
    missing = tmp_path / "missing.jsonl"
    proc = run_cli("convert", CC, broken, missing, CODEX)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert [json.loads(x)["meta"]["harness"] for x in lines] == ["claude-code", "codex"]
    errors = [x for x in proc.stderr.decode().splitlines() if x.startswith("Error:")]
    assert len(errors) == 2
    assert str(broken) in errors[0]
    assert str(missing) in errors[1]
    assert "Traceback" not in proc.stderr.decode()
    assert "4 transcripts (2 failed)" in proc.stderr.decode()


def test_sessions_piped_into_xargs_and_paths_from(tmp_path: Path) -> None:
    home = tmp_path / "projects" / "-work-exp"
    home.mkdir(parents=True)
    for src in (CC, FIXTURES / "claude-code" / "ohcconfig"):
        for f in [src] if src.is_file() else sorted(src.glob("*.jsonl"))[:2]:
            shutil.copy(f, home / f.name)
    listing = run_cli("sessions", "--harness", "claude-code", "--root", tmp_path / "projects")
    assert listing.returncode == 0, listing.stderr
    paths = listing.stdout.decode().split()
    assert len(paths) >= 2
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    piped = subprocess.run(
        f"xargs {sys.executable} -m agentminutes convert",
        shell=True,
        input=listing.stdout,
        capture_output=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert piped.returncode == 0, piped.stderr
    ids = [json.loads(x)["meta"]["session_id"] for x in piped.stdout.splitlines()]
    assert len(ids) == len(paths)
    from_list = run_cli("convert", "--paths-from", "-", stdin=listing.stdout)
    assert from_list.stdout == piped.stdout
    listed = tmp_path / "list.txt"
    listed.write_bytes(listing.stdout)
    assert run_cli("convert", "--paths-from", listed).stdout == piped.stdout


def test_to_dir_one_file_each_named_apart(tmp_path: Path) -> None:
    # Two transcripts with the same file name in different folders (as Copilot CLI's events.jsonl).
    a, b = tmp_path / "a" / "events.jsonl", tmp_path / "b" / "events.jsonl"
    for target, src in ((a, COPILOT), (b, CODEX)):
        target.parent.mkdir()
        shutil.copy(src, target)
    out = tmp_path / "out"
    proc = run_cli("convert", "--format", "jsonl", "--to-dir", out, a, b, CC)
    assert proc.returncode == 0, proc.stderr
    written = dict(line.split("\t") for line in proc.stdout.decode().splitlines())
    assert len(set(written.values())) == 3
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in written.values())
    for src, path in written.items():
        assert Path(path).read_bytes() == run_cli("convert", "--format", "jsonl", src).stdout
    # The same transcript gets the same name again: a re-run replaces its file.
    again = run_cli("convert", "--format", "jsonl", "--to-dir", out, CC)
    assert again.stdout.decode().split("\t")[1].strip() == written[str(CC)]
    stats = run_cli("stats", "--to-dir", out, CC)
    stats_file = Path(stats.stdout.decode().split("\t")[1].strip())
    assert stats_file.name.endswith(".stats.json")
    assert stats_file.read_bytes() == run_cli("stats", CC).stdout


def test_to_dir_failure_leaves_no_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b'{"type": "user", "message": {"role": "user", "content": "x"}}\n{oops\n')
    out = tmp_path / "out"
    proc = run_cli("convert", "--to-dir", out, broken, CC)
    assert proc.returncode == 1
    assert os.listdir(out) == [os.path.basename(proc.stdout.decode().split()[1])]
    assert str(broken) in proc.stderr.decode()


def test_refusals_are_one_line() -> None:
    cases = [
        (["convert", "--format", "jsonl", CC, CODEX], "--to-dir"),
        (["convert", "-", CC], "stdin"),
        (["convert", "--paths-from", "-", "-"], "stdin"),
        (["convert", "-o", "x.json", "--to-dir", "d", CC, CODEX], "choose one"),
        (["convert", "--conversation", "abc", CC, CODEX], "--conversation"),
        (["convert"], "missing TRANSCRIPT"),
        (["stats", "--paths-from", "/nonexistent/list"], "--paths-from"),
    ]
    for args, needle in cases:
        proc = run_cli(*args, stdin=b"")
        assert proc.returncode != 0, args
        err = proc.stderr.decode()
        assert needle in err, (args, err)
        assert "Traceback" not in err


def test_multi_conversation_export_among_several_needs_all() -> None:
    alone = run_cli("convert", "--all", CHATGPT).stdout.splitlines()
    assert len(alone) > 1  # the fixture holds several conversations
    plain = run_cli("convert", CHATGPT, CC)
    assert plain.returncode == 1
    assert b"--all" in plain.stderr
    assert len(plain.stdout.splitlines()) == 1  # the Claude Code session is still written
    every = run_cli("convert", "--all", CHATGPT, CC)
    assert every.returncode == 0, every.stderr
    assert every.stdout.splitlines()[: len(alone)] == alone
    assert len(every.stdout.splitlines()) == len(alone) + 1


def test_sessions_error_lines_stand_between_the_paths_around_them(tmp_path: Path) -> None:
    # Paths are written in batches; an error line still comes after the paths found
    # before it and before those found after it, in one log of both streams.
    project = tmp_path / "projects" / "-home-user-work"
    project.mkdir(parents=True)
    good = CC.read_bytes()
    (project / "a.jsonl").write_bytes(good)
    (project / "b.jsonl").write_bytes(b"{oops\n")
    (project / "c.jsonl").write_bytes(good)
    root = str(tmp_path / "projects")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "sessions",
            "--harness",
            "claude-code",
            "--root",
            root,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    assert lines[0] == str(project / "a.jsonl")
    assert lines[1].startswith("agentminutes: ")
    assert "b.jsonl" in lines[1]
    assert lines[2] == str(project / "c.jsonl")
    assert lines[3].startswith("agentminutes: 2 sessions")
