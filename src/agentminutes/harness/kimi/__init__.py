"""Kimi CLI wire logs (``~/.kimi/sessions/<work dir hash>/<session id>/wire.jsonl``).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, env_path, home
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.kimi.adapter import KimiAdapter

__all__ = ("DESCRIPTION", "KimiAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # KIMI_SHARE_DIR replaces ~/.kimi (config, logs and sessions alike).
    base = env_path(env, "KIMI_SHARE_DIR") or home(env) / ".kimi"
    return [base / "sessions"]


#: Everything the project knows about Kimi CLI.
DESCRIPTION: Final = Harness(
    name="kimi",
    display_name="Kimi CLI",
    provider="",
    reads="lines",
    adapter="agentminutes.harness.kimi.adapter:KimiAdapter",
    roots=_roots,
    env=("KIMI_SHARE_DIR",),
    patterns=("wire.jsonl",),
    archives=None,
    layout="agentminutes.harness.kimi.layout:KimiLocator",
    tail=False,
    vocabulary="agentminutes.harness.kimi.drift:VOCABULARY",
    baseline="agentminutes.harness.kimi:baselines/kimi.json",
    # token_usage: input_other (fresh input), input_cache_read, input_cache_creation and
    # output (reasoning inside it, never apart); message ids are the API's own.
    usage=UsageRule(input_includes_cache=False),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
