"""Continue sessions: ``~/.continue/sessions/<session id>.json`` (the CLI ``cn`` and the IDE extensions).

Continue rewrites the whole session file after each change:
``{sessionId, title, workspaceDirectory, history: [{message, contextItems,
toolCallStates, reasoning, …}], mode, chatModelTitle, usage}``
(``CONTINUE_GLOBAL_DIR`` moves ``~/.continue``). ``sessions.json`` beside the
sessions is their index, not a session.
"""

from __future__ import annotations

from agentminutes.harness.continue_cli.adapter import ContinueAdapter
from agentminutes.harness.continue_cli.vocabulary import HARNESS

__all__ = ("HARNESS", "ContinueAdapter")
