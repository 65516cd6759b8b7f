"""A session as a transcript to read: rich on a terminal, plain text or Markdown elsewhere.

:func:`blocks` walks a :class:`~agentminutes.view.model.SessionView` once into
:class:`Block` s (a turn's headline, the prompt, the assistant's text, thinking, a
tool call, its result, an error, a system line, a subagent's heading), each with
its nesting depth; :func:`render_rich`, :func:`render_text` and
:func:`render_markdown` only lay them out, so the three say the same things.
Long results and thinking are cut (``full`` keeps them whole); text from the
transcript never reaches the terminal as markup or control characters.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Final

from agentminutes.schema import TokenUsage
from agentminutes.view.model import AgentView, SessionView, ToolStep, Turn, block_text

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = (
    "Block",
    "blocks",
    "clean",
    "cost_text",
    "duration_text",
    "render_markdown",
    "render_rich",
    "render_text",
    "tokens_text",
    "turn_headline",
)

#: Lines of a tool result shown before it is cut (``--full`` shows all).
RESULT_LINES: Final = 12
#: Characters of one shown line of a result or input before it is cut.
LINE_CHARS: Final = 400
#: Lines of thinking shown while it is folded.
THINKING_LINES: Final = 2


@dataclass
class Block:
    """One thing to show: its kind, its text, and how deep it is nested (subagents go deeper)."""

    kind: str
    text: str
    depth: int = 0
    #: For ``call``: the tool's name; for ``turn``: the turn number; for ``agent``: its label.
    label: str = ""
    #: Lines left out by a cut (0: shown whole).
    cut: int = 0


def clean(text: str) -> str:
    """*text* without the control characters a terminal would obey (tabs and line ends kept)."""
    if text.isprintable():
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # line ends, not carriage returns
    return "".join(ch if ch.isprintable() or ch in "\n\t" else "\ufffd" for ch in text)


def duration_text(ms: int) -> str:
    """``1h 02m 03s``, ``4m 05s`` or ``6.7s``."""
    seconds, rest = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h {minutes:02d}m {seconds:02d}s"
    if minutes:
        return f"{minutes}m {seconds:02d}s"
    return f"{seconds}.{rest // 100}s"


def tokens_text(n: int) -> str:
    """``950``, ``12.3k``, ``4.5M``."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.1f}M"


def every_token(usage: TokenUsage | None) -> int:
    """The prompt's tokens (``total_prompt_tokens``, the harness's rule for counting its cache
    parts once; else input and cache added) and the output's."""
    if usage is None:
        return 0
    prompt = usage.total_prompt_tokens or (
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    )
    return prompt + usage.output_tokens


def cost_text(cost: Decimal | None, unpriced: bool) -> str:
    """``$0.0421`` (``≥`` when part is unpriced), ``unpriced``, or ``""`` for no requests."""
    if cost is None:
        return "unpriced" if unpriced else ""
    figure = f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"
    return ("≥" if unpriced else "") + figure


def turn_headline(turn: Turn) -> str:
    """The facts of a turn on one line: time, duration, models, tokens, cost, tool calls."""
    parts = [f"turn {turn.number}" if turn.number else "before the first prompt"]
    if turn.start:
        parts.append(turn.start.replace("T", " ")[:19])
    if turn.duration_ms:
        parts.append(duration_text(turn.duration_ms))
    if turn.models:
        parts.append(", ".join(turn.models))
    if turn.requests:
        u = turn.usage
        cached = u.cache_read_input_tokens + u.cache_creation_input_tokens
        tok = f"{tokens_text(turn.tokens)} tokens (in {tokens_text(u.input_tokens)}"
        tok += f" + cache {tokens_text(cached)}" if cached else ""
        parts.append(tok + f", out {tokens_text(u.output_tokens)})")
    money = cost_text(turn.cost, turn.unpriced)
    if money:
        parts.append(money)
    if turn.tool_calls:
        parts.append(f"{turn.tool_calls} tool call{'s' if turn.tool_calls != 1 else ''}")
    return " · ".join(parts)


def _cut(text: str, lines: int, full: bool) -> tuple[str, int]:
    if full:
        return text, 0
    rows = text.split("\n")
    shown = [r if len(r) <= LINE_CHARS else r[:LINE_CHARS] + "…" for r in rows[:lines]]
    return "\n".join(shown), max(0, len(rows) - lines)


def input_summary(step: ToolStep, full: bool) -> str:
    """The call's input as ``key: value`` lines (JSON objects), else as recorded."""
    text = step.input_text
    if not text:
        return ""
    try:
        value = json.loads(text)
    except ValueError:
        return _cut(text, RESULT_LINES, full)[0]
    if isinstance(value, dict):
        rows = []
        for k, v in value.items():
            shown = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            rows.append(f"{k}: {shown}")
        return _cut("\n".join(rows), RESULT_LINES, full)[0]
    return _cut(json.dumps(value, ensure_ascii=False), RESULT_LINES, full)[0]


def _agent_blocks(agent: AgentView, depth: int, full: bool) -> Iterator[Block]:
    for turn in agent.turns:
        yield Block("turn", turn_headline(turn), depth, label=str(turn.number))
        if turn.prompt is not None and turn.prompt.user_message is not None:
            text, cut = _cut(clean(block_text(turn.prompt.user_message.content)), 40, full)
            yield Block("prompt", text, depth, cut=cut)
        for step in turn.steps:
            if step.tool is not None:
                yield from _tool_blocks(step.tool, depth, full)
                continue
            ev = step.event
            if ev.assistant_message is not None:
                text = clean(block_text(ev.assistant_message.content))
                if text.strip():
                    yield Block("text", text, depth, label=ev.assistant_message.model)
            elif ev.thinking is not None:
                text, cut = _cut(clean(ev.thinking.text), THINKING_LINES, full)
                if text.strip():
                    yield Block("thinking", text, depth, cut=cut)
            elif ev.user_message is not None:
                text, cut = _cut(clean(block_text(ev.user_message.content)), 3, full)
                yield Block("harness", text, depth, cut=cut)
            elif ev.system is not None:
                s = ev.system
                line = s.subtype + (f" ({s.level})" if s.level else "")
                text, cut = _cut(clean(s.text), 3, full)
                kind = "error" if s.level == "error" or "error" in s.subtype else "system"
                yield Block(kind, line + (": " + text if text else ""), depth, cut=cut)
            elif ev.unknown is not None:
                yield Block("system", f"unknown record {ev.unknown.record_type}", depth)


def _tool_blocks(step: ToolStep, depth: int, full: bool) -> Iterator[Block]:
    if step.call is not None:
        yield Block("call", clean(input_summary(step, full)), depth, label=clean(step.name))
    elif step.results:
        yield Block("call", "(result with no recorded call)", depth, label=clean(step.name))
    for r in step.results:
        tr = r.tool_result
        if tr is None:
            continue
        text, cut = _cut(clean(block_text(tr.content)), RESULT_LINES, full)
        yield Block("error" if tr.is_error else "result", text, depth, cut=cut)
    for sub in step.subagents:
        yield from _subagent_blocks(sub, depth + 1, full)


def agent_facts(agent: AgentView) -> list[str]:
    """A subagent's heading facts: its tool calls, then its wall time and cost where known."""
    s = agent.stats
    facts = [f"{s.tool_calls} tool calls"]
    if s.wall_time_ms:
        facts.append(duration_text(s.wall_time_ms))
    money = cost_text(agent.cost, agent.unpriced)
    if money:
        facts.append(money)
    return facts


def _subagent_blocks(agent: AgentView, depth: int, full: bool) -> Iterator[Block]:
    yield Block("agent", " · ".join(agent_facts(agent)), depth, label=clean(agent.label))
    yield from _agent_blocks(agent, depth, full)


def session_headline(view: SessionView) -> list[tuple[str, str]]:
    """The session's facts as (label, value) rows: identity, time, models, tokens, cost."""
    m, s = view.meta, view.stats
    rows = [("harness", m.harness + (f" {m.harness_version}" if m.harness_version else ""))]
    if m.session_id:
        rows.append(("session", m.session_id))
    if m.cwd:
        rows.append(("project", m.cwd + (f" ({m.git_branch})" if m.git_branch else "")))
    if s.start_time:
        span = s.start_time + (f" → {s.end_time}" if s.end_time else "")
        if s.wall_time_ms:
            span += f" ({duration_text(s.wall_time_ms)})"
        rows.append(("time", span))
    if s.models:
        rows.append(("models", ", ".join(s.models)))
    turns = sum(1 for t in view.main.turns if t.number)
    rows.append(
        (
            "activity",
            f"{turns} turns · {s.user_messages} user messages · {s.tool_calls} tool calls"
            + (f" · {s.tool_errors} errors" if s.tool_errors else ""),
        )
    )
    if s.totals is not None:
        t = s.totals
        rows.append(
            (
                "tokens",
                f"{every_token(t):,} (input {t.input_tokens:,}, cache read "
                f"{t.cache_read_input_tokens:,}, cache write {t.cache_creation_input_tokens:,},"
                f" output {t.output_tokens:,})",
            )
        )
    money = cost_text(view.main.cost, view.main.unpriced)
    if money:
        rows.append(("cost", money))
    if view.redaction:
        rows.append(("redaction", view.redaction))
    return rows


def blocks(view: SessionView, *, full: bool = False) -> Iterator[Block]:
    """Every block of *view*, in reading order."""
    yield from _agent_blocks(view.main, 0, full)
    for sub in view.unattached:
        yield from _subagent_blocks(sub, 1, full)
    answer = view.stats.final_answer
    if answer:
        yield Block("answer", clean(answer), 0)


# -- plain text and Markdown ---------------------------------------------------------------------


def _indent(text: str, prefix: str, first: str | None = None) -> str:
    """*text* with *prefix* before each line, *first* (default *prefix*) before the first."""
    rows = text.split("\n")
    head = (first if first is not None else prefix) + rows[0]
    return "\n".join([head, *(prefix + r if r else prefix.rstrip() for r in rows[1:])])


def _more(b: Block) -> str:
    return f"… {b.cut} more lines (--full shows all)" if b.cut else ""


def text_lines(b: Block) -> list[str]:
    """One block as plain-text lines."""
    pad = "    " * b.depth
    out: list[str] = []
    if b.kind == "turn":
        out += ["", pad + f"── {b.text} " + "─" * max(3, 60 - len(b.text))]
    elif b.kind == "agent":
        out += ["", pad + f"▼ {b.label} · {b.text}"]
    elif b.kind == "prompt":
        out.append(_indent(b.text, pad + "> "))
    elif b.kind == "text":
        out.append(_indent(b.text, pad))
    elif b.kind == "thinking":
        out.append(_indent(b.text, pad + "    ", pad + "(thinking) "))
    elif b.kind == "call":
        head = pad + f"● {b.label}"
        out.append(head + ("\n" + _indent(b.text, pad + "    ") if b.text else ""))
    elif b.kind in ("result", "error"):
        mark = "  ✗ error: " if b.kind == "error" else "  └ "
        if b.label:
            mark += f"{b.label}: "
        out.append(_indent(b.text or "(empty)", pad + "    ", pad + mark))
    elif b.kind == "answer":
        out += ["", "── final answer " + "─" * 44, b.text]
    else:
        out.append(_indent(b.text, pad + "    ", pad + f"[{b.kind}] "))
    if b.cut:
        out.append(pad + "    " + _more(b))
    return out


def render_text(view: SessionView, *, full: bool = False) -> str:
    """*view* as plain text: one section per turn, tool calls and results indented."""
    out = [f"{label}: {value}" for label, value in session_headline(view)]
    for b in blocks(view, full=full):
        out += text_lines(b)
    return "\n".join(out) + "\n"


def _fence(text: str) -> str:
    longest = max((len(r) for r in text.split("`") if not r.strip("`")), default=0)
    ticks = "`" * max(3, longest + 1)
    run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        if len(ticks) <= run:
            ticks = "`" * (run + 1)
    return f"{ticks}\n{text}\n{ticks}"


def render_markdown(view: SessionView, *, full: bool = False) -> str:
    """*view* as Markdown: a heading per turn, results in fenced blocks, subagents quoted."""
    title = view.meta.session_id or view.path
    out = [f"# Session {title}", ""]
    out += [f"- **{label}**: {value}" for label, value in session_headline(view)]
    for b in blocks(view, full=full):
        quote = "> " * b.depth
        piece: str
        if b.kind == "turn":
            piece = f"## {b.text}"
        elif b.kind == "agent":
            piece = f"### {b.label} · {b.text}"
        elif b.kind == "prompt":
            piece = "**User:**\n\n" + b.text
        elif b.kind == "text":
            piece = b.text
        elif b.kind == "thinking":
            piece = "*Thinking:* " + b.text.replace("\n", " ")
        elif b.kind == "call":
            piece = f"**Tool call `{b.label}`**" + ("\n\n" + _fence(b.text) if b.text else "")
        elif b.kind in ("result", "error"):
            head = "**Error:**\n\n" if b.kind == "error" else "Result:\n\n"
            piece = head + _fence(b.text or "(empty)")
        elif b.kind == "answer":
            piece = "## Final answer\n\n" + b.text
        else:
            piece = f"*{b.kind}:* " + b.text
        if b.cut:
            piece += "\n\n*" + _more(b) + "*"
        out += ["", _indent(piece, quote) if quote else piece]
    return "\n".join(out) + "\n"


# -- rich --------------------------------------------------------------------------------------

_STYLES: Final = {
    "prompt": "bold",
    "text": "",
    "thinking": "dim italic",
    "result": "dim",
    "error": "red",
    "harness": "dim cyan",
    "system": "dim yellow",
}


def headline_grid(rows: list[tuple[str, str]]) -> RenderableType:
    """(label, value) rows as a two-column grid."""
    from rich.table import Table
    from rich.text import Text

    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column(overflow="fold")
    for label, value in rows:
        head.add_row(label, Text(clean(value)))
    return head


def renderable(b: Block) -> RenderableType:
    """One block as a rich renderable (its text is never read as markup)."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.rule import Rule
    from rich.text import Text

    left = 4 * b.depth
    body: Text
    if b.kind == "turn":
        # The turn and its time on the rule; the figures below it, so none is cut off.
        parts = b.text.split(" · ")
        rule = Rule(Text(" · ".join(parts[:2]), style="bold"), align="left", style="blue")
        if len(parts) <= 2:
            return Padding(rule, (1, 0, 0, left))
        figures = Text(" · ".join(parts[2:]), style="blue")
        return Padding(Group(rule, figures), (1, 0, 0, left))
    if b.kind == "agent":
        body = Text.assemble(("▼ " + b.label, "bold magenta"), (" · " + b.text, "magenta"))
        return Padding(body, (1, 0, 0, left))
    if b.kind == "answer":
        rule = Rule(Text("final answer", style="bold green"), style="green")
        return Group(Padding(rule, (1, 0, 0, 0)), Text(b.text))
    if b.kind == "call":
        body = Text.assemble(("● ", "cyan"), (b.label, "bold cyan"))
        if b.text:
            body.append("\n" + b.text, style="cyan")
        return Padding(body, (0, 0, 0, left))
    if b.kind == "prompt":
        body = Text.assemble(("❯ ", "bold green"), (b.text, "bold"))
    elif b.kind == "thinking":
        body = Text("∴ thinking: " + b.text, style="dim italic")
    elif b.kind in ("result", "error"):
        mark = "✗ error " if b.kind == "error" else "└ "
        body = Text(mark, style="bold red" if b.kind == "error" else "dim")
        if b.label:
            body.append(b.label + ": ", style="cyan")
        body.append(b.text or "(empty)", style=_STYLES[b.kind])
        left += 2
    else:
        body = Text(b.text, style=_STYLES.get(b.kind, ""))
        if b.kind in ("harness", "system"):
            body = Text(f"[{b.kind}] ", style=_STYLES[b.kind]) + body
    if b.cut:
        body.append("\n" + _more(b), style="dim")
    return Padding(body, (0, 0, 0, left))


def renderables(view: SessionView, *, full: bool = False) -> Iterator[RenderableType]:
    """*view* as rich renderables (text is never read as markup)."""
    yield headline_grid(session_headline(view))
    for b in blocks(view, full=full):
        yield renderable(b)


def render_rich(view: SessionView, console: Console, *, full: bool = False) -> None:
    """Print *view* on *console*."""
    for r in renderables(view, full=full):
        console.print(r)
