"""Qwen Code chat recordings (``~/.qwen/projects/<sanitized-cwd>/chats/``).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.qwen_code.adapter import TOOL_KINDS, QwenCodeAdapter

__all__ = ("DESCRIPTION", "TOOL_KINDS", "QwenCodeAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # projects/<sanitized cwd>/chats/<id>.jsonl; older tmp/<hash>/chats/session-*.json.
    # QWEN_RUNTIME_DIR holds the session state; QWEN_HOME relocates the whole ~/.qwen.
    configured = env.get("QWEN_RUNTIME_DIR", "").strip() or env.get("QWEN_HOME", "").strip()
    base = path(configured).expanduser() if configured else home(env) / ".qwen"
    return [base / "projects", base / "tmp"]


#: Everything the project knows about Qwen Code.
DESCRIPTION: Final = Harness(
    name="qwen-code",
    display_name="Qwen Code",
    provider="",
    reads="lines",
    adapter="agentminutes.harness.qwen_code.adapter:QwenCodeAdapter",
    roots=_roots,
    env=("QWEN_RUNTIME_DIR", "QWEN_HOME"),
    patterns=("*.jsonl", "session-*.json"),
    archives=None,
    layout="agentminutes.harness.qwen_code.layout:QwenCodeLocator",
    tail=False,
    vocabulary="agentminutes.harness.qwen_code.drift:VOCABULARY",
    baseline="agentminutes.harness.qwen_code:baselines/qwen-code.json",
    # The adapter subtracts the cached tokens from promptTokenCount;
    # thoughtsTokenCount is the reasoning part of output.
    usage=UsageRule(input_includes_cache=False, reasoning_key="thoughtsTokenCount"),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
