"""``view`` lays out every session of every fixture ``convert`` reads: text, Markdown, HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentminutes import AgentminutesError, iter_sessions
from agentminutes.view.model import load_view
from agentminutes.view.page import write_page
from agentminutes.view.terminal import render_markdown, render_text
from conftest import FIXTURES

HARNESSES = sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in ("golden", "sessions")
)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("harness", HARNESSES)
def test_every_session_of_the_harness_is_laid_out(harness: str, tmp_path: Path) -> None:
    shown = 0
    for path in sorted((FIXTURES / harness).rglob("*")):
        if not path.is_file() or path.name in ("README.md", "MANIFEST.tsv"):
            continue
        try:
            ids = [s.meta.session_id for s in iter_sessions(path)]
        except AgentminutesError:
            continue  # convert does not read it either: not a transcript
        for ident in ids:
            view = load_view(str(path), conversation=ident if len(ids) > 1 else None)
            text = render_text(view)
            markdown = render_markdown(view)
            page = tmp_path / "page.html"
            write_page(view, str(page))
            html = page.read_text(encoding="utf-8")
            calls = [s for s in view.main.tool_steps() if s.call is not None]
            assert len(re.findall(r"^\s*● ", text, re.M)) >= len(calls), path
            assert html.count('class="tool') >= len(calls), path
            assert markdown.count("**Tool call `") >= len(calls), path
            answer = _squash(view.stats.final_answer)
            assert answer in _squash(text), path
            shown += 1
    assert shown
