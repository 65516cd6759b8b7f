"""Detection across harnesses: every fixture is recognized as its own harness, and only that."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentminutes
from agentminutes.errors import DetectError
from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence
from conftest import FIXTURES, fixture_id

#: Fixture folders are named after the harness that wrote their files. The lab's
#: recordings (a home per scenario, with the server's ground truth beside it) are
#: detected by tests/lab/test_recordings.py, transcript by transcript.
CASES = [
    (folder.name, path)
    for folder in sorted(FIXTURES.iterdir())
    if folder.is_dir() and folder.name not in ("golden", "sessions", "lab")
    for path in sorted(folder.rglob("*"))
    if path.is_file()
    and path.suffix in (".jsonl", ".json", ".log", ".zip", ".db")
    and not path.name.endswith(".meta.json")
    and path.name != "journal.jsonl"  # a Claude Code workflow run's journal: a sidecar
]


@pytest.mark.parametrize(("harness", "path"), CASES, ids=[fixture_id(p) for _, p in CASES])
def test_each_fixture_is_detected_as_its_harness(harness: str, path: Path) -> None:
    name, confidence = agentminutes.detect(path)
    assert name == harness
    assert confidence in ("certain", "possible")


@pytest.mark.parametrize(("harness", "path"), CASES, ids=[fixture_id(p) for _, p in CASES])
def test_no_other_line_adapter_claims_it(harness: str, path: Path) -> None:
    head = path.read_bytes()[:SNIFF_BYTES]
    # Gemini CLI's prompt log (logs.json) is Qwen Code's format too: told by its folder.
    shared = {"qwen-code", "gemini-cli"} if path.name == "logs.json" else set()
    for cls in ADAPTERS:
        if cls.name != harness and cls.name not in shared:
            assert cls.sniff(head) == Confidence.NO_MATCH, cls.name


def test_a_file_of_no_known_harness_names_the_harnesses_tried(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello": "world"}\n')
    with pytest.raises(DetectError) as err:
        agentminutes.detect(path)
    for cls in ADAPTERS:
        assert cls.name in str(err.value)


# -- the whole sniff window -------------------------------------------------------------------

CLAUDE_SUBAGENT = FIXTURES / "claude-code" / "subagents" / "agent-aef063ba534d73153.jsonl"
CLAUDE_SESSION = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"


def _session_id(path: Path) -> str:
    import json

    return str(json.loads(path.read_bytes().splitlines()[0])["sessionId"])


def _bookkept(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """Real Claude Code transcripts reshaped as the harness writes them with a bookkeeping top."""
    import json

    fork = {
        "type": "fork-context-ref",
        "agentId": CLAUDE_SUBAGENT.stem.removeprefix("agent-"),
        "parentSessionId": _session_id(CLAUDE_SUBAGENT),
        "parentLastUuid": "00000000-0000-4000-8000-000000000000",
    }
    teleport = {
        "type": "teleported-from",
        "remoteSessionId": "session_01AbCdEfGhIjKlMnOpQrStUv",
        "branch": "main",
        "messageCount": 4,
    }
    cases = {}
    for name, record, source in (
        ("fork", fork, CLAUDE_SUBAGENT),
        ("teleport", teleport, CLAUDE_SESSION),
    ):
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(json.dumps(record).encode() + b"\n" + source.read_bytes())
        cases[name] = (path, source)
    return cases


def test_a_bookkeeping_first_record_is_read_past(tmp_path: Path) -> None:
    """``fork-context-ref`` / ``teleported-from`` on line 1: detected, session_meta first, in
    convert and in follow alike, and the record counted as a skip."""
    import json

    from conftest import run_cli

    for name, (path, source) in _bookkept(tmp_path).items():
        detected = run_cli("detect", path)
        assert detected.stdout == b"claude-code\tcertain\n", (name, detected.stderr)
        converted = run_cli("convert", "--format", "jsonl", path)
        assert converted.returncode == 0, converted.stderr
        events = [json.loads(x) for x in converted.stdout.splitlines()]
        assert events[0]["kind"] == "session_meta"
        assert events[0]["session_meta"]["session_id"] == _session_id(source)
        original = [
            json.loads(x)
            for x in run_cli("convert", "--format", "jsonl", source).stdout.splitlines()
        ]
        assert events[0]["provenance"]["line"] == original[0]["provenance"]["line"] + 1
        assert [e["kind"] for e in events] == [e["kind"] for e in original]
        kind = json.loads(path.read_bytes().splitlines()[0])["type"]
        assert f"{kind} 1" in converted.stderr.decode()
        followed = run_cli("follow", "--idle-exit", "0.3", path)
        assert followed.returncode == 0, followed.stderr
        assert followed.stdout == converted.stdout


@pytest.mark.parametrize(
    "path",
    [
        next(p for _, p in CASES if h == harness and p.suffix == ".jsonl")
        for harness in ("antigravity", "claude-code", "codex", "copilot", "pi", "qwen-code")
        for h in [harness]
    ],
    ids=fixture_id,
)
def test_a_first_line_no_adapter_places_does_not_hide_the_harness(
    path: Path, tmp_path: Path
) -> None:
    """Detection grades the records after a foreign first line; strict parsing still fails on it."""
    from conftest import run_cli

    harness = path.relative_to(FIXTURES).parts[0]
    for top in (b"// Source: a comment, not a record\n", b'{"type": "no-such-record", "n": 1}\n'):
        reshaped = tmp_path / path.name
        reshaped.write_bytes(top + path.read_bytes())
        assert agentminutes.detect(reshaped)[0] == harness
        proc = run_cli("convert", reshaped)
        assert proc.returncode == 1
        assert f"{reshaped}: {harness}: " in proc.stderr.decode()
        assert "at line 1" in proc.stderr.decode()


def test_a_record_the_window_cuts_is_no_evidence(tmp_path: Path) -> None:
    """Only complete records count: a second line cut by the window does not make a harness."""
    from agentminutes.harness import detect

    line = CLAUDE_SESSION.read_bytes().splitlines()[1]
    head = b'{"type": "no-such-record"}\n' + line
    assert detect(head)[0].name == "claude-code"  # the whole input: its last line is complete
    pad = SNIFF_BYTES - len(line) // 2 - len(b'{"type": "no-such-record", "pad": ""}\n')
    first = b'{"type": "no-such-record", "pad": "' + b"x" * pad + b'"}\n'
    cut = (first + line)[:SNIFF_BYTES]
    assert len(cut) == SNIFF_BYTES
    assert cut.endswith(line[: len(line) // 2])
    with pytest.raises(DetectError):
        detect(cut[:SNIFF_BYTES])


def test_the_detect_error_offers_only_options_the_command_has(tmp_path: Path) -> None:
    from conftest import run_cli

    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello": "world"}\n')
    detect_err = run_cli("detect", path).stderr.decode()
    assert "could not detect" in detect_err
    assert "--harness" not in detect_err
    for verb in ("convert", "stats"):
        err = run_cli(verb, path).stderr.decode()
        assert "could not detect" in err
        assert "--harness NAME" in err


def test_a_transcript_of_bookkeeping_alone_is_still_claude_codes(tmp_path: Path) -> None:
    """A session teleported in before its first message holds one ``teleported-from`` record:
    possibly Claude Code's (no other harness writes one), and a session of no events."""
    import json

    from conftest import run_cli

    path = tmp_path / "teleported.jsonl"
    record = {
        "type": "teleported-from",
        "remoteSessionId": "session_01AbCdEfGhIjKlMnOpQrStUv",
        "branch": "main",
        "messageCount": 4,
    }
    path.write_text(json.dumps(record) + "\n")
    assert run_cli("detect", path).stdout == b"claude-code\tpossible\n"
    converted = run_cli("convert", path)
    assert converted.returncode == 0, converted.stderr
    assert json.loads(converted.stdout)["events"] is None
