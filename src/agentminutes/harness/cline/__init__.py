"""Cline (and its forks Roo Code and Kilo Code): one task folder per session.

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.cline.adapter import TOOL_KINDS, ClineAdapter, FolderTail

__all__ = ("DESCRIPTION", "TOOL_KINDS", "ClineAdapter", "FolderTail")


#: VS Code and its forks, whose global storage holds the extensions' task folders.
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
#: Cline and its forks, by extension id.
_EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # <task id>/{api_conversation_history,ui_messages,task_metadata}.json.
    # The CLI keeps tasks in ~/.cline/data/tasks; the extensions in each editor's globalStorage.
    base = home(env)
    config = env.get("XDG_CONFIG_HOME", "").strip()
    bases = [path(config).expanduser() if config else base / ".config"]
    bases.append(base / "Library" / "Application Support")
    if env.get("APPDATA", "").strip():
        bases.append(path(env["APPDATA"]))
    # The 3.x CLI: ~/.cline/data/sessions/<id>/<id>.messages.json.
    roots = [base / ".cline" / "data" / "tasks", base / ".cline" / "data" / "sessions"]
    roots.extend(
        b / editor / "User" / "globalStorage" / ext / "tasks"
        for b in bases
        for editor in _EDITORS
        for ext in _EXTENSIONS
    )
    return roots


#: Everything the project knows about Cline.
DESCRIPTION: Final = Harness(
    name="cline",
    display_name="Cline",
    provider="",
    reads="documents",
    adapter="agentminutes.harness.cline.adapter:ClineAdapter",
    roots=_roots,
    env=("XDG_CONFIG_HOME", "APPDATA"),
    patterns=("ui_messages.json", "api_conversation_history.json", "*.messages.json"),
    archives=None,
    layout="agentminutes.harness.cline.layout:ClineLocator",
    tail=True,
    vocabulary="agentminutes.harness.cline.drift:VOCABULARY",
    baseline="agentminutes.harness.cline:baselines/cline.json",
    # api_req_started: tokensIn excludes cacheReads and cacheWrites; cost is
    # usage.cost; message ids are <task id>:<record>.
    usage=UsageRule(input_includes_cache=False, key_rule="message"),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
