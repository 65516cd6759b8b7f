"""``agentminutes export --format atif``: real CLI processes over the real fixtures.

Every document written validates with the ``atif`` 1.8.0 package's models in
strict mode; the sessions are the Parquet dataset's; a run after a change
re-exports only what changed; a transcript that fails is one error line, one
``failures.jsonl`` record and exit status 1.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import atif
import duckdb

from conftest import FIXTURES
from export_data import HARNESS_FOLDERS, fixtures_dataset, parquet

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CODEX = (
    FIXTURES
    / "codex"
    / "exact2026"
    / "rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl"
)
PI = FIXTURES / "pi" / "pi-mono" / "before-compaction.jsonl"
_SUMMARY = re.compile(
    r"agentminutes: export: (\d+) transcripts?: (\d+) exported(?: \((\d+) replacing their "
    r"earlier trajectories\))?, (\d+) unchanged, (\d+) failed(?:, (\d+) skipped \(no harness "
    r"detected\))?; (\d+) events in \d+\.\d s into (.+)"
)


def _summary(stderr: bytes) -> dict[str, Any]:
    last = stderr.decode().splitlines()[-1]
    m = _SUMMARY.fullmatch(last)
    assert m, last
    keys = ("transcripts", "exported", "replaced", "unchanged", "failed", "skipped", "events")
    out: dict[str, Any] = {k: int(v or 0) for k, v in zip(keys, m.groups(), strict=False)}
    out["root"] = m.group(8)
    return out


def _documents(root: Path) -> dict[str, dict[str, Any]]:
    """Every trajectory document under ``root/atif``, by its path relative to it."""
    top = root / "atif"
    return {
        str(p.relative_to(top)): json.loads(p.read_bytes())
        for p in sorted(top.glob("harness=*/date=*/*.json"))
    }


def _without_pyarrow(top: Path) -> dict[str, str]:
    """An environment in which no process (the CLI's, its workers') can import pyarrow."""
    blocked = top / "blocked"
    (blocked / "pyarrow").mkdir(parents=True, exist_ok=True)
    (blocked / "pyarrow" / "__init__.py").write_text("raise ImportError('pyarrow is blocked')\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocked), *sys.path])}


@functools.cache
def _fixtures_export() -> tuple[Path, subprocess.CompletedProcess[bytes]]:
    """``export --format atif`` of every fixture transcript, two workers, pyarrow
    unimportable in every process; once per test process."""
    top = Path(tempfile.mkdtemp(prefix="agentminutes-atif-"))
    atexit.register(shutil.rmtree, top, True)
    ds = top / "ds"
    command = [sys.executable, "-m", "agentminutes", "export", *map(str, HARNESS_FOLDERS)]
    out = subprocess.run(
        [*command, "--to", str(ds), "--format", "atif", "-j", "2"],
        capture_output=True,
        env=_without_pyarrow(top),
        timeout=600,
        check=False,
    )
    return ds, out


def test_every_document_validates_with_atif() -> None:
    ds, out = _fixtures_export()
    assert out.returncode == 0, out.stderr
    summary = _summary(out.stderr)
    assert summary["failed"] == 0
    assert summary["exported"] > 50
    assert summary["root"] == str(ds / "atif")
    docs = _documents(ds)
    assert len(docs) > 50
    harnesses = set()
    for rel, doc in docs.items():
        model = atif.Trajectory.model_validate(doc, strict=True)
        assert model.to_json_dict() == doc, rel  # nothing dropped or coerced
        assert doc["schema_version"] == "ATIF-v1.8"
        harness = rel.split("/", 1)[0].removeprefix("harness=")
        assert doc["agent"]["name"] == harness
        harnesses.add(harness)
    assert len(harnesses) >= 10, harnesses
    assert not (ds / "atif" / "failures.jsonl").exists()
    # The loss line counts every event exported, before the summary line.
    loss = out.stderr.decode().splitlines()[-2]
    assert loss.startswith(f"agentminutes: export: atif: {summary['events']} events, ")


def test_the_sessions_are_the_parquet_datasets() -> None:
    ds, out = _fixtures_export()
    assert out.returncode == 0, out.stderr
    manifest = json.loads((ds / "atif" / "_manifest.json").read_bytes())
    ours = []
    for transcript, entry in manifest["transcripts"].items():
        for rel in entry.get("files", ()):
            doc = json.loads((ds / "atif" / rel).read_bytes())
            harness, date = (part.split("=", 1)[1] for part in rel.split("/")[:2])
            sub = (doc.get("extra") or {}).get("subagent_id", "")
            ours.append((transcript, doc.get("session_id", ""), sub, harness, date))
    theirs = duckdb.sql(
        "SELECT transcript, session_id, coalesce(subagent_id, ''), harness, "
        f"CAST(date AS VARCHAR) FROM {parquet(fixtures_dataset(), 'sessions')}"
    ).fetchall()
    assert sorted(ours) == sorted(theirs)
    assert len(ours) > 50


def test_rerun_exports_only_what_changed(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for path in (CC, CODEX, PI):
        shutil.copy2(path, src / path.name)
    ds = tmp_path / "ds"
    first = cli("export", src, "--to", ds, "--format", "atif", "-j", "2", timeout=300)
    assert first.returncode == 0, first.stderr
    assert _summary(first.stderr)["exported"] == 3
    before = {p: p.stat().st_mtime_ns for p in (ds / "atif").glob("harness=*/*/*.json")}
    assert len(before) == 3

    again = cli("export", src, "--to", ds, "--format", "atif", timeout=300)
    assert again.returncode == 0, again.stderr
    s = _summary(again.stderr)
    assert (s["exported"], s["unchanged"], s["events"]) == (0, 3, 0)

    changed = src / CODEX.name
    st = changed.stat()
    os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    third = cli("export", src, "--to", ds, "--format", "atif", "-j", "2", timeout=300)
    assert third.returncode == 0, third.stderr
    s = _summary(third.stderr)
    assert (s["exported"], s["replaced"], s["unchanged"]) == (1, 1, 2)
    after = {p: p.stat().st_mtime_ns for p in (ds / "atif").glob("harness=*/*/*.json")}
    assert set(after) == set(before)
    rewritten = {p for p in after if after[p] != before[p]}
    assert [p.parent.parent.name for p in rewritten] == ["harness=codex"]


def test_a_bad_transcript_is_a_failure_record_and_exit_1(cli: Any, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(CC, src / "good.jsonl")
    bad = src / "bad.jsonl"
    bad.write_bytes(CC.read_bytes() + b'{"type":"planted-record"}\n')
    ds = tmp_path / "ds"
    out = cli("export", src, "--to", ds, "--format", "atif", "-j", "2", timeout=300)
    assert out.returncode == 1
    err = out.stderr.decode()
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if str(bad) in line]
    assert len(errors) == 1, err
    assert "planted-record" in errors[0]
    s = _summary(out.stderr)
    assert (s["exported"], s["failed"]) == (1, 1)
    (record,) = [
        json.loads(line) for line in (ds / "atif" / "failures.jsonl").read_text().splitlines()
    ]
    assert record["transcript"] == str(bad)
    assert record["harness"] == "claude-code"
    assert record["error_type"] == "ParseError"
    assert record["error"] == errors[0].removeprefix("agentminutes: ")
    assert record["line"] == CC.read_bytes().count(b"\n") + 1
    assert record["source_bytes"] == bad.stat().st_size
    # Nothing of the bad transcript was written; the good one is there.
    assert len(_documents(ds)) == 1

    again = cli("export", src, "--to", ds, "--format", "atif", timeout=300)
    assert again.returncode == 1  # the failure stands until the file changes
    assert [line for line in again.stderr.decode().splitlines() if str(bad) in line] == errors
    assert (ds / "atif" / "failures.jsonl").exists()

    bad.write_bytes(CC.read_bytes())  # mended: exported, its failure record gone
    fixed = cli("export", src, "--to", ds, "--format", "atif", timeout=300)
    assert fixed.returncode == 0, fixed.stderr
    assert not (ds / "atif" / "failures.jsonl").exists()
    assert len(_documents(ds)) == 2


def test_copies_of_one_session_are_two_documents(cli: Any, tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        shutil.copy2(CC, tmp_path / name / CC.name)
    ds = tmp_path / "ds"
    out = cli("export", tmp_path / "a", tmp_path / "b", "--to", ds, "--format", "atif")
    assert out.returncode == 0, out.stderr
    docs = _documents(ds)
    assert len(docs) == 2
    first, second = docs.values()
    assert first == second
    names = sorted(Path(rel).name for rel in docs)
    ident = first["trajectory_id"]
    assert names[0] == f"{ident}.json"
    assert re.fullmatch(re.escape(ident) + r"~[0-9a-f]{8}\.json", names[1]), names


def test_a_document_no_manifest_names_is_removed(cli: Any, tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    assert cli("export", CC, "--to", ds, "--format", "atif").returncode == 0
    (doc,) = (ds / "atif").glob("harness=*/*/*.json")
    stray = doc.parent / "left-by-a-killed-run.json"
    stray.write_bytes(b'{"half": ')
    out = cli("export", CC, "--to", ds, "--format", "atif")
    assert out.returncode == 0, out.stderr
    assert not stray.exists()
    assert doc.exists()


def test_needs_no_pyarrow(tmp_path: Path) -> None:
    """The fixtures' ATIF export ran in two workers without pyarrow (see
    :func:`_fixtures_export`); in the same environment the Parquet one says how to
    install it."""
    ds, out = _fixtures_export()
    assert out.returncode == 0, out.stderr
    manifest = json.loads((ds / "atif" / "_manifest.json").read_bytes())
    assert manifest["last_run"]["workers"] == 2
    parquet_run = subprocess.run(
        [sys.executable, "-m", "agentminutes", "export", str(CC), "--to", str(tmp_path / "pq")],
        capture_output=True,
        env=_without_pyarrow(tmp_path),
        check=False,
    )
    assert parquet_run.returncode == 1
    assert parquet_run.stderr.decode().splitlines() == [
        "Error: export writes Parquet, which needs pyarrow: pip install 'agentminutes-py[parquet]'"
    ]
    assert not (tmp_path / "pq").exists()


def test_another_format_is_a_usage_error(cli: Any, tmp_path: Path) -> None:
    out = cli("export", CC, "--to", tmp_path / "ds", "--format", "csv")
    assert out.returncode != 0
    (line,) = out.stderr.decode().strip().splitlines()[:1]
    assert "--format" in line
    assert "Traceback" not in out.stderr.decode()
