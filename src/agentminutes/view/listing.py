"""``sessions`` on a terminal: a table of the sessions found, newest first, fitting the width.

The scan is ``sessions``' own (:class:`~agentminutes.discovery.sessions.Scan`):
the same sessions, filters and summary. Only the rows to be shown are read
(``--limit``, after sorting on what the scan knows: start, last activity,
size), each once, into what a person picks a session by: when it started,
its harness, project, title (the first prompt), model, messages, tool calls,
tokens and cost (:class:`~agentminutes.schema.stats.StatsBuilder` and the
usage report's pricing, as ``stats --usage`` computes them). Sorting by tokens,
cost or tool calls reads every session found first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, TYPE_CHECKING, Any, Final

from agentminutes import timestamps
from agentminutes.errors import AgentminutesError, UsageError
from agentminutes.schema import Origin

if TYPE_CHECKING:
    from agentminutes.discovery.layouts import SessionRef
    from agentminutes.usage.prices import Pricer

__all__ = ("SORTS", "SessionRow", "read_row", "rows_table", "sessions_table")

#: What ``--sort`` takes; the first three are known from the scan, the rest need each session read.
SORTS: Final = ("activity", "started", "size", "tokens", "cost", "tools", "messages")


@dataclass
class SessionRow:
    """One session's line of the table."""

    ref: SessionRef
    title: str = ""
    model: str = ""
    messages: int = 0
    tool_calls: int = 0
    tokens: int = 0
    cost: Decimal | None = None
    unpriced: bool = False
    error: str = ""

    @property
    def started_ns(self) -> int:
        """When the session started (its window's start)."""
        return self.ref.window()[0]

    @property
    def activity_ns(self) -> int:
        """When the session was last active (its window's end)."""
        return self.ref.window()[1]


def _title(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return "".join(ch if ch.isprintable() else " " for ch in line)
    return ""


def read_row(ref: SessionRef, pricer: Pricer | None) -> SessionRow:
    """Read *ref*'s transcript into its row (an unreadable one keeps its error)."""
    from agentminutes.api import iter_events
    from agentminutes.schema.stats import StatsBuilder
    from agentminutes.usage.stats import UsageFold
    from agentminutes.view.model import block_text

    row = SessionRow(ref)
    stats = StatsBuilder()
    fold = UsageFold()
    conversation = ref.meta.session_id if ref.updated_at or _is_document(ref) else None
    try:
        for ev in iter_events(ref.path, harness=ref.meta.harness, conversation=conversation):
            stats.add(ev)
            fold.add((ev,))
            msg = ev.user_message
            if not row.title and msg is not None and msg.origin == Origin.HUMAN:
                row.title = _title(block_text(msg.content))
    except AgentminutesError as exc:
        row.error = str(exc)
    s = stats.build()
    row.model = ", ".join(s.models or [])
    assistant = (s.event_counts or {}).get("assistant_message", 0)
    row.messages = s.user_messages + assistant
    row.tool_calls = s.tool_calls
    report = fold.report(pricer)
    o = report.totals.otel
    row.tokens = o.input_tokens + o.output_tokens
    if not row.tokens and s.totals is not None:
        t = s.totals
        row.tokens = t.input_tokens + t.output_tokens + t.cache_read_input_tokens
        row.tokens += t.cache_creation_input_tokens
    if pricer is not None:
        row.cost = report.totals.cost
        row.unpriced = bool(report.totals.unpriced)
    if row.cost is None and report.totals.reported_cost is not None:
        row.cost = Decimal(str(report.totals.reported_cost))
    return row


def _is_document(ref: SessionRef) -> bool:
    from agentminutes.harness import adapter_class, is_document_adapter

    try:
        return bool(is_document_adapter(adapter_class(ref.meta.harness)))
    except (AgentminutesError, KeyError):
        return False


def _when(ns: int) -> str:
    if not ns:
        return ""
    return timestamps.format_local_ns(ns)[:16].replace("T", " ")


def _cost(row: SessionRow) -> str:
    if row.cost is None:
        return "unpriced" if row.tokens else ""
    return ("≥" if row.unpriced else "") + f"${row.cost:,.2f}"


def _short(n: int) -> str:
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


#: How the width left by the fixed columns is shared: (column, share, fewest characters).
_FLEXIBLE: Final = (("Project", 18, 7), ("Title", 42, 12), ("Model", 12, 5), ("Path", 28, 8))


def rows_table(rows: Iterable[SessionRow], *, width: int, home: str = "") -> Any:
    """The rows as a rich ``Table`` *width* characters wide at most (long cells end in ``…``);
    text from transcripts is never read as markup."""
    from rich.table import Table
    from rich.text import Text

    cells: list[list[Any]] = []
    for r in rows:
        cwd = r.ref.meta.cwd
        if home and cwd.startswith(home):
            cwd = "~" + cwd[len(home) :]
        path = r.ref.path
        if home and path.startswith(home):
            path = "~" + path[len(home) :]
        title = Text(r.title) if not r.error else Text("unreadable: " + r.error, style="red")
        if r.ref.meta.is_subagent:
            title = Text("↳ ", style="magenta") + title
        cells.append(
            [
                _when(r.started_ns),
                r.ref.meta.harness,
                Text(cwd),
                title,
                Text(r.model),
                str(r.messages),
                str(r.tool_calls),
                _short(r.tokens),
                _cost(r),
                Text(path, style="dim"),
            ]
        )
    heads = ["Started", "Harness", "Project", "Title", "Model", "Msgs", "Tools", "Tokens", "Cost"]
    heads.append("Path")
    natural = [
        max(
            [
                len(h),
                *(len(row[i]) if isinstance(row[i], str) else row[i].cell_len for row in cells),
            ]
        )
        for i, h in enumerate(heads)
    ]
    flexible = {name: (share, least) for name, share, least in _FLEXIBLE}
    fixed = sum(w for h, w in zip(heads, natural, strict=True) if h not in flexible)
    room = max(0, width - fixed - 2 * (len(heads) - 1))
    wanted = {h: w for h, w in zip(heads, natural, strict=True) if h in flexible}
    widths: dict[str, int] = {}
    # Columns that need less than their share take what they need; the rest share what is left.
    pending = dict(wanted)
    while pending:
        shares = sum(flexible[h][0] for h in pending)
        small = {h: w for h, w in pending.items() if w <= room * flexible[h][0] // max(shares, 1)}
        if not small:
            for h in pending:
                widths[h] = max(flexible[h][1], room * flexible[h][0] // max(shares, 1))
            break
        for h, w in small.items():
            widths[h] = w
            room -= w
            del pending[h]
    t = Table(header_style="bold", box=None, pad_edge=False, expand=False)
    for h in heads:
        right = h in ("Msgs", "Tools", "Tokens", "Cost")
        if h in flexible:
            t.add_column(h, overflow="ellipsis", no_wrap=True, width=max(1, widths[h]))
        else:
            t.add_column(h, justify="right" if right else "left", no_wrap=True)
    for row in cells:
        t.add_row(*row)
    return t


def sessions_table(
    refs: Iterable[SessionRef],
    out: IO[str],
    *,
    limit: int,
    sort: str,
    width: int | None = None,
    pricer: Pricer | None = None,
) -> int:
    """Lay out *refs* as the table on *out*; return how many rows it shows."""
    import os

    from rich.console import Console

    if sort not in SORTS:
        raise UsageError(f'unknown sort "{sort}" (want {", ".join(SORTS)})')
    found = list(refs)
    cheap = {
        "activity": lambda r: r.window()[1],
        "started": lambda r: r.window()[0],
        "size": lambda r: r.size_bytes,
    }
    if sort in cheap:
        found.sort(key=cheap[sort], reverse=True)
        rows = [read_row(r, pricer) for r in found[: limit or None]]
    else:
        every = [read_row(r, pricer) for r in found]
        key = {
            "tokens": lambda r: r.tokens,
            "cost": lambda r: r.cost or Decimal(0),
            "tools": lambda r: r.tool_calls,
            "messages": lambda r: r.messages,
        }[sort]
        every.sort(key=key, reverse=True)
        rows = every[: limit or None]
    console = Console(file=out, width=width, highlight=False, markup=False, emoji=False)
    table = rows_table(rows, width=console.width, home=os.path.expanduser("~"))
    console.print(table)
    if len(found) > len(rows):
        console.print(
            f"{len(rows)} of {len(found)} sessions, by {sort}; --limit 0 shows all",
            style="dim",
        )
    return len(rows)
