"""Adding a harness is one folder and one registry line: a made-up harness proves it.

``tests/toyharness/`` is a harness that exists only in the test suite: a tiny
JSONL format, its adapter, its description (roots moved by ``TOY_HOME``, the
generic file layout, usage and prompt rules, a drift vocabulary and
baseline). Registered with one call, standing in for the registry line, and
nothing else edited, every command reads it: ``convert``, ``stats``,
``detect``, ``sessions``, ``usage``, ``follow``, ``export`` and ``drift``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentminutes.cli import main
from agentminutes.harness.registry import extend, forget, harnesses

SAMPLE = Path(__file__).resolve().parent / "toyharness" / "sample.jsonl"


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The toy harness registered, and a home holding one toy session where it writes."""
    extend("toyharness")
    try:
        for var in {v for h in harnesses() for v in h.env}:
            monkeypatch.delenv(var, raising=False)
        home = tmp_path / "home"
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        monkeypatch.setenv("TZ", "UTC")
        session = home / ".toy" / "sessions" / "work-app" / "toy-0001.jsonl"
        session.parent.mkdir(parents=True)
        shutil.copyfile(SAMPLE, session)
        yield session
    finally:
        forget("toyharness")


def run(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI run in this process (where the toy is registered): exit, stdout, stderr."""
    code = main(list(args))
    out, err = capfd.readouterr()
    return code, out, err


def test_the_toy_is_registered_only_while_the_test_runs(toy: Path) -> None:
    assert "toy" in [h.name for h in harnesses()]


def test_convert_and_detect(toy: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capfd, "detect", str(toy))
    assert code == 0, err
    assert out.startswith("toy\t")
    code, out, err = run(capfd, "convert", "--format", "jsonl", str(toy))
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["kind"] for e in events] == [
        "session_meta",
        "user_message",
        "assistant_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]
    assert events[0]["session_meta"]["harness"] == "toy"
    assert events[4]["tool_result"]["tool_name"] == "read"


def test_stats_sums_the_prompt_by_the_toy_s_rule(
    toy: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capfd, "stats", str(toy))
    assert code == 0, err
    stats = json.loads(out)
    totals = stats["totals"]
    assert (totals["input_tokens"], totals["output_tokens"]) == (135, 38)
    # prompt="all": input plus the cache reads
    assert totals["total_prompt_tokens"] == 135 + 920
    assert stats["models"] == ["toy-large"]
    code, out, err = run(capfd, "convert", str(toy))
    assert code == 0, err
    assert json.loads(out)["report"]["skipped_records"] == {"note": 1}


def test_sessions_finds_it_in_its_home_folder(
    toy: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for args in ((), ("--harness", "toy")):
        code, out, err = run(capfd, "sessions", "--format", "json", *args)
        assert code == 0, err
        toys = [r for r in json.loads(out) if r["meta"]["harness"] == "toy"]
        assert [(r["meta"]["session_id"], r["path"]) for r in toys] == [("toy-0001", str(toy))]
    # TOY_HOME moves it, as the description declares.
    moved = toy.parent.parent.parent / "moved"
    shutil.copytree(toy.parent.parent, moved / "sessions")
    monkeypatch.setenv("TOY_HOME", str(moved))
    code, out, err = run(capfd, "sessions", "--format", "json", "--harness", "toy")
    assert code == 0, err
    assert [r["path"] for r in json.loads(out)] == [str(moved / "sessions" / "work-app" / toy.name)]


def test_usage_counts_it(toy: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capfd, "usage", "--by", "harness", "--format", "json", "--no-cost")
    assert code == 0, err
    rows = {r["harness"]: r for r in json.loads(out)}
    assert rows["toy"]["requests"] == 2
    assert rows["toy"]["otel"]["input_tokens"] == 135 + 920  # input excludes the cache


def test_follow_writes_what_convert_writes(toy: Path, capfd: pytest.CaptureFixture[str]) -> None:
    code, converted, err = run(capfd, "convert", "--format", "jsonl", str(toy))
    assert code == 0, err
    code, followed, err = run(capfd, "follow", "--idle-exit", "0.3", str(toy))
    assert code == 0, err
    assert followed == converted


def test_export_writes_its_partition(
    toy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyarrow")
    out_dir = tmp_path / "dataset"
    code, _, err = run(capfd, "export", "--harness", "toy", "--jobs", "1", "--to", str(out_dir))
    assert code == 0, err
    assert [d.name for d in (out_dir / "sessions").iterdir()] == ["harness=toy"]


def test_drift_compares_it_with_its_baseline(
    toy: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capfd, "drift", "scan", str(toy))
    assert code == 0, err
    drifted = tmp_path / "drifted.jsonl"
    extra = '{"t":"tool","id":"c-2","name":"grep","args":{},"at":"2026-03-01T10:00:07Z"}\n'
    drifted.write_text(SAMPLE.read_text(encoding="utf-8") + extra, encoding="utf-8")
    code, out, _ = run(capfd, "drift", "scan", str(drifted))
    assert code == 1
    assert "grep" in out
