"""Every option given a value it does not allow: exit 2, one ``Error:`` line, a ``Usage:`` hint.

The README promises it for a value not allowed, whoever judges the value:
the parser (choices, converters) or the command itself (``--by``, ``--to``,
``--promote``, ``--redact-pattern`` …). The test walks the command table, so
an option added without a bad value here (or a reason it has none) fails it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentminutes.cli import main as entry_main
from agentminutes.cli.spec import COMMANDS, Command
from conftest import FIXTURES

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"

#: A value each option refuses.
BAD = {
    "--harness": "claud",
    "--since": "yesterday",
    "--until": "tomorrow",
    "--tz": "Mars/Olympus_Mons",
    "--by": "dya",
    "--format": "xml",
    "--text-form": "raw",
    "--max-payload-bytes": "-1",
    "--idle-exit": "0",
    "--jobs": "many",
    "--limit": "ten",
    "--sort": "alphabet",
    "--promote": "codex:no-such-promotion",
    "--redact-pattern": "(unclosed",
}
#: Per command, bad values of options whose meaning differs there.
BAD_IN = {("follow", "--to"): "ftp://example.invalid"}
#: Options that take any text (an id, a version, a path: a missing file is an input
#: problem, exit 1, not a wrong command line).
FREE = {
    "--output",
    "--harness-version",
    "--conversation",
    "--paths-from",
    "--to-dir",
    "--redact-config",
    "--root",
    "--prices",
    "--state",
    "--cwd",
    "--session-id",
    "--cache-dir",
    "--archive",
    "--html",
    "--to",
}


def _needed(command: Command, tmp: Path) -> list[str]:
    """What the command needs besides the option under test: its required options, a file."""
    words = list(command.words)
    if command.path == "archive":
        words += ["--to", str(tmp / "archive"), "--cwd", "/nowhere"]
    elif any(o.long == "--to" and o.required for o in command.options):
        words += ["--to", str(tmp / "out")]
    if command.arguments and command.path not in ("sessions", "export", "usage", "follow"):
        words.append(str(CC))
    return words


def _cases() -> list[tuple[Command, str, str]]:
    cases = []
    for command in COMMANDS:
        for opt in command.options:
            if opt.kind == "flag":
                continue
            bad = BAD_IN.get((command.path, opt.long), BAD.get(opt.long))
            if bad is None:
                assert opt.long in FREE, f"{command.path} {opt.long}: give it a bad value here"
                continue
            if opt.long == "--harness" and command.path == "archive":
                bad = "auto"  # archive needs one harness's folders
            cases.append((command, opt.long, bad))
    return cases


@pytest.mark.parametrize(
    ("command", "flag", "bad"), _cases(), ids=lambda v: v.path if isinstance(v, Command) else v
)
def test_a_bad_value_is_exit_2_one_error_line_and_a_usage_hint(
    command: Command,
    flag: str,
    bad: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    words = _needed(command, tmp_path)
    if command.path == "archive" and flag == "--harness":
        words = [w for w in words if w != "--harness"]
    else:
        opt = command.by_flag[flag]
        required = [o.long for o in command.options if o.required and o.long != flag]
        if "--harness" in required:
            words += ["--harness", "claude-code"]
        if opt.requires and opt.requires not in words:
            needs = command.by_flag[opt.requires]
            words += [opt.requires] if needs.kind == "flag" else [opt.requires, "claude-code"]
    argv = [*words, flag, bad]
    code = entry_main(argv)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2, (argv, err)
    assert len(lines) == 2, (argv, err)
    assert lines[0].startswith("Error: "), (argv, err)
    assert flag in lines[0] or bad in lines[0], (argv, err)  # says which value is wrong
    assert lines[1].startswith(f"Usage: agentminutes {command.path}"), (argv, err)
    assert out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["usage", "--by", "dya"],
        ["usage", "--since", "yesterday"],
        ["convert", "--harness", "claud", "F"],
        ["stats"],
    ],
)
def test_the_issues_examples(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    code = entry_main(argv)
    _, err = capsys.readouterr()
    error, usage = err.splitlines()
    assert (code, error[:7], usage[:7]) == (2, "Error: ", "Usage: ")


def test_auto_means_every_harness_where_folders_are_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert entry_main(["sessions", "--harness", "auto"]) == 0
    auto = capsys.readouterr()
    assert entry_main(["sessions"]) == 0
    assert capsys.readouterr() == auto
