"""Factory Droid sessions (``~/.factory/sessions/<cwd slug>/<session id>.jsonl``).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import Harness, env_path, home

if TYPE_CHECKING:
    from pathlib import Path

    from agentminutes.harness.droid.adapter import DroidAdapter

__all__ = ("DESCRIPTION", "DroidAdapter")


def _roots(env: Mapping[str, str]) -> list[Path]:
    # FACTORY_HOME_OVERRIDE replaces the home folder Droid keeps ~/.factory under.
    base = env_path(env, "FACTORY_HOME_OVERRIDE") or home(env)
    return [base / ".factory" / "sessions"]


#: Everything the project knows about Factory Droid.
DESCRIPTION: Final = Harness(
    name="droid",
    display_name="Factory Droid",
    provider="",
    reads="lines",
    adapter="agentminutes.harness.droid.adapter:DroidAdapter",
    roots=_roots,
    env=("FACTORY_HOME_OVERRIDE",),
    patterns=("*.jsonl",),
    archives=None,
    layout="agentminutes.harness.files_layout:FilesLocator",
    tail=False,
    vocabulary="agentminutes.harness.droid.drift:VOCABULARY",
    baseline="agentminutes.harness.droid:baselines/droid.json",
    # The transcript holds no usage (the session's sums are in <id>.settings.json beside it).
    usage=None,
    prompt="",
)


__getattr__ = lazy_exports(globals())
