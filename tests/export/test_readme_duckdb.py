"""The README's DuckDB queries, run on an export of ``fixtures/``, against the library's own numbers."""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import pytest

import agentminutes
from agentminutes import timestamps
from conftest import ROOT
from export_data import fixtures_dataset

_BLOCK = re.compile(r"<!-- duckdb: ([\w-]+) -->\n```sql\n(.*?)```", re.DOTALL)
#: The README's and its reference's (docs/) queries.
_DOCS = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md"))]
QUERIES = dict(_BLOCK.findall("".join(p.read_text(encoding="utf-8") for p in _DOCS)))


def _run(name: str) -> list[tuple[object, ...]]:
    folder = fixtures_dataset()
    sql = QUERIES[name].replace("'ds/", f"'{folder}/")
    return duckdb.sql(sql).fetchall()


def _transcripts() -> list[str]:
    import json

    manifest = json.loads((fixtures_dataset() / "_manifest.json").read_text(encoding="utf-8"))
    return [p for p, e in manifest["transcripts"].items() if e["status"] == "ok"]


def _sessions() -> list[agentminutes.Session]:
    return [s for p in _transcripts() for s in agentminutes.iter_sessions(p)]


def test_the_readme_has_the_five_queries() -> None:
    assert set(QUERIES) == {
        "tool-mix",
        "median-duration",
        "error-rate",
        "tokens-by-model-day",
        "most-subagents",
    }


def test_tool_mix_by_harness() -> None:
    expected: Counter[tuple[str, str]] = Counter()
    for s in _sessions():
        for name, n in (s.stats().tool_calls_by_name or {}).items():
            expected[(s.meta.harness, name)] += n
    got = {(h, t): n for h, t, n in _run("tool-mix")}
    assert got == dict(expected)


def _interactions() -> list[tuple[str, bool, bool, int | None]]:
    """(tool, answered, any error, duration ms) per call, from the library's own join."""
    out = []
    for s in _sessions():
        for inter in s.tool_interactions():
            if inter.call is None:
                continue
            call = inter.call
            assert call.tool_call is not None
            start = timestamps.to_ns(call.timestamp) if call.timestamp else None
            ends = [timestamps.to_ns(r.timestamp) for r in inter.results if r.timestamp]
            ends = [e for e in ends if e is not None]
            ms = None
            if start is not None and ends and max(ends) >= start:
                ms = (max(ends) - start) // 1_000_000
            error = any(r.tool_result is not None and r.tool_result.is_error for r in inter.results)
            out.append((call.tool_call.name, bool(inter.results), error, ms))
    return out


def test_median_tool_duration_by_tool() -> None:
    durations: defaultdict[str, list[int]] = defaultdict(list)
    for name, _, _, ms in _interactions():
        if ms is not None:
            durations[name].append(ms)
    got = {name: (median, n) for name, median, n in _run("median-duration")}
    assert got == {k: (statistics.median(v), len(v)) for k, v in durations.items()}


def test_error_rate_by_tool() -> None:
    calls: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for name, answered, error, _ in _interactions():
        if answered:
            calls[name] += 1
            errors[name] += error
    got = {name: (n, rate) for name, n, rate in _run("error-rate")}
    assert got.keys() == calls.keys()
    for name, (n, rate) in got.items():
        assert n == calls[name]
        assert rate == pytest.approx(errors[name] / calls[name])


def test_tokens_by_model_and_day() -> None:
    import datetime as dt

    expected: defaultdict[tuple[str, dt.date], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for s in _sessions():
        for ev in s.events:
            msg = ev.assistant_message
            if msg is None or msg.usage is None:
                continue
            ns = timestamps.to_ns(ev.timestamp) if ev.timestamp else None
            day = dt.datetime.fromtimestamp(ns / 1e9, dt.UTC).date() if ns is not None else None
            row = expected[(msg.model or None, day)]  # type: ignore[index]
            row[0] += msg.usage.input_tokens
            row[1] += msg.usage.output_tokens
            row[2] += msg.usage.cache_read_input_tokens
            row[3] += 1
    got = {(m, d): [i, o, c, n] for m, d, i, o, c, n in _run("tokens-by-model-day")}
    assert got == dict(expected)
    assert sum(r[1] for r in got.values()) > 0


def test_sessions_with_the_most_subagents() -> None:
    rows = _run("most-subagents")
    assert len(rows) == 5
    counts = [r[2] for r in rows]
    assert counts == sorted(counts, reverse=True)
    # The top Claude Code parent: its subagents include every agent transcript beside it.
    _, session_id, n, _ = next(r for r in rows if r[0] == "claude-code")
    parent = next(Path(p) for p in _transcripts() if p.endswith(f"{session_id}.jsonl"))
    beside = list(parent.with_suffix("").glob("subagents/**/agent-*.jsonl"))
    assert n >= len(beside) > 0
