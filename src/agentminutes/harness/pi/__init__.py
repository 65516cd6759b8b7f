"""pi coding agent sessions (``~/.pi/agent/sessions/``).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.pi.adapter import PiAdapter

__all__ = ("DESCRIPTION", "PiAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # --<cwd>--/<time>_<id>.jsonl
    agent_dir = env.get("PI_CODING_AGENT_DIR", "").strip()
    base = path(agent_dir).expanduser() if agent_dir else home(env) / ".pi" / "agent"
    return [base / "sessions"]


#: Everything the project knows about pi.
DESCRIPTION: Final = Harness(
    name="pi",
    display_name="pi",
    provider="",
    reads="lines",
    adapter="agentminutes.harness.pi.adapter:PiAdapter",
    roots=_roots,
    env=("PI_CODING_AGENT_DIR",),
    patterns=("*.jsonl",),
    archives=None,
    layout="agentminutes.harness.pi.layout:PiLocator",
    tail=False,
    vocabulary="agentminutes.harness.pi.drift:VOCABULARY",
    baseline="agentminutes.harness.pi:baselines/pi.json",
    # input, output, cacheRead, cacheWrite (input excludes the cache) and the cost
    # pi priced itself.
    usage=UsageRule(input_includes_cache=False, cost_key="cost"),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
