"""OpenHands CLI conversations (``~/.openhands/conversations/<id>/``: event files and state).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, env_path, home
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.openhands.adapter import OpenHandsAdapter

__all__ = ("DESCRIPTION", "OpenHandsAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # OPENHANDS_CONVERSATIONS_DIR, else OPENHANDS_PERSISTENCE_DIR (default ~/.openhands)/conversations.
    direct = env_path(env, "OPENHANDS_CONVERSATIONS_DIR")
    if direct is not None:
        return [direct]
    base = env_path(env, "OPENHANDS_PERSISTENCE_DIR") or home(env) / ".openhands"
    return [base / "conversations"]


#: Everything the project knows about OpenHands CLI.
DESCRIPTION: Final = Harness(
    name="openhands",
    display_name="OpenHands CLI",
    provider="",
    reads="documents",
    adapter="agentminutes.harness.openhands.adapter:OpenHandsAdapter",
    roots=_roots,
    env=("OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR"),
    patterns=("base_state.json",),
    archives=None,
    layout="agentminutes.harness.openhands.layout:OpenHandsLocator",
    tail=False,
    vocabulary=None,
    baseline=None,
    # LiteLLM's counts per response: prompt_tokens includes the cached tokens;
    # reasoning_tokens is a part of completion_tokens; response ids are the provider's.
    usage=UsageRule(
        input_includes_cache=True, reasoning_key="reasoning_tokens", key_rule="message"
    ),
    prompt="input",
)


__getattr__ = lazy_exports(globals())
