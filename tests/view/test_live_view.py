"""``follow`` on a terminal and ``view --follow``: the events laid out to read, live; in a pipe,
``follow`` stays the JSONL it always was."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import FIXTURES, run_cli

SOURCE = FIXTURES / "claude-code" / "fasthooks-main.jsonl"


def test_piped_follow_is_jsonl_as_before() -> None:
    followed = run_cli("follow", "--idle-exit", "0.5", SOURCE)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout == run_cli("convert", "--format", "jsonl", SOURCE).stdout


class Terminal:
    """A command on a pseudo-terminal, read as it writes."""

    def __init__(self, *args: str | Path) -> None:
        self.controller, terminal = pty.openpty()
        env = {**os.environ, "COLUMNS": "110", "TERM": "xterm"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentminutes", *map(str, args)],
            stdin=terminal,
            stdout=terminal,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        os.close(terminal)
        self.seen = b""

    def read_until(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.plain() and time.monotonic() < deadline:
            ready, _, _ = select.select([self.controller], [], [], 0.2)
            if ready:
                try:
                    self.seen += os.read(self.controller, 65536)
                except OSError:
                    break
        return self.plain()

    def plain(self) -> str:
        return re.sub(r"\x1b\[[0-9;]*m", "", self.seen.decode("utf-8", "replace"))

    def close(self) -> int:
        code = self.proc.wait(timeout=30)
        os.close(self.controller)
        return code


def _grow(path: Path, lines: list[str]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for line in lines:
            f.write(line)
            f.flush()
            time.sleep(0.01)


def test_follow_on_a_terminal_shows_the_session_as_it_grows(tmp_path: Path) -> None:
    lines = SOURCE.read_text(encoding="utf-8").splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_text("".join(lines[:8]), encoding="utf-8")
    term = Terminal("follow", "--idle-exit", "3", live)
    first = term.read_until("● Bash")
    assert "turn 1" in first
    assert "can you run a command ls -la" in first
    assert "hello_world.py" not in first  # not written yet
    _grow(live, lines[8:])
    shown = term.read_until("turn 8", timeout=30)
    assert term.close() == 0
    assert "● Write" in shown
    assert "└ Write: File created successfully" in shown
    assert "✗ error" in shown
    assert '{"kind"' not in shown


def test_view_follow_stops_at_ctrl_c(tmp_path: Path) -> None:
    live = tmp_path / "live.jsonl"
    live.write_bytes(SOURCE.read_bytes())
    term = Terminal("view", "--follow", live)
    shown = term.read_until("turn 8")
    assert "● Read" in shown
    term.proc.send_signal(signal.SIGINT)
    assert term.close() == 0


def test_piped_follow_loads_no_rich() -> None:
    probe = (
        "import sys\n"
        "from agentminutes.cli import main\n"
        "main(sys.argv[1:])\n"
        "sys.stdout.flush()\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "follow", "--idle-exit", "0.2", str(SOURCE)],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.stdout  # the events
    modules = set(proc.stderr.decode().splitlines()[-1].split())
    assert not {m for m in modules if m.split(".")[0] in ("rich", "typer", "click")}
    assert "agentminutes.view.terminal" not in modules
