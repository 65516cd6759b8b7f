"""The lab's recordings (``fixtures/lab/<harness>/<version>/<scenario>/``) against their ground truth.

Each recording is a real harness CLI's transcript, written while it talked to the lab's
scripted model server, and the server's own record of what it billed and which tool calls
it asked for. No network and no harness CLI here: the files are read as they were written.

- every transcript converts strictly, auto-detected, with no ``unknown`` event; its tool
  calls are the scripted ones (names, order), each answered, the ones scripted to fail
  marked ``is_error``; ``agentminutes usage --by model`` equals the billed tokens
  (:func:`lab.check.check_recording`; what a harness records differently is declared there
  with its reason);
- ``agentminutes follow`` on the harness's folder, started before the transcript exists,
  prints for each transcript exactly the events ``convert`` prints, the transcript written
  line by line as the harness wrote it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from lab.check import (
    USAGE_ELSEWHERE,
    USAGE_EXCEPTIONS,
    check_recording,
    converted_events,
    main_transcripts,
)

from conftest import FIXTURES
from follow_helpers import FollowProc

LAB = FIXTURES / "lab"
RECORDINGS = sorted(p.parent for p in LAB.glob("*/*/*/ground_truth.json"))
#: The folder under HOME each line-format harness writes its transcripts into.
FOLLOWED = {
    "claude-code": ".claude/projects",
    "codex": ".codex/sessions",
    "qwen-code": ".qwen/projects",
    "gemini-cli": ".gemini/tmp",
    "pi": ".pi/agent/sessions",
    "copilot": ".copilot/session-state",
    "kimi": ".kimi/sessions",
    "droid": ".factory/sessions",
    "opencode": ".local/share/opencode",
}


def rec_id(folder: Path) -> str:
    """``harness/version/scenario``."""
    return str(folder.relative_to(LAB))


def test_every_harness_is_recorded_in_several_scenarios() -> None:
    by_harness: dict[str, set[str]] = {}
    for folder in RECORDINGS:
        harness, _version, scenario = folder.relative_to(LAB).parts
        by_harness.setdefault(harness, set()).add(scenario)
    assert len(by_harness) >= 6, sorted(by_harness)
    assert all(len(s) >= 3 for s in by_harness.values()), by_harness


@pytest.mark.parametrize("folder", RECORDINGS, ids=rec_id)
def test_recording_matches_its_ground_truth(folder: Path) -> None:
    truth = json.loads((folder / "ground_truth.json").read_text())
    note = json.loads((folder / "recording.json").read_text())
    assert truth["steps_used"] == truth["steps"], "the harness did not play the whole scenario"
    assert all(run["exit_code"] == 0 for run in note["runs"])
    result = check_recording(folder)
    assert result.problems == []
    assert result.figures["tool_calls"]["converted"] == len(truth["tool_calls"])
    if note["harness"] in USAGE_ELSEWHERE:
        assert "usage" not in result.figures
        return
    billed = result.figures["usage"]["billed"]  # less what a harness declares it does not record
    recorded = result.figures["usage"]["recorded"]
    exempt = USAGE_EXCEPTIONS.get(note["harness"], {})
    if "output_tokens" not in exempt:
        assert recorded["output_tokens"] == billed["output_tokens"] > 0


FOLLOW_CASES = [
    f
    for f in RECORDINGS
    if f.parts[-3] in FOLLOWED and f.name in ("tools", "second-prompt", "subagent")
]


@pytest.mark.parametrize("folder", FOLLOW_CASES, ids=rec_id)
def test_follow_on_the_home_prints_what_convert_prints(folder: Path, tmp_path: Path) -> None:
    harness = folder.parts[-3]
    home = folder / "home"
    root = tmp_path / FOLLOWED[harness]
    root.mkdir(parents=True)
    sources = main_transcripts(folder)
    want = {}
    for source in sources:
        events, error = converted_events(source)
        assert not error
        want[str(tmp_path / source.relative_to(home))] = events
    # A database is followed by its path (a folder's follow watches line transcripts); its
    # envelopes name the session after a '#'. That path must exist when follow starts (one
    # not there yet is taken for a line transcript, and a database then fails detection):
    # the database is in place first, as SQLite leaves it (its write-ahead log, then the
    # file, whole), and a folder's follower watches before its first file appears.
    single = sources[0].suffix == ".db"

    def place(source: Path) -> None:
        target = tmp_path / source.relative_to(home)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.suffix == ".db":
            wal = source.with_name(source.name + "-wal")
            if wal.exists():
                target.with_name(wal.name).write_bytes(wal.read_bytes())
            partial = target.with_name(target.name + ".part")
            partial.write_bytes(source.read_bytes())
            partial.rename(target)
            return
        with target.open("wb") as out:
            for line in source.read_bytes().splitlines(keepends=True):
                out.write(line)
                out.flush()

    if single:
        for source in sources:
            place(source)
    follower = FollowProc(tmp_path / sources[0].relative_to(home) if single else root)
    try:
        if not single:
            time.sleep(0.5)  # the follower's watch is set before the first file appears
            for source in sources:
                place(source)
        # A message's last event may be held until the transcript's end is known: the stop
        # releases it, as convert's end of file does.
        follower.wait_lines(sum(len(v) for v in want.values()) - len(want), timeout=60)
        follower.wait_quiet(0.5)
        assert follower.stop() == 0
    finally:
        follower.kill()
    got: dict[str, list[object]] = {}
    for envelope in follower.events:
        got.setdefault(envelope["transcript"].split("#")[0], []).append(envelope["event"])
    assert got == want
