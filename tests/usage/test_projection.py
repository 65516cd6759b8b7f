"""A usage read asks adapters only for the kinds it folds, and counts exactly what a full read counts."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

import agentminutes
from agentminutes.harness import ParseOptions, adapter_class
from agentminutes.pipeline.sync import sync_feeds
from agentminutes.schema import EventKind, to_builtins
from agentminutes.schema.usage import RequestFolder
from agentminutes.usage.summary import compact, summarize
from session_home import FIXTURES

CLAUDE_CODE = sorted((FIXTURES / "claude-code").rglob("*.jsonl"))


def _events(path: Path, kinds: frozenset[str] | None) -> list[agentminutes.Event]:
    options = ParseOptions(permissive=True, check_verbatim=False, kinds=kinds)
    return [
        ev
        for batches, _ in sync_feeds(str(path), None, False, "claude-code", options)
        for batch in batches
        for ev in batch.events
    ]


def _full_requests(path: Path) -> list[object]:
    folder = RequestFolder("claude-code")
    out = [compact(r) for ev in _events(path, None) for r in folder.add(ev)]
    return out + [compact(r) for r in folder.finish()]


@pytest.mark.parametrize("path", CLAUDE_CODE, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_projected_read_counts_the_requests_a_full_read_counts(path: Path) -> None:
    expected = _full_requests(path)
    summary = summarize(str(path), "claude-code")
    assert not summary.error, summary.error
    assert msgspec.to_builtins(summary.requests) == msgspec.to_builtins(expected)


def test_claude_code_leaves_out_user_records_only_when_asked() -> None:
    path = FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    full = _events(path, None)
    projected = _events(path, RequestFolder.KINDS)
    full_kinds = {ev.kind for ev in full}
    assert {EventKind.USER_MESSAGE, EventKind.TOOL_RESULT} <= full_kinds
    assert not {ev.kind for ev in projected} & {EventKind.USER_MESSAGE, EventKind.TOOL_RESULT}
    # Every assistant message is there, as the full read has it, and the session's identity.
    wanted = {EventKind.ASSISTANT_MESSAGE, EventKind.SESSION_META}
    assert [to_builtins(ev) for ev in projected if ev.kind in wanted] == [
        to_builtins(ev) for ev in full if ev.kind in wanted
    ]
    # A projection that wants user messages reads them.
    with_users = _events(path, frozenset({EventKind.USER_MESSAGE}))
    assert [to_builtins(ev) for ev in with_users if ev.kind == EventKind.USER_MESSAGE] == [
        to_builtins(ev) for ev in full if ev.kind == EventKind.USER_MESSAGE
    ]


def test_the_projection_is_configuration_not_state() -> None:
    """A follower's saved state does not carry the projection of the read that saved it."""
    cls = adapter_class("claude-code")
    projected = cls(ParseOptions(kinds=RequestFolder.KINDS))
    full = cls(ParseOptions())
    full.restore(projected.snapshot())
    assert full.projected is None
