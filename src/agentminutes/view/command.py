"""The commands: ``view``, ``compare``, and the terminal tables of ``sessions``.

Imported only when one of them runs (rich, and the page writer, load here).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentminutes.errors import SourceError, UsageError
from agentminutes.harness.base import detects

if TYPE_CHECKING:
    from rich.console import Console

    from agentminutes.pipeline.batch import Stage
    from agentminutes.stages.redact import Redaction
    from agentminutes.view.model import SessionView

__all__ = ("find_session", "page", "run_view", "terminal_console")


def terminal_console(file: Any = None, *, width: int | None = None) -> Console:
    """A rich console for a person's terminal (markup and emoji codes never read from data)."""
    from rich.console import Console

    return Console(file=file, width=width, markup=False, emoji=False, highlight=False)


def page(text: str) -> None:
    """Show *text* (ANSI-styled) through a pager as ``git log`` does: ``$AGENTMINUTES_PAGER``,
    ``$PAGER`` or ``less -FRX`` (which exits at once when the text fits the screen)."""
    import shutil
    import subprocess

    command = os.environ.get("AGENTMINUTES_PAGER") or os.environ.get("PAGER") or "less"
    if command in ("cat", "") or shutil.which(command.split()[0]) is None:
        sys.stdout.write(text)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        sys.stdout.write(text)
        return
    assert proc.stdin is not None
    try:
        proc.stdin.write(text.encode("utf-8", "replace"))
        proc.stdin.close()
    except BrokenPipeError:  # the reader quit the pager early
        pass
    while True:
        try:
            proc.wait()
            break
        except KeyboardInterrupt:  # as git: ^C goes to the pager, which decides
            continue


def find_session(session: str, harness: str) -> str:
    """The transcript *session* names: a path as given, else a session id found as
    ``sessions --session-id`` finds it."""
    if session == "-" or os.path.exists(session) or os.sep in session:
        return session
    from agentminutes.discovery.sessions import Scan

    found = Scan(harness if not detects(harness) else None, None, session_id=session)
    for ref in found:
        return ref.path
    raise SourceError(
        f"{session}: no such file, and no session with this id in the harnesses' folders"
    )


def _stages(
    redact: bool | None, patterns: Sequence[str], config: str | None, *, default: bool
) -> tuple[list[Stage], Redaction | None]:
    from agentminutes.stages import build_stages
    from agentminutes.stages.redact import redaction

    redactor = redaction(redact, default=default, patterns=patterns, config=config)
    return build_stages(redaction=redactor), redactor


def load(
    session: str,
    *,
    harness: str,
    conversation: str | None,
    stages: Sequence[Stage],
    subagents: bool,
) -> SessionView:
    """The view of *session* (path or id)."""
    from agentminutes.view.model import default_pricer, load_view

    path = find_session(session, harness)
    if path == "-":
        raise UsageError("view reads a transcript path or a session id, not stdin")
    return load_view(
        path,
        harness=harness,
        conversation=conversation,
        stages=stages,
        subagents=subagents,
        pricer=default_pricer(),
    )


def run_view(
    session: str,
    *,
    fmt: str | None = None,
    html: str | None = None,
    output: str | None = None,
    full: bool = False,
    no_pager: bool = False,
    follow: bool = False,
    no_subagents: bool = False,
    harness: str = "auto",
    conversation: str | None = None,
    redact: bool = False,
    no_redact: bool = False,
    redact_pattern: Sequence[str] | None = None,
    redact_config: str | None = None,
) -> int:
    """``agentminutes view``: one session to read, on a terminal, as text, Markdown or HTML."""
    from agentminutes.stages.redact import chosen

    choice = chosen(redact, no_redact)
    if follow:
        if html is not None or output is not None:
            raise UsageError("--follow shows the session as it is written; drop --html and -o")
        from agentminutes.view.live import follow_readable

        path = find_session(session, harness)
        return follow_readable([path], harness=harness, full=full, plain=fmt == "text")
    stages, redactor = _stages(
        choice, redact_pattern or (), redact_config, default=html is not None
    )
    view = load(
        session,
        harness=harness,
        conversation=conversation,
        stages=stages,
        subagents=not no_subagents,
    )
    if redactor is not None:
        view.redaction = redactor.summary() + " (--no-redact shows them)"
        print(f"agentminutes: {redactor.summary()}", file=sys.stderr)
    elif html is not None:
        view.redaction = "off (--no-redact)"
        print(
            "agentminutes: warning: --no-redact: secrets in the transcript are on the page as "
            "they are",
            file=sys.stderr,
        )
    if html is not None:
        from agentminutes.view.page import write_page

        size = write_page(view, html, full=full)
        print(f"agentminutes: wrote {html} ({size:,} bytes)", file=sys.stderr)
        return 0
    return _show(view, fmt, output, full=full, no_pager=no_pager)


def _show(
    view: SessionView, fmt: str | None, output: str | None, *, full: bool, no_pager: bool
) -> int:
    from agentminutes.view.terminal import render_markdown, render_rich, render_text

    tty = output is None and sys.stdout.isatty()
    if fmt is None:
        fmt = "terminal" if tty else "text"
    if fmt in ("text", "markdown"):
        text = (render_text if fmt == "text" else render_markdown)(view, full=full)
        if output is not None:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0
    if output is not None:
        with open(output, "w", encoding="utf-8") as f:
            render_rich(view, terminal_console(f, width=120), full=full)
        return 0
    if not tty or no_pager:
        render_rich(view, terminal_console(), full=full)
        return 0
    import shutil

    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=True,
        width=shutil.get_terminal_size().columns,
        markup=False,
        emoji=False,
        highlight=False,
    )
    render_rich(view, console, full=full)
    page(buffer.getvalue())
    return 0


def run_sessions(
    *,
    fmt: str | None = None,
    limit: int | None = None,
    sort: str | None = None,
    **values: Any,
) -> int:
    """``agentminutes sessions``: on a terminal (or ``--format table``) the table of
    :mod:`agentminutes.view.listing`; anywhere else what it always printed."""
    from agentminutes.discovery.sessions import sessions_command

    table = fmt == "table" or (fmt is None and sys.stdout.isatty())
    if not table:
        if limit is not None or sort is not None:
            raise UsageError("--limit and --sort lay out the table; add --format table")
        return sessions_command(fmt=fmt or "paths", **values)
    from agentminutes.discovery.sessions import Scan
    from agentminutes.errors import ScanError
    from agentminutes.pipeline.processes import default_jobs
    from agentminutes.view.listing import sessions_table
    from agentminutes.view.model import default_pricer

    err = sys.stderr

    def report(exc: ScanError) -> None:
        print(f"agentminutes: {exc}", file=err, flush=True)

    found = Scan(
        values["harness"] or None,
        values["root"] or None,
        cwd=values["cwd"],
        session_id=values["session_id"],
        since=values["since"],
        until=values["until"],
        all_subagents=values["all_subagents"],
        on_error=report,
        jobs=default_jobs() if values.get("jobs") is None else values["jobs"],
    )
    refs = list(found)
    width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
    sessions_table(
        refs,
        sys.stdout,
        limit=30 if limit is None else limit,
        sort=sort or "activity",
        width=width,
        pricer=default_pricer(),
    )
    for line in found.details():
        print(f"agentminutes: {line}", file=err)
    print(f"agentminutes: {found.summary()}", file=err)
    return 1 if found.errors else 0


def run_compare(
    runs: Sequence[str] | None = None,
    *,
    fmt: str | None = None,
    html: str | None = None,
    output: str | None = None,
    harness: str = "auto",
    cwd: str = "",
    since: str = "",
    until: str = "",
    root: str | None = None,
) -> int:
    """``agentminutes compare``: transcripts (and groups of sessions) side by side."""
    import json

    from agentminutes.view.compare import group_runs, read_run, to_json, write_html, write_table
    from agentminutes.view.model import default_pricer

    pricer = default_pricer()
    grouped = bool(cwd or since or until or root)
    # With a selection, --harness picks its sessions; the transcripts are then detected.
    own = "auto" if grouped else harness
    sides = [read_run(find_session(r, own), harness=own, pricer=pricer) for r in runs or []]
    if grouped:
        from agentminutes.discovery.sessions import Scan

        scan_harness = harness if not detects(harness) else None
        found = Scan(scan_harness, root, cwd=cwd, since=since, until=until)
        refs = [r for r in found if not r.meta.is_subagent]
        if not refs:
            raise UsageError(f"no sessions match ({found.summary()})")
        sides += group_runs(refs, pricer)
    if len(sides) < 2:
        raise UsageError(
            "compare needs two runs or more: transcripts, or --cwd/--since selecting sessions "
            "of two harnesses"
        )
    labels = [s.label for s in sides]
    for i, side in enumerate(sides):
        if labels.count(side.label) > 1:
            side.label = f"{i + 1}: {side.label}"
    if html is not None:
        size = write_html(sides, html)
        print(f"agentminutes: wrote {html} ({size:,} bytes)", file=sys.stderr)
        return 0
    stream = open(output, "w", encoding="utf-8") if output else sys.stdout  # noqa: SIM115
    try:
        if (fmt or ("table" if stream.isatty() else "json")) == "json":
            stream.write(json.dumps(to_json(sides), indent=2, ensure_ascii=False) + "\n")
        else:
            write_table(sides, stream, width=None if stream.isatty() else 160)
    finally:
        if output:
            stream.close()
    return 0
