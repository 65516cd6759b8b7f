"""``follow`` on a terminal and ``view --follow``: the session as it is written, to read.

On a terminal, ``follow`` (with no ``--to`` elsewhere, no ``--state`` and no
``--format``) prints each event as :mod:`agentminutes.view.terminal` shows it
(a rule per prompt, the assistant's text, thinking folded, each tool call and,
as it comes, its result, cut unless ``--full``), through the same live follow
(:func:`agentminutes.api.follow_many`). Anywhere else it is the ``follow`` it
always was (:func:`agentminutes.live.runner.follow_main`): JSONL, byte for
byte. This module imports nothing heavy until the readable view is chosen, so
``follow``'s start stays as fast as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentminutes.schema import Event
    from agentminutes.view.terminal import Block

__all__ = ("LivePrinter", "follow_command", "follow_readable")


class LivePrinter:
    """Turns each event of one or more transcripts into blocks, as they arrive."""

    def __init__(self, *, full: bool = False) -> None:
        self.full = full
        self.turns: dict[str, int] = {}
        self.names: dict[tuple[str, str], str] = {}
        self.current = ""

    def blocks(self, transcript: str, ev: Event, *, several: bool) -> Iterator[Block]:
        """The blocks *ev* of *transcript* adds to the screen."""
        from agentminutes.schema import Origin
        from agentminutes.view.model import ToolStep, block_text
        from agentminutes.view.terminal import (
            LINE_CHARS,
            RESULT_LINES,
            THINKING_LINES,
            Block,
            clean,
            input_summary,
        )

        def cut(text: str, lines: int) -> tuple[str, int]:
            if self.full:
                return text, 0
            rows = text.split("\n")
            shown = [r if len(r) <= LINE_CHARS else r[:LINE_CHARS] + "…" for r in rows[:lines]]
            return "\n".join(shown), max(0, len(rows) - lines)

        depth = 1 if ev.agent_id else 0
        if several and transcript != self.current:
            self.current = transcript
            yield Block("agent", transcript, 0, label=os.path.basename(transcript))
        meta = ev.session_meta
        if meta is not None:
            facts = [meta.harness, meta.session_id, meta.cwd]
            yield Block("system", "session " + " · ".join(clean(f) for f in facts if f), depth)
            return
        msg = ev.user_message
        if msg is not None and msg.origin == Origin.HUMAN and not ev.agent_id:
            n = self.turns[transcript] = self.turns.get(transcript, 0) + 1
            when = ev.timestamp.replace("T", " ")[:19]
            yield Block("turn", f"turn {n}" + (f" · {when}" if when else ""), depth, label=str(n))
            text, more = cut(clean(block_text(msg.content)), 40)
            yield Block("prompt", text, depth, cut=more)
        elif msg is not None:
            text, more = cut(clean(block_text(msg.content)), 3)
            yield Block("harness", text, depth, cut=more)
        elif ev.assistant_message is not None:
            a = ev.assistant_message
            text = clean(block_text(a.content))
            if text.strip():
                yield Block("text", text, depth, label=a.model)
            if a.usage is not None:
                u = a.usage
                used = f"{a.model or 'model'} · in {u.input_tokens:,}"
                cached = u.cache_read_input_tokens + u.cache_creation_input_tokens
                used += f" + cache {cached:,}" if cached else ""
                yield Block("system", used + f", out {u.output_tokens:,} tokens", depth)
        elif ev.thinking is not None:
            text, more = cut(clean(ev.thinking.text), THINKING_LINES)
            if text.strip():
                yield Block("thinking", text, depth, cut=more)
        elif ev.tool_call is not None:
            call = ev.tool_call
            self.names[(transcript, call.tool_call_id)] = call.name
            summary = input_summary(ToolStep(ev), self.full)
            yield Block("call", clean(summary), depth, label=clean(call.name))
        elif ev.tool_result is not None:
            r = ev.tool_result
            name = self.names.get((transcript, r.tool_call_id), r.tool_name)
            text, more = cut(clean(block_text(r.content)), RESULT_LINES)
            kind = "error" if r.is_error else "result"
            yield Block(kind, text, depth, label=clean(name), cut=more)
        elif ev.system is not None:
            s = ev.system
            line = s.subtype + (f" ({s.level})" if s.level else "")
            text, more = cut(clean(s.text), 3)
            kind = "error" if s.level == "error" else "system"
            yield Block(kind, line + (": " + text if text else ""), depth, cut=more)


def follow_readable(
    targets: Sequence[str],
    *,
    harness: str = "auto",
    from_end: bool = False,
    idle_exit: float | None = None,
    poll: bool = False,
    cwd: str | None = None,
    session_id: str | None = None,
    full: bool = False,
    plain: bool = False,
) -> int:
    """Print the followed transcripts' events as they arrive, readable; stop at ^C or idle."""
    import anyio

    from agentminutes.api import follow_many
    from agentminutes.live.config import stderr_notice
    from agentminutes.view.terminal import renderable, text_lines

    printer = LivePrinter(full=full)
    console: Any = None
    if not plain:
        from rich.console import Console

        console = Console(markup=False, emoji=False, highlight=False)
    several = len(targets) != 1 or any(os.path.isdir(t) for t in targets)

    def show(transcript: str, ev: Event) -> None:
        for b in printer.blocks(transcript, ev, several=several):
            if console is not None:
                console.print(renderable(b))
            else:
                sys.stdout.write("\n".join(text_lines(b)) + "\n")
        sys.stdout.flush()

    def failed(exc: Exception) -> None:
        print(f"agentminutes: {exc}", file=sys.stderr, flush=True)

    async def main() -> None:
        import signal
        from contextlib import aclosing

        stop = anyio.Event()

        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
                async for _ in received:
                    stop.set()
                    return

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(stop_on_signal)
            following = follow_many(
                list(targets) or None,
                harness=harness,
                cwd=cwd,
                session_id=session_id,
                from_end=from_end,
                idle_exit=idle_exit,
                poll=poll,
                stop=stop,
                on_error=failed,
                on_notice=stderr_notice,  # a command: what the follow notices goes to stderr
            )
            async with aclosing(following):
                async for envelope in following:
                    show(envelope.transcript, envelope.event)
            tasks.cancel_scope.cancel()

    from agentminutes.live.signals import early_signals

    if early_signals:  # stopped while it started: as follow, nothing to show, no error
        return 0
    anyio.run(main)
    return 0


def follow_command(**values: Any) -> int:
    """``agentminutes follow``: readable on a terminal, JSONL (as it always was) elsewhere."""
    fmt = values.pop("fmt", None)
    full = values.pop("full", False)
    readable = (
        fmt is None
        and values.get("to", "-") == "-"
        and not values.get("state")
        and sys.stdout.isatty()
    )
    if readable:
        unused = {
            k: v
            for k, v in values.items()
            if k
            not in (
                "targets",
                "harness",
                "to",
                "from_end",
                "idle_exit",
                "poll",
                "cwd",
                "session_id",
            )
            and v not in (None, False, "", [], (), 0, "auto", "bare", "-")
        }
        if not unused:
            return follow_readable(
                values.get("targets") or [],
                harness=values.get("harness") or "auto",
                from_end=bool(values.get("from_end")),
                idle_exit=values.get("idle_exit"),
                poll=bool(values.get("poll")),
                cwd=values.get("cwd"),
                session_id=values.get("session_id"),
                full=full,
            )
    from agentminutes.live.runner import follow_main

    return follow_main(fmt=fmt or "jsonl", **values)
