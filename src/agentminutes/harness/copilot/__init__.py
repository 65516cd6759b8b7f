"""GitHub Copilot CLI transcripts.

``~/.copilot/session-state/<id>/events.jsonl`` and the older flat
``~/.copilot/session-state/<id>.jsonl`` share one format: one event per line,
``{"type", "data", "id", "timestamp", "parentId", "agentId"?}``.

* ``session.start`` opens the session (id, CLI version, cwd, branch).
* ``assistant.message`` carries the model's text, its reasoning and its
  ``toolRequests``; each becomes thinking, tool calls, then one anchor.
* ``tool.execution_complete`` is the result of the call with its
  ``toolCallId`` (correlation by id, no queue); ``tool.execution_start`` is
  telemetry, and names a call the message did not.
* Inline subagents write into the parent's file; their records carry
  ``agentId``, kept on every event as ``agent_id``.
* No usage reaches the events: per-message ``outputTokens`` and the usage in
  ``session.shutdown`` stay in the system events' details, as the reference
  keeps them, so ``totals`` is left out (``usage`` and ``stats --usage`` read
  them there: :class:`agentminutes.schema.usage.RequestFolder`).
* Envelope keys match in any letter case, as the reference's Go decoder
  matches them; keys inside ``data`` are matched exactly.
* Records the reference rejects are read as well: ``hook.*`` (and
  ``custom_agent.*``, ``tool.execution_progress`` … telemetry) become system
  events of their own subtype, ``system.notification`` a system event with its
  text, ``assistant.reasoning`` a thinking event.

The oldest CLI releases wrote one pretty-printed JSON document per session
(``history-session-state/session_<id>_<ms>.json``: ``chatMessages`` as sent to
the model and a timestamped UI ``timeline``). It cannot be read line by line:
the adapter buffers it and converts it at end of input (see :func:`_legacy`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.copilot.adapter import CopilotAdapter

__all__ = ("DESCRIPTION", "CopilotAdapter")


def _copilot_home(env: Mapping[str, str]) -> Path:
    copilot_home = env.get("COPILOT_HOME", "")
    return path(copilot_home).expanduser() if copilot_home else home(env) / ".copilot"


def _roots(env: Mapping[str, str]) -> list[Path]:
    # <session>/events.jsonl (+ workspace.yaml, checkpoints/ …)
    return [_copilot_home(env) / "session-state"]


def _archives(env: Mapping[str, str]) -> list[Path]:
    # Legacy whole-document sessions (session_<id>_<ms>.json), written before session-state.
    return [_copilot_home(env) / "history-session-state"]


#: Everything the project knows about GitHub Copilot CLI.
DESCRIPTION: Final = Harness(
    name="copilot",
    display_name="GitHub Copilot CLI",
    provider="",
    reads="lines",
    adapter="agentminutes.harness.copilot.adapter:CopilotAdapter",
    roots=_roots,
    env=("COPILOT_HOME",),
    patterns=("*.jsonl",),
    archives=_archives,
    layout="agentminutes.harness.copilot.layout:CopilotLocator",
    tail=False,
    vocabulary="agentminutes.harness.copilot.drift:VOCABULARY",
    baseline="agentminutes.harness.copilot:baselines/copilot.json",
    # Copilot CLI records no usage on its messages (convert keeps them usage-free, as
    # the reference does): RequestFolder reads the assistant.usage records and the
    # session.shutdown metrics, whose inputTokens count the cache reads and writes.
    usage=UsageRule(input_includes_cache=True, key_rule=""),
    prompt="",
)


__getattr__ = lazy_exports(globals())
