"""agentminutes: coding-agent session transcripts as one normalized, versioned event stream.

The public surface, re-exported here (imported lazily, so ``import agentminutes``
stays cheap):

* parsing: :func:`events` / :func:`parse` (async), :func:`iter_events` / :func:`load` (sync),
  :func:`detect`; multi-conversation sources (data exports, ``turns.db``):
  :func:`sessions` (async) / :func:`iter_sessions` (sync) for every conversation,
  :func:`conversations` to list them;
* live: :func:`follow` (one transcript's events as it is written), :func:`follow_many`
  (:class:`Envelope` s of several transcripts or folders, as a :class:`Following`) and
  :func:`follow_to` (into a file or a collector); what a runner is told of each transcript's
  life: :class:`Started`, :class:`Ended`;
* discovery: :func:`scan` (the sessions in the harnesses' own folders, as :class:`SessionRef` s;
  ``async for`` or ``for``), :func:`locate` / :func:`locate_sync` (one session by id);
  task-scope summaries: :func:`task_stats` / :func:`task_stats_sync`;
* capture: :func:`capture` (run a headless agent command, follow the sessions it creates,
  archive them when it exits: ``agentminutes run``), :func:`archive` / :func:`archive_sync`
  (copy sessions with their subagents and sidecars, and their normalized JSON, into a folder);
* the schema: :class:`Session`, :class:`Event` and its payload types, :class:`Stats`;
* the pipeline parts: :class:`Batch`, :data:`Stage`, :func:`per_event`, the adapters'
  :class:`~agentminutes.harness.Adapter` protocol and registry (``agentminutes.harness``);
* what they return: :class:`Session`, :class:`Event`, :class:`Stats`, :class:`TaskStats`,
  :class:`ToolInteraction` (``Session.tool_interactions()``), :class:`Envelope`,
  :class:`SessionRef`, :class:`Scan` (what :func:`scan` returns), :class:`ArchiveResult`
  (what :func:`archive` returns), :class:`ConversationInfo` (what :func:`conversations` lists);
* errors (all picklable, so a worker process's error reaches the parent whole):
  :class:`ParseError`, :class:`DetectError`, :class:`SourceError` (and its
  :class:`ScanError`), :class:`OutputError`, :class:`UsageError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentminutes._lazy import lazy_exports
from agentminutes._version import __version__

__all__ = (
    "AgentminutesError",
    "ArchiveResult",
    "Batch",
    "Capture",
    "ConversationInfo",
    "DetectError",
    "Ended",
    "Envelope",
    "Event",
    "Following",
    "OutputError",
    "ParseError",
    "Scan",
    "ScanError",
    "Session",
    "SessionRef",
    "SourceError",
    "Stage",
    "Started",
    "Stats",
    "TaskStats",
    "ToolInteraction",
    "UsageError",
    "__version__",
    "archive",
    "archive_sync",
    "capture",
    "conversations",
    "detect",
    "events",
    "follow",
    "follow_many",
    "follow_to",
    "iter_events",
    "iter_sessions",
    "load",
    "locate",
    "locate_sync",
    "parse",
    "per_event",
    "scan",
    "sessions",
    "task_stats",
    "task_stats_sync",
)


if TYPE_CHECKING:
    from agentminutes.api import (
        Ended,
        Following,
        Started,
        conversations,
        events,
        follow,
        follow_many,
        follow_to,
        iter_events,
        iter_sessions,
        load,
        parse,
        sessions,
    )
    from agentminutes.capture import Capture, capture
    from agentminutes.discovery.archive import ArchiveResult, archive, archive_sync
    from agentminutes.discovery.layouts import SessionRef
    from agentminutes.discovery.sessions import Scan, locate, locate_sync, scan
    from agentminutes.discovery.task import task_stats, task_stats_sync
    from agentminutes.errors import (
        AgentminutesError,
        DetectError,
        OutputError,
        ParseError,
        ScanError,
        SourceError,
        UsageError,
    )
    from agentminutes.harness import ConversationInfo
    from agentminutes.live.follower import Envelope
    from agentminutes.pipeline.batch import Batch, Stage, per_event
    from agentminutes.pipeline.detect import detect
    from agentminutes.schema import Event, Session, Stats, TaskStats, ToolInteraction


__getattr__ = lazy_exports(globals())


def __dir__() -> list[str]:
    return sorted(__all__)
