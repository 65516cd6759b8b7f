"""``agentminutes export`` as users run it: a real CLI process, its lines and exit status."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb

from conftest import FIXTURES
from export_data import parquet

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"


def test_export_then_query_with_duckdb(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.jsonl").write_bytes(CC.read_bytes())
    (src / "bad.jsonl").write_bytes(CC.read_bytes() + b'{"type":"planted-record"}\n')
    (src / "notes.json").write_text('{"not": "a transcript"}')
    ds = tmp_path / "ds"
    out = cli("export", src, "--to", ds, "--jobs", "2")
    assert out.returncode == 1, out.stderr
    lines = out.stderr.decode().splitlines()
    assert re.fullmatch(
        r"agentminutes: export: 3 transcripts: 1 exported, 0 unchanged, 1 failed, "
        r"1 skipped \(no harness detected\); 13 events in \d+\.\d s into " + re.escape(str(ds)),
        lines[-1],
    ), lines[-1]
    assert any("bad.jsonl" in line and "planted-record" in line for line in lines[:-1])
    assert "Traceback" not in out.stderr.decode()
    count = duckdb.sql(f"SELECT count(*) FROM {parquet(ds, 'events')}").fetchall()
    assert count == [(13,)]
    again = cli("export", src, "--to", ds)
    assert again.returncode == 1  # the failure is still there
    assert " 0 exported, 3 unchanged, 1 failed" in again.stderr.decode().splitlines()[-1]


def test_an_openhands_conversation_folder_is_one_transcript(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Its event files and base_state.json are one conversation: exported once, not once a file.
    conversation = FIXTURES / "openhands" / "lab-1.16.0" / "ce833f814d2045b9be295de049c1df6c"
    events = len(list((conversation / "events").glob("event-*.json")))
    ds = tmp_path / "ds"
    out = cli("export", conversation.parent, "--to", ds)
    assert out.returncode == 0, out.stderr
    assert (
        out.stderr.decode()
        .splitlines()[-1]
        .startswith(
            "agentminutes: export: 1 transcript: 1 exported, 0 unchanged, 0 failed; 15 events"
        )
    )
    sessions = duckdb.sql(f"SELECT count(*) FROM {parquet(ds, 'sessions')}").fetchall()
    assert sessions == [(1,)]
    requests = duckdb.sql(
        f"SELECT count(*), count(DISTINCT dedup_key) FROM {parquet(ds, 'requests')}"
    ).fetchall()
    assert requests[0][0] == requests[0][1] > 0
    assert events > 1


def test_without_pyarrow_one_line_says_how_to_install_it(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from agentminutes.cli import main\n"
        f"sys.exit(main(['export', {str(CC)!r}, '--to', {str(tmp_path / 'ds')!r}]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert out.returncode == 1
    assert out.stderr.decode().splitlines() == [
        "Error: export writes Parquet, which needs pyarrow: pip install 'agentminutes-py[parquet]'"
    ]
    assert not (tmp_path / "ds").exists()


def test_the_core_does_not_import_pyarrow() -> None:
    code = (
        "import sys\n"
        "import agentminutes, agentminutes.export, agentminutes.formats.acp\n"
        f"agentminutes.load({str(CC)!r})\n"
        "from agentminutes.cli import main\n"
        f"main(['stats', {str(CC)!r}])\n"
        "assert 'pyarrow' not in sys.modules, 'pyarrow imported'\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert out.returncode == 0, out.stderr.decode()


def test_usage_errors_are_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = cli("export", CC)
    assert out.returncode != 0
    assert out.stderr.decode().strip().splitlines()[0].startswith("Error: export needs --to DIR")
    out = cli("export", CC, "--to", tmp_path / "ds", "--cwd", "/x")
    assert out.stderr.decode().splitlines() == [
        "Error: --cwd, --session-id, --since, --until and --root choose sessions in the "
        "harnesses' folders; give them without TARGETs (with --root for another folder)"
    ]
    out = cli("export", CC, "--to", tmp_path / "ds", "--jobs", "0")
    assert out.returncode == 2  # a value not allowed: the error and a usage hint
    assert out.stderr.decode().splitlines() == [
        "Error: --jobs must be at least 1",
        "Usage: agentminutes export --to DIR [OPTIONS] [TARGET...]  (see agentminutes export --help)",
    ]


def test_transcripts_get_their_own_redaction_over_one_compiled_detector_set(
    tmp_path: Path,
) -> None:
    from agentminutes.export.command import ExportOptions
    from agentminutes.stages import Redaction

    config = tmp_path / "redact.toml"
    config.write_text("[[redact.pattern]]\nname = \"ticket\"\nregex = 'TICKET-[0-9]{6}'\n")
    options = ExportOptions(redact_config=str(config), redact_key="ab" * 32)

    def redaction() -> Redaction:
        return next(s for s in options.stages() if isinstance(s, Redaction))

    first, second = redaction(), redaction()
    assert first is not second
    assert first.counts is not second.counts  # each chunk tallies its own
    assert first.redactor.detectors is second.redactor.detectors  # compiled once
    assert first.redactor.text("see TICKET-123456").startswith("see [REDACTED:ticket:")
    assert first.redactor.text("x") == second.redactor.text("x")
    # An edited config is read again.
    config.write_text("[[redact.pattern]]\nname = \"ticket\"\nregex = 'CASE-[0-9]{6}'\n")
    third = redaction()
    assert third.redactor.detectors is not first.redactor.detectors
    assert third.redactor.text("see CASE-123456").startswith("see [REDACTED:ticket:")
    assert third.redactor.text("see TICKET-123456") == "see TICKET-123456"
