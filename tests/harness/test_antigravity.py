"""The Antigravity adapter on real transcripts: step order, pairing, errors, detection.

Expectations are derived from the fixture records themselves (read here with
the standard ``json`` module), not copied from our own output; the golden
tests pin the output against the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentminutes.errors import ParseError
from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence, ParseOptions, detect
from agentminutes.harness.antigravity import AntigravityAdapter
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks
from agentminutes.schema import Event
from conftest import FIXTURES, convert_json, fixture_id, stats_json, transcripts

ALL = transcripts("antigravity")
SMALL = FIXTURES / "antigravity/agent-sessions/cli_small_2026-06-26.jsonl"
UNSORTED = FIXTURES / "antigravity/agent-sessions/cli_small.jsonl"
IDE = FIXTURES / "antigravity/vibe-coding/ide-6d51c53d/transcript.jsonl"
COMPACT = FIXTURES / "antigravity/health-connect/cli-fc6e6de7/transcript.jsonl"
FULL = FIXTURES / "antigravity/vibe-coding/cli-d580aa81/transcript_full.jsonl"
DRIFT = FIXTURES / "antigravity/agent-sessions/cli_schema_drift.jsonl"


def records(path: Path) -> dict[int, dict[str, Any]]:
    """The fixture's records by line number."""
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.strip():
            out[n] = json.loads(line)
    return out


def write(tmp_path: Path, recs: list[dict[str, Any]]) -> Path:
    path = tmp_path / "transcript_full.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def events_of(path: Path, **options: Any) -> list[Event]:
    conv = Conversion(name=str(path), options=ParseOptions(**options))
    return list(conv.iter_events(open_sync_chunks(path)))


# -- detection -------------------------------------------------------------------


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_fixture_is_detected_as_certain(path: Path) -> None:
    cls, confidence = detect(path.read_bytes()[:SNIFF_BYTES])
    assert cls is AntigravityAdapter
    assert confidence == Confidence.CERTAIN


OTHERS = [p for cls in ADAPTERS if cls.name != "antigravity" for p in transcripts(cls.name)]


@pytest.mark.parametrize("path", OTHERS, ids=[fixture_id(p) for p in OTHERS])
def test_other_harnesses_transcripts_are_not_claimed(path: Path) -> None:
    assert AntigravityAdapter.sniff(path.read_bytes()[:SNIFF_BYTES]) == Confidence.NO_MATCH


def test_unknown_step_type_is_only_possible(tmp_path: Path) -> None:
    first = dict(records(SMALL)[1], type="HOLOGRAM_STEP")
    head = write(tmp_path, [first]).read_bytes()
    assert AntigravityAdapter.sniff(head) == Confidence.POSSIBLE


# -- the whole-file step order ---------------------------------------------------------


def test_events_follow_step_index_then_file_order() -> None:
    recs = records(UNSORTED)
    order = sorted(recs, key=lambda n: (recs[n]["step_index"], n))
    assert order != sorted(recs), "the fixture should be out of order"
    lines = []
    for ev in convert_json(UNSORTED)["events"]:
        line = ev["provenance"]["line"]
        if not lines or lines[-1] != line:
            lines.append(line)
    assert lines == order


def test_whole_file_mode_waits_for_the_end_and_live_mode_does_not() -> None:
    lines = [(n, line) for n, line in enumerate(SMALL.read_bytes().split(b"\n"), 1) if line]
    whole = AntigravityAdapter()
    assert all(whole.feed(line, n) == [] for n, line in lines)
    held = list(whole.finish())
    live = AntigravityAdapter(ParseOptions(live=True))
    streamed = [ev for n, line in lines for ev in live.feed(line, n)]
    assert streamed
    assert list(live.finish()) == []
    assert streamed == held


@pytest.mark.parametrize("path", [COMPACT, FULL, IDE], ids=fixture_id)
def test_live_mode_equals_whole_file_on_ordered_transcripts(path: Path) -> None:
    assert events_of(path, live=True) == events_of(path)


def test_live_mode_reports_a_late_step_where_it_arrives() -> None:
    live = events_of(UNSORTED, live=True)
    lines = [ev.provenance.line for ev in live if ev.provenance]
    assert lines == sorted(lines)
    assert sorted(lines) == sorted(
        ev.provenance.line for ev in events_of(UNSORTED) if ev.provenance
    )


def events_from_path(path: Path, **options: Any) -> tuple[list[Event], Conversion]:
    """Events of *path* read as convert reads a file (so the presorted check may run)."""
    conv = Conversion(name=str(path), options=ParseOptions(**options), path=str(path))
    return list(conv.iter_events(open_sync_chunks(path))), conv


def in_step_order(path: Path) -> bool:
    steps = [r["step_index"] for r in records(path).values()]
    return steps == sorted(steps)


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_a_file_in_step_order_streams_and_equals_the_sorted_output(path: Path) -> None:
    events, conv = events_from_path(path, permissive=path == DRIFT)
    assert events == events_of(path, permissive=path == DRIFT)
    assert conv.options.presorted is in_step_order(path)


def test_a_presorted_file_holds_nothing_and_emits_as_it_reads(tmp_path: Path) -> None:
    conv = Conversion(name=str(FULL), path=str(FULL))
    batches = conv.iter_batches(open_sync_chunks(FULL))
    first = next(batches)
    assert first.events, "a presorted transcript's events come with its first lines"
    assert isinstance(conv.adapter, AntigravityAdapter)
    assert conv.adapter.held == []
    rest = [ev for b in batches for ev in b.events]
    assert first.events + rest == events_of(FULL)


def test_an_out_of_order_file_is_held_and_sorted() -> None:
    assert not in_step_order(UNSORTED)
    events, conv = events_from_path(UNSORTED)
    assert not conv.options.presorted
    assert events == events_of(UNSORTED)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda r: r.pop("step_index"), id="a step without an index"),
        pytest.param(lambda r: r.update(step_index=-1), id="a late step with a smaller index"),
    ],
)
def test_one_unordered_step_in_the_middle_falls_back_to_sorting(
    tmp_path: Path, damage: Any
) -> None:
    recs = list(records(FULL).values())
    damage(recs[len(recs) // 2])
    path = write(tmp_path, recs)
    events, conv = events_from_path(path, permissive=True)  # a step without an index is unknown
    assert not conv.options.presorted
    assert events == events_of(path, permissive=True)


def test_a_broken_line_in_permissive_mode_is_sorted_last_as_before(tmp_path: Path) -> None:
    lines = FULL.read_bytes().split(b"\n")
    lines.insert(len(lines) // 2, b'{"step_index": 3, "media": [7]}')
    path = tmp_path / "transcript_full.jsonl"
    path.write_bytes(b"\n".join(lines))
    events, conv = events_from_path(path, permissive=True)
    assert not conv.options.presorted
    assert events == events_of(path, permissive=True)


def test_a_fifo_is_read_once_without_the_presorted_check(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "transcript_full.jsonl"
    os.mkfifo(fifo)
    data = FULL.read_bytes()

    def writer() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    thread = threading.Thread(target=writer)
    thread.start()
    events, conv = events_from_path(fifo)
    thread.join(timeout=10)
    assert not conv.options.presorted
    assert events == events_of(FULL)


# -- pairing and errors -------------------------------------------------------------------


@pytest.mark.parametrize("path", [SMALL, COMPACT, FULL, IDE], ids=fixture_id)
def test_results_answer_the_latest_planners_calls_in_order(path: Path) -> None:
    recs = records(path)
    pending: list[str] = []
    expected: dict[int, str] = {}
    always = {"RUN_COMMAND", "VIEW_FILE", "LIST_DIRECTORY", "GREP_SEARCH", "SEARCH_WEB"}
    always |= {"READ_URL_CONTENT", "CODE_ACTION", "MCP_TOOL"}
    for n in sorted(recs, key=lambda n: (recs[n]["step_index"], n)):
        rec = recs[n]
        step = rec["step_index"]
        if rec["type"] == "PLANNER_RESPONSE":
            pending = [f"step-{step}:call-{k}" for k in range(len(rec.get("tool_calls") or []))]
        elif rec["type"] in always or (rec["type"] in ("GENERIC", "ASK_QUESTION") and pending):
            expected[n] = pending.pop(0) if pending else f"step-{step}:orphan"
    got = {
        ev["provenance"]["line"]: ev["tool_result"]["tool_call_id"]
        for ev in convert_json(path)["events"]
        if ev["kind"] == "tool_result"
    }
    assert got == expected
    assert expected, "the fixture should have results"


def test_calls_carry_step_ids_names_and_verbatim_arguments() -> None:
    recs = records(COMPACT)
    for ev in convert_json(COMPACT)["events"]:
        if ev["kind"] != "tool_call":
            continue
        rec = recs[ev["provenance"]["line"]]
        call = ev["tool_call"]
        step, k = call["tool_call_id"].removeprefix("step-").split(":call-")
        assert int(step) == rec["step_index"]
        assert ev["message_id"] == f"step-{step}"
        native = rec["tool_calls"][int(k)]
        assert call["name"] == native["name"]
        # The compact form's string-encoded argument values are not decoded.
        assert call["input"] == native["args"]


def _session(tmp_path: Path, result: dict[str, Any], call: str = "run_command") -> Any:
    planner = {"step_index": 0, "type": "PLANNER_RESPONSE", "tool_calls": [{"name": call}]}
    recs = [planner, {"step_index": 1, **result}]
    return convert_json(write(tmp_path, recs), harness="antigravity")


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("The command exited with code 2.", True),
        ("The command exited with code 0.", False),
        ("The command exited with code 2", False),
        ("The command failed with exit code: 1", False),
        ("Created At: x\n\nThe command exited with code 2.", False),
    ],
)
def test_a_non_zero_exit_code_marks_a_run_command_result(
    tmp_path: Path, content: str, error: bool
) -> None:
    base = records(FULL)
    run = next(r for r in base.values() if r["type"] == "RUN_COMMAND")
    doc = _session(tmp_path, dict(run, content=content))
    result = doc["events"][-1]["tool_result"]
    assert result.get("is_error", False) is error
    assert result["tool_name"] == "run_command"


def test_exit_code_text_is_no_error_for_other_tools(tmp_path: Path) -> None:
    doc = _session(
        tmp_path, {"type": "VIEW_FILE", "content": "The command exited with code 2."}, "view_file"
    )
    assert "is_error" not in doc["events"][-1]["tool_result"]


def test_the_error_field_marks_any_result(tmp_path: Path) -> None:
    doc = _session(tmp_path, {"type": "VIEW_FILE", "content": "x", "error": "boom"}, "view_file")
    assert doc["events"][-1]["tool_result"]["is_error"] is True


def test_no_usage_means_no_totals() -> None:
    for path in ALL:
        doc = convert_json(path)
        assert "totals" not in doc
        assert all("usage" not in ev.get("assistant_message", {}) for ev in doc["events"])
        assert "totals" not in stats_json(path)


# -- steps the reference rejects ----------------------------------------------------------


def test_ide_steps_are_read_strictly() -> None:
    recs = records(IDE)
    doc = convert_json(IDE)
    assert doc["report"].get("unknown_events", 0) == 0
    by_line: dict[int, list[dict[str, Any]]] = {}
    for ev in doc["events"]:
        by_line.setdefault(ev["provenance"]["line"], []).append(ev)
    types = {rec["type"] for rec in recs.values()}
    assert {"KNOWLEDGE_ARTIFACTS", "MCP_TOOL"} <= types
    for n, rec in recs.items():
        kinds = [ev["kind"] for ev in by_line[n] if ev["kind"] != "session_meta"]
        if rec["type"] == "KNOWLEDGE_ARTIFACTS":
            assert kinds == ["system"]
            assert by_line[n][-1]["system"]["subtype"] == "knowledge_artifacts"
        elif rec["type"] == "MCP_TOOL":
            assert kinds == ["tool_result"]
            assert by_line[n][0]["tool_result"]["tool_name"] == "call_mcp_tool"


def test_browser_navigate_is_a_system_event_with_nothing_pending() -> None:
    events = convert_json(DRIFT)["events"]
    assert [ev["kind"] for ev in events if ev["provenance"]["line"] == 3] == ["system"]
    assert events[-1]["system"]["subtype"] == "browser_navigate"


# -- meta, versions and errors ----------------------------------------------------------------


def test_harness_version_is_metadata_only() -> None:
    plain = convert_json(FULL)
    hinted = convert_json(FULL, harness_version="1.2.3")
    assert hinted["meta"] == {"harness": "antigravity", "harness_version": "1.2.3"}
    assert hinted["events"][0]["session_meta"] == hinted["meta"]
    assert hinted["events"][1:] == plain["events"][1:]


def _future_step(tmp_path: Path) -> Path:
    recs = list(records(SMALL).values())
    recs.append(dict(recs[-1], step_index=99, type="HOLOGRAM_STEP"))
    return write(tmp_path, recs)


def test_an_unknown_step_from_a_newer_release_suggests_format_drift(tmp_path: Path) -> None:
    path = _future_step(tmp_path)
    with pytest.raises(ParseError) as err:
        convert_json(path, harness_version="9.0.0")
    text = str(err.value)
    assert 'unrecognized record type "HOLOGRAM_STEP"' in text
    assert "newer than last checked 1.2.11" in text
    assert "format drift" in text
    assert text.endswith(f"at line {len(records(SMALL)) + 1}")
    with pytest.raises(ParseError) as err:
        convert_json(path, harness_version=AntigravityAdapter.last_checked)
    assert "drift" not in str(err.value)
    assert "(harness version 1.2.11)" in str(err.value)


def test_permissive_keeps_unknown_steps_and_broken_lines_as_json(tmp_path: Path) -> None:
    path = _future_step(tmp_path)
    with path.open("a") as f:
        f.write('{"step_index": 100, "type": \n')
    doc = convert_json(path, permissive=True)
    unknown = [ev["unknown"] for ev in doc["events"] if ev["kind"] == "unknown"]
    assert unknown[0]["record_type"] == "HOLOGRAM_STEP"
    assert unknown[1]["reason"].startswith("invalid JSON")
    assert unknown[1]["raw"] == '{"step_index": 100, "type":'
    assert doc["report"]["unknown_events"] == 2


def test_keys_match_in_any_letter_case_as_the_reference_reads_them(tmp_path: Path) -> None:
    rec = records(SMALL)[1]
    shouting = {k.upper(): v for k, v in rec.items()}
    doc = convert_json(write(tmp_path, [shouting]), harness="antigravity")
    assert [ev["kind"] for ev in doc["events"]] == ["session_meta", "user_message", "system"]
    assert doc["events"][1]["timestamp"] == rec["created_at"]


def test_a_wrongly_typed_field_is_reported_in_gos_words(tmp_path: Path) -> None:
    rec = dict(records(SMALL)[4], content=5)
    with pytest.raises(
        ParseError,
        match=r"cannot unmarshal number into Go struct field record\.content of type string at line 1",
    ):
        convert_json(write(tmp_path, [rec]))


def test_a_comma_fraction_is_a_valid_timestamp(tmp_path: Path) -> None:
    rec = dict(records(SMALL)[8], created_at="2026-06-26T21:16:22,25Z")
    doc = convert_json(write(tmp_path, [rec]))
    assert doc["events"][0]["timestamp"] == "2026-06-26T21:16:22.25Z"


def test_held_steps_leave_the_pipeline_in_bounded_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentminutes.pipeline.conversion as pipeline

    monkeypatch.setattr(pipeline, "FINAL_BATCH_EVENTS", 10)
    conv = Conversion(name=str(FULL))
    batches = [b.events for b in conv.iter_batches(open_sync_chunks(FULL))]
    assert max(len(events) for events in batches) <= 10
    assert [ev for events in batches for ev in events] == events_of(FULL)


def _lean_cases(tmp_path: Path) -> list[tuple[Path, bool]]:
    """Every fixture, and steps holding what Go reads differently from their bytes."""
    lines = SMALL.read_bytes().splitlines()
    odd = [
        # a lone surrogate escape in a string the step decodes, and in a tool's arguments
        lines[0].replace(b"List the files.", b"List the \\ud800 files."),
        lines[2].replace(b'"\\"/tmp/repo\\""', b'"\\"/tmp/\\udc00repo\\""'),
        # invalid UTF-8 in a tool's arguments, and in a step's text
        lines[2].replace(b"/tmp/repo", b"/tmp/r\xffepo"),
        lines[0].replace(b"List the files.", b"List the \xfe files."),
        # a key in another letter case (Go's rules), media, an index past int64
        lines[1].replace(b'"status"', b'"Status"'),
        lines[3][:-1] + b',"media":[{"mime_type":"image/png","uri":"file:///a.png"}]}',
        lines[4].replace(b'"step_index":4', b'"step_index":99999999999999999999'),
    ]
    cases = [(p, p == DRIFT) for p in ALL]
    for i, line in enumerate(odd):
        path = tmp_path / f"odd-{i}.jsonl"
        path.write_bytes(b"\n".join([*lines, line]) + b"\n")
        cases += [(path, False), (path, True)]
    return cases


def test_a_read_that_writes_no_verbatim_json_takes_lines_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """stats (no verbatim JSON written) offers each step to the strict decode as it is:
    the same summary, the same error, as the full read that first rewrites what Go
    reads differently; a line the strict decode refuses takes the full read."""
    taken: list[int] = []
    lean = AntigravityAdapter._lean_feed

    def counted(self: AntigravityAdapter, line: bytes, lineno: int) -> list[Event] | None:
        events = lean(self, line, lineno)
        taken.append(events is not None)
        return events

    monkeypatch.setattr(AntigravityAdapter, "_lean_feed", counted)
    for path, permissive in _lean_cases(tmp_path):
        got = []
        for check_verbatim in (False, True):
            try:
                got.append(stats_json(path, permissive=permissive, check_verbatim=check_verbatim))
            except ParseError as exc:
                got.append(str(exc))
        assert got[0] == got[1], path
    assert any(taken)
    assert not all(taken)  # the odd lines took the full read


@pytest.mark.parametrize("tail", [b"", b"\n", b"\n\n"], ids=["no newline", "newline", "blank"])
def test_the_first_read_sees_every_line_across_its_buffer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes
) -> None:
    import agentminutes.pipeline.conversion as conversion

    # A buffer smaller than most steps: lines cross reads, and one outgrows the buffer.
    monkeypatch.setattr(conversion, "_FIRST_READ_BUFFER", 64)
    data = FULL.read_bytes().rstrip(b"\n")
    data = data.replace(b"\n", b"\n\n  \n", 1) + tail  # blank lines are passed over
    path = tmp_path / "transcript_full.jsonl"
    path.write_bytes(data)
    with open(path, "rb", buffering=0) as f:
        assert [bytes(v) for v in conversion._lines(f)] == data.split(b"\n")[
            : data.count(b"\n") + (not tail)
        ]
    events, conv = events_from_path(path)
    assert conv.options.presorted
    assert events == events_of(path)  # as the whole-file read, which holds and sorts
