"""``usage --by block`` and ``statusline`` on homes whose numbers are known.

The homes hold a real Claude Code session (17 API requests over 31 minutes)
whose records' times are moved, all by the same rule, so that its requests
fall into known five-hour windows; the requests' tokens are the fixture's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentminutes.usage.summary import summarize
from session_home import FIXTURES

SOURCE = FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
SESSION = SOURCE.stem
PROJECT = ".claude/projects/-work-blocks"


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _moved(shift: Any) -> str:
    """The fixture with each record's time *t* moved to ``shift(t)``."""
    out = []
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if isinstance(record.get("timestamp"), str):
            moved = shift(_when(record["timestamp"]))
            record["timestamp"] = moved.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        out.append(json.dumps(record))
    return "\n".join(out) + "\n"


def _home(tmp: Path, text: str) -> Path:
    home = tmp / "home"
    folder = home / PROJECT
    folder.mkdir(parents=True)
    (folder / SOURCE.name).write_text(text, encoding="utf-8")
    return home


def _cli(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(home), TZ="UTC", XDG_CACHE_HOME=str(home / ".cache"))
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=120,
        check=False,
    )


def _requests() -> list[tuple[int, int]]:
    """The fixture's requests: (minutes after the first, input + output tokens, normalized)."""
    found = summarize(str(SOURCE), "claude-code").requests
    first = found[0].ns
    out = []
    for r in found:
        otel = r.otel()
        assert otel is not None
        out.append(((r.ns - first) // 60_000_000_000, otel.input_tokens + otel.output_tokens))
    return out


def test_blocks_start_on_the_hour_and_end_after_five_hours_or_a_pause(tmp_path: Path) -> None:
    requests = _requests()
    minutes = [m for m, _ in requests]
    # The session's requests: five in its first 2 minutes, five at 14-15 minutes, seven at
    # 25-31 minutes. Cut there.
    assert minutes == [0, 0, 0, 1, 1, 14, 15, 15, 15, 15, 25, 26, 26, 31, 31, 31, 31]
    found = summarize(str(SOURCE), "claude-code").requests
    start = datetime.fromtimestamp(found[0].ns / 1e9, UTC)
    tenth = datetime.fromtimestamp(found[10].ns / 1e9, UTC) - start
    base = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # the first request moves to 09:00:00

    def shift(t: datetime) -> datetime:
        after = t - start
        if after < timedelta(minutes=10):
            return base + after  # block 09:00
        if after < timedelta(minutes=20):
            return base + after + timedelta(hours=6)  # after a 6-hour pause: block 15:00
        # The 11th request at 20:05: under 5 hours after the one before (15:15), but 5 hours
        # after 15:00, the start of its block: block 20:00.
        return base + after + (timedelta(hours=11, minutes=5) - tenth)

    home = _home(tmp_path, _moved(shift))
    p = _cli(home, "usage", "--by", "block", "--format", "json", "--no-cache")
    assert p.returncode == 0, p.stderr
    rows = json.loads(p.stdout)
    tokens = [sum(n for _, n in part) for part in (requests[:5], requests[5:10], requests[10:])]
    assert [
        (r["block"], r["requests"], r["otel"]["input_tokens"] + r["otel"]["output_tokens"])
        for r in rows
    ] == [
        ("2026-03-02 09:00", 5, tokens[0]),
        ("2026-03-02 15:00", 5, tokens[1]),
        ("2026-03-02 20:00", 7, tokens[2]),
    ]
    assert [(r["block_start"], r["block_end"]) for r in rows] == [
        ("2026-03-02T09:00:00Z", "2026-03-02T14:00:00Z"),
        ("2026-03-02T15:00:00Z", "2026-03-02T20:00:00Z"),
        ("2026-03-02T20:00:00Z", "2026-03-03T01:00:00Z"),
    ]
    assert not any(r["block_active"] for r in rows)
    # The third block's first request is 20:05, its last the session's last.
    assert rows[2]["block_last_request"].startswith("2026-03-02T20:1")
    # Costs add up to the day's.
    day = json.loads(_cli(home, "usage", "--format", "json", "--no-cache").stdout)
    assert sum(r["cost_usd"] for r in rows) == pytest.approx(sum(r["cost_usd"] for r in day))


def _live_home(tmp_path: Path, minutes_ago: float) -> tuple[Path, int]:
    """The session moved so its last request was *minutes_ago*; returns the home and its first
    request's time (ns)."""
    found = summarize(str(SOURCE), "claude-code").requests
    last = datetime.fromtimestamp(found[-1].ns / 1e9, UTC)
    now = datetime.now(UTC)
    delta = now - timedelta(minutes=minutes_ago) - last
    home = _home(tmp_path, _moved(lambda t: t + delta))
    return home, int((found[0].ns / 1e9 + delta.total_seconds()) * 1e9)


def test_the_active_block_has_a_burn_rate_and_a_projection(tmp_path: Path) -> None:
    home, first_ns = _live_home(tmp_path, minutes_ago=2)
    before = time.time_ns()
    p = _cli(home, "usage", "--by", "block", "--format", "json", "--no-cache")
    after = time.time_ns()
    rows = json.loads(p.stdout)
    active = [r for r in rows if r["block_active"]]
    assert len(active) == 1
    block = active[0]
    requests = _requests()
    tokens = sum(n for _, n in requests)
    span_min = (requests[-1][0] - requests[0][0]) or 1
    # The session's 31.5 minutes, to the millisecond: tokens per minute between its first
    # and last request.
    found = summarize(str(SOURCE), "claude-code").requests
    exact_min = (found[-1].ns - found[0].ns) / 60e9
    assert block["burn_tokens_per_minute"] == pytest.approx(tokens / exact_min, abs=0.1)
    assert span_min >= 31
    start = datetime.fromtimestamp(first_ns // 3_600_000_000_000 * 3600, UTC)
    assert block["block_start"] == start.strftime("%Y-%m-%dT%H:00:00Z")
    left = [(start.timestamp() + 5 * 3600 - t / 1e9) / 60 for t in (after, before)]
    assert left[0] - 1 <= block["minutes_left"] <= left[1]
    projected = tokens + tokens / exact_min * block["minutes_left"]
    assert block["projected_tokens"] == pytest.approx(projected, rel=0.02)
    assert block["projected_cost_usd"] > block["cost_usd"] > 0
    table = _cli(home, "usage", "--by", "block", "--no-cache").stdout
    assert "active block " in table
    assert "tokens/min" in table


def test_statusline_prints_model_session_today_and_block(tmp_path: Path) -> None:
    home, _ = _live_home(tmp_path, minutes_ago=2)
    transcript = home / PROJECT / SOURCE.name
    payload = json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "model": {"id": "claude-opus-4-7", "display_name": "Opus 4.7"},
        }
    )
    first = _cli(home, "statusline", stdin=payload)
    assert first.returncode == 0, first.stderr
    line = first.stdout.strip()
    session = json.loads(_cli(home, "usage", "--by", "session", "--format", "json").stdout)
    cost = sum(r["cost_usd"] for r in session)
    parts = line.split(" | ")
    assert parts[0] == "Opus 4.7"
    assert parts[1] == f"session ${cost:,.2f}"
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    day = json.loads(_cli(home, "usage", "--since", today, "--format", "json").stdout)
    # Just after midnight (UTC) the session, 2 minutes old, is yesterday's: no row today,
    # which the status line says as it says an unpriced day.
    today_cost = sum(r["cost_usd"] for r in day)
    assert parts[2] == (f"today ${today_cost:,.2f}" if day else "today unpriced")
    assert parts[3].startswith(f"block ${cost:,.2f} (")
    assert "m left" in parts[3]
    # Warm: the kept line, nothing read again (the kept file says what it watches).
    again = _cli(home, "statusline", stdin=payload)
    assert again.stdout == first.stdout
    kept = home / ".cache" / "agentminutes" / "statusline.marshal"
    assert kept.is_file()
    # Garbage on stdin is no traceback.
    bad = _cli(home, "statusline", stdin="not json")
    assert "Traceback" not in bad.stderr
    assert bad.returncode == 0
