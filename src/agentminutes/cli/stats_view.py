"""``stats --format table``: a session's summary laid out for a person at a terminal (rich).

The JSON that ``stats`` prints by default is the contract scripts read; this
view shows the same :class:`~agentminutes.schema.Stats` at a glance: the
overview (events, messages, wall time, models), the tool mix with each tool's
result bytes and time, the tokens, the system activity, and the final answer.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any, Final

from agentminutes.schema import Stats, TaskStats
from agentminutes.view.terminal import duration_text

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = ("render", "write_table")

#: Lines of the final answer the table shows (the JSON has all of it).
ANSWER_LINES: Final = 12
#: System subtypes shown by name; the rest are summed on one row.
SYSTEM_ROWS: Final = 8


def _clean(text: str) -> str:
    """*text* from the transcript without the control characters a terminal would obey."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in "\n\t" else "\ufffd" for ch in text)


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover - the loop returns


class PromptCounts:
    """The user messages of a transcript by what they are: what a person typed, an
    interruption (``[Request interrupted by user]``), or a tagged notice the client
    sent in the user's name (an IDE selection, a slash command's output …)."""

    __slots__ = ("interruptions", "notices", "typed")

    def __init__(self) -> None:
        self.typed = 0
        self.interruptions = 0
        self.notices = 0

    def add(self, event: Any) -> None:
        """Count *event* if it is a user message a person is credited with."""
        msg = getattr(event, "user_message", None)
        if msg is None or msg.origin != "human":
            return
        text = next((b.text for b in msg.content or () if b.text.strip()), "").lstrip()
        if text.startswith("[Request interrupted by user"):
            self.interruptions += 1
        elif _TAG.match(text):
            self.notices += 1
        else:
            self.typed += 1


_TAG = re.compile(r"<[a-z][\w-]*[ >]")


def _user_messages(stats: Stats, prompts: PromptCounts | None) -> str:
    text = f"{stats.user_messages} from the user"
    if prompts is not None and (prompts.interruptions or prompts.notices):
        parts = [f"{prompts.typed} typed"]
        if prompts.interruptions:
            parts.append(
                f"{prompts.interruptions} interruption"
                + ("s" if prompts.interruptions != 1 else "")
            )
        if prompts.notices:
            parts.append(f"{prompts.notices} sent by the client (IDE context, commands)")
        text += f" ({', '.join(parts)})"
    return text


def _overview(stats: Stats, prompts: PromptCounts | None = None) -> RenderableType:
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    messages = _user_messages(stats, prompts)
    if stats.harness_messages:
        messages += f", {stats.harness_messages} injected by the harness"
    grid.add_row("events", str(stats.events))
    grid.add_row("user messages", messages)
    calls = str(stats.tool_calls)
    problems = [
        f"{n} {what}"
        for n, what in (
            (stats.tool_errors, "failed"),
            (stats.unanswered_calls, "unanswered"),
            (stats.orphan_results, "orphan results"),
        )
        if n
    ]
    if problems:
        calls += f" ({', '.join(problems)})"
    grid.add_row("tool calls", calls)
    if stats.start_time:
        grid.add_row(
            "wall time",
            f"{duration_text(stats.wall_time_ms)}  ({stats.start_time} → {stats.end_time})",
        )
    grid.add_row("models", _clean(", ".join(stats.models or [])) or "—")
    return grid


def _tools(stats: Stats) -> RenderableType | None:
    from rich.table import Table

    calls = stats.tool_calls_by_name or {}
    if not calls:
        return None
    bytes_by = stats.result_bytes_by_name or {}
    time_by = stats.tool_time_ms_by_name or {}
    table = Table(title="tool mix", title_justify="left", title_style="bold")
    table.add_column("tool")
    table.add_column("calls", justify="right")
    table.add_column("result bytes", justify="right")
    table.add_column("time", justify="right")
    for name, n in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0])):
        time = time_by.get(name)
        table.add_row(
            _clean(name),
            str(n),
            _bytes(bytes_by.get(name, 0)),
            duration_text(time) if time is not None else "",
        )
    kinds = ", ".join(
        f"{kind} {n}"
        for kind, n in sorted((stats.tool_calls_by_kind or {}).items(), key=lambda kv: -kv[1])
    )
    table.caption = f"total {_bytes(stats.result_bytes)} of results; by kind: {kinds}"
    table.caption_justify = "left"
    return table


def _tokens(stats: Stats) -> RenderableType | None:
    from rich.table import Table

    if stats.totals is None:
        return None
    usage: dict[str, Any] = {f: getattr(stats.totals, f) for f in stats.totals.__struct_fields__}
    table = Table(title="tokens", title_justify="left", title_style="bold")
    table.add_column("")
    table.add_column("tokens", justify="right")
    for field, value in usage.items():
        if isinstance(value, int) and not isinstance(value, bool):
            table.add_row(field.removesuffix("_tokens").replace("_", " "), f"{value:,}")
    return table


def _system(stats: Stats) -> RenderableType | None:
    from rich.table import Table

    by_subtype = stats.system_by_subtype or {}
    if not by_subtype:
        return None
    table = Table(title="system activity", title_justify="left", title_style="bold")
    table.add_column("subtype")
    table.add_column("events", justify="right")
    ranked = sorted(by_subtype.items(), key=lambda kv: (-kv[1], kv[0]))
    for name, n in ranked[:SYSTEM_ROWS]:
        table.add_row(_clean(name), str(n))
    rest = ranked[SYSTEM_ROWS:]
    if rest:
        table.add_row(f"{len(rest)} more", str(sum(n for _, n in rest)), style="dim")
    return table


def _answer(stats: Stats) -> RenderableType | None:
    from rich.panel import Panel
    from rich.text import Text

    if not stats.final_answer:
        return None
    lines = _clean(stats.final_answer).splitlines()
    text = "\n".join(lines[:ANSWER_LINES])
    if len(lines) > ANSWER_LINES:
        text += f"\n… {len(lines) - ANSWER_LINES} more lines (--format json has all of it)"
    return Panel(Text(text), title="final answer", title_align="left")


def _session(stats: Stats, prompts: PromptCounts | None = None) -> list[RenderableType]:
    parts = [
        _overview(stats, prompts),
        _tools(stats),
        _tokens(stats),
        _system(stats),
        _answer(stats),
    ]
    return [p for p in parts if p is not None]


def _agents(task: TaskStats) -> RenderableType | None:
    from rich.table import Table

    if not task.task.by_agent:
        return None
    table = Table(title="by agent", title_justify="left", title_style="bold")
    for column in ("agent", "events", "messages", "tool calls", "prompt tokens", "output tokens"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent, share in task.task.by_agent.items():
        totals = share.totals
        table.add_row(
            _clean(agent) or "(main)",
            str(share.events),
            str(share.assistant_messages),
            str(share.tool_calls),
            f"{getattr(totals, 'total_prompt_tokens', 0) or 0:,}" if totals else "",
            f"{totals.output_tokens:,}" if totals and totals.output_tokens is not None else "",
        )
    return table


def render(
    summary: Stats | TaskStats, title: str, prompts: PromptCounts | None = None
) -> list[RenderableType]:
    """The renderables of one session's or one task's summary, under *title*."""
    from rich.rule import Rule

    if isinstance(summary, TaskStats):
        head = f"{title}: {summary.harness} task, {len(summary.transcripts)} transcripts"
        parts: list[RenderableType] = [Rule(head, align="left"), *_session(summary.task)]
        agents = _agents(summary)
        if agents is not None:
            parts.append(agents)
        return parts
    return [Rule(title, align="left"), *_session(summary, prompts)]


def write_table(
    summary: Stats | TaskStats,
    title: str,
    out: Any,
    *,
    terminal: bool,
    prompts: PromptCounts | None = None,
) -> None:
    """Write the table to *out* (a binary stream): styled for a terminal, else plain text."""
    from rich.console import Console

    if terminal:
        console: Console = Console(highlight=False)
        for part in render(summary, title, prompts):
            console.print(part)
        return
    text = io.StringIO()
    console = Console(file=text, width=100, color_system=None, highlight=False)
    for part in render(summary, title, prompts):
        console.print(part)
    out.write(text.getvalue().encode("utf-8"))
