"""Bad input and bad surroundings: fixture transcripts damaged the ways a mutation fuzzer
damages them, run through the real command line.

Every run ends as valid UTF-8 JSON (exit 0) or as one ``Error:`` line naming file,
harness, version and line (exit 1): never an internal error, a traceback or an
error over several lines. Where the reference reads the damaged file, so do we, and
read it as Go's decoder does (U+FFFD for invalid UTF-8 and lone surrogate escapes,
Unicode white space trimmed, 10,000 levels of nesting).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES, run_cli

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
TOOLS = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
TURNS_DB = FIXTURES / "turns-db" / "turns.db"
#: In TOOLS: line 5 is the person's prompt (a string), line 11 a tool_use block.
PROMPT, TOOL_USE = 5, 11


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def dump(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def strict_json(data: bytes) -> Any:
    """Parse output as the fuzzer checks it: UTF-8, no duplicate keys, no NaN."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        assert len(set(keys)) == len(keys), f"duplicate keys {keys}"
        return dict(items)

    def constant(name: str) -> None:
        raise AssertionError(f"non-JSON literal {name}")

    return json.loads(data.decode("utf-8"), object_pairs_hook=pairs, parse_constant=constant)


def converted(path: Path, *args: str) -> dict[str, Any]:
    proc = run_cli("convert", *args, path)
    assert proc.returncode == 0, proc.stderr
    doc = strict_json(proc.stdout)
    jsonl = run_cli("convert", "--format", "jsonl", *args, path)
    assert jsonl.returncode == 0, jsonl.stderr
    assert [strict_json(line) for line in jsonl.stdout.splitlines()] == doc["events"]
    return doc  # type: ignore[no-any-return]


def one_error_line(proc: subprocess.CompletedProcess[bytes], *needles: str) -> str:
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode("utf-8")
    assert "Traceback" not in err
    assert "internal error" not in err, err
    [line] = err.splitlines()  # splitlines: LF, CR, U+2028 … all count
    assert line.startswith("Error: ")
    for needle in needles:
        assert needle in line, line
    return line


def tool_input(doc: dict[str, Any]) -> Any:
    [call] = [e for e in doc["events"] if e["kind"] == "tool_call"][:1]
    return call["tool_call"]["input"]


def prompt_text(doc: dict[str, Any]) -> str:
    human = [e for e in doc["events"] if e["kind"] == "user_message"]
    return "".join(b.get("text", "") for b in human[0]["user_message"]["content"])


# -- nesting ---------------------------------------------------------------------------------


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def with_deep_input(tmp_path: Path, depth: int) -> Path:
    lines = lines_of(TOOLS)
    record = json.loads(lines[TOOL_USE - 1])
    record["message"]["content"][0]["input"] = {"deep": "@DEEP@"}
    deep = b"[" * depth + b"]" * depth
    lines[TOOL_USE - 1] = dump(record).replace(b'"@DEEP@"', deep)
    return write_lines(tmp_path / f"deep-{depth}.jsonl", lines)


def test_values_nested_as_deep_as_the_reference_reads_are_read(tmp_path: Path) -> None:
    path = with_deep_input(tmp_path, 9_990)
    proc = run_cli("convert", "--format", "jsonl", path)
    assert proc.returncode == 0, proc.stderr
    [line] = [x for x in proc.stdout.splitlines() if b'"tool_call"' in x][:1]
    assert b"[" * 9_990 + b"]" * 9_990 in line
    assert run_cli("stats", path).returncode == 0
    # The whole document is indented level by level, its size the square of the depth:
    # past the default recursion limit is deep enough to show it is written.
    shallower = with_deep_input(tmp_path, 2_500)
    whole = run_cli("convert", shallower)
    assert whole.returncode == 0, whole.stderr
    assert b"[" * 2_500 in whole.stdout.replace(b"\n", b"").replace(b" ", b"")
    # Detection reads a deep first record too.
    lines = lines_of(path)
    first = json.loads(lines[0])
    first["extra"] = "@DEEP@"
    lines[0] = dump(first).replace(b'"@DEEP@"', b"[" * 9_000 + b"]" * 9_000)
    deep_head = write_lines(tmp_path / "deep-head.jsonl", lines)
    assert run_cli("detect", deep_head).stdout == b"claude-code\tcertain\n"


def test_deeper_values_are_one_parse_error_naming_the_line(tmp_path: Path) -> None:
    path = with_deep_input(tmp_path, 20_000)
    for verb in (
        ("convert",),
        ("convert", "--format", "jsonl"),
        ("stats",),
        ("convert", "--permissive"),
    ):
        one_error_line(
            run_cli(*verb, path),
            str(path),
            "claude-code",
            "harness version",
            f"at line {TOOL_USE}",
            "nested deeper",
        )


# -- errors stay one line ----------------------------------------------------------------------


@pytest.mark.parametrize("breaker", ["\n", "\r", "\u2028", "\x1b[31m", "\x85"])
def test_what_an_error_quotes_is_escaped_and_cut(tmp_path: Path, breaker: str) -> None:
    lines = lines_of(CC)
    record = json.loads(lines[2])
    record["type"] = f"odd{breaker}type" + "y" * 8_000_000
    lines[2] = dump(record)
    path = write_lines(tmp_path / "odd-type.jsonl", lines)
    line = one_error_line(run_cli("convert", path), str(path), "claude-code", "at line 3")
    assert len(line) < 3_000
    assert "characters cut" in line
    assert breaker not in line


# -- how Go reads the bytes --------------------------------------------------------------------


def test_invalid_utf8_reads_as_u_fffd_per_byte(tmp_path: Path) -> None:
    lines = lines_of(TOOLS)
    prompt = json.loads(lines[PROMPT - 1])
    prompt["message"]["content"] = "before @BAD@ after"
    lines[PROMPT - 1] = dump(prompt).replace(b"@BAD@", b"\xc3(\xf0\x9f\x98!\xed\xa0\x80")
    call = json.loads(lines[TOOL_USE - 1])
    block = call["message"]["content"][0]
    block["input"] = {**block["input"], "note": "x@BAD@y", "half": "@HALF@"}
    lines[TOOL_USE - 1] = (
        dump(call).replace(b"@BAD@", b"\xff\xfe").replace(b"@HALF@", b"\xed\xbf\xbf")
    )
    path = write_lines(tmp_path / "utf8.jsonl", lines)
    doc = converted(path)  # valid UTF-8 JSON, though the input is not
    # Go's decoder: one U+FFFD per invalid byte (Python's "replace" gives one per sequence),
    # a UTF-16 half encoded as UTF-8 too.
    assert prompt_text(doc) == "before \ufffd(\ufffd\ufffd\ufffd!\ufffd\ufffd\ufffd after"
    assert tool_input(doc)["note"] == "x\ufffd\ufffdy"
    # Verbatim JSON: the reference copies the half as it is, which a lenient reader takes
    # for U+DFFF; we write the escape that says so in valid JSON.
    assert tool_input(doc)["half"] == "\udfff"
    assert run_cli("stats", path).returncode == 0


def test_lone_surrogate_escapes_read_as_go_reads_them(tmp_path: Path) -> None:
    lines = lines_of(TOOLS)
    prompt = json.loads(lines[PROMPT - 1])
    prompt["message"]["content"] = "@A@ and @B@"
    lines[PROMPT - 1] = (
        dump(prompt).replace(b"@A@", b"\\ud800\\u0041").replace(b"@B@", b"\\ud83d\\ude00")
    )
    call = json.loads(lines[TOOL_USE - 1])
    block = call["message"]["content"][0]
    block["input"] = {**block["input"], "note": "@C@"}
    lines[TOOL_USE - 1] = dump(call).replace(b'"@C@"', b'"x\\udc00y \\\\ud800"')
    path = write_lines(tmp_path / "surrogates.jsonl", lines)
    doc = converted(path)
    # A decoded string: U+FFFD for the lone half, a proper pair kept.
    assert prompt_text(doc) == "\ufffdA and \U0001f600"
    # Verbatim JSON (a tool's input) as it was: the escape itself, as the reference copies it;
    # an escaped backslash before "ud800" is no escape at all.
    assert tool_input(doc)["note"] == "x\udc00y \\ud800"
    assert run_cli("stats", path).returncode == 0


def test_lines_of_unicode_white_space_are_passed_over_and_counted(tmp_path: Path) -> None:
    lines = lines_of(CC)
    spaced = [*lines[:3], "\u00a0".encode(), "\u2028 \u3000".encode(), *lines[3:]]
    spaced[0] = "\u00a0".encode() + spaced[0] + "\u2029".encode()
    path = write_lines(tmp_path / "spaces.jsonl", spaced)
    doc = converted(path)
    plain = converted(CC)
    assert doc["report"] == plain["report"]  # the report is the reference's: it skips them
    assert len(doc["events"]) == len(plain["events"])
    proc = run_cli("convert", "--format", "jsonl", path)
    skipped = sum(plain["report"]["skipped_records"].values())
    assert f"{skipped + 2} skipped records" in proc.stderr.decode()
    assert "(white-space line) 2" in proc.stderr.decode()


def test_a_line_that_is_not_json_fails_strictly_and_is_a_json_string_when_permissive(
    tmp_path: Path,
) -> None:
    comment = b"// Source: https://example.invalid/transcript.jsonl"
    path = write_lines(tmp_path / "commented.jsonl", [comment, *lines_of(CC)])
    one_error_line(run_cli("convert", path), str(path), "at line 1")
    one_error_line(run_cli("stats", path), str(path), "at line 1")
    doc = converted(path, "--permissive")
    unknown = [e for e in doc["events"] if e["kind"] == "unknown"]
    assert unknown[0]["unknown"]["raw"] == comment.decode()
    assert unknown[0]["provenance"]["line"] == 1


@pytest.mark.parametrize(
    "transcript",
    [
        CC,
        FIXTURES / "antigravity" / "vibe-coding" / "cli-d580aa81" / "transcript_full.jsonl",
        FIXTURES / "copilot" / "hawzx-ai" / "27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
    ],
    ids=["claude-code", "antigravity", "copilot"],
)
def test_an_object_with_trailing_characters_is_a_parse_error(
    tmp_path: Path, transcript: Path
) -> None:
    # A typed decode stops at the first unknown field, before the stray ``}``: the
    # line must still be found not to be JSON, by whichever reader takes it next.
    lines = lines_of(transcript)
    path = write_lines(tmp_path / transcript.name, [*lines[:3], b'{"a":1}}', *lines[3:]])
    for verb in (("convert",), ("convert", "--format", "jsonl"), ("stats",)):
        one_error_line(run_cli(*verb, path), str(path), "at line 4", "trailing characters")
    doc = converted(path, "--permissive")
    [bad] = [e for e in doc["events"] if e["provenance"]["line"] == 4]
    assert bad["kind"] == "unknown"


def damaged_zips(tmp_path: Path) -> list[Path]:
    """The claude.ai export fixture with its conversations member damaged: bits flipped in
    the deflated stream, the stream cut short, its CRC wrong."""
    import zipfile

    source = FIXTURES / "claude-ai" / "export.zip"
    data = source.read_bytes()
    with zipfile.ZipFile(source) as zf:
        infos = [i for i in zf.infolist() if i.compress_size > 64]
    out = []
    for n, info in enumerate(infos):
        # The member's data begins after its 30-byte local header, name and extra field.
        name_len = int.from_bytes(data[info.header_offset + 26 : info.header_offset + 28], "little")
        extra_len = int.from_bytes(
            data[info.header_offset + 28 : info.header_offset + 30], "little"
        )
        start = info.header_offset + 30 + name_len + extra_len
        for how, damage in (
            (
                "flipped",
                lambda b, i=start: (
                    b[: i + 16] + bytes(x ^ 0x5A for x in b[i + 16 : i + 48]) + b[i + 48 :]
                ),
            ),
            (
                "zeroed",
                lambda b, i=start, size=info.compress_size: (
                    b[: i + size // 2] + bytes(size - size // 2) + b[i + size :]
                ),
            ),
        ):
            path = tmp_path / f"export-{n}-{how}.zip"
            path.write_bytes(damage(data))
            out.append(path)
    assert out
    return out


def test_a_damaged_zip_member_is_one_error_line(tmp_path: Path) -> None:
    for path in damaged_zips(tmp_path):
        for verb in (("convert", "--all"), ("stats",), ("detect",)):
            proc = run_cli(*verb, path)
            if proc.returncode == 0:
                assert verb[0] != "detect" or proc.stdout
                continue
            one_error_line(proc, str(path))


# -- outside the file --------------------------------------------------------------------------


@pytest.mark.parametrize("verb", [("convert",), ("convert", "--format", "jsonl"), ("stats",)])
def test_a_fifo_is_read_once(tmp_path: Path, verb: tuple[str, ...]) -> None:
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(TOOLS.read_bytes()))
    writer.start()
    proc = run_cli(*verb, fifo, timeout=30)
    writer.join(10)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run_cli(*verb, TOOLS).stdout


def test_gigabytes_of_zero_bytes_fail_at_once(tmp_path: Path) -> None:
    zeros = tmp_path / "zeros.jsonl"
    with zeros.open("wb") as f:
        f.truncate(2 << 30)  # sparse: 2 GiB of NUL bytes that take no disk
    for harness in ("auto", "claude-code", "codex"):
        proc = run_cli("convert", "--harness", harness, zeros, timeout=30)
        one_error_line(proc, str(zeros))
    line = one_error_line(run_cli("convert", "--harness", "codex", zeros, timeout=30))
    assert "NUL bytes" in line
    assert "at line 1" in line


def test_follow_with_a_state_in_a_missing_folder_fails_before_following(tmp_path: Path) -> None:
    state = tmp_path / "missing" / "state.json"
    proc = run_cli("follow", "--state", state, "--idle-exit", "1", CC)
    one_error_line(proc, str(state), "no such directory")
    assert proc.stdout == b""


# -- a damaged turns.db ------------------------------------------------------------------------


def damaged_stores(tmp_path: Path) -> list[Path]:
    """The fixture turns.db with wrong types, invalid UTF-8 and lost rows, then cut and flipped."""
    out = []
    edits = [
        "UPDATE blocks SET payload_json = X'ff00626c6f62', kind = 42, role = X'c328'",
        "UPDATE blocks SET payload_json = CAST(X'7b2274657874223a2268c328227d' AS TEXT),"
        " first_seen_at_ms = 'soon', block_metadata_json = 7",
        "UPDATE blocks SET payload_json = '{'",
        "UPDATE turns SET turn_created_at_ms = '2025-01-01', turn_metadata_json = X'00ff',"
        " conv_id = 5",
        "UPDATE turn_block_membership SET snapshot_created_at_ms = 'x' || rowid, ordinal = 'y',"
        " phase = X'ff', block_id = rowid + 0.5",
        "DELETE FROM blocks",
    ]
    for i, sql in enumerate(edits):
        path = tmp_path / f"edited-{i}.db"
        shutil.copyfile(TURNS_DB, path)
        with contextlib.closing(sqlite3.connect(path)) as conn, conn:
            conn.execute(sql)
        conn.close()
        out.append(path)
    data = TURNS_DB.read_bytes()
    rng = random.Random(11)
    for i in range(2):
        cut = tmp_path / f"cut-{i}.db"
        cut.write_bytes(data[: rng.randrange(100, len(data))])
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            flipped[rng.randrange(100, len(flipped))] = rng.randrange(256)
        (tmp_path / f"flipped-{i}.db").write_bytes(bytes(flipped))
        out += [cut, tmp_path / f"flipped-{i}.db"]
    return out


def test_a_damaged_turns_db_is_json_or_one_error_line(tmp_path: Path) -> None:
    for i, path in enumerate(damaged_stores(tmp_path)):
        verbs = [("convert", "--all")] + ([("detect",)] if i % 2 == 0 else [])
        for verb in verbs:
            proc = run_cli(*verb, path)
            if proc.returncode == 0:
                if verb[0] == "convert":
                    for line in proc.stdout.splitlines():
                        strict_json(line)
                continue
            one_error_line(proc, str(path))


def test_the_gemini_document_with_invalid_bytes_is_read(tmp_path: Path) -> None:
    source = FIXTURES / "gemini-cli" / "constructed" / "session-2025-11-03T14-10-5e55a7e0.json"
    data = source.read_bytes()
    at = data.index(b'"text"') + len(b'"text": "') + 2
    broken = tmp_path / "session-broken.json"
    broken.write_bytes(data[:at] + b"\xc3(\\ud800" + data[at:])
    doc = converted(broken)
    assert "\ufffd(\ufffd" in json.dumps(doc, ensure_ascii=False)
    cut = tmp_path / "session-cut.json"
    cut.write_bytes(data[: len(data) // 2])
    one_error_line(run_cli("convert", cut), str(cut), "gemini-cli")


def test_an_export_with_invalid_bytes_is_valid_json(tmp_path: Path) -> None:
    data = (FIXTURES / "chatgpt" / "conversations.json").read_bytes()
    at = data.index(b'"parts": ["', data.index(b'"parts": ["I')) + len(b'"parts": ["')
    broken = tmp_path / "conversations.json"
    broken.write_bytes(data[:at] + b"\xc3(\xff" + data[at:])
    proc = run_cli("convert", "--all", broken)
    assert proc.returncode == 0, proc.stderr
    sessions = [strict_json(line) for line in proc.stdout.splitlines()]
    assert "\ufffd(\ufffd" in json.dumps(sessions, ensure_ascii=False)


def test_a_session_header_field_of_the_wrong_type_is_one_parse_error(tmp_path: Path) -> None:
    """Found by the fuzzer: ``startTime`` as a number was an internal error (a ValidationError)."""
    source = FIXTURES / "gemini-cli" / "constructed" / "session-2025-11-03T14-10-5e55a7e0.json"
    doc = json.loads(source.read_bytes())
    doc["startTime"] = 1735689600000
    broken = tmp_path / "session-number-time.json"
    broken.write_bytes(json.dumps(doc, indent=2).encode())
    for verb in (("convert",), ("convert", "--format", "jsonl"), ("stats",)):
        one_error_line(
            run_cli(*verb, broken), str(broken), "gemini-cli", "malformed session header"
        )
    kept = run_cli("convert", "--permissive", broken)
    assert kept.returncode == 0, kept.stderr
    [event] = json.loads(kept.stdout)["events"]
    assert event["kind"] == "unknown"


def test_a_first_line_of_only_a_byte_order_mark_is_accounted_for(tmp_path: Path) -> None:
    """Found by the fuzzer: a BOM alone on line 1 was neither an event nor a counted skip."""
    source = FIXTURES / "codex" / "agent-sessions" / "codex_small_0.146.0.jsonl"
    path = tmp_path / "bom-line.jsonl"
    path.write_bytes(b"\xef\xbb\xbf\n" + source.read_bytes())
    proc = run_cli("convert", "--format", "jsonl", path)
    assert proc.returncode == 0, proc.stderr
    assert b"(white-space line) 1" in proc.stderr
    plain = run_cli("convert", "--format", "jsonl", source).stdout.splitlines()
    assert len(proc.stdout.splitlines()) == len(plain)


def test_a_unix_time_no_calendar_holds_is_no_timestamp(tmp_path: Path) -> None:
    """Milliseconds written where seconds go (year 56971), in a wrapped Codex exec stream:
    that event has no timestamp, the rest converts as before (fuzz seed 4242, case 633)."""
    source = (
        FIXTURES / "codex" / "arvo-logger" / "arvo_42530547-vul-1766981267.exec-json-wrapped.log"
    )
    lines = lines_of(source)
    at = next(i for i, line in enumerate(lines) if b'"timestamp_unix": ' in line)
    mended = json.loads(lines[at])
    mended["timestamp_unix"] = 1735689600000
    lines[at] = json.dumps(mended).encode()
    damaged = write_lines(tmp_path / "wrapped.log", lines)
    want = strict_json(run_cli("convert", source).stdout)["events"]
    for verb in (("convert",), ("stats",)):
        proc = run_cli(*verb, damaged)
        assert proc.returncode == 0, proc.stderr
        strict_json(proc.stdout)
    got = strict_json(run_cli("convert", damaged).stdout)["events"]
    changed = [(w, g) for w, g in zip(want, got, strict=True) if w != g]
    assert changed
    for w, g in changed:
        assert w["provenance"]["line"] == at + 1
        assert "timestamp" not in g
        assert g == {k: v for k, v in w.items() if k != "timestamp"}


def test_an_export_nested_deeper_than_the_reference_reads_is_one_error_line(
    tmp_path: Path,
) -> None:
    """A ChatGPT export with a value 20,000 levels deep (fuzz seed 4242, case 2257)."""
    data = (FIXTURES / "chatgpt" / "conversations.json").read_bytes()
    at = data.index(b'"name": null')
    deep = b'"name": ' + b"[" * 20_000 + b"]" * 20_000
    path = tmp_path / "conversations.json"
    path.write_bytes(data[:at] + deep + data[at + len(b'"name": null') :])
    for verb in (("convert", "--all"), ("stats",), ("convert",)):
        one_error_line(run_cli(*verb, path), str(path), "chatgpt", "nested deeper")


def test_an_export_nested_as_deep_as_the_reference_reads_writes_each_session_once(
    tmp_path: Path,
) -> None:
    """9,990 levels in the last conversation: read (where the C recursion limit binds, on a
    fresh stack), and the sessions before it are not written twice."""
    data = (FIXTURES / "chatgpt" / "conversations.json").read_bytes()
    at = data.rindex(b'"metadata": {}')
    deep = b'"metadata": {"deep": ' + b"[" * 9_990 + b"]" * 9_990 + b"}"
    path = tmp_path / "conversations.json"
    path.write_bytes(data[:at] + deep + data[at + len(b'"metadata": {}') :])
    plain = run_cli("convert", "--all", FIXTURES / "chatgpt" / "conversations.json")
    proc = run_cli("convert", "--all", path)
    assert proc.returncode == 0, proc.stderr
    ids = [strict_json(line)["meta"]["session_id"] for line in proc.stdout.splitlines()]
    assert ids == [json.loads(line)["meta"]["session_id"] for line in plain.stdout.splitlines()]
