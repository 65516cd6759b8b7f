"""The Aider adapter: real chat histories from public repositories, converted and followed."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest

from agentminutes.harness import ParseOptions, detect
from agentminutes.harness.aider.adapter import AiderAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from conftest import FIXTURES, run_cli
from follow_helpers import FollowProc, append, expected, lines_of

AIDER = FIXTURES / "aider"
HISTORIES = sorted(p for p in AIDER.rglob("*.md"))
CALC = AIDER / "simple-calculator" / ".aider.chat.history.md"
CARS = AIDER / "car-game" / ".aider.chat.history.head428.md"


def _events(path: Path, **options: object) -> list:
    conv = Conversion(name=str(path), options=ParseOptions(**options))  # type: ignore[arg-type]
    return list(conv.iter_events(open_sync_chunks(path)))


def _inputs(path: Path) -> list[str]:
    """What the person typed, read from the file independently: runs of ``#### `` lines
    (Aider ends each with a two-space line break)."""
    found: list[list[str]] = []
    prev = ""
    for line in path.read_text().splitlines():
        if line.startswith("#### ") and line.endswith("  "):
            text = line[5:].rstrip()
            if prev.startswith("####") and prev.endswith("  "):
                found[-1].append(text)
            else:
                found.append([text])
        prev = line
    return ["\n".join(x) for x in found]


@pytest.mark.parametrize("path", HISTORIES, ids=lambda p: p.parent.name)
def test_every_history_is_detected_and_read_strictly(path: Path) -> None:
    assert detect(path.read_bytes()[:65536])[0] is AiderAdapter
    events = _events(path)
    assert events[0].kind == "session_meta"
    assert events[0].session_meta.harness_version  # from the banner's "Aider vX"
    assert not [e for e in events if e.kind == "unknown"]
    typed = [e.user_message.content[0].text for e in events if e.kind == "user_message"]
    assert typed == _inputs(path)


def test_replies_carry_the_model_and_the_usage_report_under_them() -> None:
    events = _events(CALC)
    replies = [e for e in events if e.kind == "assistant_message"]
    reports = re.findall(r"^> Tokens: ([\d.k]+) sent, ([\d.k]+) received\.", CALC.read_text(), re.M)
    used = [e.assistant_message.usage for e in replies if e.assistant_message.usage]
    assert len(used) == len(reports) == 20
    first = used[0]
    assert (first.input_tokens, first.output_tokens) == (3200, 222)
    assert first.extra is not None
    assert bytes(first.extra["rounded"]) == b"true"
    costed = [u for u in used if u.cost is not None]
    assert costed
    assert all(u.cost > 0 for u in costed)
    assert replies[0].assistant_message.model == "gemini/gemini-2.5-pro-exp-03-25"


def test_a_reply_keeps_its_code_indented_and_its_paragraphs() -> None:
    replies = [e for e in _events(CALC) if e.kind == "assistant_message"]
    text = "\n".join(b.text for e in replies for b in e.assistant_message.content)
    assert "\n  const [isDarkMode, setIsDarkMode] = useState(true);" in text
    assert "\n\nHere are the changes:\n\n" in text


def test_a_streamed_replys_reasoning_is_thinking() -> None:
    text = CARS.read_text()
    opened = re.findall(r"^<thinking-content-[0-9a-f]{32}>$", text, re.M)
    events = _events(CARS)
    thoughts = [e.thinking.text for e in events if e.kind == "thinking"]
    assert len(thoughts) == len(opened) > 0
    replies = [
        b.text for e in events if e.kind == "assistant_message" for b in e.assistant_message.content
    ]
    assert not [r for r in replies if "thinking-content-" in r]


def test_each_later_run_opens_with_run_start() -> None:
    events = _events(CARS)
    headers = re.findall(r"^# aider chat started at (.+)$", CARS.read_text(), re.M)
    runs = [e.system.text for e in events if e.kind == "system" and e.system.subtype == "run_start"]
    assert runs == headers[1:]
    assert sorted({e.assistant_message.model for e in events if e.kind == "assistant_message"}) == [
        "deepseek/deepseek-v4-pro",
        "openai/gpt-5.4",
    ]


def test_stats_reads_a_history_with_no_harness_named() -> None:
    proc = run_cli("stats", CALC)
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)
    assert stats["user_messages"] == len(_inputs(CALC))
    assert stats["models"][0] == "gemini/gemini-2.5-pro-exp-03-25"


def test_follow_a_history_aider_keeps_appending_to_matches_convert(tmp_path: Path) -> None:
    target = tmp_path / ".aider.chat.history.md"
    target.touch()
    want = expected(CALC)
    f = FollowProc(target)
    try:
        append(target, lines_of(CALC), split=False)
        # The file ends with a reply and the usage report under it: the report waits for
        # the line after it (it may go on), the reply for its report. A stop writes both.
        assert [e["kind"] for e in want[-2:]] == ["assistant_message", "system"]
        f.wait_lines(len(want) - 2)
        f.wait_quiet(0.3)
        assert len(f.lines) == len(want) - 2
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    assert f.events == want
