"""Deprecated: the writers moved to the output formats' package.

:class:`JsonlSink` is in :mod:`agentminutes.formats.jsonl`, :class:`SessionJsonSink`
in :mod:`agentminutes.formats.json`, :class:`StatsSink` in
:mod:`agentminutes.formats.stats` (and all three are still :mod:`agentminutes.sinks`'s).
"""

from typing import Any

from agentminutes._lazy import moved

_HOMES = {
    "JsonlSink": "agentminutes.formats.jsonl",
    "SessionJsonSink": "agentminutes.formats.json",
    "StatsSink": "agentminutes.formats.stats",
}


def __getattr__(name: str) -> Any:
    return moved(__name__, _HOMES.get(name, "agentminutes.formats"))(name)
