#!/usr/bin/env python3
"""Record the reference CLI's discovery output on the session tests' home.

Usage:
  python scripts/make_session_goldens.py --ref /tmp/ref/bin/agentminutes

Builds the temporary home of ``fixtures/sessions/home.tsv`` (the same one the
tests build, via tests/session_home.py), runs the reference (agentminutes
0.8.0, installed apart from this project) with ``HOME`` set to it, ``TZ=UTC``
and no relocation variables, once per case in CASES, and writes
``fixtures/sessions/golden.json``: per case its arguments, stdout, stderr and
exit status, with the home's path written ``$HOME``. The tests compare our
records with these as JSON values; they never run the reference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from session_home import GOLDEN, build_home  # noqa: E402

EF958 = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
CLAUDE = "$HOME/.claude/projects"
CODEX = "$HOME/.codex/sessions"
CODEX_PARENT = (
    f"{CODEX}/2026/04/30/rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl"
)
CODEX_CHILD = "c0000001-0000-7000-8000-000000000001"
FEIPI = "/Users/zhehan/Documents/tools/llm/feipi-session-browser"

#: name -> arguments (``$HOME`` stands for the home).
CASES: dict[str, list[str]] = {
    "all": ["sessions", "--format", "jsonl"],
    "all-paths": ["sessions"],
    "all-json": ["sessions", "--format", "json"],
    "claude": ["sessions", "--harness", "claude-code", "--format", "jsonl"],
    "claude-cwd": ["sessions", "--harness", "claude-code", "--format", "jsonl", "--cwd", "/Users/admin"],
    "all-cwd-unclean": ["sessions", "--format", "jsonl", "--cwd", "/Users/marklin/./workspace/"],
    "claude-id": ["sessions", "--harness", "claude-code", "--format", "jsonl", "--session-id", EF958],
    "claude-id-missing": ["sessions", "--harness", "claude-code", "--session-id", "nope"],
    "claude-id-invalid": ["sessions", "--harness", "claude-code", "--session-id", "a/b"],
    "all-subagent-id": ["sessions", "--format", "jsonl", "--session-id", "a36efb2a1231c41e2"],
    "all-orphan-id": ["sessions", "--format", "jsonl", "--session-id", "aef063ba534d73153"],
    "claude-since": ["sessions", "--harness", "claude-code", "--format", "jsonl", "--since", "2026-01-10"],
    "claude-until": ["sessions", "--harness", "claude-code", "--format", "jsonl", "--until", "2026-01-02"],
    "claude-window": [
        "sessions", "--harness", "claude-code", "--format", "jsonl",
        "--since", "2026-01-16T00:00:00Z", "--until", "2026-03-01T00:00:00+01:00",
    ],
    "claude-id-window": [
        "sessions", "--harness", "claude-code", "--format", "jsonl",
        "--session-id", EF958, "--since", "2026-01-01",
    ],
    "claude-root": ["sessions", "--harness", "claude-code", "--format", "jsonl", "--root", CLAUDE + "/"],
    "copilot": ["sessions", "--harness", "copilot", "--format", "jsonl"],
    "antigravity": ["sessions", "--harness", "antigravity", "--format", "jsonl"],
    "task-ef958": ["stats", "--include-subagents", f"{CLAUDE}/-experiments-worktrees/{EF958}.jsonl"],
    "task-claudeless": [
        "stats", "--include-subagents",
        f"{CLAUDE}/-private-claudeless/8aa54c1d-5030-4491-be42-e0c416424b8a.jsonl",
    ],
    "task-workflow": [
        "stats", "--include-subagents",
        f"{CLAUDE}/-workflow-basic/11110000-0000-4000-8000-000000000001.jsonl",
    ],
    "codex": ["sessions", "--harness", "codex", "--format", "jsonl"],
    "codex-since": ["sessions", "--harness", "codex", "--format", "jsonl", "--since", "2026-01-01"],
    "codex-until": ["sessions", "--harness", "codex", "--format", "jsonl", "--until", "2025-12-31"],
    "codex-window": [
        "sessions", "--harness", "codex", "--format", "jsonl",
        "--since", "2026-04-01T00:00:00Z", "--until", "2026-06-19T04:00:00Z",
    ],
    "codex-cwd": ["sessions", "--harness", "codex", "--format", "jsonl", "--cwd", FEIPI],
    "codex-id": [
        "sessions", "--harness", "codex", "--format", "jsonl",
        "--session-id", "019edda8-7eca-7710-b78b-6ce7607beaa1",
    ],
    "codex-subagent-id": [
        "sessions", "--harness", "codex", "--format", "jsonl", "--session-id", CODEX_CHILD,
    ],
    "all-codex-subagent-id": ["sessions", "--format", "jsonl", "--session-id", CODEX_CHILD],
    "task-codex": ["stats", "--include-subagents", CODEX_PARENT],
    "task-antigravity": [
        "stats", "--include-subagents",
        "$HOME/.gemini/antigravity-cli/brain/parent-1/.system_generated/logs/transcript_full.jsonl",
    ],
    "task-codex-root": ["stats", "--include-subagents", "--root", CODEX + "/2026", CODEX_PARENT],
}  # fmt: skip

_RELOCATION = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "GEMINI_CLI_HOME")


def run(ref: str, home: Path, args: list[str]) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in _RELOCATION}
    env.update(HOME=str(home), TZ="UTC")
    argv = [ref, *(a.replace("$HOME", str(home)) for a in args)]
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=home, check=False)

    def rel(text: str) -> str:
        return text.replace(str(home), "$HOME")

    return {"args": args, "stdout": rel(p.stdout), "stderr": rel(p.stderr), "rc": p.returncode}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ref", required=True, help="path of the reference agentminutes binary")
    a = ap.parse_args()
    version = subprocess.run(
        [a.ref, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        home = build_home(Path(tmp) / "home")
        cases = {name: run(a.ref, home, args) for name, args in CASES.items()}
    GOLDEN.write_text(
        json.dumps({"reference": version, "cases": cases}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    print(f"{len(cases)} reference runs written to {GOLDEN.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
