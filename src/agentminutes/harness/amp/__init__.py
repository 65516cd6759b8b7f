"""Amp threads: ``~/.local/share/amp/threads/T-<uuid>.json``, one JSON document per thread.

Amp (Sourcegraph's agent, CLI and editor extension) rewrites the whole thread
file as the thread grows: ``{v, id, created, title, agentMode, env: {initial:
{trees, platform}}, messages: […], usageLedger: {events: […]}, relationships}``.
Messages use Anthropic-shaped blocks; an assistant message carries its
``usage`` (model, fresh input, output, cache reads and writes), a tool's
outcome is a ``tool_result`` block with a ``run`` (status, result or error)
in the next user message. Newer releases keep threads on Amp's server and
write no local file (nothing to read there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, home, path
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.amp.adapter import AmpAdapter

__all__ = ("DESCRIPTION", "AmpAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # T-<uuid>.json, one per thread; XDG_DATA_HOME (default ~/.local/share) holds amp/.
    data = env.get("XDG_DATA_HOME", "").strip()
    base = path(data).expanduser() if data else home(env) / ".local" / "share"
    return [base / "amp" / "threads"]


#: Everything the project knows about Amp.
DESCRIPTION: Final = Harness(
    name="amp",
    provider="",
    display_name="Amp",
    reads="lines",
    adapter="agentminutes.harness.amp.adapter:AmpAdapter",
    roots=_roots,
    env=("XDG_DATA_HOME",),
    patterns=("T-*.json",),
    archives=None,
    layout="agentminutes.harness.files_layout:FilesLocator",
    tail=False,
    vocabulary="agentminutes.harness.amp.drift:VOCABULARY",
    baseline="agentminutes.harness.amp:baselines/amp.json",
    # inputTokens excludes cacheReadInputTokens and cacheCreationInputTokens; the
    # ledger's credits are usage.cost; message ids are small numbers per thread.
    usage=UsageRule(input_includes_cache=False),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
