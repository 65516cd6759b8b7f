"""``view --html`` in a real browser: headless Chromium loads the page of every harness's session.

Each page must carry every tool call (by its id) and the final answer, filter its
turns from the search box, and log no error; a transcript carrying ``<script>``
and ``<img onerror=…>`` shows them as text and runs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser import Browser
from conftest import FIXTURES, run_cli
from view_cases import CASES, IDS, conversation_args, events_of, stats_of

BASE = FIXTURES / "claude-code" / "fasthooks-main.jsonl"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with Browser() as b:
        yield b


def _page(tmp_path: Path, path: Path, *args: str) -> Path:
    out = tmp_path / "page.html"
    proc = run_cli("view", "--html", out, *args, path)
    assert proc.returncode == 0, proc.stderr
    return out


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize(("harness", "path", "conversation"), CASES, ids=IDS)
def test_the_page_holds_every_call_and_the_answer(
    browser: Browser, tmp_path: Path, harness: str, path: Path, conversation: str
) -> None:
    page = _page(tmp_path, path, "--no-subagents", *conversation_args(conversation))
    errors_before = len(browser.errors())
    browser.open(page)
    ids = [
        e["tool_call"]["tool_call_id"]
        for e in events_of(path, conversation)
        if e["kind"] == "tool_call"
    ]
    on_page = browser.evaluate(
        "Array.from(document.querySelectorAll('details.tool')).filter("
        "d => !d.textContent.includes('no recorded call') || d.querySelector('pre'))"
        ".map(d => d.dataset.callId)"
    )
    for ident in ids:
        assert ident in on_page
    stats = stats_of(path, conversation)
    assert stats["tool_calls"] == len(ids)
    answer = browser.evaluate("document.getElementById('final-answer').textContent")
    assert _squash(stats["final_answer"]) in _squash(answer)
    assert harness in browser.evaluate("document.querySelector('.facts').textContent")
    assert browser.evaluate("document.getElementById('redaction').textContent").startswith(
        "Redacted"
    )
    assert browser.errors()[errors_before:] == []


def test_the_search_box_filters_the_turns(browser: Browser, tmp_path: Path) -> None:
    browser.open(_page(tmp_path, BASE))
    total = browser.evaluate("document.querySelectorAll('section.turn').length")
    assert total == 8
    shown = "document.querySelectorAll('section.turn:not(.hidden)').length"
    browser.type_into("#q", "hello_world.py")
    hits = browser.evaluate(shown)
    assert 0 < hits < total
    texts = browser.evaluate(
        "Array.from(document.querySelectorAll('section.turn:not(.hidden)')).map(t => t.textContent)"
    )
    assert all("hello_world.py" in t for t in texts)
    assert browser.evaluate("document.getElementById('count').textContent") == f"{hits} of 8 turns"
    browser.type_into("#q", "-no-such-words-anywhere")
    assert browser.evaluate(shown) == 0
    browser.evaluate(
        "var q=document.getElementById('q'); q.value=''; q.dispatchEvent(new Event('input'))"
    )
    assert browser.evaluate(shown) == total
    assert browser.errors() == []


def test_the_chart_is_inline_svg_and_nothing_is_fetched(browser: Browser, tmp_path: Path) -> None:
    page = _page(tmp_path, BASE)
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    mark = len(browser.events)
    errors_before = len(browser.errors())
    browser.open(page)
    bars = browser.evaluate("document.querySelectorAll('svg rect[class^=bar]').length")
    assert bars >= 5
    assert browser.evaluate("document.querySelectorAll('svg polyline.cost').length") == 1
    loads = [
        e["params"]["request"]["url"]
        for e in browser.events[mark:]
        if e["method"] == "Network.requestWillBeSent"
    ]
    assert page.resolve().as_uri() in loads  # the log is kept: the page itself is in it
    assert [u for u in loads if u != page.resolve().as_uri()] == []
    csp = browser.evaluate(
        "document.querySelector('meta[http-equiv=Content-Security-Policy]').content"
    )
    assert "default-src 'none'" in csp
    assert "script-src 'sha256-" in csp
    assert browser.errors()[errors_before:] == []  # no violation of it either


HOSTILE = [
    '<script>window.__owned = "script"</script>',
    "<img src=x onerror=\"window.__owned = 'img'\">",
    '"><svg onload="window.__owned=\'svg\'">',
    "</pre></details><script>window.__owned='close'</script>",
]


def test_html_in_a_transcript_is_text_and_runs_nothing(browser: Browser, tmp_path: Path) -> None:
    planted = []
    payload = json.dumps(" ".join(HOSTILE))[1:-1]
    for line in BASE.read_text(encoding="utf-8").splitlines(keepends=True):
        line = line.replace("can you run a command ls -la", "run ls " + payload)
        line = line.replace("total 76", "total 76 " + payload)
        line = line.replace("Done! Here", "Done! " + payload + " Here")
        line = line.replace('"command":"ls -la"', '"command":"ls -la ' + payload + '"')
        planted.append(line)
    source = tmp_path / "hostile.jsonl"
    source.write_text("".join(planted), encoding="utf-8")
    page = _page(tmp_path, source, "--full")
    errors_before = len(browser.errors())
    browser.open(page)
    browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert browser.evaluate("typeof window.__owned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
    assert browser.evaluate("document.querySelectorAll('script').length") == 1
    assert browser.evaluate("document.querySelectorAll('main svg').length") == 0
    text = browser.evaluate("document.body.innerText")
    for piece in HOSTILE:
        assert text.count(piece) >= 3, piece  # prompt, input, result (and the answer)
    assert browser.errors()[errors_before:] == []


def test_secrets_are_redacted_unless_no_redact(browser: Browser, tmp_path: Path) -> None:
    token = "ghp_" + "Zq8xR2mKp4Lw9TnB6vYc3HsJd7FgA1eU5iOo"
    planted = BASE.read_text(encoding="utf-8").replace("total 76", f"total 76 GITHUB_TOKEN={token}")
    source = tmp_path / "secret.jsonl"
    source.write_text(planted, encoding="utf-8")
    redacted = _page(tmp_path, source, "--full").read_text(encoding="utf-8")
    assert token not in redacted
    assert "[REDACTED:" in redacted
    out = tmp_path / "open.html"
    proc = run_cli("view", "--html", out, "--no-redact", "--full", source)
    assert proc.returncode == 0
    assert b"--no-redact" in proc.stderr
    browser.open(out)
    assert token in browser.evaluate("document.body.textContent")
    note = browser.evaluate("document.getElementById('redaction').textContent")
    assert note.startswith("Redaction is off")


def test_subagents_are_sections_under_their_call(browser: Browser, tmp_path: Path) -> None:
    path = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    browser.open(_page(tmp_path, path))
    found = browser.evaluate(
        "Array.from(document.querySelectorAll('section.agent')).map(s => "
        "[s.querySelector('h3').textContent, s.previousElementSibling.dataset.tool, "
        "s.closest('section.turn').id, s.querySelectorAll('details.tool').length])"
    )
    assert len(found) == 1
    heading, tool, turn, calls = found[0]
    assert heading.startswith("▼ subagent a36efb2a1231c41e2")
    assert tool == "Agent"
    assert turn.startswith("turn-")
    assert calls == 7
