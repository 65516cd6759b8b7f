"""Drivers: how to install, configure and run one harness CLI against the lab's server.

A driver is a :class:`Driver` subclass in its own module here, listed in :func:`_registry` (one import and one name).
It says where the package comes from (``npm`` or ``pypi``), which executable it installs,
which wire protocol it speaks, the environment and config files that point it at the server
with every outside call off, the command line for each prompt (the first, and the later
ones that resume the session), how a scenario's abstract tool calls are named for it
(:meth:`Driver.name_tool`), and where under HOME it writes its transcripts.
:mod:`lab.record` does the rest (server, temporary HOME, running, collecting).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from lab.scenario import ToolCall

#: Where pinned harness releases are installed: ``<cache>/<harness>/<version>/``.
CACHE = Path(os.environ.get("AGENTMINUTES_LAB_CACHE", Path.home() / ".cache" / "agentminutes-lab"))

#: The dummy key every driver hands its harness: the server accepts anything.
DUMMY_KEY = "sk-lab-dummy-key-0000000000000000"


@dataclass
class Run:
    """Where one recording runs: the temporary HOME and working folder, the server's URL."""

    home: Path
    work: Path
    url: str
    version: str
    executable: Path


class Driver:
    """One harness CLI. Subclasses fill in the class attributes and override what differs."""

    #: agentminutes' harness name (the fixture folder, ``--harness``).
    harness: ClassVar[str]
    #: ``npm`` or ``pypi``.
    registry: ClassVar[str] = "npm"
    package: ClassVar[str]
    #: The executable the package installs.
    executable: ClassVar[str]
    #: The release recorded by default (the newest when it was last recorded).
    pinned: ClassVar[str]
    #: The server route family it speaks (a :mod:`lab.wire` module's ``NAME``).
    protocol: ClassVar[str]
    #: Globs under HOME of the files to collect, exactly as written.
    transcripts: ClassVar[tuple[str, ...]]
    #: The folder under HOME ``agentminutes follow`` watches for this harness (``None``: not
    #: followed by the lab's latency script).
    follows: ClassVar[str | None] = None
    #: Globs under HOME of the sources to convert, when not every collected file is one
    #: (a database's WAL is collected beside it, converted with it).
    sources: ClassVar[tuple[str, ...] | None] = None
    #: Features a scenario may need (``resume``: a second prompt continues the session).
    features: ClassVar[tuple[str, ...]] = ("resume",)
    #: Seconds one prompt may take.
    timeout: ClassVar[float] = 180.0
    #: The Python a PyPI harness needs (``"3.13"``), when newer than the one running the lab.
    python: ClassVar[str] = ""

    def install(self, version: str) -> Path:
        """The executable of ``version``, installed into :data:`CACHE` first if missing."""
        prefix = CACHE / self.harness / version
        if self.registry == "npm":
            exe = prefix / "node_modules" / ".bin" / self.executable
            if not exe.exists():
                prefix.mkdir(parents=True, exist_ok=True)
                if not (prefix / "package.json").exists():
                    (prefix / "package.json").write_text('{"private": true}\n')
                subprocess.run(
                    [
                        "npm",
                        "install",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                        f"{self.package}@{version}",
                    ],
                    cwd=prefix,
                    check=True,
                )
            return exe
        exe = prefix / "bin" / self.executable
        if not exe.exists():
            subprocess.run([self.interpreter(), "-m", "venv", str(prefix)], check=True)
            subprocess.run(
                [str(prefix / "bin" / "pip"), "install", "-q", f"{self.package}=={version}"],
                check=True,
            )
        return exe

    def interpreter(self) -> str:
        """The Python that makes a PyPI harness's venv: :attr:`python` if set, else this one.

        ``python3.X`` on PATH, else under pyenv's root (``$PYENV_ROOT``, ``~/.pyenv``): the
        first that runs and has ``venv``.
        """
        if not self.python or sys.version_info[:2] >= tuple(map(int, self.python.split("."))):
            return sys.executable
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        candidates = [shutil.which(f"python{self.python}")] + [
            str(v / "bin" / f"python{self.python}")
            for v in sorted(pyenv.glob(f"{self.python}.*"), reverse=True)
        ]
        for exe in candidates:
            # pyenv's shim is on PATH for every version it knows, and fails (127) for one
            # that is installed but not selected: a candidate counts once it runs.
            if exe and os.path.exists(exe) and _runs(exe):
                return exe
        raise RuntimeError(
            f"{self.package} needs Python {self.python}: none found on PATH or in pyenv"
        )

    def newest(self) -> str:
        """The registry's newest release (``npm view``, or PyPI's JSON API through pip)."""
        if self.registry == "npm":
            out = subprocess.run(
                ["npm", "view", self.package, "version"], capture_output=True, text=True, check=True
            )
            return out.stdout.strip().splitlines()[-1]
        out = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", self.package],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.split("(", 1)[1].split(")", 1)[0]

    def env(self, run: Run) -> dict[str, str]:
        """The harness's own variables (base URL, key, telemetry off), on top of :func:`base_env`."""
        return {}

    def prepare(self, run: Run) -> None:
        """Write config files under ``run.home`` before the first prompt."""

    def command(self, run: Run, prompt: str, index: int) -> list[str]:
        """The command line for prompt ``index`` (0: the first; later ones resume)."""
        raise NotImplementedError

    def name_tool(self, run: Run, call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
        """The harness's tool name and arguments for a scenario's abstract call."""
        raise NotImplementedError

    def is_side(self, view: Any, body: dict[str, Any]) -> bool:
        """Whether a request is outside the conversation (default: the wire's own guess)."""
        return bool(view.side)


def base_env(run: Run) -> dict[str, str]:
    """The environment every harness starts from: nothing inherited but PATH and the locale.

    HOME, the XDG folders and TMPDIR point into the temporary root, so no harness reads or
    writes the real user's files, and no credential of the machine's reaches it.
    """
    root = run.home.parent
    (root / "tmp").mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "HOME": str(run.home),
        "USERPROFILE": str(run.home),
        "XDG_CONFIG_HOME": str(run.home / ".config"),
        "XDG_DATA_HOME": str(run.home / ".local" / "share"),
        "XDG_CACHE_HOME": str(run.home / ".cache"),
        "XDG_STATE_HOME": str(run.home / ".local" / "state"),
        "TMPDIR": str(root / "tmp"),
        # Node: no update notices, no npm registry lookups from inside the harness.
        "NO_UPDATE_NOTIFIER": "1",
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "DO_NOT_TRACK": "1",
        "CI": "1",
    }


def write_json(path: Path, value: Any) -> None:
    """Write a config file (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2) + "\n")


def node_available() -> bool:
    """Whether npm is on PATH (the npm drivers need it to install)."""
    return shutil.which("npm") is not None


def _registry() -> dict[str, type[Driver]]:
    from lab.drivers.aider import Aider
    from lab.drivers.claude_code import ClaudeCode
    from lab.drivers.cline import Cline
    from lab.drivers.codex import Codex
    from lab.drivers.continue_cli import ContinueCli
    from lab.drivers.copilot import Copilot
    from lab.drivers.droid import Droid
    from lab.drivers.gemini_cli import GeminiCli
    from lab.drivers.hermes import Hermes
    from lab.drivers.kimi import Kimi
    from lab.drivers.opencode import OpenCode
    from lab.drivers.openhands import OpenHands
    from lab.drivers.pi import Pi
    from lab.drivers.qwen_code import QwenCode

    found: list[type[Driver]] = [
        ClaudeCode,
        Codex,
        QwenCode,
        GeminiCli,
        OpenCode,
        Pi,
        Copilot,
        Cline,
        Kimi,
        Droid,
        ContinueCli,
        Hermes,
        OpenHands,
        Aider,
    ]
    return {d.harness: d for d in found}


def drivers() -> dict[str, type[Driver]]:
    """Every driver by harness name."""
    return _registry()


def driver(harness: str) -> Driver:
    """The driver for ``harness`` (its agentminutes name)."""
    found = _registry().get(harness)
    if found is None:
        raise KeyError(f"no lab driver for {harness!r} (have: {', '.join(sorted(_registry()))})")
    return found()


def _runs(exe: str) -> bool:
    """Whether the Python at *exe* starts and can make a venv."""
    try:
        return (
            subprocess.run([exe, "-c", "import venv"], capture_output=True, check=False).returncode
            == 0
        )
    except OSError:
        return False
