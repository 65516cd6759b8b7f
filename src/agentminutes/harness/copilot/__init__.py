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

from agentminutes.harness.copilot.adapter import CopilotAdapter

__all__ = ("CopilotAdapter",)
