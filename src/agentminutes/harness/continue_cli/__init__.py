"""Continue sessions: ``~/.continue/sessions/<session id>.json`` (the CLI ``cn`` and the IDE extensions).

Continue rewrites the whole session file after each change:
``{sessionId, title, workspaceDirectory, history: [{message, contextItems,
toolCallStates, reasoning, …}], mode, chatModelTitle, usage}``
(``CONTINUE_GLOBAL_DIR`` moves ``~/.continue``). ``sessions.json`` beside the
sessions is their index, not a session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.continue_cli.adapter import ContinueAdapter

__all__ = ("DESCRIPTION", "ContinueAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # <session id>.json beside the index sessions.json; CONTINUE_GLOBAL_DIR moves ~/.continue.
    moved = env.get("CONTINUE_GLOBAL_DIR", "").strip()
    base = path(moved).expanduser() if moved else home(env) / ".continue"
    return [base / "sessions"]


#: Everything the project knows about Continue.
DESCRIPTION: Final = Harness(
    name="continue-cli",
    provider="",
    display_name="Continue",
    reads="lines",
    adapter="agentminutes.harness.continue_cli.adapter:ContinueAdapter",
    roots=_roots,
    env=("CONTINUE_GLOBAL_DIR",),
    patterns=("????????-????-????-????-????????????.json",),
    archives=None,
    layout="agentminutes.harness.files_layout:FilesLocator",
    tail=False,
    vocabulary="agentminutes.harness.continue_cli.drift:VOCABULARY",
    baseline="agentminutes.harness.continue_cli:baselines/continue-cli.json",
    # OpenAI-shaped: prompt_tokens counts the cached tokens, completion_tokens the
    # reasoning (extra.reasoning); cost_cents / 100 is usage.cost; ids are per session.
    usage=UsageRule(input_includes_cache=True, reasoning_key="reasoning", key_rule=""),
    prompt="input",
)


__getattr__ = lazy_exports(globals())
