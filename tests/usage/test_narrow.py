"""Tables that fit an 80-column terminal, and progress that counts what it counts."""

from __future__ import annotations

import io

from agentminutes.usage.prices import Pricer
from agentminutes.usage.render import render_table
from agentminutes.usage.report import build_report, collect_paths
from session_home import FIXTURES


def test_usage_by_day_and_model_fits_80_columns_without_cutting_a_number() -> None:
    found = collect_paths([FIXTURES / "claude-code", FIXTURES / "codex"])
    report = build_report(found.transcripts, ["day", "model"], pricer=Pricer(), tz="UTC")
    wide = io.StringIO()
    render_table(report, wide, width=400)
    assert max(len(line) for line in wide.getvalue().splitlines()) > 80  # needs compacting
    out = io.StringIO()
    render_table(report, out, width=80)
    table = out.getvalue().splitlines()[: len(report.rows) + 2]
    assert max(len(line) for line in table) <= 80
    assert not [line for line in table if "…" in line]
    assert table[0].split() == [
        "Day",
        "Model",
        "In",
        "Out",
        "Cache",
        "w",
        "Cache",
        "r",
        "Total",
        "Cost",
    ]


def test_the_export_bar_counts_transcripts_a_second() -> None:
    from agentminutes.export.command import _Progress

    bar = _Progress(io.StringIO(), True, 3, 10_000)
    assert bar.bar is not None
    names = [type(c).__name__ for c in bar.bar.columns]
    assert "TransferSpeedColumn" not in names
    rate = bar.bar.columns[names.index("TranscriptRate")]

    class Task:
        finished_speed = None
        speed = 2.5

    assert str(rate.render(Task())) == "2.5/s"
    bar.close()


def test_requests_without_a_time_are_not_in_a_window() -> None:
    found = collect_paths([FIXTURES / "codex"])
    everything = build_report(found.transcripts, ["day"], tz="UTC")
    assert everything.rows[0].keys == {"day": "(no time)"}  # some Codex rollouts record none
    untimed = everything.rows[0].requests
    since = build_report(found.transcripts, ["day"], since="2000-01-01", tz="UTC")
    assert "(no time)" not in [r.keys["day"] for r in since.rows]
    assert since.totals.requests == everything.totals.requests - untimed
