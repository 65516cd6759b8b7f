"""``drift scan``: vocabulary extraction, the shipped baselines, and the report.

The baselines are built from ``fixtures/`` by ``scripts/build_drift_baselines.py``,
so every fixture scans clean; drift is planted into copies of fixtures.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import shutil
import sqlite3
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from agentminutes.drift import (
    VOCABULARIES,
    Baseline,
    Category,
    ScanReport,
    Vocab,
    build_baseline,
    diff,
    load_baseline,
    scan,
    select_baseline,
    shipped_baselines,
)
from agentminutes.drift._scan import _account
from agentminutes.harness import ADAPTERS
from agentminutes.harness.drift_vocabulary import as_obj, reach
from conftest import FIXTURES, ROOT, fixture_id, transcripts

COVERED = sorted(VOCABULARIES)
#: The harnesses whose transcripts are JSON lines (the others are databases, folders and
#: whole documents: Amp threads, Continue sessions, Aider's Markdown).
LINES = [
    h
    for h in COVERED
    if VOCABULARIES[h].source is None and any(p.suffix == ".jsonl" for p in transcripts(h))
]
ALL_SCANNED = [
    p for h in COVERED for p in transcripts(h) if p.suffix in (".jsonl", ".json", ".log", ".md")
]
#: The drift samples (transcripts made to show drift) feed no baseline.
SAMPLES = [p for p in ALL_SCANNED if "schema_drift" in p.name]
SCANNED = [p for p in ALL_SCANNED if p not in SAMPLES]
#: Those whose drift no real transcript shows: they must be flagged. (Copilot's sample
#: holds records real Copilot sessions write too, so it scans clean.)
FLAGGED_SAMPLES = [p for p in SAMPLES if p.parent.parent.name in ("claude-code", "antigravity")]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_drift_baselines", ROOT / "scripts" / "build_drift_baselines.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # msgspec resolves the script's Structs' annotations there
    spec.loader.exec_module(module)
    return module


def _texts(report: ScanReport, kind: str | None = None) -> list[str]:
    return [f.text for f in report.findings if kind is None or f.kind == kind]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _first_line_fixture(harness: str) -> Path:
    return next(p for p in transcripts(harness) if p.suffix == ".jsonl" and p not in SAMPLES)


# -- the baselines -------------------------------------------------------------------


def test_every_line_harness_has_a_vocabulary_and_a_baseline() -> None:
    # Every line harness, and the database and folder formats read with a source reader.
    assert sorted([cls.name for cls in ADAPTERS] + ["cline", "opencode"]) == COVERED
    for harness in COVERED:
        found = shipped_baselines(harness)
        assert len(found) >= 1, harness
        baseline = load_baseline(harness)
        assert baseline is not None
        assert baseline.harness == harness
        assert baseline.fixtures, harness
        for fixture in baseline.fixtures:
            assert (FIXTURES / fixture.path).exists(), fixture.path


def test_baselines_are_built_from_the_current_fixtures() -> None:
    """Re-running the build script would change nothing: fixtures and baselines agree."""
    script = _script()
    files = script.planned([])
    # Each harness's baselines lie in its folder, where its description says.
    shipped = {p for f in {path.parent for path in files} for p in f.glob("*.json")}
    assert sorted(files) == sorted(shipped)
    assert len({path.parent for path in files}) == len(VOCABULARIES)
    for path, data in files.items():
        assert path.read_bytes() == data, f"{path.name} is stale: run the build script"


def _lab_tools_name() -> str:
    """The project folder and file name of the lab's Claude Code tools recording."""
    folder = FIXTURES / "lab/claude-code/2.1.332/tools/home/.claude/projects"
    return next(folder.glob("*/*.jsonl")).relative_to(folder).as_posix()


def test_baseline_records_fixtures_and_versions() -> None:
    baseline = load_baseline("claude-code")
    assert baseline is not None
    versions = {f.path: f.version for f in baseline.fixtures or []}
    assert versions["claude-code/ccl/07f2e15c-a38b-454b-9148-60edc06de401.jsonl"] == "1.0.29"
    # The lab's recordings of today's release feed it too.
    assert (
        versions["lab/claude-code/2.1.332/tools/home/.claude/projects/" + _lab_tools_name()]
        == "2.1.332"
    )
    assert baseline.generated_from_version == "2.1.332"
    assert "api-request-shape" in baseline.record_types
    assistant = baseline.record_types["assistant"]
    assert "tool_use" in (assistant.discriminators or {})["message.content[].type"]
    assert not any("mcp__" in v for v in (assistant.discriminators or {})["message.content[].name"])
    assert "type" in (assistant.required or [])


def test_select_baseline_nearest_version_at_or_below() -> None:
    def b(version: str) -> Baseline:
        return Baseline(harness="x", generated_from_version=version, record_types={})

    cands = [b("2.1.0"), b("1.0.0"), b("2.0.10")]
    assert select_baseline(cands, "2.0.9") is cands[1]
    assert select_baseline(cands, "2.0.10") is cands[2]
    assert select_baseline(cands, "2.0.11") is cands[2]
    assert select_baseline(cands, "9.0") is cands[0]
    assert select_baseline(cands, "") is cands[0]  # no version: the newest
    assert select_baseline(cands, "0.1") is cands[1]  # older than all: the oldest
    assert select_baseline([], "1.0") is None


def test_era_baseline_holds_only_older_fixtures() -> None:
    era = _script().build("claude-code", "2.0.76")
    assert era.generated_from_version == "2.0.76"
    versions = [f.version for f in era.fixtures or []]
    assert versions
    assert "1.0.29" in versions
    assert all(v in ("1.0.29", "1.0.56", "1.9.0", "2.0.76") for v in versions)
    assert len(era.record_types) < len(load_baseline("claude-code").record_types)  # type: ignore[union-attr]


def test_build_baseline_library_function(tmp_path: Path) -> None:
    baseline = build_baseline("pi", [FIXTURES / "pi/agent-sessions/pi_small.jsonl"])
    assert baseline.harness == "pi"
    assert "message/assistant" in baseline.record_types
    assert baseline.record_types["session"].keys == ["cwd", "id", "timestamp", "type", "version"]


# -- clean on every fixture -------------------------------------------------------------


@pytest.mark.parametrize("path", SCANNED, ids=[fixture_id(p) for p in SCANNED])
def test_every_fixture_scans_clean(path: Path) -> None:
    report = scan(path)
    assert report.harness == path.relative_to(FIXTURES).parts[0]
    assert report.category is Category.CLEAN, report.lines()
    assert all(not f.drift for f in report.findings)
    assert report.lines()[-1] == f"  clean: matches the {report.harness} baseline"


@pytest.mark.parametrize("path", FLAGGED_SAMPLES, ids=[fixture_id(p) for p in FLAGGED_SAMPLES])
def test_the_drift_samples_are_flagged(path: Path) -> None:
    report = scan(path)
    assert report.category is Category.DRIFT, report.lines()
    assert any(f.drift for f in report.findings)


def test_samples_are_there() -> None:
    # The Claude Code and Antigravity samples of agent-sessions (top-level tool_use records,
    # BROWSER_NAVIGATE): drift the scan must see.
    assert {p.parent.parent.name for p in FLAGGED_SAMPLES} == {"claude-code", "antigravity"}


def test_builtin_tools_and_tool_result_shapes_are_no_drift(tmp_path: Path) -> None:
    """A Claude Code built-in tool no fixture calls, and a tool's own result keys, scan clean:
    a real home uses them every day (the baseline adds the documented tool list)."""
    fixture = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    records = _records(fixture)
    last = next(r for r in reversed(records) if r.get("type") == "assistant")
    call = dict(last)
    call["message"] = dict(
        last["message"],
        content=[{"type": "tool_use", "id": "toolu_x", "name": "ExitPlanMode", "input": {}}],
    )
    result = {
        **next(r for r in records if r.get("type") == "user"),
        "toolUseResult": {"plan": "…", "planWasEdited": False},
    }
    path = _write(tmp_path / "t.jsonl", [*records, call, result])
    report = scan(path)
    assert not _texts(report, "new_value"), report.lines()
    assert not [t for t in _texts(report, "new_key") if "toolUseResult" in t], report.lines()
    # An unknown tool name still is news.
    call["message"]["content"][0]["name"] = "PlantedTool"
    report = scan(_write(tmp_path / "u.jsonl", [*records, call]))
    assert any("PlantedTool" in t for t in _texts(report)), report.lines()


def test_cli_scans_every_fixture_clean(cli: Any) -> None:
    done = cli("drift", "scan", *SCANNED)
    assert done.returncode == 0, done.stdout.decode()[-2000:]
    assert done.stderr == b""
    out = done.stdout.decode()
    assert out.count("  clean: matches the ") == len(SCANNED)
    assert "drift:" not in out


# -- planted drift ------------------------------------------------------------------------


@pytest.mark.parametrize("harness", LINES)
def test_planted_new_record_type(harness: str, tmp_path: Path) -> None:
    records = _records(_first_line_fixture(harness))
    planted = dict(records[-1], type="planted_record_type")
    path = _write(tmp_path / "t.jsonl", [*records, planted])
    report = scan(path)
    assert report.category is Category.DRIFT
    assert 'drift: new record type "planted_record_type"' in _texts(report, "new_record_type")
    assert "clean:" not in "\n".join(report.lines())


@pytest.mark.parametrize("harness", LINES)
def test_planted_new_key(harness: str, tmp_path: Path) -> None:
    fixture = _first_line_fixture(harness)
    records = _records(fixture)
    records[-1]["plantedKey"] = {"plantedSub": 1}
    path = _write(tmp_path / "t.jsonl", records)
    rtype = VOCABULARIES[harness].record_type(
        as_obj(msgspec.Raw(json.dumps(records[-1]).encode())) or {}
    )
    report = scan(path)
    assert report.category is Category.DRIFT
    assert _texts(report, "new_key") == [
        f'drift: record type "{rtype}" has new key "plantedKey"',
        f'drift: record type "{rtype}" has new key "plantedKey.plantedSub"',
    ]
    assert not _texts(report, "new_record_type")


def test_planted_drift_in_whole_documents(tmp_path: Path) -> None:
    """A new message role in an Amp thread or a Continue session, a new kind of Aider report."""
    thread = json.loads(next(p for p in transcripts("amp") if p.suffix == ".json").read_text())
    thread["messages"].append({"role": "planted", "content": []})
    session = json.loads(transcripts("continue-cli")[0].read_text())
    session["history"].append({"message": {"role": "planted", "content": ""}})
    history = transcripts("aider")[0].read_text() + "> Planted: a new report  \n"
    cases = [
        (tmp_path / "T-planted.json", json.dumps(thread, indent=2), "message/planted"),
        (tmp_path / "planted.json", json.dumps(session, indent=2), "item/planted"),
        (tmp_path / ".aider.chat.history.md", history, None),
    ]
    for path, text, rtype in cases:
        path.write_text(text)
        report = scan(path)
        assert report.category is Category.DRIFT, path.name
        if rtype is not None:
            assert f'drift: new record type "{rtype}"' in _texts(report, "new_record_type")
        else:
            assert any('"Planted"' in t for t in _texts(report)), _texts(report)


def test_planted_drift_in_a_database_and_a_task_folder(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(FIXTURES / "opencode/constructed/opencode.db", db)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO part VALUES ('prt_zz', 'msg_a2', 'ses_0a0000000001ConstructedA1', 1, 1,"
            ' \'{"type": "planted-part"}\')'
        )
    report = scan(db)
    assert report.category is Category.DRIFT
    assert 'drift: new record type "part/planted-part"' in _texts(report, "new_record_type")
    # The adapter refuses the unknown part in strict mode, and the scan says so too.
    assert any("unrecognized part type" in t for t in _texts(report, "parse_failure"))
    task = tmp_path / "1767000000000"
    shutil.copytree(FIXTURES / "cline/constructed/1767000000000", task)
    ui = json.loads((task / "ui_messages.json").read_text())
    ui.append(dict(ui[-1], ask="planted_ask"))
    (task / "ui_messages.json").write_text(json.dumps(ui))
    report = scan(task)
    assert report.category is Category.DRIFT
    assert 'drift: record type "ui/ask" has new ask value "planted_ask"' in _texts(
        report, "new_value"
    )
    assert scan(FIXTURES / "cline/constructed/1767000000000").category is Category.CLEAN


def test_planted_drift_claude_code_in_detail(tmp_path: Path) -> None:
    src = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    records = _records(src)
    i = next(n for n, r in enumerate(records) if r.get("type") == "assistant")
    block = {"type": "tool_use", "id": "toolu_x", "name": "PlantedTool", "input": {}}
    mcp = {"type": "tool_use", "id": "toolu_y", "name": "mcp__srv__tool", "input": {}}
    records[i]["message"]["content"] = [*records[i]["message"]["content"], block, mcp]
    records[i]["wireToolInputs"] = {"toolu_abc": {}}  # ids as keys collapse to "*"
    path = _write(tmp_path / "t.jsonl", records)
    report = scan(path)
    assert _texts(report, "new_value") == [
        'drift: record type "assistant" has new message.content[].name value "PlantedTool"'
    ]
    assert _texts(report, "new_key") == [
        'drift: record type "assistant" has new key "wireToolInputs"',
        'drift: record type "assistant" has new key "wireToolInputs.*"',
    ]
    assert report.category is Category.DRIFT


def test_missing_key(tmp_path: Path) -> None:
    baseline = load_baseline("claude-code")
    assert baseline is not None
    required = baseline.record_types["user"].required or []
    assert "message" in required
    records = _records(FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl")
    users = [r for r in records if r.get("type") == "user"]
    del users[0]["timestamp"]
    path = _write(tmp_path / "t.jsonl", records)
    report = scan(path)
    assert (
        f'drift: record type "user" is missing key "timestamp" (absent from 1 of {len(users)} records)'
        in _texts(report, "missing_key")
    )
    assert report.category is Category.DRIFT


def test_new_key_in_a_legacy_document(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "gemini-cli/agent-sessions/gemini_large.json").read_text())
    doc["messages"][0]["plantedKey"] = "x"
    path = tmp_path / "session-legacy.json"
    path.write_text(json.dumps(doc, indent=2))
    report = scan(path)
    rtype = doc["messages"][0]["type"]
    assert _texts(report, "new_key") == [f'drift: record type "{rtype}" has new key "plantedKey"']


def test_pretty_printed_records(tmp_path: Path) -> None:
    """Records spread over several lines (a pretty-printed rollout) are read one by one."""
    src = (
        FIXTURES
        / "codex/cabinet-gov/rollout-2026-04-30T11-12-25-019ddc5f-977f-7fd3-a392-a6477e6b25b2.jsonl"
    )
    records = _records(src)
    path = tmp_path / "pretty.jsonl"
    path.write_text("".join(json.dumps(r, indent=4, ensure_ascii=False) + "\n" for r in records))
    assert scan(path).category is Category.CLEAN
    records[0]["plantedKey"] = 1
    path.write_text("".join(json.dumps(r, indent=4, ensure_ascii=False) + "\n" for r in records))
    assert _texts(scan(path), "new_key") == [
        'drift: record type "session_meta" has new key "plantedKey"'
    ]


def test_invalid_json_stops_the_vocabulary(tmp_path: Path) -> None:
    src = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    lines = src.read_text().splitlines()
    lines.insert(3, "{not json")
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = scan(path)
    assert report.category is Category.DRIFT
    assert _texts(report)[0].startswith("drift: strict parse failed: claude-code: invalid JSON")
    assert _texts(report)[0].endswith("at line 4")
    stopped = _texts(report, "vocabulary_stopped")
    assert len(stopped) == 1
    assert stopped[0].startswith("vocabulary extraction stopped: line 4: ")
    assert report.findings[-1].kind == "vocabulary_stopped"  # the report ends there


def test_newer_version_is_a_note(tmp_path: Path) -> None:
    records = _records(FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl")
    for r in records:
        if "version" in r:
            r["version"] = "99.0.0"
    report = scan(_write(tmp_path / "t.jsonl", records))
    assert report.category is Category.CLEAN
    assert _texts(report, "note") == [
        "note: transcript version 99.0.0 is newer than last validated 2.1.332"
    ]


def test_unaccounted_lines_are_drift() -> None:
    report = ScanReport("x", harness="claude-code")
    _account(report, [1, 2, 3, 5], {1, 3})
    assert _texts(report) == [
        "drift: 2 lines covered by neither an event nor a skip (first: line 2)"
    ]
    assert report.category is Category.DRIFT


def test_undetected_and_uncovered_sources(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.txt"
    garbage.write_bytes(b"hello\x00world\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    for path in (garbage, empty):
        report = scan(path)
        assert report.category is Category.EXEC_ERROR
        assert report.lines() == [f"{path}: could not detect the source harness"]
    report = scan(FIXTURES / "chatgpt/conversations.json")
    assert report.category is Category.EXEC_ERROR
    assert report.lines()[1].startswith("  error: no drift baseline for chatgpt")


# -- vocabulary helpers ----------------------------------------------------------------------


def test_reach_paths() -> None:
    rec = as_obj(msgspec.Raw(b'{"a":{"b":[{"c":"x"},{"c":2},{"d":1}]},"s":"t"}'))
    assert rec is not None
    assert [bytes(v) for v in reach(rec, "a.b[].c")] == [b'"x"', b"2"]
    assert reach(rec, "a.missing") == []
    assert reach(rec, "s.x") == []


def test_vocab_union_and_diff() -> None:
    spec = VOCABULARIES["copilot"]
    base_vocab = Vocab(spec)
    base_vocab.add_lines([(1, b'{"type":"abort","data":{"reason":"user"},"id":"1"}')])
    base_vocab.add_lines([(1, b'{"type":"abort","data":{"reason":"user"},"id":"2"}')])
    from agentminutes.drift import baseline_from_vocab

    baseline = baseline_from_vocab(base_vocab)
    seen = Vocab(spec)
    seen.add_lines([(1, b'{"type":"abort","data":{"reason":"timeout","x":1}}')])
    found = diff(baseline, seen)
    assert found.new_keys == {"abort": ["data.x"]}
    assert found.new_values == {"abort": {"data.reason": ["timeout"]}}
    assert found.missing_keys == {"abort": [("id", 1, 1)]}
    assert found.drift


# -- the command line -------------------------------------------------------------------------


def test_cli_exit_codes(cli: Any, tmp_path: Path) -> None:
    src = FIXTURES / "copilot/agent-sessions/copilot_small_0.0.420.jsonl"
    records = _records(src)
    drifted = _write(tmp_path / "drifted.jsonl", [*records, dict(records[-1], type="planted.type")])
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("not a transcript\n")

    done = cli("drift", "scan", drifted)
    assert done.returncode == 1
    assert done.stderr == b""
    out = done.stdout.decode().splitlines()
    assert out[0] == f"{drifted}: copilot"
    assert '  drift: new record type "planted.type"' in out

    done = cli("drift", "scan", garbage)
    assert done.returncode == 3
    assert done.stdout.decode() == f"{garbage}: could not detect the source harness\n"

    done = cli("drift", "scan", garbage, drifted)  # drift outranks "could not check"
    assert done.returncode == 1

    done = cli("drift", "scan", src, tmp_path / "missing.jsonl", drifted)
    assert done.returncode == 1
    assert done.stdout.decode().startswith(f"{src}: copilot\n")  # earlier reports stay
    assert str(drifted) not in done.stdout.decode()  # the scan stops at the unreadable path
    err = done.stderr.decode()
    assert err.count("\n") == 1
    assert err.startswith("Error: ")
    assert "missing.jsonl" in err

    for bad in (tmp_path, "-"):
        done = cli("drift", "scan", bad)
        assert done.returncode == 1
        assert done.stderr.decode().startswith("Error: ")
        assert b"Traceback" not in done.stderr
