"""Codex CLI transcripts, in the three shapes Codex has written them.

* **Rollouts** (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, also
  ``archived_sessions/``), CLI 0.3x and later: one ``{timestamp, type,
  payload}`` envelope a line. ``response_item`` records are the model's
  conversation (Responses API items), ``event_msg`` records the harness's
  telemetry, ``turn_context`` the per-turn settings (the model among them).
* **Legacy rollouts** (before 0.3x): a bare metadata object on line 1, then
  bare Responses API items without envelope or timestamp, and
  ``{"record_type": "state"}`` markers.
* **``codex exec --json`` streams** (``thread.started``, ``turn.*``,
  ``item.*``), also as written by loggers that wrap each event as
  ``{"log_type": "stream_output", "timestamp_unix": …, "data": {…}}``.

The shape is decided by the first record, so one adapter serves them all and
every output says ``harness: codex``.

Accounting follows the reference implementation: an assistant message is
held until the next conversation item (or turn boundary) shows it complete,
and carries every ``token_count`` recorded since the previous assistant
message closed. ``event_msg`` copies of conversation items
(``user_message``, ``agent_message``, ``agent_reasoning``, ``*_delta``) are
counted skips; telemetry stays ``system`` unless a promotion stage
(:mod:`agentminutes.stages.codex_promotions`) turns it into tool events.

Beyond what the reference reads (its output is a subsequence of ours there):

* ``ghost_snapshot`` (0.58-0.72, the harness's undo commit) is a ``system``
  event; ``tool_search_call`` / ``tool_search_output`` (0.140+) are a
  ``tool_search`` call of kind ``search`` and its result, one content block per
  tool definition loaded; ``image_generation_call`` is an ``image_generation``
  call and result on its line, like ``web_search_call``.
* Legacy rollouts: line 1 is the ``session_meta`` (its ``instructions`` a
  ``session_meta/instructions`` system event), bare items read exactly as
  ``response_item`` payloads (without timestamps), ``{"record_type":"state"}``
  markers are counted skips (``record_type/state``).
* ``exec --json``: ``thread.started`` is the ``session_meta``; items map onto
  the rollout vocabulary (``command_execution`` is ``exec_command``,
  ``file_change`` ``apply_patch``, ``todo_list`` ``update_plan``, MCP calls
  ``mcp__<server>__<tool>``), a command's or MCP call's ``tool_call`` at its
  ``item.started`` and its result at ``item.completed``, other started and
  updated items are counted skips; ``turn.completed`` usage goes to the turn's
  last agent message. A logger's wrapping supplies timestamps
  (``timestamp_unix``, in UTC), the working directory and the prompt (a human
  ``user_message``); its header and the ``thread.started`` line form the meta.
* A pretty-printed rollout (records spread over several lines) is gathered
  record by record; each event's provenance spans its record's lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.codex.adapter import CodexAdapter
    from agentminutes.harness.codex.vocabulary import HARNESS

__all__ = ("DESCRIPTION", "HARNESS", "CodexAdapter")


def _codex_home(env: Mapping[str, str]) -> Path:
    codex_home = env.get("CODEX_HOME", "").strip()
    return path(codex_home).expanduser() if codex_home else home(env) / ".codex"


def _roots(env: Mapping[str, str]) -> list[Path]:
    # YYYY/MM/DD/rollout-<time>-<id>.jsonl
    return [_codex_home(env) / "sessions"]


def _archives(env: Mapping[str, str]) -> list[Path]:
    # rollout-<time>-<id>.jsonl
    return [_codex_home(env) / "archived_sessions"]


#: Everything the project knows about Codex.
DESCRIPTION: Final = Harness(
    name="codex",
    display_name="Codex",
    provider="openai",
    reads="lines",
    adapter="agentminutes.harness.codex.adapter:CodexAdapter",
    roots=_roots,
    env=("CODEX_HOME",),
    patterns=("rollout-*.jsonl",),
    archives=_archives,
    layout="agentminutes.harness.codex.layout:CodexLocator",
    tail=False,
    vocabulary="agentminutes.harness.codex.drift:VOCABULARY",
    baseline="agentminutes.harness.codex:baselines/codex.json",
    # OpenAI Responses usage: input includes cached_input_tokens; reasoning is in
    # the token_count records (RequestFolder reads it there), not on the message.
    usage=UsageRule(input_includes_cache=True, key_rule=""),
    prompt="input",
)


__getattr__ = lazy_exports(globals())
