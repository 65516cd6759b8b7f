"""``compare``: runs side by side, and where they first go different ways.

A *run* is one transcript, or a group of sessions selected as ``sessions``
selects them (``--cwd``, ``--harness``, ``--since``), one group per harness
found. Each run is summarized by the same code as ``stats`` (its
:class:`~agentminutes.schema.Stats`, a group's summed as ``stats
--include-subagents`` sums a task's transcripts) and ``stats --usage`` (tokens
and cost by model), so every figure here equals what those commands print for
it; the JSON carries both documents whole. Beside them: the number of turns
(prompts a person wrote) and each turn's sequence of tool names, from which
the *divergence* is the first turn whose tool choice differs between the runs
(and, inside it, the first call that differs).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import IO, TYPE_CHECKING, Any

import msgspec

from agentminutes.schema import Origin, Stats, TaskTranscript
from agentminutes.schema.stats import StatsBuilder

if TYPE_CHECKING:
    from agentminutes.discovery.layouts import SessionRef
    from agentminutes.usage.prices import Pricer
    from agentminutes.usage.report import UsageReport

__all__ = ("Run", "divergence", "group_runs", "read_run", "to_json", "write_html", "write_table")


@dataclass
class Run:
    """One side of a comparison: its summary, usage and tool choices per turn."""

    label: str
    harness: str
    paths: list[str]
    stats: Stats
    usage: dict[str, Any]
    turns: int
    #: Per turn (index 0: before the first prompt), the tool names called, in order.
    tools_by_turn: list[list[str]] = field(default_factory=list)


def _fold(
    path: str, harness: str, pricer: Pricer | None, conversation: str | None = None
) -> tuple[Stats, UsageReport, str, int, list[list[str]]]:
    from agentminutes.api import iter_events
    from agentminutes.usage.stats import UsageFold

    stats = StatsBuilder()
    fold = UsageFold()
    by_turn: list[list[str]] = [[]]
    name = ""
    for ev in iter_events(path, harness=harness, conversation=conversation):
        stats.add(ev)
        fold.add((ev,))
        if ev.session_meta is not None and not name:
            name = ev.session_meta.harness
        msg = ev.user_message
        if msg is not None and msg.origin == Origin.HUMAN and not ev.agent_id:
            by_turn.append([])
        elif ev.tool_call is not None and not ev.agent_id:
            by_turn[-1].append(ev.tool_call.name)
    return stats.build(), fold.report(pricer), name or fold.harness, len(by_turn) - 1, by_turn


def _usage_block(report: UsageReport, harness: str) -> dict[str, Any]:
    from agentminutes.usage.stats import block_json

    return msgspec.json.decode(msgspec.json.encode(block_json(report, harness)))  # type: ignore[no-any-return]


def read_run(path: str, *, harness: str = "auto", pricer: Pricer | None, label: str = "") -> Run:
    """One transcript as a run."""
    stats, report, name, turns, by_turn = _fold(path, harness, pricer)
    return Run(
        label=label or os.path.basename(path),
        harness=name,
        paths=[path],
        stats=stats,
        usage=_usage_block(report, name),
        turns=turns,
        tools_by_turn=by_turn,
    )


def group_runs(refs: Sequence[SessionRef], pricer: Pricer | None) -> list[Run]:
    """The sessions *refs* as one run per harness, each summed over its sessions."""
    from agentminutes.discovery.task import aggregate
    from agentminutes.usage.report import Transcript
    from agentminutes.usage.stats import usage_report
    from agentminutes.usage.summary import CachedRequest, TranscriptSummary, compact

    by_harness: dict[str, list[SessionRef]] = {}
    for ref in refs:
        by_harness.setdefault(ref.meta.harness, []).append(ref)
    runs: list[Run] = []
    for harness, group in sorted(by_harness.items()):
        parts: list[TaskTranscript] = []
        transcripts: list[Transcript] = []
        turns = 0
        by_turn: list[list[str]] = []
        for i, ref in enumerate(sorted(group, key=lambda r: r.window()[0])):
            from agentminutes.api import iter_events
            from agentminutes.schema.usage import RequestFolder

            folder = RequestFolder(harness)
            stats = StatsBuilder()
            requests: list[CachedRequest] = []
            own: list[list[str]] = [[]]
            for ev in iter_events(ref.path, harness=harness):
                stats.add(ev)
                requests.extend(compact(r) for r in folder.add(ev))
                msg = ev.user_message
                if msg is not None and msg.origin == Origin.HUMAN and not ev.agent_id:
                    own.append([])
                elif ev.tool_call is not None and not ev.agent_id:
                    own[-1].append(ev.tool_call.name)
            requests.extend(compact(r) for r in folder.finish())
            parts.append(TaskTranscript(path=ref.path, stats=stats.build()))
            summary = TranscriptSummary(
                path=ref.path, size=-1, mtime_ns=-1, meta=ref.meta, requests=requests
            )
            transcripts.append(
                Transcript(
                    summary=summary,
                    harness=harness,
                    session_id=ref.meta.session_id,
                    project=ref.meta.cwd,
                    started_ns=i,
                )
            )
            turns += len(own) - 1
            by_turn.extend(own if not by_turn else own[1:])
        report = usage_report(transcripts, pricer)  # each request counted once, as usage does
        runs.append(
            Run(
                label=f"{harness} ({len(group)} sessions)",
                harness=harness,
                paths=[p.path for p in parts],
                stats=aggregate(parts, harness),
                usage=_usage_block(report, harness),
                turns=turns,
                tools_by_turn=by_turn,
            )
        )
    return runs


def divergence(runs: Sequence[Run]) -> dict[str, Any] | None:
    """The first turn whose tool choice differs between *runs*, and the first call in it
    that differs (``None`` when every run chose the same tools throughout)."""
    if len(runs) < 2:
        return None
    longest = max(len(r.tools_by_turn) for r in runs)
    for turn in range(longest):
        choices = [r.tools_by_turn[turn] if turn < len(r.tools_by_turn) else None for r in runs]
        if all(c == choices[0] for c in choices):
            continue
        call = 0
        seqs = [c or [] for c in choices]
        while all(call < len(s) for s in seqs) and all(s[call] == seqs[0][call] for s in seqs):
            call += 1
        return {
            "turn": turn,
            "call": call,
            "tools": choices,
        }
    return None


def _tokens(stats: Stats) -> int:
    t = stats.totals
    if t is None:
        return 0
    return (
        t.input_tokens + t.output_tokens + t.cache_read_input_tokens + t.cache_creation_input_tokens
    )


def to_json(runs: Sequence[Run]) -> dict[str, Any]:
    """The comparison as JSON: each run's ``stats`` and ``usage`` documents whole, and the
    divergence."""
    return {
        "runs": [
            {
                "label": r.label,
                "harness": r.harness,
                "paths": r.paths,
                "turns": r.turns,
                "tools_by_turn": r.tools_by_turn,
                "stats": msgspec.json.decode(msgspec.json.encode(r.stats)),
                "usage": r.usage,
            }
            for r in runs
        ],
        "divergence": divergence(runs),
    }


def _cost_of(usage: dict[str, Any]) -> float | None:
    """A usage block's (or row's) cost: priced, else the harness's own figure."""
    cost = usage.get("cost_usd")
    return cost if cost is not None else usage.get("reported_cost_usd")


def _money(value: Any) -> str:
    if value is None:
        return "unpriced"
    return f"${float(value):,.4f}" if float(value) < 1 else f"${float(value):,.2f}"


def rows(runs: Sequence[Run]) -> list[tuple[str, list[str], str]]:
    """The table's rows: (label, one cell per run, section)."""
    from agentminutes.view.terminal import duration_text

    out: list[tuple[str, list[str], str]] = []

    def add(label: str, cells: list[str], section: str = "") -> None:
        out.append((label, cells, section))

    add("harness", [r.harness for r in runs], "run")
    add("models", [", ".join(r.stats.models or []) for r in runs])
    add("turns", [str(r.turns) for r in runs])
    add("user messages", [str(r.stats.user_messages) for r in runs])
    add("wall time", [duration_text(r.stats.wall_time_ms) for r in runs])
    add("tool calls", [str(r.stats.tool_calls) for r in runs], "tools")
    add("tool errors", [str(r.stats.tool_errors) for r in runs])
    add("result bytes", [f"{r.stats.result_bytes:,}" for r in runs])
    names: list[str] = []
    for r in runs:
        for name in r.stats.tool_calls_by_name or {}:
            if name not in names:
                names.append(name)
    names.sort(key=lambda n: -sum((r.stats.tool_calls_by_name or {}).get(n, 0) for r in runs))
    for name in names:
        add(f"  {name}", [str((r.stats.tool_calls_by_name or {}).get(name, 0)) for r in runs])
    add("tokens", [f"{_tokens(r.stats):,}" for r in runs], "tokens")
    for key, label in (
        ("input_tokens", "  input"),
        ("cache_read_input_tokens", "  cache read"),
        ("cache_creation_input_tokens", "  cache write"),
        ("output_tokens", "  output"),
    ):
        add(label, [f"{getattr(r.stats.totals, key, 0) if r.stats.totals else 0:,}" for r in runs])
    add("cost", [_money(_cost_of(r.usage)) for r in runs])
    models: list[str] = []
    for r in runs:
        for row in r.usage.get("by_model", []):
            if row["model"] not in models:
                models.append(row["model"])
    for model in models:
        cells = []
        for r in runs:
            found = [x for x in r.usage.get("by_model", []) if x["model"] == model]
            if not found:
                cells.append("")
                continue
            x = found[0]
            otel = x.get("otel") or {}
            tokens = otel.get("input_tokens", x["input_tokens"]) + otel.get(
                "output_tokens", x["output_tokens"]
            )
            cells.append(f"{tokens:,} · {_money(_cost_of(x))}")
        add(f"  {model or '(no model)'}", cells)
    return out


def _divergence_text(runs: Sequence[Run]) -> str:
    d = divergence(runs)
    if len(runs) < 2:
        return ""
    if d is None:
        return "same tool choices in every turn"
    where = "before the first prompt" if d["turn"] == 0 else f"turn {d['turn']}"
    parts = []
    for r, tools in zip(runs, d["tools"], strict=True):
        shown = "no such turn" if tools is None else (", ".join(tools[:6]) or "no tools")
        if tools and len(tools) > 6:
            shown += f" … (+{len(tools) - 6})"
        parts.append(f"{r.label}: {shown}")
    return f"first divergence: {where}, call {d['call'] + 1}; " + " | ".join(parts)


def write_table(runs: Sequence[Run], out: IO[str], *, width: int | None = None) -> None:
    """The runs side by side as a rich table, then where they first diverge."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from agentminutes.view.terminal import clean

    console = Console(file=out, width=width, highlight=False, markup=False, emoji=False)
    t = Table(header_style="bold", box=None, pad_edge=False)
    t.add_column("")
    for r in runs:
        t.add_column(Text(clean(r.label)), justify="right", overflow="fold")
    for label, cells, section in rows(runs):
        if section and section != "run":
            t.add_section()
        style = "bold" if not label.startswith("  ") else None
        t.add_row(Text(clean(label), style=style or ""), *(Text(clean(c)) for c in cells))
    console.print(t)
    text = _divergence_text(runs)
    if text:
        console.print(Text(clean(text), style="yellow"))


def _bars_by_run(runs: Sequence[Run], title: str, values: list[list[tuple[str, float]]]) -> str:
    from agentminutes.view.page import svg_bars

    series = [(r.label, v) for r, v in zip(runs, values, strict=True)]
    return svg_bars(series, title=title, height=180, width=max(360, 140 * len(runs) + 120))


def write_html(runs: Sequence[Run], path: str) -> int:
    """The comparison as one self-contained page: the table and charts; return its size."""
    from agentminutes.view.page import CSS, _csp_hash

    extra = (
        ".cmp{border-collapse:collapse;margin:12px 0}.cmp td,.cmp th{padding:3px 12px;"
        "border-bottom:1px solid var(--line);text-align:right}.cmp td:first-child,"
        ".cmp th:first-child{text-align:left}.cmp tr.sec td{font-weight:600;background:var(--soft)}"
        ".charts{display:flex;flex-wrap:wrap;gap:24px}.div{margin:10px 0;padding:6px 10px;"
        "border-left:3px solid #bf8700;background:#fff8c5}"
    )
    css = CSS + extra
    csp = f"default-src 'none'; style-src {_csp_hash(css)}; base-uri 'none'; form-action 'none'"
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">',
        f"<title>compare: {escape(' vs '.join(r.label for r in runs))}</title>",
        f"<style>{css}</style></head><body><header><h1>Comparison</h1>",
        f'<div class="div" id="divergence">{escape(_divergence_text(runs))}</div>',
        '</header><main><table class="cmp" id="table"><tr><th></th>',
    ]
    parts += [f"<th>{escape(r.label)}</th>" for r in runs]
    parts.append("</tr>")
    for label, cells, _ in rows(runs):
        cls = ' class="sec"' if not label.startswith("  ") else ""
        parts.append(f'<tr{cls} data-row="{escape(label.strip())}"><td>{escape(label)}</td>')
        parts += [f"<td>{escape(c)}</td>" for c in cells]
        parts.append("</tr>")
    parts.append('</table><div class="charts">')
    tokens = []
    for r in runs:
        t = r.stats.totals
        cache = (t.cache_read_input_tokens + t.cache_creation_input_tokens) if t else 0
        tokens.append(
            [
                ("bar-in", float(t.input_tokens if t else 0)),
                ("bar-cache", float(cache)),
                ("bar-out", float(t.output_tokens if t else 0)),
            ]
        )
    parts.append(_bars_by_run(runs, "tokens per run", tokens))
    names = sorted(
        {n for r in runs for n in (r.stats.tool_calls_by_name or {})},
        key=lambda n: -sum((r.stats.tool_calls_by_name or {}).get(n, 0) for r in runs),
    )
    parts.append(_tool_chart(runs, names[:12]))
    parts.append(_cost_chart(runs))
    parts.append("</div></main></body></html>\n")
    text = "".join(parts)
    with open(path, "w", encoding="utf-8", errors="replace") as f:
        f.write(text)
    return len(text.encode("utf-8", "replace"))


_PALETTE = ("#54aeff", "#fb8f44", "#8250df", "#2da44e", "#cf222e", "#bf8700")


def _tool_chart(runs: Sequence[Run], names: list[str]) -> str:
    """Grouped bars: each tool's calls, one bar per run."""
    if not names:
        return ""
    width, height, left, top, bottom = max(420, 60 * len(names) + 80), 220, 40, 34, 56
    plot_h = height - top - bottom
    peak = max((r.stats.tool_calls_by_name or {}).get(n, 0) for r in runs for n in names) or 1
    group = (width - left - 10) / len(names)
    bar = group * 0.8 / len(runs)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        'aria-label="tool calls by tool">',
        f'<text x="{left}" y="11">tool calls by tool</text>',
        f'<text x="4" y="{top + 8}">{peak}</text>',
    ]
    for gi, name in enumerate(names):
        x0 = left + gi * group + group * 0.1
        for ri, r in enumerate(runs):
            n = (r.stats.tool_calls_by_name or {}).get(name, 0)
            h = plot_h * n / peak
            out.append(
                f'<rect x="{x0 + ri * bar:.1f}" y="{top + plot_h - h:.1f}" width="{bar:.1f}" '
                f'height="{h:.1f}" fill="{_PALETTE[ri % len(_PALETTE)]}"><title>'
                f"{escape(r.label)} {escape(name)}: {n}</title></rect>"
            )
        out.append(
            f'<text x="{x0:.1f}" y="{top + plot_h + 12}" '
            f'transform="rotate(30 {x0:.1f} {top + plot_h + 12})">{escape(name[:16])}</text>'
        )
    for ri, r in enumerate(runs):
        x = left + ri * 150
        out.append(
            f'<rect x="{x}" y="17" width="9" height="9" fill="{_PALETTE[ri % len(_PALETTE)]}"/>'
            f'<text x="{x + 12}" y="25">{escape(r.label[:22])}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def _cost_chart(runs: Sequence[Run]) -> str:
    costs = [float(_cost_of(r.usage) or 0) for r in runs]
    if not any(costs):
        return ""
    width, height, left, top = max(300, 110 * len(runs) + 60), 220, 50, 34
    plot_h = height - top - 40
    peak = max(costs)
    bar = (width - left) / len(runs)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        'aria-label="cost per run">',
        f'<text x="{left}" y="11">cost per run (USD)</text>',
    ]
    for i, (r, c) in enumerate(zip(runs, costs, strict=True)):
        h = plot_h * c / peak
        x = left + i * bar + bar * 0.15
        out.append(
            f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar * 0.7:.1f}" '
            f'height="{h:.1f}" fill="{_PALETTE[i % len(_PALETTE)]}"><title>{escape(r.label)}: '
            f"{_money(c)}</title></rect>"
            f'<text x="{x:.1f}" y="{top + plot_h - h - 3:.1f}">{_money(c)}</text>'
            f'<text x="{x:.1f}" y="{top + plot_h + 14}">{escape(r.label[:16])}</text>'
        )
    out.append("</svg>")
    return "".join(out)
