"""``agentminutes usage`` for real: a home of every harness's folders, the CLI in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import agentminutes
from agentminutes.schema import TokenUsage, to_builtins
from agentminutes.schema.usage import otel_usage
from session_home import FIXTURES, build_home


def _cli(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(home), TZ="UTC", XDG_CACHE_HOME=str(home / ".cache"))
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return build_home(tmp_path / "home")


def _rows(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def _codex_expected(path: Path) -> tuple[int, int, int] | None:
    """Per-request counts from the cumulative counters, read straight from the rollout."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        payload = rec.get("payload") or {} if isinstance(rec, dict) else {}
        if rec.get("type") == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info") or {}
            if info.get("total_token_usage"):
                rows.append(info)
    if not rows:
        return None
    first, final = rows[0], rows[-1]["total_token_usage"]
    out = [
        final[k] - first["total_token_usage"][k] + first["last_token_usage"][k]
        for k in ("input_tokens", "output_tokens", "cached_input_tokens")
    ]
    return out[0], out[1], out[2]


def test_usage_by_transcript_equals_convert_totals_file_by_file(home: Path) -> None:
    proc = _cli(home, "usage", "--by", "transcript,harness", "--format", "json", "--no-cost")
    rows = {r["transcript"]: r for r in _rows(proc)}
    assert {r["harness"] for r in rows.values()} >= {"claude-code", "codex", "gemini-cli", "pi"}
    checked = 0
    for path, row in rows.items():
        try:  # what convert writes as the session's totals
            session = agentminutes.load(path, permissive=True)
        except agentminutes.AgentminutesError:
            continue
        totals = to_builtins(session.totals) if session.totals is not None else None
        if totals is None:
            assert row["requests"] == 0, path
            continue
        raw = (row["input_tokens"], row["output_tokens"], row["cache_read_input_tokens"])
        harness = row["harness"]
        codex = _codex_expected(Path(path)) if harness == "codex" else None
        if codex is not None:
            # Codex: each request once (re-emitted token_count records are not added again).
            assert raw == codex, path
        else:
            assert raw == (
                totals["input_tokens"],
                totals["output_tokens"],
                totals.get("cache_read_input_tokens", 0),
            ), path
            assert row["cache_creation_input_tokens"] == totals.get(
                "cache_creation_input_tokens", 0
            )
            usage = TokenUsage(
                input_tokens=totals["input_tokens"],
                output_tokens=totals["output_tokens"],
                cache_read_input_tokens=totals.get("cache_read_input_tokens", 0),
                cache_creation_input_tokens=totals.get("cache_creation_input_tokens", 0),
            )
            otel = otel_usage(usage, harness)
            assert otel is not None
            assert row["otel"]["input_tokens"] == otel.input_tokens, path
            assert row["otel"]["output_tokens"] == otel.output_tokens, path
        checked += 1
    assert checked >= 10


def test_copies_of_requests_in_other_transcripts_count_once(home: Path) -> None:
    source = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    project = home / ".claude/projects/-copies"
    project.mkdir(parents=True)
    shutil.copyfile(source, project / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl")
    once = _rows(
        _cli(
            home,
            "usage",
            "--harness",
            "claude-code",
            "--by",
            "model",
            "--format",
            "json",
            "--no-cost",
        )
    )
    # A resumed session's file begins with the earlier session's messages, ids and all.
    shutil.copyfile(source, project / "11111111-2222-4333-8444-555555555555.jsonl")
    proc = _cli(
        home, "usage", "--harness", "claude-code", "--by", "model", "--format", "json", "--no-cost"
    )
    assert _rows(proc) == once
    assert "copies of requests counted once" in proc.stderr


def test_a_codex_fork_counts_only_its_own_requests(home: Path) -> None:
    parent = (
        FIXTURES
        / "codex/feipi/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl"
    )
    day = home / ".codex/sessions/2026/06/19"
    day.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(parent, day / parent.name)
    before = _rows(
        _cli(
            home, "usage", "--harness", "codex", "--by", "harness", "--format", "json", "--no-cost"
        )
    )
    lines = parent.read_text(encoding="utf-8").splitlines()
    meta = json.loads(lines[0])
    parent_id = meta["payload"]["id"]
    fork_id = "019edda8-0000-7000-8000-00000000f0f0"
    meta["payload"].update(id=fork_id, forked_from_id=parent_id)
    last = next(
        json.loads(x)
        for x in reversed(lines)
        if '"token_count"' in x and '"total_token_usage"' in x
    )
    info = last["payload"]["info"]
    extra = {
        "input_tokens": 1000,
        "cached_input_tokens": 400,
        "output_tokens": 50,
        "reasoning_output_tokens": 10,
        "total_tokens": 1050,
    }
    info["total_token_usage"] = {
        k: info["total_token_usage"].get(k, 0) + v for k, v in extra.items()
    }
    info["last_token_usage"] = extra
    last["timestamp"] = "2026-06-19T11:00:00.000Z"
    fork = [json.dumps(meta), *lines[1:], json.dumps(last)]
    (day / f"rollout-2026-06-19T10-30-00-{fork_id}.jsonl").write_text(
        "\n".join(fork) + "\n", encoding="utf-8"
    )
    after = _rows(
        _cli(
            home, "usage", "--harness", "codex", "--by", "harness", "--format", "json", "--no-cost"
        )
    )
    assert after[0]["input_tokens"] - before[0]["input_tokens"] == 1000
    assert after[0]["output_tokens"] - before[0]["output_tokens"] == 50
    assert (
        after[0]["otel"]["reasoning.output_tokens"] - before[0]["otel"]["reasoning.output_tokens"]
        == 10
    )


def test_copilot_sessions_count_their_shutdown_metrics_once_per_copy(home: Path) -> None:
    source = FIXTURES / "copilot/agent-sessions/copilot_small_0.0.420.jsonl"
    sid = "0c0c0c0c-1111-4222-8333-444444444444"
    folder = home / ".copilot/session-state" / sid
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / "events.jsonl")
    (folder / "workspace.yaml").write_text("cwd: /work/copilot\n", encoding="utf-8")
    # The same session also in the older flat layout: its requests are copies.
    flat = "0c0c0c0c-5555-4666-8777-888888888888.jsonl"
    shutil.copyfile(source, home / ".copilot/session-state" / flat)
    proc = _cli(home, "usage", "--harness", "copilot", "--by", "model", "--format", "json")
    rows = {r["model"]: r for r in _rows(proc)}
    shutdown = json.loads(source.read_text(encoding="utf-8").splitlines()[-1])
    for model, metric in shutdown["data"]["modelMetrics"].items():
        u = metric["usage"]
        row = rows[model]
        assert row["requests"] == 1  # one shutdown, counted once though in two files
        assert (row["input_tokens"], row["output_tokens"], row["cache_read_input_tokens"]) == (
            u["inputTokens"],
            u["outputTokens"],
            u["cacheReadTokens"],
        )
        assert row["otel"]["input_tokens"] == u["inputTokens"]
        assert row["cost_status"] in ("priced", "unpriced")
        assert row["cost_usd"] is None or row["cost_usd"] > 0
    assert "1 copies of requests counted once" in proc.stderr
    # convert, following the reference, still records no usage for the session.
    assert agentminutes.load(folder / "events.jsonl").totals is None


def test_a_second_run_over_an_unchanged_home_reads_no_transcript(home: Path) -> None:
    first = _cli(home, "usage", "--by", "session,model", "--format", "json")
    assert "0 unchanged" in first.stderr
    # Every transcript is overwritten with bytes that parse as nothing, same size and mtime:
    # a run that opened any of them would fail or count differently.
    originals: dict[Path, bytes] = {}
    for path in home.rglob("*"):
        if path.is_file() and ".cache" not in path.parts and path.suffix in (".jsonl", ".json"):
            st = path.stat()
            originals[path] = path.read_bytes()
            path.write_bytes(b"\0" * st.st_size)
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = _cli(home, "usage", "--by", "session,model", "--format", "json")
    assert second.stdout == first.stdout
    assert second.returncode == first.returncode
    assert " 0 read)" in second.stderr, second.stderr
    # A grown transcript is read again.
    for path, data in originals.items():
        st = path.stat()
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    grown = home / ".claude/projects/-Users-admin/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    with grown.open("ab") as f:
        f.write(b"\n")
    third = _cli(home, "usage", "--by", "session,model", "--format", "json")
    assert " 1 read)" in third.stderr, third.stderr


def test_unknown_models_are_unpriced_never_zero(home: Path) -> None:
    source = (FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl").read_text(
        encoding="utf-8"
    )
    project = home / ".claude/projects/-gateway"
    project.mkdir(parents=True)
    text = source.replace('"model":"deepseek-v4-pro"', '"model":"glm-9-via-gateway"')
    text = text.replace('"id":"', '"id":"gw-')  # new message ids: not copies of the original
    (project / "aaaaaaaa-1111-4222-8333-444444444444.jsonl").write_text(text, encoding="utf-8")
    rows = _rows(
        _cli(home, "usage", "--harness", "claude-code", "--by", "model", "--format", "json")
    )
    glm = next(r for r in rows if r["model"] == "glm-9-via-gateway")
    assert glm["cost_usd"] is None
    assert glm["cost_status"] == "unpriced"
    assert glm["unpriced_tokens"] == glm["otel"]["input_tokens"] + glm["otel"]["output_tokens"] > 0
    priced = [r for r in rows if r["cost_status"] == "priced" and r["otel"]["input_tokens"]]
    assert priced
    assert all(r["cost_usd"] > 0 and r["cost_sources"] for r in priced)
    table = _cli(home, "usage", "--harness", "claude-code", "--by", "model")
    line = next(x for x in table.stdout.splitlines() if x.startswith("glm-9-via-gateway"))
    assert line.rstrip().endswith("unpriced")
    assert "unpriced: " in table.stdout
    assert "glm-9-via-gateway" in table.stdout.split("unpriced: ")[1]
    total = next(x for x in table.stdout.splitlines() if x.startswith("Total"))
    assert total.rstrip().endswith("*")  # the total says part of it is unpriced
    # A price file prices it.
    prices = home / "prices.toml"
    prices.write_text('[models."glm-9*"]\ninput_mtok = 1\noutput_mtok = 2\n', encoding="utf-8")
    rows = _rows(
        _cli(
            home,
            "usage",
            "--harness",
            "claude-code",
            "--by",
            "model",
            "--format",
            "json",
            "--prices",
            str(prices),
        )
    )
    glm = next(r for r in rows if r["model"] == "glm-9-via-gateway")
    assert glm["cost_status"] == "priced"
    assert glm["cost_usd"] > 0
    assert glm["cost_sources"][0].startswith("prices.toml sha256:")


def test_by_day_model_csv_and_the_window(home: Path) -> None:
    everything = _rows(_cli(home, "usage", "--by", "day", "--format", "json", "--no-cost"))
    days = sorted(r["day"] for r in everything)
    assert len(days) >= 2
    one = days[len(days) // 2]
    kept = _rows(
        _cli(
            home,
            "usage",
            "--by",
            "day",
            "--format",
            "json",
            "--no-cost",
            "--since",
            one,
            "--until",
            one,
        )
    )
    assert [r["day"] for r in kept] == [one]
    assert kept[0] == next(r for r in everything if r["day"] == one)
    csv_out = _cli(home, "usage", "--by", "day,model", "--format", "csv").stdout.splitlines()
    assert csv_out[0].startswith("day,model,requests,input_tokens,")
    assert len(csv_out) > 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--by", "year"], 'unknown grouping "year"'),
        (["--format", "xml"], "--format"),
        (["--tz", "Mars/Olympus"], "want a time zone"),
        (["--root", "/nowhere"], "--harness"),
        (["--prices", "/nowhere.toml"], "--prices /nowhere.toml"),
        (["--full", "--follow"], "--full"),
    ],
)
def test_bad_options_are_one_error_line(home: Path, args: list[str], message: str) -> None:
    proc = _cli(home, "usage", *args)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_follow_keeps_rows_current_as_a_transcript_grows(home: Path) -> None:
    source = FIXTURES / "claude-code/fasthooks-main.jsonl"
    project = home / ".claude/projects/-live"
    project.mkdir(parents=True)
    target = project / "c45af7b1-cb7c-4e51-93db-8cbb250a877a.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(home), TZ="UTC", XDG_CACHE_HOME=str(home / ".cache"))
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "usage",
            "--harness",
            "claude-code",
            "--by",
            "session",
            "--format",
            "json",
            "--follow",
            "--idle-exit",
            "3",
            "--no-cost",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert follower.stdout is not None
    first = [follower.stdout.readline()]  # the first report is out: the watch starts next
    time.sleep(2.0)
    lines = source.read_bytes().splitlines(keepends=True)
    with target.open("ab", buffering=0) as out:
        for i, line in enumerate(lines):
            out.write(line)
            time.sleep(0.002)
            if i == len(lines) // 2:
                time.sleep(1.0)  # the agent thinks: the first half is shown before the rest
    rest, stderr = follower.communicate(timeout=60)
    stdout = "".join(first) + rest
    assert follower.returncode in (0, 1), stderr  # 1: the home holds unreadable transcripts
    assert "Traceback" not in stderr
    lines = [json.loads(x) for x in stdout.splitlines()]
    final = _rows(
        _cli(
            home,
            "usage",
            "--harness",
            "claude-code",
            "--by",
            "session",
            "--format",
            "json",
            "--no-cost",
        )
    )
    want = next(r for r in final if r["session_id"] == "c45af7b1-cb7c-4e51-93db-8cbb250a877a")
    updates = [x for x in lines if x["session_id"] == want["session_id"]]
    assert len(updates) >= 2  # rows are written again as they change
    assert updates[0]["requests"] < want["requests"]
    assert updates[-1] == want


def test_worker_processes_read_a_home_as_one_process_does(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Transcripts read by worker processes give the summaries, errors and order of one process."""
    from agentminutes.pipeline import processes
    from agentminutes.usage import report
    from agentminutes.usage.cache import SummaryCache

    env = {"HOME": str(home)}
    one = report.collect(env=env, cache=SummaryCache(enabled=False), jobs=1)
    # Every byte counts as enough to share out, in tasks of one transcript each.
    monkeypatch.setattr(processes, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(processes, "TASK_BYTES", 1)
    calls: list[int] = []
    workers = report._summarize_in_workers
    monkeypatch.setattr(
        report,
        "_summarize_in_workers",
        lambda todo, jobs, *rest: (calls.append(jobs), workers(todo, jobs, *rest)),
    )
    # The caller's preparation runs meanwhile, on a thread (an error in it is passed over).
    ran: list[str] = []

    def prepare() -> None:
        ran.append(threading.current_thread().name)
        raise RuntimeError("passed over")

    two = report.collect(env=env, cache=SummaryCache(enabled=False), jobs=2, while_reading=prepare)
    assert calls == [2]
    assert len(ran) == 1
    assert ran[0] != threading.main_thread().name
    assert len(one.transcripts) >= 10
    assert [t.summary for t in two.transcripts] == [t.summary for t in one.transcripts]
    assert [(t.session_id, t.project, t.started_ns) for t in two.transcripts] == [
        (t.session_id, t.project, t.started_ns) for t in one.transcripts
    ]
    assert two.errors == one.errors
    assert (two.parsed, two.no_usage) == (one.parsed, one.no_usage)


def test_jobs_must_be_a_whole_number_of_at_least_one(home: Path) -> None:
    proc = _cli(home, "usage", "--jobs", "0")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") <= 3, proc.stderr
