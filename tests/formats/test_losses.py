"""The loss reports' shared line, and summing many sessions' reports (``export --format atif``)."""

from __future__ import annotations

from agentminutes import iter_sessions
from agentminutes.formats.atif import LossReport, trajectory
from agentminutes.formats.losses import add_counts, loss_summary
from conftest import FIXTURES

PI = FIXTURES / "pi" / "pi-mono" / "before-compaction.jsonl"
QWEN = FIXTURES / "qwen-code" / "constructed" / "0a11ce00-0000-4000-8000-000000000001.jsonl"


def test_the_line_sorts_each_loss_by_reason_and_leaves_out_empty_ones() -> None:
    assert loss_summary("3 events", None, {}) == "3 events"
    assert (
        loss_summary("3 events", {"system/b": 2, "system/a": 1}, {"thinking.signature": 4})
        == "3 events; dropped events: system/a 1, system/b 2; dropped fields: thinking.signature 4"
    )
    assert loss_summary("0 events", None, {"x": 1}) == "0 events; dropped fields: x 1"


def test_reports_of_real_sessions_add_up_reason_by_reason() -> None:
    reports = [trajectory(s)[1] for path in (PI, QWEN) for s in iter_sessions(path)]
    total = LossReport()
    for report in reports:
        total = total.added(report)
    assert total.total_events == sum(r.total_events for r in reports) > 0
    assert total.steps == sum(r.steps for r in reports)
    assert total.subagents == sum(r.subagents for r in reports) == 1
    for field in ("dropped_events", "dropped_fields"):
        want: dict[str, int] = {}
        for report in reports:
            for reason, n in (getattr(report, field) or {}).items():
                want[reason] = want.get(reason, 0) + n
        assert getattr(total, field) == want
    assert add_counts(None, None) is None
    assert add_counts({"a": 1}, {"a": 2, "b": 1}) == {"a": 3, "b": 1}
