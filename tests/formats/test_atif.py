"""The ATIF projection: ``agentminutes.formats.atif`` and ``convert --format atif``.

Every fixture of every harness becomes a trajectory that the ``atif`` 1.8.0
package's pydantic models accept in strict mode (unknown fields rejected);
the expectations are counted from the parsed events, independently.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import atif
import pytest

from agentminutes import iter_sessions, load
from agentminutes.formats.atif import SCHEMA_VERSION, trajectory
from agentminutes.harness import ADAPTERS, DOCUMENT_ADAPTERS
from agentminutes.schema import Origin, Session
from agentminutes.schema.stats import PROMPT_RULES, with_prompt_total
from conftest import FIXTURES, fixture_id, transcripts

ALL = [p for cls in (*ADAPTERS, *DOCUMENT_ADAPTERS) for p in transcripts(cls.name)]

#: The harnesses whose records carry the price they computed (Aider's report line,
#: Amp's credits, Continue's cost_cents, Crush's and Goose's columns, Cline's,
#: OpenCode's and pi's usage): a cost anywhere else would have been made up.
HARNESSES_THAT_PRICE = ("pi", "cline", "opencode", "aider", "amp", "continue-cli", "crush", "goose")


def _all_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    steps = list(doc["steps"])
    for sub in doc.get("subagent_trajectories") or ():
        steps.extend(_all_steps(sub))
    return steps


def _check(session: Session) -> tuple[dict[str, Any], Any]:
    doc, loss = trajectory(session)
    model = atif.Trajectory.model_validate(doc, strict=True)
    # What the model holds is what was written: nothing dropped or coerced.
    assert model.to_json_dict() == json.loads(json.dumps(doc))
    assert doc["schema_version"] == SCHEMA_VERSION == "ATIF-v1.8"
    events = session.events
    steps = _all_steps(doc)
    agent_steps = [s for s in steps if s["source"] == "agent"]
    messages = sum(1 for ev in events if ev.assistant_message is not None)
    # Every API message is one agent step (steps without one hold calls of an
    # API message the harness did not record, as Codex's tool rounds).
    assert sum(1 for s in agent_steps if s.get("llm_call_count") == 1) == messages
    humans = sum(
        1 for ev in events if ev.user_message is not None and ev.user_message.origin == Origin.HUMAN
    )
    assert sum(1 for s in steps if s["source"] == "user") == humans
    calls = [c for s in agent_steps for c in s.get("tool_calls") or ()]
    assert len(calls) == sum(1 for ev in events if ev.tool_call is not None)
    results = [r for s in steps for r in (s.get("observation") or {}).get("results", [])]
    assert len(results) == sum(1 for ev in events if ev.tool_result is not None)
    assert loss.steps == len(steps)
    agents = {
        ev.agent_id for ev in events if ev.agent_id and ev.agent_id != session.meta.subagent_id
    }
    assert len(doc.get("subagent_trajectories") or ()) == len(agents) == loss.subagents

    # Tokens: prompt tokens count the cache; each trajectory's final metrics sum its
    # steps, and the session's and its subagents' add up to the session's totals.
    total = session.totals
    finals = [doc["final_metrics"]] + [
        sub["final_metrics"] for sub in doc.get("subagent_trajectories") or ()
    ]

    def summed(key: str) -> int:
        return sum(f.get(key, 0) for f in finals)

    if total is not None and session.meta.harness in PROMPT_RULES:
        prompt = with_prompt_total(total, session.meta.harness).total_prompt_tokens
        assert summed("total_prompt_tokens") == prompt
        assert summed("total_completion_tokens") == total.output_tokens
        assert summed("total_cached_tokens") == total.cache_read_input_tokens
    elif total is None:
        assert not any("total_prompt_tokens" in f for f in finals)
    for step in agent_steps:
        metrics = step.get("metrics")
        if metrics is not None and "cost_usd" in metrics:
            # Only harnesses that price requests themselves record a cost.
            assert session.meta.harness in HARNESSES_THAT_PRICE
    return doc, loss


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_validates_with_atif(path: Path) -> None:
    for session in iter_sessions(path):
        _check(session)


def test_figures_over_all_fixtures() -> None:
    """The fixtures exercise every step kind, observations, subagents, costs and copies."""
    seen: Counter[str] = Counter()
    for path in ALL:
        for session in iter_sessions(path):
            doc, _ = _check(session)
            for step in _all_steps(doc):
                seen[step["source"]] += 1
                seen["copied"] += bool(step.get("is_copied_context"))
                seen["cost"] += "cost_usd" in (step.get("metrics") or {})
                seen["observation"] += "observation" in step
                seen["reasoning"] += "reasoning_content" in step
            seen["subagents"] += len(doc.get("subagent_trajectories") or ())
    for key in ("agent", "user", "system", "copied", "cost", "observation", "reasoning"):
        assert seen[key], key
    assert seen["subagents"]


def test_forked_pi_session_marks_its_parents_entries_as_copied() -> None:
    session = load(FIXTURES / "pi/pi-mono/before-compaction.jsonl")
    doc, _ = trajectory(session)
    header = next(ev for ev in session.events if ev.system and ev.system.subtype == "session")
    assert header.system is not None
    assert header.system.text  # the file names the session it branched from
    assert doc["extra"]["parent_session"] == header.system.text
    for step in doc["steps"]:
        copied = step["timestamp"] < header.timestamp
        assert step.get("is_copied_context", False) == copied


def test_gemini_history_rewrite_replays_are_copied() -> None:
    path = FIXTURES / "gemini-cli/constructed/session-2026-08-01T09-00-c0ffee01.jsonl"
    doc, _ = trajectory(load(path))
    copied = [s for s in doc["steps"] if s.get("is_copied_context")]
    assert copied
    assert len(copied) < len(doc["steps"])


def test_inline_subagent_is_embedded() -> None:
    path = FIXTURES / "qwen-code/constructed/0a11ce00-0000-4000-8000-000000000001.jsonl"
    doc, loss = trajectory(load(path))
    (sub,) = doc["subagent_trajectories"]
    assert sub["trajectory_id"] == sub["extra"]["agent_id"]
    assert sub["steps"][0]["source"] == "agent"
    # The session records no tool call carrying the subagent's id: no ref to hang.
    assert loss.dropped_fields is not None
    assert loss.dropped_fields["subagent_ref_unlinked"] == 1


@pytest.mark.parametrize(
    "fixture",
    [
        "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl",
        "copilot/agent-sessions/copilot_small_1.0.77.jsonl",
    ],
)
def test_cli_convert_atif(cli: Any, fixture: str, tmp_path: Path) -> None:
    path = FIXTURES / fixture
    doc, loss = trajectory(load(path))
    out = tmp_path / "trajectory.json"
    done = cli("convert", "--format", "atif", "-o", out, path)
    assert done.returncode == 0, done.stderr
    written = json.loads(out.read_bytes())
    assert written == json.loads(json.dumps(doc))
    atif.Trajectory.model_validate(written, strict=True)
    assert done.stderr.decode().splitlines()[-1] == f"agentminutes: atif: {loss.summary()}"
