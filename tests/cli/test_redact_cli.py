"""Redaction through the real command line: off for convert's contract, on where data leaves.

Each test plants a secret of every kind in a real Claude Code session and runs
the CLI in a subprocess (a real socket for ``follow --to tcp://``, a real
Parquet dataset for ``export``), with ``$AGENTMINUTES_REDACT_KEY`` set so the
expected markers are known.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import FIXTURES
from follow_helpers import Collector, FollowProc, wait_for
from planting import KINDS, USER_PATTERN, Plant, plant

KEY = "cli-test-key"
ENV = {**os.environ, "AGENTMINUTES_REDACT_KEY": KEY}
SOURCE = FIXTURES / "claude-code" / "fasthooks-main.jsonl"
UNKNOWN = {"type": "planted_record", "uuid": "p-1", "timestamp": "2025-01-01T00:00:00Z"}


def _cli(*args: str | os.PathLike[str], env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *map(str, args)],
        capture_output=True,
        timeout=120,
        check=False,
        env=env or ENV,
    )


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Plant]:
    target = tmp_path / "session.jsonl"
    return target, plant(SOURCE, target, {**UNKNOWN, "text": "{secrets}"})


def _summary(stderr: bytes) -> dict[str, int]:
    """The counts of the ``redacted N secrets (…)`` line."""
    line = next(x for x in stderr.decode().splitlines() if ": redacted " in x)
    inner = line.partition("(")[2].rstrip(")")
    return {k: int(v) for k, v in (part.rsplit(" ", 1) for part in inner.split(", "))}


def test_convert_leaves_secrets_by_default_and_redacts_on_request(
    planted: tuple[Path, Plant],
) -> None:
    transcript, p = planted
    plain = _cli("convert", "--permissive", transcript)
    assert plain.returncode == 0, plain.stderr
    assert "redacted" not in plain.stderr.decode()  # the contract's output, untouched
    assert set(p.left_in(plain.stdout.decode())) == set(KINDS)

    for fmt in ("json", "jsonl"):
        out = _cli(
            "convert", "--permissive", "--format", fmt, "--redact",
            "--redact-pattern", USER_PATTERN, transcript,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert p.left_in(out.stdout.decode()) == []
        unredacted = _cli("convert", "--permissive", "--format", fmt, transcript).stdout
        if fmt == "json":
            assert json.loads(out.stdout) == p.expected(json.loads(unredacted), KEY.encode())
        else:
            got = [json.loads(x) for x in out.stdout.splitlines()]
            assert got == [p.expected(json.loads(x), KEY.encode()) for x in unredacted.splitlines()]
        counts = _summary(out.stderr)
        assert set(counts) == set(KINDS)

    bad = _cli("convert", "--no-redact", "--redact-pattern", "x", transcript)
    assert bad.returncode == 1
    assert bad.stderr.decode().splitlines() == [
        "Error: --redact-pattern and --redact-config redact; drop --no-redact"
    ]
    bad = _cli("convert", "--redact-pattern", "(", transcript)
    assert bad.returncode == 2  # a value not allowed: the error, then a usage hint
    assert bad.stderr.decode().startswith("Error: --redact-pattern '(': ")
    assert bad.stderr.decode().splitlines()[1].startswith("Usage: agentminutes convert")


def test_follow_to_a_socket_redacts_by_default(planted: tuple[Path, Plant]) -> None:
    transcript, p = planted
    want = [
        json.loads(x)
        for x in _cli(
            "convert", "--format", "jsonl", "--permissive", transcript
        ).stdout.splitlines()
    ]
    collector = Collector(socket.AF_INET, ("127.0.0.1", 0))
    f = FollowProc(
        transcript, "--permissive", "--to", collector.url, "--idle-exit", "0.5",
        "--redact-pattern", USER_PATTERN, env=ENV,
    )  # fmt: skip
    try:
        assert f.wait_exit(60) == 0
        wait_for(lambda: len(collector.lines) == len(want), what="every event at the collector")
    finally:
        f.kill()
        collector.drop()
    got = b"".join(collector.lines).decode()
    assert p.left_in(got) == []
    assert collector.events == [p.expected(e, KEY.encode()) for e in want]
    assert set(_summary(f.stderr.encode())) == set(KINDS)
    assert "--no-redact" not in f.stderr

    # --no-redact sends them as they are, and says so on one line.
    collector = Collector(socket.AF_UNIX, str(transcript.parent / "collector.sock"))
    f = FollowProc(
        transcript,
        "--permissive",
        "--to",
        collector.url,
        "--idle-exit",
        "0.5",
        "--no-redact",
        env=ENV,
    )
    try:
        assert f.wait_exit(60) == 0
        wait_for(lambda: len(collector.lines) == len(want), what="every event at the collector")
    finally:
        f.kill()
        collector.drop()
    assert collector.events == want
    warnings = [x for x in f.stderr.splitlines() if "--no-redact" in x]
    assert warnings == [
        f"agentminutes: warning: --no-redact: secrets in the transcripts go to {collector.url} as they are"
    ]


def test_follow_to_a_file_prints_what_convert_prints_unless_asked(
    planted: tuple[Path, Plant], tmp_path: Path
) -> None:
    transcript, p = planted
    want = _cli("convert", "--format", "jsonl", "--permissive", transcript).stdout
    out = tmp_path / "events.jsonl"
    f = FollowProc(transcript, "--permissive", "--to", f"file:{out}", "--idle-exit", "0.5", env=ENV)
    assert f.wait_exit(60) == 0
    f.kill()
    assert out.read_bytes() == want
    assert "redacted" not in f.stderr

    redacted = tmp_path / "redacted.jsonl"
    f = FollowProc(
        transcript,
        "--permissive",
        "--to",
        f"file:{redacted}",
        "--idle-exit",
        "0.5",
        "--redact-pattern",  # a pattern turns redaction on
        USER_PATTERN,
        env=ENV,
    )
    assert f.wait_exit(60) == 0
    f.kill()
    got = [json.loads(x) for x in redacted.read_bytes().splitlines()]
    assert got == [p.expected(json.loads(x), KEY.encode()) for x in want.splitlines()]


def _span_texts(otlp_json: bytes) -> str:
    """Every string value of the spans' attributes and statuses (JSON text inside them
    decoded too, so a secret is found as it was written, not as escaped twice)."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, str):
            out.append(value)
            if value[:1] in ("[", "{"):
                with contextlib.suppress(ValueError):
                    walk(json.loads(value))

    for line in otlp_json.splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    walk(span.get("attributes", []))
                    walk(span.get("status", {}))
    return "\n".join(out)


def test_otlp_json_content_is_redacted_by_default(planted: tuple[Path, Plant]) -> None:
    transcript, p = planted
    # Without content the spans carry no transcript text: nothing to redact, nothing left.
    bare = _cli("convert", "--permissive", "--format", "otlp-json", transcript)
    assert bare.returncode == 0, bare.stderr
    assert "redacted" not in bare.stderr.decode()
    assert p.left_in(_span_texts(bare.stdout)) == []

    # With --otel-content the content goes to a tracing backend: redacted by default.
    # (Only the user's own pattern, not given here, is left.)
    content = _cli(
        "convert", "--permissive", "--format", "otlp-json", "--otel-content", transcript
    )  # fmt: skip
    assert content.returncode == 0, content.stderr
    texts = _span_texts(content.stdout)
    assert p.left_in(texts) == ["user-pattern"]
    assert "[REDACTED:" in texts
    assert _summary(content.stderr)
    assert "--no-redact" not in content.stderr.decode()

    # --no-redact writes them as they are, and says so on one line.
    plain = _cli(
        "convert", "--permissive", "--format", "otlp-json", "--otel-content", "--no-redact",
        transcript,
    )  # fmt: skip
    assert plain.returncode == 0, plain.stderr
    assert set(p.left_in(_span_texts(plain.stdout))) == set(KINDS)
    warnings = [x for x in plain.stderr.decode().splitlines() if "--no-redact" in x]
    assert len(warnings) == 1
    assert warnings[0].startswith("agentminutes: warning: ")


def test_archive_redacts_the_normalized_copy_on_request(
    planted: tuple[Path, Plant], tmp_path: Path
) -> None:
    transcript, p = planted
    home = tmp_path / "projects" / "-src-app"
    home.mkdir(parents=True)
    records = [json.loads(x) for x in transcript.read_text().splitlines()]
    sid = next(r["sessionId"] for r in records if r.get("sessionId"))
    (home / f"{sid}.jsonl").write_bytes(transcript.read_bytes())
    to = tmp_path / "archive"
    out = _cli(
        "archive", "--harness", "claude-code", "--root", tmp_path / "projects", "--session-id", sid,
        "--to", to, "--permissive", "--redact", "--redact-pattern", USER_PATTERN,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    normalized = next(to.rglob("*.agentminutes.json"))
    copy = Path(str(normalized).removesuffix(".agentminutes.json"))
    assert copy.read_bytes() == transcript.read_bytes()  # the copy is the source
    assert p.left_in(normalized.read_text()) == []
    assert set(_summary(out.stderr)) == set(KINDS)
    plain = _cli("convert", "--permissive", copy).stdout
    assert json.loads(normalized.read_bytes()) == p.expected(json.loads(plain), KEY.encode())


def test_export_redacts_the_dataset_by_default(planted: tuple[Path, Plant], tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    transcript, p = planted

    def dataset_text(ds: Path) -> str:
        rows = [r for f in sorted(ds.rglob("*.parquet")) for r in pq.read_table(f).to_pylist()]
        return json.dumps(rows, default=str)

    out = _cli(
        "export", transcript, "--to", tmp_path / "ds", "--permissive", "--jobs", "1",
        "--redact-pattern", USER_PATTERN,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert p.left_in(dataset_text(tmp_path / "ds")) == []
    assert set(_summary(out.stderr)) == set(KINDS)

    out = _cli(
        "export", transcript, "--to", tmp_path / "raw", "--permissive", "--jobs", "1", "--no-redact"
    )
    assert out.returncode == 0, out.stderr
    assert set(p.left_in(dataset_text(tmp_path / "raw"))) == set(KINDS)
    assert out.stderr.decode().splitlines()[0] == (
        "agentminutes: warning: --no-redact: secrets in the transcripts go into the dataset as they are"
    )
    # A dataset made redacted is not added to unredacted.
    again = _cli("export", transcript, "--to", tmp_path / "ds", "--permissive", "--no-redact")
    assert again.returncode == 1
    assert "other options" in again.stderr.decode()
