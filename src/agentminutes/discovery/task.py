"""Task-scope statistics: a session with all of its subagent transcripts (``stats --include-subagents``).

A coding agent's task is often several transcripts: the parent session and
the subagents it started, which Claude Code, Codex and Antigravity write to
files of their own (Copilot and pi record them inline, attributed by
``agent_id``). Every transcript is summarized on its own, exactly as
``stats`` summarizes it, and the summaries are added up:

* counts and per-name maps are summed, ``models`` is the union in first-seen
  order (parent first), ``totals`` are summed with ``total_prompt_tokens``
  recomputed by the harness's rule, ``start_time``/``end_time`` are the
  extremes of the parts and ``final_answer`` is the parent's;
* ``task.by_agent`` splits the task per agent: the parent's inline split (or
  the parent as a whole under ``""``), then each subagent transcript as a
  whole under its subagent id, written when there is more than one agent.

Nothing is counted twice: each transcript is one part, and inline subagents
are already inside their parent's numbers. The output equals the reference
CLI's (agentminutes 0.8.0) where it defines one. Claude Code workflow agents
nested below ``subagents/`` are left out unless ``all_subagents`` is set (the
reference never reads them; the command then says how many it left out).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agentminutes import timestamps
from agentminutes.discovery.layouts import Root, ScanContext, build_ref, locator
from agentminutes.errors import UsageError
from agentminutes.harness.base import detects
from agentminutes.harness.claude_code.layout import ClaudeCodeLocator
from agentminutes.schema import (
    SCHEMA_VERSION,
    AgentStats,
    Stats,
    TaskStats,
    TaskTranscript,
    TokenUsage,
)
from agentminutes.schema.stats import StatsBuilder, with_prompt_total

if TYPE_CHECKING:
    from agentminutes.harness import ParseOptions
    from agentminutes.pipeline.batch import Stage

__all__ = ("aggregate", "task_stats", "task_stats_sync")


def _harness_of(path: str, harness: str) -> str:
    """The line harness of *path*: *harness* checked, or detected from the head as ``stats`` does."""
    from agentminutes.harness import SNIFF_BYTES, adapter_class, detect, is_document_adapter

    if not detects(harness):
        return adapter_class(harness).name
    from agentminutes.pipeline.sources import open_error

    err = open_error(path)
    if err is not None:
        raise err
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    try:
        cls, _ = detect(head)
    except Exception as exc:
        raise type(exc)(f"{path}: {exc}") from None
    if is_document_adapter(cls):
        raise UsageError(f"{path}: a {cls.name} document; --include-subagents reads transcripts")
    return cls.name


def _stats_of(path: str, harness: str, options: ParseOptions, chain: Sequence[Stage]) -> Stats:
    from agentminutes.pipeline.sync import staged, sync_feeds

    batches, _ = next(sync_feeds(path, None, False, harness, options))
    builder = StatsBuilder()
    for batch in staged(batches, chain):
        builder.add_all(batch.events)
    return builder.build()


def task_stats_sync(
    path: str | os.PathLike[str],
    *,
    harness: str = "auto",
    root: str | os.PathLike[str] | None = None,
    all_subagents: bool = False,
    permissive: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> TaskStats:
    """Synchronous twin of :func:`task_stats`."""
    source = os.fspath(path)
    if source == "-":
        raise UsageError("--include-subagents needs a transcript path, not stdin")
    name = _harness_of(source, harness)
    loc = locator(name)
    if root is not None:
        roots = [Root(os.fspath(root))]
    elif loc is not None and loc.join in ("session_id", "content"):
        from agentminutes.discovery.sessions import harness_roots

        roots = harness_roots(name, None, env if env is not None else os.environ)
    else:
        roots = []
    parent = build_ref(name, source)
    assert parent is not None
    if name == "antigravity":
        from agentminutes.harness.antigravity.layout import conversation_id_of

        parent.meta.session_id = conversation_id_of(source)
    ctx = ScanContext(nested=all_subagents)
    gathered = loc.gather(roots, parent, ctx) if loc is not None else None
    from agentminutes.harness import ParseOptions
    from agentminutes.stages import build_stages

    options = ParseOptions(  # a summary writes no verbatim JSON: nothing to check
        permissive=permissive,
        harness_version=harness_version,
        text_form=text_form,
        check_verbatim=False,
    )
    chain = build_stages(promote=promote)
    parts = [TaskTranscript(path=source, stats=_stats_of(source, name, options, chain))]
    parts += [
        TaskTranscript(
            path=sub.path,
            subagent_id=sub.meta.subagent_id or sub.meta.session_id,
            is_subagent=True,
            stats=_stats_of(sub.path, name, options, chain),
        )
        for sub in (gathered.subagents if gathered is not None else [])
    ]
    return TaskStats(
        agentminutes_schema=SCHEMA_VERSION,
        harness=name,
        session_id=parent.meta.session_id,
        join=gathered.join if gathered is not None else "inline",
        transcripts=parts,
        task=aggregate(parts, name),
        skipped=(gathered.skipped or None) if gathered is not None else None,
    )


async def task_stats(
    path: str | os.PathLike[str],
    *,
    harness: str = "auto",
    root: str | os.PathLike[str] | None = None,
    all_subagents: bool = False,
    permissive: bool = False,
    harness_version: str = "",
    text_form: str = "bare",
    promote: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> TaskStats:
    """Summarize a session together with its subagent transcripts (``stats --include-subagents``).

    The subagents are found by the harness's own join (:attr:`TaskStats.join`):
    beside the parent (Claude Code), by the parent's session id under *root*
    (Codex; default: the harness's folders), named in the parent's results
    under *root* (Antigravity), or inline (Copilot, pi). Each transcript is
    parsed and summarized on its own; ``task`` adds them up.

    Args:
        path: the parent transcript.
        harness: its harness, or ``"auto"`` to detect it.
        root: where to look for Codex and Antigravity subagents.
        all_subagents: Claude Code: also the workflow agents nested below
            ``subagents/`` (the reference leaves them out).
        permissive, harness_version, text_form, promote: as for :func:`~agentminutes.events`.

    Raises:
        ScanError: the parent (or a Claude Code subagent) cannot be identified.
        ParseError: a transcript does not parse.
    """
    from agentminutes.pipeline.worker import off_loop

    def run() -> TaskStats:
        return task_stats_sync(
            path,
            harness=harness,
            root=root,
            all_subagents=all_subagents,
            permissive=permissive,
            harness_version=harness_version,
            text_form=text_form,
            promote=promote,
            env=env,
        )

    return await off_loop(run, "agentminutes-task-stats")


def nested_left_out(task: TaskStats, all_subagents: bool) -> int:
    """Claude Code subagent transcripts nested below ``subagents/`` that *task* does not count."""
    if all_subagents or task.harness != "claude-code" or not task.transcripts:
        return 0
    parent = build_ref("claude-code", task.transcripts[0].path)
    assert parent is not None
    return ClaudeCodeLocator().nested_count(parent)


# -- aggregation -------------------------------------------------------------------------------


def _add(into: dict[str, int], more: Mapping[str, int] | None) -> None:
    for k, v in (more or {}).items():
        into[k] = into.get(k, 0) + v


def _union(into: list[str], more: Sequence[str] | None) -> None:
    for m in more or ():
        if m not in into:
            into.append(m)


def _sum_usage(a: TokenUsage | None, b: TokenUsage | None) -> TokenUsage | None:
    if b is None:
        return a
    out = TokenUsage(input_tokens=0, output_tokens=0) if a is None else a
    out = TokenUsage(
        input_tokens=out.input_tokens,
        output_tokens=out.output_tokens,
        cache_read_input_tokens=out.cache_read_input_tokens,
        cache_creation_input_tokens=out.cache_creation_input_tokens,
    )
    out.add(b)
    return out


def _sorted(counts: dict[str, int]) -> dict[str, int] | None:
    return {k: counts[k] for k in sorted(counts)} or None


def _whole(stats: Stats) -> AgentStats:
    """One transcript's numbers as one agent's."""
    return AgentStats(
        events=stats.events,
        assistant_messages=(stats.event_counts or {}).get("assistant_message", 0),
        tool_calls=stats.tool_calls,
        tool_calls_by_name=stats.tool_calls_by_name,
        tool_calls_by_kind=stats.tool_calls_by_kind,
        tool_errors=stats.tool_errors,
        models=stats.models,
        totals=stats.totals,
    )


def _merge_agent(a: AgentStats | None, b: AgentStats) -> AgentStats:
    if a is None:
        return b
    by_name = dict(a.tool_calls_by_name or {})
    _add(by_name, b.tool_calls_by_name)
    by_kind = dict(a.tool_calls_by_kind or {})
    _add(by_kind, b.tool_calls_by_kind)
    models = list(a.models or [])
    _union(models, b.models)
    return AgentStats(
        events=a.events + b.events,
        assistant_messages=a.assistant_messages + b.assistant_messages,
        tool_calls=a.tool_calls + b.tool_calls,
        tool_calls_by_name=_sorted(by_name),
        tool_calls_by_kind=_sorted(by_kind),
        tool_errors=a.tool_errors + b.tool_errors,
        models=models or None,
        totals=_sum_usage(a.totals, b.totals),
    )


def aggregate(parts: Sequence[TaskTranscript], harness: str) -> Stats:
    """The task summary of *parts* (parent first), in the shape of one transcript's."""
    counts: dict[str, dict[str, int]] = {
        k: {}
        for k in (
            "event_counts",
            "tool_calls_by_name",
            "tool_calls_by_kind",
            "result_bytes_by_name",
            "tool_time_ms_by_name",
            "system_by_subtype",
        )
    }
    scalars = dict.fromkeys(
        (
            "events",
            "user_messages",
            "harness_messages",
            "tool_calls",
            "tool_errors",
            "unanswered_calls",
            "orphan_results",
            "result_bytes",
            "fetch_raw_bytes",
        ),
        0,
    )
    models: list[str] = []
    totals: TokenUsage | None = None
    start: tuple[int, str] | None = None
    end: tuple[int, str] | None = None
    agents: dict[str, AgentStats] = {}
    for i, part in enumerate(parts):
        st = part.stats
        for key in scalars:
            scalars[key] += getattr(st, key)
        for key, into in counts.items():
            _add(into, getattr(st, key))
        _union(models, st.models)
        totals = _sum_usage(totals, st.totals)
        for text, pick_min in ((st.start_time, True), (st.end_time, False)):
            ns = timestamps.to_ns(text) if text else None
            if ns is None:
                continue
            if pick_min and (start is None or ns < start[0]):
                start = (ns, text)
            if not pick_min and (end is None or ns > end[0]):
                end = (ns, text)
        if i == 0 and st.by_agent:
            for key, agent in st.by_agent.items():
                agents[key] = _merge_agent(agents.get(key), agent)
        else:
            key = part.subagent_id if i else ""
            agents[key] = _merge_agent(agents.get(key), _whole(st))
    by_agent = None
    if len(agents) > 1:
        by_agent = {}
        for key in sorted(agents):
            agent = agents[key]
            if agent.totals is not None:
                agent.totals = with_prompt_total(agent.totals, harness)
            by_agent[key] = agent
    wall = (end[0] - start[0]) // 1_000_000 if start is not None and end is not None else 0
    return Stats(
        events=scalars["events"],
        event_counts=_sorted(counts["event_counts"]),
        user_messages=scalars["user_messages"],
        harness_messages=scalars["harness_messages"],
        tool_calls=scalars["tool_calls"],
        tool_calls_by_name=_sorted(counts["tool_calls_by_name"]),
        tool_calls_by_kind=_sorted(counts["tool_calls_by_kind"]),
        tool_errors=scalars["tool_errors"],
        unanswered_calls=scalars["unanswered_calls"],
        orphan_results=scalars["orphan_results"],
        result_bytes=scalars["result_bytes"],
        result_bytes_by_name=_sorted(counts["result_bytes_by_name"]),
        fetch_raw_bytes=scalars["fetch_raw_bytes"],
        tool_time_ms_by_name=_sorted(counts["tool_time_ms_by_name"]),
        system_by_subtype=_sorted(counts["system_by_subtype"]),
        models=models or None,
        totals=with_prompt_total(totals, harness) if totals is not None else None,
        start_time=start[1] if start is not None else "",
        end_time=end[1] if end is not None else "",
        wall_time_ms=max(wall, 0),
        final_answer=parts[0].stats.final_answer if parts else "",
        by_agent=by_agent,
    )
