"""Hermes Agent's session store (``~/.hermes/state.db``, SQLite).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, env_path, home
from agentminutes.schema.usage import UsageRule

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.hermes.adapter import HermesAdapter, HermesTail

__all__ = ("DESCRIPTION", "HermesAdapter", "HermesTail")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # HERMES_HOME replaces ~/.hermes (a profile's home is <home>/profiles/<name>).
    return [env_path(env, "HERMES_HOME") or home(env) / ".hermes"]


#: Everything the project knows about Hermes Agent.
DESCRIPTION: Final = Harness(
    name="hermes",
    display_name="Hermes Agent",
    provider="",
    reads="documents",
    adapter="agentminutes.harness.hermes.adapter:HermesAdapter",
    roots=_roots,
    env=("HERMES_HOME",),
    patterns=("state.db",),
    archives=None,
    layout="agentminutes.harness.hermes.layout:HermesLocator",
    tail=True,
    vocabulary=None,
    baseline=None,
    # Per session and model, summed by Hermes (session_model_usage): input fresh, the
    # cache apart, reasoning a part of output (read by RequestFolder from model_usage).
    usage=UsageRule(input_includes_cache=False, key_rule=""),
    prompt="all",
)


__getattr__ = lazy_exports(globals())
