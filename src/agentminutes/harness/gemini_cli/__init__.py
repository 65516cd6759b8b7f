"""Gemini CLI chat recordings: ``~/.gemini/tmp/<project>/chats/``.

Four shapes, told apart by the first line:

* **JSONL** (``session-<time>-<id>.jsonl``, Gemini CLI 0.39 and later; subagents in
  ``chats/<parent-id>/<id>.jsonl``): a metadata header ``{sessionId, projectHash,
  startTime, lastUpdated, kind, directories?}``, then *bare* message records
  ``{id, timestamp, type, content, …}`` appended whenever a message is recorded
  **or changed**: the recorder re-appends the whole message under the same ``id``
  when its token counts or tool calls arrive. Besides those, ``{"$set": {…}}``
  patches the conversation's metadata (``lastUpdated`` after every message,
  ``summary``, ``directories``, ``memoryScratchpad``), ``{"$set": {"messages":
  […]}}`` replaces the whole history (compression, rollback, output masking), and
  ``{"$rewindTo": id}`` drops a message and everything after it.
* **Legacy session JSON** (``session-*.json``, before 0.39): the same conversation
  as one document ``{sessionId, projectHash, …, messages: […]}``, rewritten on
  every turn. Buffered and converted at end of input.
* **Checkpoints**: ``checkpoint-<tag>.json`` from ``/chat save`` holds the model
  history as Gemini API contents (``[{role, parts}]``, or ``{history: […]}``);
  the restorable tool checkpoints in ``checkpoints/`` hold it as
  ``clientHistory`` next to the pending ``toolCall`` and its ``commitHash``.
* **``logs.json``**: the project's prompt log, ``[{sessionId, messageId, type:
  "user", message, timestamp}]`` across every session of the project.

Message types: ``user``; ``gemini`` (one model response: ``content``,
``thoughts`` summaries, ``toolCalls`` with their results, ``tokens``, ``model``);
``info``, ``warning`` and ``error`` (notices shown in the UI, never sent to the
model).

Mapping decisions:

* **Re-appended messages and ``$set``** — events are only ever appended, never
  retracted or re-emitted. A ``gemini`` message is *held* until a later record
  shows it is complete: any record for another message, a history rewrite, a
  rewind, or end of input. Its thinking, tool-call and tool-result events go out
  as soon as a version of the record shows them (each once, by tool-call id);
  the ``assistant_message`` with the final ``tokens`` goes out when it is
  released, with provenance spanning every line that carried it, as Claude
  Code's per-message fold does. A re-appended message that is no longer the
  held one adds only tool events not seen before, else it is a counted skip
  (``<type>/rewrite``). A ``$set`` of ``lastUpdated`` alone is a counted skip
  (``$set``); other metadata updates are ``system`` events ``metadata_update``
  (text: the summary, if set); a history replacement is a ``system`` event
  ``history_rewrite`` (text: how many messages were kept, added, removed),
  followed by events for the messages it adds (their user messages are
  ``harness``: compression summaries, tool-response turns); kept messages are
  not emitted again, and their content re-rendered as parts adds nothing.
  ``$rewindTo`` is a ``system`` event ``rewind`` (text: the message id); what
  it drops was already emitted and stays in the stream.
* **Tokens** — ``input`` is Gemini's ``promptTokenCount``, which *includes* the
  ``cached`` tokens, and ``output`` (``candidatesTokenCount``) *excludes* the
  ``thoughts`` tokens, which are billed as output. To match the other harnesses
  (fresh input apart from cache reads, reasoning inside output):
  ``input_tokens = input - cached + tool`` (``tool`` is the tool-use prompt,
  billed as input and counted apart by Gemini), ``cache_read_input_tokens =
  cached``, ``output_tokens = output + thoughts``. So ``input_tokens +
  cache_read_input_tokens + output_tokens`` equals Gemini's ``total``; ``thoughts``,
  ``tool`` and ``total`` stay verbatim in ``usage.extra`` (``thoughts`` is a part
  of ``output_tokens``, never to be added to it).
* **Tool calls** — each ``toolCalls`` entry is a ``tool_call`` (timestamp of the
  message) and, once it has a result or a final status, a ``tool_result``
  (timestamp of the tool call record; ``is_error`` for ``error`` and
  ``cancelled``; ``resultDisplay`` as enrichment). Newer releases also record
  the function responses sent back to the model as a ``user`` message; results
  already emitted from ``toolCalls`` are not repeated from it (a message of
  nothing else is a counted skip, ``user/functionResponse``), and a response
  whose call recorded no result becomes that call's ``tool_result``.
* The header becomes ``session_meta`` and a ``system`` event ``session`` whose
  details are the header verbatim (for a legacy document: its top-level fields
  other than the messages). ``logs.json`` is converted as one stream of ``human``
  user messages; a ``system`` event ``logs/session`` (text: the session id) opens
  each run of entries from one session. A tool checkpoint's pending call is a
  ``system`` event ``checkpoint/tool_call``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.gemini_cli.adapter import GeminiCliAdapter

__all__ = ("DESCRIPTION", "GeminiCliAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # <project>/chats/session-<time>-<id>.jsonl, chats/<session id>/<subagent id>.jsonl.
    # GEMINI_CLI_HOME stands in for the home directory: state lives in its .gemini/.
    configured = env.get("GEMINI_CLI_HOME", "").strip()
    base = path(configured).expanduser() if configured else home(env)
    return [base / ".gemini" / "tmp"]


#: Everything the project knows about Gemini CLI.
DESCRIPTION: Final = Harness(
    name="gemini-cli",
    display_name="Gemini CLI",
    provider="gcp.gemini",
    reads="lines",
    adapter="agentminutes.harness.gemini_cli.adapter:GeminiCliAdapter",
    roots=_roots,
    env=("GEMINI_CLI_HOME",),
    patterns=("*.jsonl",),
    archives=None,
    layout="agentminutes.harness.gemini_cli.layout:GeminiCliLocator",
    tail=False,
    vocabulary="agentminutes.harness.gemini_cli.drift:VOCABULARY",
    baseline="agentminutes.harness.gemini_cli:baselines/gemini-cli.json",
    # The adapter maps promptTokenCount - cached (+ tool prompt) to input and adds
    # the thoughts to output; extra.thoughts is the reasoning part.
    usage=UsageRule(input_includes_cache=False, reasoning_key="thoughts"),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
