"""Verbatim JSON made safe to write: repeated keys and over-long integers, on real transcripts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentminutes.pipeline.verbatim import MAX_INT_DIGITS, safe_json
from conftest import FIXTURES, run_cli


def _strict(text: bytes) -> Any:
    """*text* parsed as a strict reader would: a repeated key is an error."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        assert len(keys) == len(set(keys)), f"repeated key in {keys}"
        return dict(items)

    return json.loads(text, object_pairs_hook=pairs)


@pytest.mark.parametrize(
    ("data", "safe"),
    [
        (b'{"a":1,"a":2}', b'{"a":2}'),
        (b'{"a" : 1, "a":2}', b'{"a":2}'),
        (b'{"\\u0061":1,"a":2}', b'{"a":2}'),  # the same key, escaped
        (b'{"a":"x\\"y","a":{"b":1}}', b'{"a":{"b":1}}'),
        # Nested repeats; a member dropped with a repeat inside it is dropped once.
        (b'{"a":{"c":1,"c":2},"b":[{"x":1,"x":2}],"a":5}', b'{"b":[{"x":2}],"a":5}'),
        (b'{"a":1,"a":2,"a":3}', b'{"a":3}'),
        (b"[1" + b"0" * MAX_INT_DIGITS + b"]", b"[1." + b"0" * MAX_INT_DIGITS + b"e4300]"),
        (b"-12" + b"3" * MAX_INT_DIGITS, b"-1.2" + b"3" * MAX_INT_DIGITS + b"e4301"),
    ],
)
def test_repeats_are_dropped_and_long_integers_rewritten(data: bytes, safe: bytes) -> None:
    assert safe_json(data) == safe
    # Every reader that takes the last member reads the same value as before.
    assert json.loads(safe) == json.loads(data, parse_int=float)


@pytest.mark.parametrize(
    "data",
    [
        b'[{"x":1},{"x":2}]',  # the same key in two objects is no repeat
        b'{"a":"{\\"a\\":1,\\"a\\":2}","b":2}',  # nor inside a string
        b'{"s":"' + b"1" * (MAX_INT_DIGITS + 1) + b'","t":2}',
        b"[1" + b"0" * MAX_INT_DIGITS + b".5]",  # a fraction reads as a float already
        b"1" + b"0" * (MAX_INT_DIGITS - 1),
        b'{\n  "a": 1,\n  "b": [\n    2\n  ]\n}',
        b'"text"',
        b'{"a":1}',
    ],
)
def test_what_needs_no_change_is_left_alone(data: bytes) -> None:
    assert safe_json(data) is None


_OBJECT_START = re.compile(r"\{\s*\"")


def _repeat_first_members(line: str) -> str:
    """*line* with the first member of each object written twice (a repeat of the same
    member: every decoder, the reference's too, reads the line as before)."""
    decoder = json.JSONDecoder()
    starts = [m.end() - 1 for m in _OBJECT_START.finditer(line)]
    original = json.loads(line)
    for at in reversed(starts):
        try:
            key, end = decoder.raw_decode(line, at)
            colon = len(line) - len(line[end:].lstrip())
            if line[colon : colon + 1] != ":":
                continue
            value_at = len(line) - len(line[colon + 1 :].lstrip())
            value, end = decoder.raw_decode(line, value_at)
        except json.JSONDecodeError:
            continue
        # On one line, so a pretty-printed document keeps its line numbers.
        member = json.dumps({key: value}, ensure_ascii=False, separators=(",", ":"))[1:-1]
        mutated = line[:at] + member + "," + line[at:]
        if json.loads(mutated) == original:  # not inside a string
            line = mutated
    return line


#: Real transcripts whose events copy records verbatim (tool inputs, whole records).
REPEATED = [
    "claude-code/agentsessions/small.jsonl",
    "codex/agent-sessions/codex_small_0.146.0.jsonl",
    "copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
    "antigravity/agent-sessions/cli_small.jsonl",
    "pi/agent-sessions/pi_small.jsonl",
    "gemini-cli/agent-sessions/gemini_large.json",
]


@pytest.mark.parametrize("name", REPEATED)
def test_repeated_keys_in_a_real_transcript_never_reach_the_output(
    name: str, tmp_path: Path
) -> None:
    source = FIXTURES / name
    text = source.read_text(encoding="utf-8")
    if name.endswith(".json"):
        mutated = _repeat_first_members(text)
    else:
        mutated = "\n".join(
            _repeat_first_members(ln) if ln.strip() else ln for ln in text.split("\n")
        )
    assert mutated.count('":') > text.count('":') + 10  # many objects got a repeat
    copy = tmp_path / source.name
    copy.write_text(mutated, encoding="utf-8")
    for args in (["convert", "--format", "jsonl"], ["convert"]):
        want = run_cli(*args, source)
        got = run_cli(*args, copy)
        assert got.returncode == want.returncode == 0, got.stderr
        if args[-1] == "jsonl":
            lines = got.stdout.splitlines()
            assert [_strict(ln) for ln in lines] == [
                json.loads(ln) for ln in want.stdout.splitlines()
            ]
        else:
            doc = _strict(got.stdout)
            doc["source"] = doc.get("source") and str(source)
            expected = json.loads(want.stdout)
            expected["source"] = expected.get("source") and str(source)
            assert doc == expected


def test_a_long_integer_in_a_tool_input_is_written_in_exponent_form(tmp_path: Path) -> None:
    source = FIXTURES / "copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl"
    lines = source.read_text(encoding="utf-8").split("\n")
    at = next(i for i, ln in enumerate(lines) if '"arguments":{"' in ln)
    digits = "7" + "0" * 5000
    lines[at] = lines[at].replace('"arguments":{', '"arguments":{"n":' + digits + ",", 1)
    copy = tmp_path / source.name
    copy.write_text("\n".join(lines), encoding="utf-8")
    got = run_cli("convert", "--format", "jsonl", copy)
    assert got.returncode == 0, got.stderr
    literals: list[str] = []
    events = [
        json.loads(ln, parse_float=lambda s: literals.append(s) or 0.0)
        for ln in got.stdout.splitlines()
    ]
    assert literals == ["7." + "0" * 5000 + "e5000"]
    calls = [e for e in events if e["kind"] == "tool_call" and "n" in e["tool_call"]["input"]]
    assert len(calls) == 1
