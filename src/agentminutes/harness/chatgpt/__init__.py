"""ChatGPT data exports: ``conversations.json``, alone or inside the export ZIP.

The export is one JSON array of conversations (a per-conversation JSON file
holds one conversation object of the same shape). A conversation keeps its
messages as a tree, ``mapping``: node id → ``{id, message, parent, children}``,
where editing a prompt or regenerating an answer starts a sibling branch.
``current_node`` is the leaf the user last saw; the conversation as the model
saw it is the path from the root down to that leaf (the *active branch*).

Records, for accounting, are the mapping's nodes, numbered from 1 in the
order the export lists them. Each node becomes events or a counted skip:

* ``root`` — the message-less node at the top of the tree;
* ``off_branch`` — a node on an abandoned branch (an edited prompt, a
  regenerated answer);
* ``empty/<role>`` — a message with no content at all (the export's blank
  system message at the top of most conversations);
* ``reasoning_recap`` — the UI's "Thought for 12s" line after a reasoning phase.

Every other message on the active branch becomes events, by author role:

* ``user`` → ``user_message`` (origin ``harness`` for content the user did not
  type into the prompt: custom instructions, messages hidden from the
  conversation view);
* ``system`` → ``system`` with subtype ``system/<content_type>``;
* ``assistant`` → ``assistant_message`` (model from ``metadata.model_slug``,
  stop reason from ``metadata.finish_details.type``); a ``thoughts`` message
  becomes ``thinking`` events that share the ``message_id`` of the answer
  that follows it; a message addressed to a tool (``recipient`` other than
  ``all``: ``python``, ``browser``, ``web.run``, ``dalle.text2im``, a plugin
  operation …) becomes a ``tool_call`` (``tool_call_id`` = the message id, the
  input = the message's ``content`` verbatim) with its ``assistant_message``;
* ``tool`` → ``tool_result``, paired with the latest call since the last user
  message whose recipient names this tool, else with the latest call (several
  results may answer one call, as browsing quotes do); ``system_error``
  content is an error. A tool message with no call before it is an orphan.

Content types this adapter has no rule for keep their ``content`` object
verbatim as an ``other`` content block, next to whatever text they carry.
Exports record no token usage: assistant messages carry none and session
totals are omitted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import EXPORT_ONLY, Harness

if TYPE_CHECKING:
    from agentminutes.harness.chatgpt.adapter import ChatGPTAdapter

__all__ = ("DESCRIPTION", "ChatGPTAdapter")


#: Everything the project knows about ChatGPT.
DESCRIPTION: Final = Harness(
    name="chatgpt",
    display_name="ChatGPT",
    provider="openai",
    reads="documents",
    adapter="agentminutes.harness.chatgpt.adapter:ChatGPTAdapter",
    **EXPORT_ONLY,
)


__getattr__ = lazy_exports(globals())
