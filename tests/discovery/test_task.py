"""Task-scope statistics (``stats --include-subagents``) against the reference's output.

The cases run on the home of ``fixtures/sessions/home.tsv``; the expected
outputs are the reference CLI's (``fixtures/sessions/golden.json``, made by
scripts/make_session_goldens.py), compared as JSON values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentminutes
from agentminutes.discovery.task import aggregate
from agentminutes.errors import ScanError, UsageError
from agentminutes.schema import Stats, TaskTranscript
from conftest import FIXTURES, canon
from session_home import GOLDEN, build_home

GOLDENS: dict[str, dict[str, Any]] = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]
TASK_CASES = sorted(k for k, v in GOLDENS.items() if v["args"][0] == "stats")
WORKFLOW = ".claude/projects/-workflow-basic/11110000-0000-4000-8000-000000000001.jsonl"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_home(tmp_path_factory.mktemp("task") / "home")


def _as_json(value: Any) -> Any:
    return json.loads(msgspec.json.encode(value))


def _run(args: list[str], home: Path) -> agentminutes.TaskStats:
    argv = [a.replace("$HOME", str(home)) for a in args[1:]]
    root = argv[argv.index("--root") + 1] if "--root" in argv else None
    return agentminutes.task_stats_sync(
        argv[-1], root=root, permissive="--permissive" in argv, env={"HOME": str(home)}
    )


@pytest.mark.parametrize("name", TASK_CASES)
def test_equals_the_reference(name: str, home: Path) -> None:
    case = GOLDENS[name]
    expected = json.loads(case["stdout"].replace("$HOME", str(home)))
    ours = _as_json(_run(case["args"], home))
    # A skipped candidate's reason quotes the JSON decoder, whose words are Go's there.
    for skip in [*ours.get("skipped", []), *expected.get("skipped", [])]:
        skip["reason"] = skip["reason"].split(" invalid JSON: ")[0]
    assert canon(ours) == canon(expected)


def test_cli_output_and_the_nested_note(home: Path) -> None:
    case = GOLDENS["task-workflow"]
    env = {**os.environ, "HOME": str(home), "TZ": "UTC"}
    argv = [a.replace("$HOME", str(home)) for a in case["args"]]
    p = subprocess.run(
        [sys.executable, "-m", "agentminutes", *argv], capture_output=True, text=True, env=env
    )
    assert p.returncode == 0
    expected = json.loads(case["stdout"].replace("$HOME", str(home)))
    assert canon(json.loads(p.stdout)) == canon(expected)
    assert p.stdout.startswith('{\n  "agentminutes_schema": "0.2.0",\n  "harness": "claude-code",')
    assert p.stderr == (
        "agentminutes: note: 3 subagent transcripts nested below subagents/ (workflow agents) "
        "are not counted; --all-subagents adds them\n"
    )
    out = home.parent / "task.json"
    p = subprocess.run(
        [sys.executable, "-m", "agentminutes", *argv, "--all-subagents", "-o", str(out)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert (p.returncode, p.stdout, p.stderr) == (0, "", "")
    assert len(json.loads(out.read_text())["transcripts"]) == 4


def test_all_subagents_counts_the_workflow_agents_once(home: Path) -> None:
    task = agentminutes.task_stats_sync(home / WORKFLOW, all_subagents=True)
    assert [t.subagent_id for t in task.transcripts] == ["", "ag000001", "ag000002", "ag000003"]
    parts = [t.stats for t in task.transcripts]
    assert task.task.events == sum(s.events for s in parts)
    assert task.task.tool_calls == sum(s.tool_calls for s in parts)
    assert task.task.by_agent is not None
    assert sorted(task.task.by_agent) == ["", "ag000001", "ag000002", "ag000003"]
    assert sum(a.events for a in task.task.by_agent.values()) == task.task.events
    assert task.task.final_answer == parts[0].final_answer
    single = agentminutes.task_stats_sync(home / WORKFLOW)
    assert len(single.transcripts) == 1
    assert single.task.by_agent is None
    assert _as_json(single.task) == _as_json(single.transcripts[0].stats) | {}


def test_inline_subagents_keep_the_parents_split(tmp_path: Path) -> None:
    # The reference's verified example: Copilot records stamped agentId on lines 5-7.
    lines = (
        (FIXTURES / "copilot/agent-sessions/copilot_small_0.0.420.jsonl").read_text().splitlines()
    )
    for i in (4, 5, 6):
        lines[i] = json.dumps({**json.loads(lines[i]), "agentId": "agent-x"})
    path = tmp_path / "cp_sub.jsonl"
    path.write_text("\n".join(lines) + "\n")
    task = agentminutes.task_stats_sync(path)
    assert (task.join, task.session_id, len(task.transcripts)) == (
        "inline",
        "copilot_stage0_small",
        1,
    )
    split = {
        "": {"events": 5, "assistant_messages": 0, "tool_calls": 0},
        "agent-x": {
            "events": 4,
            "assistant_messages": 2,
            "tool_calls": 1,
            "tool_calls_by_name": {"bash": 1},
            "tool_calls_by_kind": {"execute": 1},
        },
    }
    assert _as_json(task.transcripts[0].stats.by_agent) == split
    assert _as_json(task.task.by_agent) == split


def test_errors(home: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="needs a transcript path, not stdin"):
        agentminutes.task_stats_sync("-")
    garbage = home / ".claude/projects/-x-proj/empty.jsonl"
    with pytest.raises(ScanError, match=f"claude-code: {garbage}: no events in transcript"):
        agentminutes.task_stats_sync(garbage, harness="claude-code")
    p = subprocess.run(
        [sys.executable, "-m", "agentminutes", "stats", "--include-subagents", "-"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (p.returncode, p.stderr) == (
        1,
        "Error: --include-subagents needs a transcript path, not stdin\n",
    )


def test_aggregate_adds_usage_and_takes_the_extremes() -> None:
    from agentminutes.schema import AgentStats, TokenUsage

    def stats(events: int, start: str, end: str, usage: int, answer: str) -> Stats:
        return Stats(
            events=events,
            event_counts={"assistant_message": 1, "session_meta": 1},
            user_messages=1,
            tool_calls=0,
            result_bytes=0,
            models=["m-" + answer],
            totals=TokenUsage(input_tokens=usage, output_tokens=1, cache_read_input_tokens=2),
            start_time=start,
            end_time=end,
            final_answer=answer,
        )

    parts = [
        TaskTranscript(
            path="p", stats=stats(3, "2026-01-01T00:00:10Z", "2026-01-01T00:01:00Z", 5, "a")
        ),
        TaskTranscript(
            path="s",
            subagent_id="x",
            is_subagent=True,
            stats=stats(2, "2026-01-01T00:00:05+00:00", "2026-01-01T00:02:00.5Z", 7, "b"),
        ),
    ]
    task = aggregate(parts, "claude-code")
    assert (task.events, task.user_messages) == (5, 2)
    assert task.totals == TokenUsage(
        input_tokens=12, output_tokens=2, cache_read_input_tokens=4, total_prompt_tokens=16
    )
    assert (task.start_time, task.end_time, task.wall_time_ms) == (
        "2026-01-01T00:00:05+00:00",
        "2026-01-01T00:02:00.5Z",
        115_500,
    )
    assert (task.final_answer, task.models) == ("a", ["m-a", "m-b"])
    assert task.by_agent == {
        "": AgentStats(
            events=3,
            assistant_messages=1,
            tool_calls=0,
            models=["m-a"],
            totals=TokenUsage(
                input_tokens=5, output_tokens=1, cache_read_input_tokens=2, total_prompt_tokens=7
            ),
        ),
        "x": AgentStats(
            events=2,
            assistant_messages=1,
            tool_calls=0,
            models=["m-b"],
            totals=TokenUsage(
                input_tokens=7, output_tokens=1, cache_read_input_tokens=2, total_prompt_tokens=9
            ),
        ),
    }
