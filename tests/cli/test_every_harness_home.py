"""A home holding one real session of each harness, where each harness writes it.

``sessions``, ``usage --by harness`` and ``export --to DIR`` with no
``--harness`` search every harness's default folders, line transcripts and
document stores (an OpenCode database, a Cline task folder) alike: each
harness with a session here is listed, exported, and counted in usage where
its adapter records usage (exactly the harnesses ``usage --harness NAME``
finds tokens for, one at a time).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentminutes.harness.registry import harnesses
from session_home import FIXTURES

#: Each harness with a home folder: where its session goes under the home, and the
#: fixture it is (a file, or a folder copied whole).
HOME_SESSIONS: dict[str, tuple[str, str]] = {
    "antigravity": (
        ".gemini/antigravity-cli/brain/d580aa81-0e52-43cd-b1e3-5e02cfa04729"
        "/.system_generated/logs/transcript_full.jsonl",
        "antigravity/vibe-coding/cli-d580aa81/transcript_full.jsonl",
    ),
    "claude-code": (
        ".claude/projects/-Users-admin/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
        "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
    ),
    "amp": (
        ".local/share/amp/threads/T-019a4c1e-7d2b-7f3a-9c41-2e6b8d0f5a13.json",
        "amp/constructed/threads/T-019a4c1e-7d2b-7f3a-9c41-2e6b8d0f5a13.json",
    ),
    "cline": (".cline/data/tasks/1769064454592", "cline/1769064454592"),
    "codex": (
        ".codex/sessions/2026/06/19/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl",
        "codex/feipi/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl",
    ),
    "continue-cli": (
        ".continue/sessions/3c9f2a41-5b7d-4e08-9a6c-1d2e3f405162.json",
        "continue-cli/constructed/sessions/3c9f2a41-5b7d-4e08-9a6c-1d2e3f405162.json",
    ),
    "copilot": (
        ".copilot/session-state/aaaabbbb-1111-2222-3333-ccccddddeeee/events.jsonl",
        "copilot/agent-sessions/copilot_subdir_v1_events.jsonl",
    ),
    # Crush keeps its database in the project (listed in projects.json: written below).
    "crush": ("src/tally/.crush/crush.db", "crush/constructed/project/.crush/crush.db"),
    "cursor": (
        ".cursor/projects/home-dev-demo/agent-transcripts/6f1c2d7e-8a3b-4c5d-9e0f-1a2b3c4d5e6f",
        "cursor/constructed/projects/home-dev-demo/agent-transcripts/6f1c2d7e-8a3b-4c5d-9e0f-1a2b3c4d5e6f",
    ),
    "droid": (".factory/sessions/-home-dev-app/tools.jsonl", "droid/lab-0.225.2/tools.jsonl"),
    "gemini-cli": (
        ".gemini/tmp/ticketing-vc/chats/session-2026-04-25T08-23-e435870b.jsonl",
        "gemini-cli/vibe-comparison/session-2026-04-25T08-23-e435870b.jsonl",
    ),
    "goose": (".local/share/goose/sessions/sessions.db", "goose/constructed/sessions/sessions.db"),
    "hermes": (".hermes/state.db", "hermes/lab-0.19.0/tools-state.db"),
    "kimi": (
        ".kimi/sessions/5d41402abc4b2a76b9719d911017c592/6f3a1c2e-0b4d-4e5f-8a9b-0c1d2e3f4a5b"
        "/wire.jsonl",
        "kimi/lab-1.51.0/tools.wire.jsonl",
    ),
    "opencode": (".local/share/opencode/opencode.db", "opencode/constructed/opencode.db"),
    "openhands": (
        ".openhands/conversations/ce833f814d2045b9be295de049c1df6c",
        "openhands/lab-1.16.0/ce833f814d2045b9be295de049c1df6c",
    ),
    "pi": (
        ".pi/agent/sessions/--tmp-project--/2026-05-12T01-02-27-657Z_019e19b4-eb48-746a-aa6b-8dfcfa37954b.jsonl",
        "pi/agent-sessions/pi_small.jsonl",
    ),
    "qwen-code": (
        ".qwen/projects/-home-dev-app/chats/0a11ce00-0000-4000-8000-000000000001.jsonl",
        "qwen-code/constructed/0a11ce00-0000-4000-8000-000000000001.jsonl",
    ),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    for dest, source in HOME_SESSIONS.values():
        target, origin = home / dest, FIXTURES / source
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target)
        else:
            shutil.copyfile(origin, target)
    if "crush" in HOME_SESSIONS:  # Crush's global data folder lists each project's database
        data = (home / HOME_SESSIONS["crush"][0]).parent
        listing = {"projects": [{"path": str(data.parent), "data_dir": str(data)}]}
        (home / ".local/share/crush").mkdir(parents=True, exist_ok=True)
        (home / ".local/share/crush/projects.json").write_text(json.dumps(listing))
    return home


def _env(home: Path) -> dict[str, str]:
    # Every variable a harness declares as moving its folders is left out: the home decides.
    moved = {var for h in harnesses() for var in h.env}
    env = {k: v for k, v in os.environ.items() if k not in moved}
    env.update(HOME=str(home), TZ="UTC", XDG_CACHE_HOME=str(home / ".cache"))
    return env


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env=_env(home),
        cwd=home,
        timeout=300,
        check=False,
    )


def test_the_home_holds_every_harness_with_a_home_folder() -> None:
    with_home = {h.name for h in harnesses() if h.roots is not None}
    assert set(HOME_SESSIONS) == with_home, "give each harness with roots a session here"


def test_sessions_lists_every_harness(home: Path) -> None:
    p = _cli(home, "sessions", "--format", "json")
    assert p.returncode == 0, p.stderr
    listed = {ref["meta"]["harness"] for ref in json.loads(p.stdout)}
    assert listed == set(HOME_SESSIONS)


def _usage_rows(home: Path, *args: str) -> dict[str, int]:
    p = _cli(home, "usage", "--by", "harness", "--format", "json", "--no-cost", *args)
    assert p.returncode == 0, p.stderr
    return {row["harness"]: row["requests"] for row in json.loads(p.stdout)}


def test_usage_counts_every_harness_that_records_usage(home: Path) -> None:
    alone = {}
    for name in HOME_SESSIONS:
        rows = _usage_rows(home, "--harness", name)
        if rows.get(name):
            alone[name] = rows[name]
    # The document stores record usage too (the harnesses the home-wide default left out).
    assert {"claude-code", "codex", "cline", "opencode", "pi", "qwen-code"} <= set(alone)
    assert _usage_rows(home) == alone


def test_usage_of_the_home_as_a_folder_equals_the_scan_of_its_harnesses(home: Path) -> None:
    # The folder walked by name (databases and task folders too, each conversation of a
    # store once) finds what each harness's layout finds, token for token.
    def rows(*args: str) -> dict[str, dict[str, int]]:
        p = _cli(home, "usage", "--by", "harness", "--format", "json", "--no-cost", *args)
        assert p.returncode == 0, p.stderr
        assert "error" not in p.stderr.splitlines()[-1].replace(" 0 errors", ""), p.stderr
        return {
            row["harness"]: {k: v for k, v in row.items() if isinstance(v, int)}
            for row in json.loads(p.stdout)
        }

    scanned = rows("--no-cache")
    walked = rows("--no-cache", str(home))
    assert walked == scanned
    assert {"cline", "crush", "goose", "hermes", "opencode", "openhands"} <= set(walked)


def test_export_writes_every_harness(home: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    out = tmp_path / "dataset"
    p = _cli(home, "export", "--to", str(out))
    assert p.returncode == 0, p.stderr
    partitions = {d.name.removeprefix("harness=") for d in (out / "sessions").iterdir()}
    assert partitions == set(HOME_SESSIONS)
