"""A made-up harness that lives in the test suite: one folder and one registry line.

Toy transcripts are JSONL, one record a line, under ``$TOY_HOME/sessions``
(default ``~/.toy/sessions``): ``{"t": "start", "id", "cwd", "at", "v"}`` first,
then ``user`` (``text``), ``model`` (``msg``, ``model``, ``text``, ``in``,
``out``, ``cached``), ``tool`` (``id``, ``name``, ``args``), ``result``
(``id``, ``out``) and ``note`` (skipped) records. ``tests/test_toy_harness.py``
registers it with :func:`agentminutes.harness.registry.extend` and sees every
command read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from agentminutes.harness.description import Harness, env_path, home
from agentminutes.schema.usage_rule import UsageRule

if TYPE_CHECKING:
    from pathlib import Path


def _roots(env: Mapping[str, str]) -> list[Path]:
    base = env_path(env, "TOY_HOME") or home(env) / ".toy"
    return [base / "sessions"]


DESCRIPTION: Final = Harness(
    name="toy",
    display_name="Toy",
    provider="",
    reads="lines",
    adapter="toyharness.adapter:ToyAdapter",
    roots=_roots,
    env=("TOY_HOME",),
    patterns=("*.jsonl",),
    archives=None,
    layout="agentminutes.harness.files_layout:FilesLocator",
    tail=False,
    vocabulary="toyharness.drift:VOCABULARY",
    baseline="toyharness:baselines/toy.json",
    usage=UsageRule(input_includes_cache=False, key_rule="message"),
    prompt="all",
)
