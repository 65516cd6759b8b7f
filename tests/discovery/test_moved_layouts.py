"""The layouts moved into the harness folders; their old import paths still work, with a warning."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from agentminutes.discovery.layouts import READER, ScanContext, locator
from agentminutes.harness.claude_code.layout import ClaudeCodeLocator
from agentminutes.harness.documents_layout import DocumentLocator
from agentminutes.harness.files_layout import FilesLocator
from agentminutes.harness.layout import Locator


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("agentminutes.discovery.layouts.claude_code", "ClaudeCodeLocator", ClaudeCodeLocator),
        ("agentminutes.discovery.layouts.files", "FilesLocator", FilesLocator),
        ("agentminutes.discovery.layouts.documents", "DocumentLocator", DocumentLocator),
        ("agentminutes.discovery.layouts", "ClaudeCodeLocator", ClaudeCodeLocator),
        ("agentminutes.discovery.layouts", "DocumentLocator", DocumentLocator),
        ("agentminutes.discovery.layouts.base", "Locator", Locator),
    ],
)
def test_an_old_path_gives_the_moved_name_with_a_warning(old: str, name: str, new: type) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"import {name} from agentminutes.harness"):
        assert getattr(module, name) is new
    with pytest.raises(AttributeError):
        module.NoSuchLocator  # noqa: B018


def test_discovery_makes_each_locator_with_its_reader() -> None:
    made = locator("claude-code")
    assert isinstance(made, ClaudeCodeLocator)
    assert made.reader is READER
    generic = locator("chatgpt")
    assert isinstance(generic, DocumentLocator)
    assert (generic.harness, generic.reader) == ("chatgpt", READER)


def test_a_layout_made_without_a_reader_walks_paths_and_refuses_to_read(tmp_path: Path) -> None:
    session = tmp_path / "-repo" / "abc.jsonl"
    agent = tmp_path / "-repo" / "abc" / "subagents" / "agent-1.jsonl"
    agent.parent.mkdir(parents=True)
    session.write_text("{}\n")
    agent.write_text("{}\n")
    bare = ClaudeCodeLocator()
    assert bare.subagents(str(session.with_suffix("")), ScanContext()) == [str(agent)]
    with pytest.raises(TypeError, match="made without a reader"):
        bare.locate(str(tmp_path), "abc")
