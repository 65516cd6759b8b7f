"""Where output goes: ``-o`` writes *to* the path (symlinks, FIFOs, devices), modes follow
the umask, the input is never overwritten, and a failing destination is one error line.

Every case runs the real command line in a subprocess on a fixture transcript.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from agentminutes.discovery.archive import MANIFEST
from conftest import FIXTURES, run_cli
from session_home import build_home

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
EF958 = "ef958aa1-0e93-49f0-bb71-150f63befcd1"


def run_with(
    *args: str | os.PathLike[str],
    umask: int | None = None,
    env: dict[str, str] | None = None,
    stdout: int | None = subprocess.PIPE,
) -> subprocess.CompletedProcess[bytes]:
    """The CLI in a subprocess, with a umask, an environment or a stdout of our choosing."""

    def child() -> None:
        if umask is not None:
            os.umask(umask)

    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *map(str, args)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        preexec_fn=child,  # only os.umask: safe between fork and exec
        timeout=60,
        check=False,
    )


def one_error_line(proc: subprocess.CompletedProcess[bytes], *needles: str) -> str:
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode()
    assert "Traceback" not in err, err
    assert "internal error" not in err, err
    [line] = err.splitlines()
    assert line.startswith("Error: ")
    for needle in needles:
        assert needle in line, line
    return line


@pytest.fixture(scope="module")
def expected() -> bytes:
    """What ``convert`` prints to stdout for the fixture (every -o case must write the same)."""
    proc = run_cli("convert", CC)
    assert proc.returncode == 0
    return proc.stdout


def no_leftovers(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.startswith(".agentminutes-")] == []


def test_a_new_file_has_the_umask_mode(tmp_path: Path, expected: bytes) -> None:
    for umask, mode in ((0o022, 0o644), (0o027, 0o640), (0o077, 0o600)):
        out = tmp_path / f"new-{umask:o}.json"
        assert run_with("convert", CC, "-o", out, umask=umask).returncode == 0
        assert out.read_bytes() == expected
        assert stat.S_IMODE(out.stat().st_mode) == mode
    no_leftovers(tmp_path)


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, expected: bytes) -> None:
    out = tmp_path / "old.json"
    out.write_bytes(b"old contents\n")
    out.chmod(0o644)
    assert run_with("convert", CC, "-o", out, umask=0o077).returncode == 0
    assert out.read_bytes() == expected
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    out.chmod(0o604)
    assert run_with("stats", CC, "-o", out, umask=0o022).returncode == 0
    assert json.loads(out.read_bytes())["events"] > 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o604


def test_a_symlink_has_its_target_written(tmp_path: Path, expected: bytes) -> None:
    target = tmp_path / "real.json"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    assert run_cli("convert", CC, "-o", link).returncode == 0
    assert link.is_symlink()
    assert os.readlink(link) == target.name
    assert target.read_bytes() == expected
    # A dangling link: its target is created.
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to("created.json")
    assert run_cli("convert", CC, "-o", dangling).returncode == 0
    assert dangling.is_symlink()
    assert (tmp_path / "created.json").read_bytes() == expected
    no_leftovers(tmp_path)


def test_a_hard_linked_file_is_written_in_place(tmp_path: Path, expected: bytes) -> None:
    out = tmp_path / "out.json"
    out.write_bytes(b"old\n")
    other = tmp_path / "other-name.json"
    os.link(out, other)
    assert run_cli("convert", CC, "-o", out).returncode == 0
    assert out.read_bytes() == other.read_bytes() == expected
    assert out.stat().st_ino == other.stat().st_ino


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_a_fifo_reader_gets_the_bytes(tmp_path: Path, fmt: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    proc = run_cli("convert", "--format", fmt, CC, "-o", fifo)
    reader.join(30)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not replaced by a file
    assert got == [run_cli("convert", "--format", fmt, CC).stdout]


def test_devices_are_written_as_devices(expected: bytes) -> None:
    assert run_cli("convert", CC, "-o", "/dev/null").returncode == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    to_stdout = run_cli("convert", CC, "-o", "/dev/stdout")
    assert to_stdout.returncode == 0
    assert to_stdout.stdout == expected
    for fmt in ("json", "jsonl"):
        one_error_line(
            run_cli("convert", "--format", fmt, CC, "-o", "/dev/full"),
            "/dev/full",
            "no space left on device",
        )
    one_error_line(run_cli("stats", CC, "-o", "/dev/full"), "/dev/full")


def test_the_input_itself_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copyfile(CC, transcript)
    link = tmp_path / "link.jsonl"
    link.symlink_to(transcript.name)
    hard = tmp_path / "hard.jsonl"
    os.link(transcript, hard)
    before = transcript.read_bytes()
    for verb in ("convert", "stats"):
        for out in (transcript, link, hard):
            one_error_line(
                run_cli(verb, transcript, "-o", out), "is the input transcript", "refusing"
            )
        # Reached through the link too, and with stdout appended to the transcript.
        one_error_line(run_cli(verb, link, "-o", hard), "is the input transcript")
        with transcript.open("ab") as appended:
            one_error_line(run_with(verb, transcript, stdout=appended.fileno()), "standard output")
    assert transcript.read_bytes() == before
    assert link.is_symlink()
    no_leftovers(tmp_path)


def test_a_missing_folder_is_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "dir" / "x.json"
    for verb in ("convert", "stats"):
        one_error_line(run_cli(verb, CC, "-o", missing), str(missing), "no such directory")
    one_error_line(run_cli("convert", CC, "-o", tmp_path), "is a directory")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_parse_leaves_the_old_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(CC.read_bytes() + b'{"type": "no such record"\n')
    out = tmp_path / "out.json"
    out.write_bytes(b"previous output\n")
    for fmt in ("json", "jsonl"):
        assert run_cli("convert", "--format", fmt, broken, "-o", out).returncode == 1
        assert out.read_bytes() == b"previous output\n"
    no_leftovers(tmp_path)


def test_a_full_or_closed_stdout_is_one_error_line() -> None:
    with open("/dev/full", "wb") as full:
        for args in (
            ("convert", CC),
            ("convert", "--format", "jsonl", CC),
            ("stats", CC),
            ("detect", CC),
        ):
            one_error_line(run_with(*args, stdout=full.fileno()), "standard output")
    closed = subprocess.run(
        [sys.executable, "-m", "agentminutes", "convert", str(CC)],
        capture_output=True,
        preexec_fn=lambda: os.close(1),  # started without a stdout
        timeout=60,
        check=False,
    )
    one_error_line(closed, "standard output is closed")


def test_archive_files_have_the_umask_mode(tmp_path: Path) -> None:
    home = build_home(tmp_path / "home")
    to = tmp_path / "archive"
    args = ("archive", "--harness", "claude-code", "--session-id", EF958, "--to", to)
    proc = run_with(*args, umask=0o027, env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    files = [p for p in to.rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert any(p.name == MANIFEST for p in files)
    assert any(p.name.endswith(".agentminutes.json") for p in files)
    assert len(files) > 3
    for p in files:
        assert stat.S_IMODE(p.stat().st_mode) == 0o640, p
    # Rewritten later, the manifest keeps the mode it was given.
    (to / MANIFEST).chmod(0o644)
    manifest = (to / MANIFEST).read_bytes()
    transcript = next(home.rglob(f"{EF958}.jsonl"))
    with transcript.open("ab") as f:
        f.write(transcript.read_bytes().splitlines(keepends=True)[-1])
    proc = run_with(*args, umask=0o077, env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    assert (to / MANIFEST).read_bytes() != manifest
    assert stat.S_IMODE((to / MANIFEST).stat().st_mode) == 0o644
