"""One parser for every command: the entry point and the typer application agree, word for word.

The entry point (``python -m agentminutes``) parses without loading typer; the
typer application (``python -m agentminutes.cli.app``), built from the same
table, hands its commands' arguments to the same parser. Every command of the
table runs through both, in real subprocesses, on real fixtures, and the exit
status, stdout and stderr must be equal; the refused command lines generated
from the table (an unknown option, a bad choice, a missing value …) go through
both in-process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentminutes.cli import main as entry_main
from agentminutes.cli.spec import COMMANDS, Command
from conftest import FIXTURES, run_cli

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CODEX = next((FIXTURES / "codex").rglob("rollout-*.jsonl"))


def run_typer(
    *args: str | os.PathLike[str], cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The same command line through the typer application."""
    return subprocess.run(
        [sys.executable, "-m", "agentminutes.cli.app", *map(str, args)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def run_entry(
    *args: str | os.PathLike[str], cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *map(str, args)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def _home(tmp: Path) -> Path:
    """A home with one Claude Code session in its projects folder, for sessions/archive."""
    project = tmp / "home" / ".claude" / "projects" / "-src-app"
    project.mkdir(parents=True)
    shutil.copy(CC, project / CC.name)
    return tmp / "home"


#: A real run of every command, on fixtures: (arguments, files the run writes, to compare too).
def real_runs(tmp: Path) -> dict[str, list[tuple[list[str], list[str]]]]:
    home = _home(tmp)
    return {
        "convert": [
            (
                [
                    "convert",
                    "--format=jsonl",
                    str(CC),
                    "--max-payload-bytes",
                    "100",
                    "-o=out.jsonl",
                ],
                ["out.jsonl"],
            )
        ],
        "stats": [(["stats", "--promote", "codex:web-search", str(CODEX)], [])],
        "detect": [(["detect", str(CODEX)], [])],
        "compare": [(["compare", "--format=json", str(CC), str(CODEX)], [])],
        "view": [
            (["view", "--format", "markdown", "--full", str(CC)], []),
            (["view", "--html=page.html", "--no-redact", str(CC)], ["page.html"]),
        ],
        "follow": [(["follow", "--idle-exit", "0.2", str(CC)], [])],
        "run": [(["run", "--harness", "claude-code", "--", sys.executable, "-c", "print(1)"], [])],
        "statusline": [(["statusline", "--cache-dir", "cache"], [])],
        "sessions": [
            (
                [
                    "sessions",
                    "--harness",
                    "claude-code",
                    "--root",
                    str(home / ".claude" / "projects"),
                    "--format",
                    "jsonl",
                ],
                [],
            )
        ],
        "archive": [
            (
                [
                    "archive",
                    "--harness=claude-code",
                    "--root",
                    str(home / ".claude" / "projects"),
                    "--session-id",
                    CC.stem,
                    "--to",
                    "archived",
                ],
                ["archived/MANIFEST.json"],
            )
        ],
        "drift scan": [(["drift", "scan", str(CC), str(CODEX)], [])],
        "export": [(["export", str(CC), "--to", "dataset", "-j", "1"], [])],
        "usage": [
            (
                [
                    "usage",
                    "--harness",
                    "claude-code",
                    "--root",
                    str(home / ".claude" / "projects"),
                    "--by",
                    "day,model",
                    "--format",
                    "json",
                    "--no-cache",
                ],
                [],
            )
        ],
    }


def _same(
    a: subprocess.CompletedProcess[bytes],
    b: subprocess.CompletedProcess[bytes],
    a_dir: Path,
    b_dir: Path,
) -> None:
    """Equal exit status and output, but for the working folders they name and run times."""
    assert a.returncode == b.returncode

    def plain(text: bytes, where: Path) -> bytes:
        return re.sub(rb"\b\d+(\.\d+)? s\b", b"T s", text.replace(bytes(where), b"CWD"))

    for left, right in ((a.stdout, b.stdout), (a.stderr, b.stderr)):
        assert plain(left, a_dir) == plain(right, b_dir)


def _canon_manifest(data: bytes) -> object:
    """A manifest without the copy times, which differ between two runs."""
    doc = json.loads(data)
    for entry in doc.get("files", []):
        entry.pop("copied_at", None)
    doc.pop("updated_at", None)
    doc.pop("created_at", None)
    return doc


def test_every_command_runs_the_same_through_both_paths(tmp_path: Path) -> None:
    runs = real_runs(tmp_path)
    assert set(runs) == {c.path for c in COMMANDS}, "give every new command a real run here"
    for path, cases in runs.items():
        for i, (args, written) in enumerate(cases):
            a_dir, b_dir = tmp_path / "entry" / f"{path}{i}", tmp_path / "typer" / f"{path}{i}"
            a_dir.mkdir(parents=True)
            b_dir.mkdir(parents=True)
            a = run_entry(*args, cwd=a_dir)
            b = run_typer(*args, cwd=b_dir)
            assert a.returncode == 0, (args, a.stderr)
            _same(a, b, a_dir, b_dir)
            for name in written:
                left, right = (a_dir / name).read_bytes(), (b_dir / name).read_bytes()
                if name.endswith("MANIFEST.json"):
                    assert _canon_manifest(left) == _canon_manifest(right)
                else:
                    assert left
                    assert left == right


def refused_command_lines(command: Command) -> list[list[str]]:
    """Command lines the table says are wrong, one per kind of mistake it can name."""
    words = list(command.words)
    args = ["x.jsonl"] if any(a.required for a in command.arguments) else []
    lines = [[*words, "--no-such-option", *args], [*words, *args, "--format-x=1"]]
    if any(a.required for a in command.arguments) or any(o.required for o in command.options):
        lines.append(words)
    for opt in command.options:
        if opt.kind == "flag":
            lines.append([*words, f"{opt.long}=yes", *args])
        else:
            lines.append([*words, *args, opt.long])  # no value
        if opt.choices:
            lines.append([*words, opt.long, "nope", *args])
        if opt.convert is not None:
            lines.append([*words, opt.long, "-1x", *args])
        if opt.requires:
            lines.append([*words, opt.long, *([] if opt.kind == "flag" else ["v"]), *args])
    if any(not a.many for a in command.arguments):
        lines.append([*words, *args, "extra-argument"])
    return lines


def _in_process(
    main: object, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = main(argv)  # type: ignore[operator]
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.path)
def test_refused_command_lines_give_the_same_message_on_both_paths(
    command: Command, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentminutes.cli.app import main as typer_main

    for argv in refused_command_lines(command):
        code, out, err = _in_process(entry_main, argv, capsys)
        assert code == 2, (argv, err)
        assert (code, out, err) == _in_process(typer_main, argv, capsys), argv
        error, usage = err.splitlines()
        assert error.startswith("Error: "), err
        assert usage.startswith(f"Usage: agentminutes {command.path}"), err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.path)
def test_help_is_the_same_on_both_paths_and_shows_no_python_types(
    command: Command, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentminutes.cli.app import main as typer_main

    argv = [*command.words, "--help"]
    code, out, err = _in_process(entry_main, argv, capsys)
    assert (code, err) == (0, "")
    assert (code, out, err) == _in_process(typer_main, argv, capsys)
    assert out.startswith(f"Usage: agentminutes {command.path}")
    for python_ish in ("<str>", "<int>", "list[", "{", "None", "TEXT", "INTEGER"):
        assert python_ish not in out.split("\n\n", 1)[0] + _option_lines(out), python_ish
    for opt in command.options:
        if not opt.hidden:
            assert opt.long in out


def _option_lines(help_text: str) -> str:
    """The option and argument names of a help text (the left column), without descriptions."""
    return "\n".join(
        line.split("  ")[1] for line in help_text.splitlines() if line.startswith("  -")
    )


def test_root_help_version_and_unknown_commands_agree(capsys: pytest.CaptureFixture[str]) -> None:
    from agentminutes.cli.app import main as typer_main

    for argv in (
        [],
        ["--help"],
        ["--version"],
        ["drift"],
        ["drift", "--help"],
        ["nonsense"],
        ["drift", "nope"],
        ["--bogus"],
    ):
        assert _in_process(entry_main, argv, capsys) == _in_process(typer_main, argv, capsys), argv


def test_short_option_values_and_option_placement(tmp_path: Path) -> None:
    """``-o=F``, ``-oF`` and ``-o F`` all write F; options may follow the argument; ``--`` ends them."""
    expected = run_cli("convert", CC).stdout
    spellings = {"a.json": ["-o=a.json"], "b.json": ["-ob.json"], "c.json": ["-o", "c.json"]}
    spellings["d.json"] = ["--output=d.json"]
    for name, spelling in spellings.items():
        for run in (run_entry, run_typer) if name == "a.json" else (run_entry,):
            where = tmp_path / f"{run.__name__}-{name}"
            where.mkdir()
            proc = run("convert", str(CC), *spelling, cwd=where)
            assert proc.returncode == 0, proc.stderr
            assert [p.name for p in where.iterdir()] == [name]
            assert (where / name).read_bytes() == expected
    shutil.copy(CC, tmp_path / "-odd.jsonl")
    proc = run_entry("convert", "--format", "jsonl", "--", "-odd.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run_cli("convert", "--format", "jsonl", CC).stdout


def test_the_last_of_a_repeated_value_wins_and_lists_collect() -> None:
    from agentminutes.cli.parser import parse
    from agentminutes.cli.spec import COMMANDS

    convert = next(c for c in COMMANDS if c.path == "convert")
    values = parse(
        convert, ["--format", "json", "x", "--format=jsonl", "--promote", "a", "--promote=b"]
    )
    assert values["fmt"] == "jsonl"
    assert values["promote"] == ["a", "b"]
    assert values["transcripts"] == ["x"]
    # the word after an option that takes a value is its value, even if it starts with "-"
    assert parse(convert, ["--harness-version", "-1", "x"])["harness_version"] == "-1"


def bash_complete(words: str) -> list[str]:
    env = {
        **os.environ,
        "_AGENTMINUTES_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "agentminutes"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().split()


def test_shell_completion_offers_the_table() -> None:
    assert "convert" in bash_complete("agentminutes con")
    convert = next(c for c in COMMANDS if c.path == "convert")
    offered = bash_complete("agentminutes convert --")
    assert {o.long for o in convert.options if not o.hidden} <= set(offered)
    assert bash_complete("agentminutes convert --format ") == [
        "json",
        "jsonl",
        "acp",
        "otlp-json",
        "atif",
    ]
    assert "claude-code" in bash_complete("agentminutes stats --harness cl")
    assert bash_complete("agentminutes drift s") == ["scan"]
    # `--show-completion` names the shell it was run from (typer looks for it among the
    # parent processes), so it runs from bash as a user's would, whatever started pytest.
    # Two commands, so bash stays the parent instead of exec'ing the last one.
    script = subprocess.run(
        [
            "bash",
            "-c",
            '"$@"; exit $?',
            "bash",
            sys.executable,
            "-m",
            "agentminutes",
            "--show-completion",
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert script.returncode == 0, script.stderr
    assert b"_AGENTMINUTES_COMPLETE" in script.stdout
    assert b"complete " in script.stdout  # bash's script: what registers the function
