"""Writing a usage report: a table (laid out with rich), a JSON array, or CSV.

The table shows comparable numbers whatever the harness: *input* is fresh
input (the normalized input less its cache parts), then output, cache writes,
cache reads, their total and the cost; a totals row closes it, and a line
below names what is unpriced and why. JSON and CSV carry the raw counts as
each harness recorded them, the normalized view and the cost of each row.
"""

from __future__ import annotations

import csv
from typing import IO, Any

import msgspec

from agentminutes.usage.blocks import Block
from agentminutes.usage.prices import NO_CATALOG
from agentminutes.usage.report import GROUP_KEYS, Row, UsageReport

__all__ = (
    "active_block_line",
    "block_json",
    "render_csv",
    "render_json",
    "render_table",
    "table",
    "unpriced_line",
)

_CSV_OTEL = (
    "input_tokens",
    "output_tokens",
    "cache_read.input_tokens",
    "cache_creation.input_tokens",
    "reasoning.output_tokens",
    "cache_creation.5m.input_tokens",
    "cache_creation.1h.input_tokens",
)


def render_json(report: UsageReport, out: IO[bytes]) -> None:
    """One JSON array, one object per row (keys, raw counts, ``otel``, cost)."""
    rows = [row.to_json(report.costs) for row in report.rows]
    for data in rows:
        block = report.blocks.get(data.get("block", ""))
        if block is not None:
            data.update(block_json(block, report.now_ns))
    out.write(msgspec.json.format(msgspec.json.encode(rows), indent=2) + b"\n")


def block_json(block: Block, now_ns: int) -> dict[str, Any]:
    """A block's times, and for the active one its burn rate and projection (JSON fields)."""
    from agentminutes import timestamps

    out: dict[str, Any] = {
        "block_start": timestamps.format_ns(block.start_ns),
        "block_end": timestamps.format_ns(block.end_ns),
        "block_last_request": timestamps.format_ns(block.last_ns),
        "block_active": block.active(now_ns),
    }
    if out["block_active"]:
        tokens_rate, cost_rate = block.burn_per_minute()
        tokens, cost = block.projection(now_ns)
        out["burn_tokens_per_minute"] = round(tokens_rate, 1)
        out["burn_cost_usd_per_hour"] = None if cost_rate is None else round(cost_rate * 60, 6)
        out["projected_tokens"] = tokens
        out["projected_cost_usd"] = None if cost is None else round(cost, 6)
        out["minutes_left"] = max(0, (block.end_ns - now_ns) // 60_000_000_000)
    return out


def active_block_line(report: UsageReport) -> str:
    """The table's line on the active block (``""`` when none is active)."""
    for label, block in sorted(report.blocks.items()):
        if not block.active(report.now_ns):
            continue
        tokens_rate, cost_rate = block.burn_per_minute()
        tokens, cost = block.projection(report.now_ns)
        left = max(0, (block.end_ns - report.now_ns) // 60_000_000_000)
        text = f"active block {label} ({left // 60}h{left % 60:02d}m left): "
        if cost_rate is None and not tokens_rate:
            return text + f"{block.tokens:,} tokens so far, one request: no burn rate yet"
        text += f"burning {tokens_rate:,.0f} tokens/min"
        if cost_rate is not None:
            text += f", ${cost_rate * 60:,.2f}/h"
        text += f"; projected by its end: {tokens:,} tokens"
        if cost is not None:
            text += f", ${cost:,.2f}"
        return text
    return ""


def render_csv(report: UsageReport, out: IO[str]) -> None:
    """A header and one line per row; ``otel.*`` columns hold the normalized view."""
    keys = [GROUP_KEYS[b] for b in report.by]
    fields = [
        *keys,
        "requests",
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
        *(f"otel.{k}" for k in _CSV_OTEL),
    ]
    if report.costs:
        fields += ["cost_usd", "cost_status", "unpriced_tokens", "cost_sources"]
    fields.append("reported_cost_usd")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(fields)
    for row in report.rows:
        data = row.to_json(report.costs)
        otel = data.pop("otel")
        line: list[Any] = [data[k] for k in keys]
        line += [
            row.requests,
            row.input_tokens,
            row.output_tokens,
            row.cache_read_input_tokens,
            row.cache_creation_input_tokens,
        ]
        line += [otel.get(k, "") for k in _CSV_OTEL]
        if report.costs:
            line += [
                "" if row.cost is None else f"{row.cost:.6f}",
                row.cost_status,
                row.unpriced_tokens,
                "; ".join(row.cost_sources),
            ]
        line.append("" if row.reported_cost is None else f"{row.reported_cost:.6f}")
        writer.writerow(line)


def _no_tokens(row: Row) -> bool:
    """A row whose requests carry no token at all (JSON and CSV still list it)."""
    o = row.otel
    raw = row.input_tokens + row.output_tokens + row.cache_read_input_tokens
    raw += row.cache_creation_input_tokens
    return not (o.input_tokens or o.output_tokens or raw) and row.reported_cost is None


def _fresh(row: Row) -> int:
    o = row.otel
    return o.input_tokens - o.cache_read_input_tokens - o.cache_creation_input_tokens


def _cost(row: Row) -> str:
    if row.cost is None:
        return "unpriced"
    text = f"${row.cost:,.2f}"
    return text + "*" if row.unpriced else text


def first_prompt(path: str, harness: str) -> str:
    """The first line of the first prompt a person wrote in the transcript at *path*
    (``PATH#ID``: conversation ID of a source holding several); ``""`` when it has none."""
    from agentminutes.api import iter_events
    from agentminutes.errors import AgentminutesError

    source, _, conversation = path.partition("#")
    try:
        for ev in iter_events(source, harness=harness or "auto", conversation=conversation or None):
            msg = ev.user_message
            if msg is None or msg.origin != "human":
                continue
            for block in msg.content or []:
                for line in block.text.splitlines():
                    if line.strip():
                        return "".join(ch if ch.isprintable() else " " for ch in line.strip())
    except (AgentminutesError, OSError):
        return ""
    return ""


def _session_cells(report: UsageReport, session: str) -> list[Any]:
    from rich.text import Text

    from agentminutes import timestamps

    facts = report.sessions.get(session)
    if facts is None:
        return ["", "", ""]
    title = first_prompt(facts.path, facts.harness) if facts.path else ""
    when = timestamps.format_local_ns(facts.last_ns)[:16].replace("T", " ") if facts.last_ns else ""
    return [Text(facts.project), Text(title), when]


def _last_ns(report: UsageReport, row: Row) -> int:
    facts = report.sessions.get(row.keys[GROUP_KEYS["session"]])
    return facts.last_ns if facts is not None else 0


def table(
    report: UsageReport, *, changed: set[tuple[str, ...]] | None = None, compact: bool = False
) -> Any:
    """The report as a rich ``Table`` (rows in *changed* are highlighted, for ``--follow``).

    Grouped by session, each id has its project, title (its first prompt) and last
    activity beside it, and the rows go by last activity, the latest last."""
    from rich.table import Table

    t = Table(
        show_footer=False,
        header_style="bold",
        box=None,
        pad_edge=False,
        collapse_padding=compact,  # one space between columns, not two
    )
    by_session = "session" in report.by and bool(report.sessions)
    for name in report.by:
        t.add_column(name.capitalize(), no_wrap=name != "project")
        if name == "session" and by_session:
            t.add_column("Project", no_wrap=True, overflow="ellipsis", max_width=32)
            t.add_column("Title", no_wrap=True, overflow="ellipsis", max_width=48)
            t.add_column("Last activity", no_wrap=True)
    titles = ("Input", "Output", "Cache write", "Cache read", "Total tokens")
    if compact:
        titles = ("In", "Out", "Cache w", "Cache r", "Total")
    for title in titles:
        t.add_column(title, justify="right", no_wrap=True)
    if report.costs:
        t.add_column("Cost" if compact else "Cost (USD)", justify="right", no_wrap=True)
    if any(r.reported_cost is not None for r in report.rows):
        t.add_column("Reported", justify="right")
    reported = any(r.reported_cost is not None for r in report.rows)
    rows = report.rows
    if by_session:
        rows = sorted(rows, key=lambda r: _last_ns(report, r))
    at = report.by.index("session") + 1 if by_session else 0
    for row in rows:
        if _no_tokens(row):
            continue  # e.g. Claude Code's <synthetic> notices: rows of zeros are noise
        cells = _cells(row, report, reported, compact)
        key = tuple(row.keys.values())
        style = "bold yellow" if changed and key in changed else None
        keys: list[Any] = [row.keys[GROUP_KEYS[b]] for b in report.by]
        if by_session:
            keys[at:at] = _session_cells(report, row.keys[GROUP_KEYS["session"]])
        t.add_row(*keys, *cells, style=style)
    total = report.totals
    t.add_section()
    blank = len(report.by) - 1 + (3 if by_session else 0)
    t.add_row("Total", *[""] * blank, *_cells(total, report, reported, compact), style="bold")
    return t


def _short(n: int) -> str:
    """A token count in at most five characters: 999, 12.3k, 4.56M, 1.23B."""
    for limit, unit in ((10**9, "B"), (10**6, "M"), (10**3, "k")):
        if abs(n) >= limit:
            value = n / limit
            digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
            return f"{value:.{digits}f}{unit}"
    return str(n)


def _cells(row: Row, report: UsageReport, reported: bool, compact: bool = False) -> list[str]:
    o = row.otel
    counts = [
        _fresh(row),
        o.output_tokens,
        o.cache_creation_input_tokens,
        o.cache_read_input_tokens,
        o.input_tokens + o.output_tokens,
    ]
    cells = [_short(n) if compact else f"{n:,}" for n in counts]
    if report.costs:
        cells.append(_cost(row))
    if reported:
        cells.append("" if row.reported_cost is None else f"${row.reported_cost:,.2f}")
    return cells


def unpriced_line(report: UsageReport) -> str:
    """What no price source priced: tokens per model and why (``""`` when everything is priced)."""
    total = report.totals
    if not report.costs or not total.unpriced:
        return ""
    # Models grouped by why they are unpriced: a reason that holds for every model (no
    # catalog installed) is said once, not once per model.
    by_reason: dict[str, list[tuple[str, int]]] = {}
    for model, n in sorted(total.unpriced.items(), key=lambda kv: (-kv[1], kv[0])):
        reason = total.unpriced_reasons.get(model, "")
        by_reason.setdefault(reason, []).append((model or "(no model)", n))
    parts = []
    for reason, models in by_reason.items():
        if reason.startswith(NO_CATALOG):
            parts.append(f"{_plural(len(models), 'model')} ({reason})")
            continue
        listed = ", ".join(f"{model} {n:,}" for model, n in models)
        parts.append(f"{listed} ({reason})" if reason else listed)
    return f"unpriced: {total.unpriced_tokens:,} tokens, not in the cost above: " + "; ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"1 {word}" if n == 1 else f"{n} {word}s"


def render_table(report: UsageReport, out: IO[str], *, width: int | None = None) -> None:
    """The table, then the unpriced line and the price sources."""
    from rich.console import Console

    console = Console(file=out, width=width, highlight=False, soft_wrap=False)
    laid_out = table(report)
    wide = console.options.update_width(100_000)
    needed = console.measure(laid_out, options=wide).maximum
    if needed > console.width and (console.is_terminal or width is not None):
        # Too wide for the terminal: counts in k, M and B (12.3M) and short titles.
        laid_out = table(report, compact=True)
        needed = console.measure(laid_out, options=wide).maximum
    if width is None and needed > console.width:
        # Numbers are never cut: a narrow terminal scrolls, a pipe gets the whole line.
        console = Console(file=out, width=needed, highlight=False, soft_wrap=False)
    console.print(laid_out)
    line = unpriced_line(report)
    active = active_block_line(report)
    if active:
        console.print(active, markup=False)
    # Plain text: model names and install hints hold brackets rich would read as markup.
    if line:
        console.print(line, markup=False)
    if report.costs and report.totals.cost_sources:
        console.print("prices: " + ", ".join(report.totals.cost_sources), markup=False)
