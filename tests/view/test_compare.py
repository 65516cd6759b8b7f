"""``compare``: two runs of different harnesses side by side; every figure is ``stats``'s."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browser import Browser
from conftest import FIXTURES, run_cli
from session_home import build_home

CLAUDE = FIXTURES / "claude-code" / "fasthooks-main.jsonl"
PI = FIXTURES / "pi" / "constructed" / "v3-fork-tools.jsonl"
CODEX = FIXTURES / "codex" / "agent-sessions" / "codex_small_0.146.0.jsonl"


def _json(*args: str | Path) -> dict:
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_json_holds_each_runs_stats_and_usage() -> None:
    doc = _json("compare", "--format", "json", CLAUDE, PI, CODEX)
    assert [r["harness"] for r in doc["runs"]] == ["claude-code", "pi", "codex"]
    for run, path in zip(doc["runs"], (CLAUDE, PI, CODEX), strict=True):
        assert run["stats"] == _json("stats", "--format", "json", path)
        assert run["usage"] == _json("stats", "--usage", path)["usage"]
        assert sum(len(t) for t in run["tools_by_turn"]) == run["stats"]["tool_calls"]
        prompts = [
            json.loads(line)
            for line in run_cli("convert", "--format", "jsonl", path).stdout.splitlines()
        ]
        human = [e for e in prompts if (e.get("user_message") or {}).get("origin") == "human"]
        assert run["turns"] == len(human)
    div = doc["divergence"]
    assert (div["turn"], div["call"]) == (1, 0)
    assert (div["tools"][0][0], div["tools"][1][0]) == ("Bash", "grep")


def test_runs_that_chose_alike_do_not_diverge(tmp_path: Path) -> None:
    copy = tmp_path / "again.jsonl"
    copy.write_bytes(PI.read_bytes())
    doc = _json("compare", "--format", "json", PI, copy)
    assert doc["divergence"] is None
    assert doc["runs"][0]["stats"] == doc["runs"][1]["stats"]


def test_the_table_sets_the_figures_side_by_side() -> None:
    proc = run_cli("compare", "--format", "table", CLAUDE, PI)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode()
    doc = _json("compare", "--format", "json", CLAUDE, PI)
    rows = {line.strip().split("  ")[0]: line for line in text.splitlines() if line.strip()}
    a, b = (r["stats"] for r in doc["runs"])
    assert rows["tool calls"].split()[-2:] == [str(a["tool_calls"]), str(b["tool_calls"])]
    assert rows["tool errors"].split()[-2:] == [str(a["tool_errors"]), str(b["tool_errors"])]
    assert rows["result bytes"].split()[-2:] == [f"{a['result_bytes']:,}", f"{b['result_bytes']:,}"]
    assert rows["Bash"].split()[-2:] == [str(a["tool_calls_by_name"]["Bash"]), "0"]
    assert rows["turns"].split()[-2:] == [str(r["turns"]) for r in doc["runs"]]
    cost = doc["runs"][0]["usage"]["cost_usd"]
    assert f"${cost:,.4f}" in rows["cost"]
    assert "first divergence: turn 1, call 1" in text


def test_the_page_has_the_table_and_charts(tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    proc = run_cli("compare", "--html", page, CLAUDE, CODEX)
    assert proc.returncode == 0, proc.stderr
    doc = _json("compare", "--format", "json", CLAUDE, CODEX)
    with Browser() as browser:
        browser.open(page)
        assert browser.evaluate("document.querySelectorAll('svg').length") == 3
        cells = browser.evaluate(
            "Array.from(document.querySelectorAll('tr[data-row=\"tool calls\"] td'))"
            ".map(td => td.textContent)"
        )
        assert cells[1:] == [str(r["stats"]["tool_calls"]) for r in doc["runs"]]
        assert "first divergence" in browser.evaluate(
            "document.getElementById('divergence').textContent"
        )
        assert browser.errors() == []


def test_a_group_of_sessions_sums_their_stats(tmp_path: Path) -> None:
    home = build_home(tmp_path / "home")
    root = home / ".claude" / "projects"
    listed = run_cli(
        "sessions",
        "--harness",
        "claude-code",
        "--root",
        root,
        "--since",
        "2000-01-01",
        "--format",
        "jsonl",
    ).stdout.splitlines()
    refs = [json.loads(line) for line in listed]
    parents = [r["path"] for r in refs if not r["meta"].get("is_subagent")]
    doc = _json(
        "compare",
        "--format",
        "json",
        "--harness",
        "claude-code",
        "--root",
        root,
        "--since",
        "2000-01-01",
        PI,
    )
    group = doc["runs"][1]
    assert group["harness"] == "claude-code"
    assert sorted(group["paths"]) == sorted(parents)
    calls = sum(_json("stats", "--format", "json", p)["tool_calls"] for p in parents)
    assert group["stats"]["tool_calls"] == calls


def test_one_run_is_refused() -> None:
    proc = run_cli("compare", PI)
    assert proc.returncode == 1
    assert re.match(rb"Error: compare needs two runs or more", proc.stderr)


@pytest.mark.parametrize("bad", ["--format=xml"])
def test_bad_options_are_usage_errors(bad: str) -> None:
    proc = run_cli("compare", bad, PI, CLAUDE)
    assert proc.returncode == 2
