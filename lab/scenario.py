"""Scenarios as data: the prompts a driver types and the steps the server answers with.

A scenario is a JSON file in ``lab/scenarios/``::

    {"name": "tools", "prompts": ["..."], "files": {"notes.txt": "..."},
     "steps": [{"thinking": "...", "tool_calls": [{"kind": "shell", "command": "ls"}]},
               {"text": "Done."}]}

Each model request that belongs to the conversation takes the next step. A step holds any of
``thinking``, ``text``, ``tool_calls`` (abstract: a ``kind`` the driver turns into the
harness's own tool name and arguments, see :class:`ToolCall`) or ``error`` (an HTTP status the
server answers instead, so the harness retries). ``prompts`` after the first are typed into
the same session (the driver resumes it). ``files`` are written into the working folder first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCENARIOS = Path(__file__).resolve().parent / "scenarios"

#: The abstract tool kinds a scenario may ask for. ``shell`` runs ``command``; ``read`` reads
#: ``path`` (relative to the working folder); ``write`` writes ``content`` to ``path``;
#: ``agent`` spawns a subagent with ``prompt`` (a scenario using it needs ``"subagent"``).
TOOL_KINDS = ("shell", "read", "write", "agent")


@dataclass(frozen=True)
class ToolCall:
    """One tool call a step asks for, before the driver names it for its harness."""

    kind: str
    params: dict[str, Any]
    #: The call is meant to fail (a missing file): the harness should report an error.
    fails: bool = False


@dataclass(frozen=True)
class Step:
    """What the server answers one conversation request with."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    #: ``{"status": 529, "type": "overloaded_error"}``: answer with this HTTP error instead.
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class Scenario:
    """A named script: the prompts, the files to start from and the steps."""

    name: str
    prompts: tuple[str, ...]
    steps: tuple[Step, ...]
    files: dict[str, str] = field(default_factory=dict)
    description: str = ""
    #: Harness features the scenario needs (``"resume"`` for a second prompt); a driver
    #: without one skips the scenario and says so.
    needs: tuple[str, ...] = ()


def _tool_call(raw: dict[str, Any]) -> ToolCall:
    kind = raw["kind"]
    if kind not in TOOL_KINDS:
        raise ValueError(f"unknown tool kind {kind!r} (known: {', '.join(TOOL_KINDS)})")
    params = {k: v for k, v in raw.items() if k not in ("kind", "fails")}
    return ToolCall(kind=kind, params=params, fails=bool(raw.get("fails", False)))


def parse_scenario(raw: dict[str, Any]) -> Scenario:
    """A scenario from its JSON object (the shape in the module docstring)."""
    steps = tuple(
        Step(
            text=s.get("text", ""),
            thinking=s.get("thinking", ""),
            tool_calls=tuple(_tool_call(c) for c in s.get("tool_calls", ())),
            error=s.get("error"),
        )
        for s in raw["steps"]
    )
    prompts = tuple(raw["prompts"])
    needs = tuple(raw.get("needs", ()))
    if len(prompts) > 1 and "resume" not in needs:
        needs = (*needs, "resume")
    return Scenario(
        name=raw["name"],
        prompts=prompts,
        steps=steps,
        files=dict(raw.get("files", {})),
        description=raw.get("description", ""),
        needs=needs,
    )


def load_scenario(name_or_path: str | Path) -> Scenario:
    """A scenario by name (``lab/scenarios/<name>.json``) or path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIOS / f"{name_or_path}.json"
    return parse_scenario(json.loads(path.read_text(encoding="utf-8")))


def all_scenarios() -> list[Scenario]:
    """Every scenario shipped in ``lab/scenarios/``, by name."""
    return [load_scenario(p) for p in sorted(SCENARIOS.glob("*.json"))]
