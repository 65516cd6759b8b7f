"""The dataset on disk: DuckDB reads it as written, re-runs replace exactly the changed rows."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

import agentminutes
from agentminutes.export import dataset, export_dataset
from conftest import FIXTURES, run_cli
from export_data import HARNESS_FOLDERS, fixtures_dataset, parquet

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"


def _count(folder: Path, table: str, where: str = "true") -> int:
    rows = duckdb.sql(f"SELECT count(*) FROM {parquet(folder, table)} WHERE {where}").fetchall()
    return int(rows[0][0])


def _workers(folder: Path) -> int:
    manifest = dataset.Manifest.load(str(folder))
    assert manifest is not None
    assert manifest.last_run is not None
    return manifest.last_run.workers


def test_duckdb_counts_what_the_library_parses() -> None:
    folder = fixtures_dataset()
    manifest = json.loads((folder / "_manifest.json").read_text(encoding="utf-8"))
    ok = [p for p, e in manifest["transcripts"].items() if e["status"] == "ok"]
    expected_events = sum(len(s.events) for p in ok for s in agentminutes.iter_sessions(p))
    assert _count(folder, "events") == expected_events
    expected_out = sum(
        s.totals.output_tokens
        for p in ok
        for s in agentminutes.iter_sessions(p)
        if s.totals is not None
    )
    got = duckdb.sql(f"SELECT sum(output_tokens) FROM {parquet(folder, 'requests')}").fetchall()
    assert got[0][0] == expected_out
    assert _count(folder, "sessions") == sum(
        e.get("sessions", 0) for e in manifest["transcripts"].values()
    )
    dups = duckdb.sql(
        f"SELECT dedup_key FROM {parquet(folder, 'requests')} GROUP BY ALL HAVING count(*) > 1"
    ).fetchall()
    assert dups == []


def test_cli_convert_counts_agree_for_real_processes(cli) -> None:  # type: ignore[no-untyped-def]
    folder = fixtures_dataset()
    for path in (CC, *sorted((FIXTURES / "codex" / "feipi").glob("*.jsonl"))):
        out = cli("convert", "--format", "jsonl", path)
        assert out.returncode == 0
        n = _count(folder, "events", f"transcript = '{path.resolve()}'")
        assert n == out.stdout.count(b"\n") > 0


def test_every_session_agrees_with_convert_run_as_a_process(tmp_path: Path) -> None:
    """Event rows per session, the sessions' token totals and the requests' raw sums per
    transcript equal what ``convert --all`` (one process over every exported fixture) writes."""
    folder = fixtures_dataset()
    manifest = json.loads((folder / "_manifest.json").read_text(encoding="utf-8"))
    ok = sorted(p for p, e in manifest["transcripts"].items() if e["status"] == "ok")
    listing = tmp_path / "paths.txt"
    listing.write_text("".join(p + "\n" for p in ok), encoding="utf-8")
    out = tmp_path / "convert"
    proc = run_cli("convert", "--all", "--to-dir", out, "--paths-from", listing, timeout=600)
    assert proc.returncode == 0, proc.stderr
    files = dict(line.split("\t", 1) for line in proc.stdout.decode().splitlines())
    assert sorted(files) == ok
    events = dict(
        duckdb.sql(
            f"SELECT transcript || '\t' || session_id, count(*) FROM {parquet(folder, 'events')} "
            "GROUP BY ALL"
        ).fetchall()
    )
    raw = "input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens"
    # A subagent's session (OpenCode, Cline keep them in the parent's source) carries its
    # parent's session id: rows are compared per transcript and session id, summed.
    sessions: dict[str, tuple[int | None, ...]] = {}
    query = f"SELECT transcript || '\t' || session_id, {raw} FROM {parquet(folder, 'sessions')}"
    for key, *counts in duckdb.sql(query).fetchall():
        before = sessions.get(key)
        sessions[key] = (
            tuple(counts)
            if before is None
            else tuple(
                None if a is None and b is None else (a or 0) + (b or 0)
                for a, b in zip(before, counts, strict=True)
            )
        )
    sums = ", ".join(f"sum({c})" for c in raw.split(", "))
    requests = {
        r[0]: tuple(x or 0 for x in r[1:])
        for r in duckdb.sql(
            f"SELECT transcript, {sums} FROM {parquet(folder, 'requests')} GROUP BY ALL"
        ).fetchall()
    }
    names = raw.split(", ")
    checked = 0
    for path in ok:
        lines = Path(files[path]).read_bytes().split(b"\n")
        docs = [json.loads(x) for x in lines if x.strip()]
        per_session: dict[str, list[Any]] = {}
        for doc in docs:
            key = f"{path}\t{doc['meta'].get('session_id', '')}"
            got = per_session.setdefault(key, [0, None])
            got[0] += len(doc["events"] or [])
            totals = doc.get("totals")
            if totals is not None:
                prev = got[1] or (0, 0, 0, 0)
                got[1] = tuple(p + totals.get(c, 0) for p, c in zip(prev, names, strict=True))
            checked += 1
        want = [0, 0, 0, 0]
        for key, (n, totals) in per_session.items():
            assert events.get(key, 0) == n, key
            if totals is None:
                assert sessions[key] == (None, None, None, None), key
            else:
                assert tuple(x or 0 for x in sessions[key]) == totals, key
                want = [w + t for w, t in zip(want, totals, strict=True)]
        assert requests.get(path, (0, 0, 0, 0)) == tuple(want), path
    assert checked > 50


def _copy_tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "claude-code", src / "claude-code")
    shutil.copytree(FIXTURES / "codex", src / "codex")
    return src


def test_a_rerun_exports_only_new_and_changed_transcripts(tmp_path: Path) -> None:
    src = _copy_tree(tmp_path)
    ds = tmp_path / "ds"
    first = export_dataset([src], to=ds, jobs=2)
    assert first.exported > 20
    assert first.failed == 0
    assert _workers(ds) == 2
    events = _count(ds, "events")
    again = export_dataset([src], to=ds, jobs=2)
    assert (again.exported, again.unchanged) == (0, first.transcripts)

    grown = src / "claude-code" / "cabgov" / CC.name
    before = _count(ds, "events", f"transcript = '{grown}'")
    lines = grown.read_bytes().splitlines(keepends=True)
    grown.write_bytes(grown.read_bytes() + lines[-1].replace(b'"uuid":"', b'"uuid":"x'))
    touched = next((src / "codex").rglob("*.jsonl"))
    os.utime(touched, ns=(1, 1))
    shutil.copy(CC, src / "new.jsonl")
    third = export_dataset([src], to=ds, jobs=2)
    assert third.exported == 3
    assert third.replaced == 2
    # Three transcripts and a few part files: not worth starting worker processes for.
    assert _workers(ds) == 0
    assert third.unchanged == first.transcripts - 2
    # Exactly their rows were replaced: no copies, and the grown one has its new event.
    for path in (grown, touched, src / "new.jsonl"):
        n = sum(len(s.events) for s in agentminutes.iter_sessions(path))
        assert _count(ds, "events", f"transcript = '{path}'") == n
        assert _count(ds, "sessions", f"transcript = '{path}'") == 1
    added = sum(len(s.events) for s in agentminutes.iter_sessions(src / "new.jsonl"))
    after = _count(ds, "events", f"transcript = '{grown}'")
    assert _count(ds, "events") == events - before + after + added
    # Nothing the manifest does not name is left on disk.
    manifest = dataset.Manifest.load(str(ds))
    assert manifest is not None
    assert set(dataset.part_files(str(ds))) == set(manifest.owners())


def test_rows_written_before_a_failure_are_taken_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentminutes.export import tables

    # Tiny batches and row groups: the broken transcript's first rows are on disk
    # before its bad line is reached.
    monkeypatch.setattr(tables, "BATCH_ROWS", 4)
    monkeypatch.setattr(dataset, "ROW_GROUP_ROWS", 4)
    lines = CC.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "src" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"".join([*lines, b'{"type":"planted-record"}\n']))
    shutil.copy(CC, tmp_path / "src" / "good.jsonl")
    ds = tmp_path / "ds"
    result = export_dataset([bad.parent], to=ds, jobs=1)
    assert (result.exported, result.failed) == (1, 1)
    assert _count(ds, "events", f"transcript = '{bad}'") == 0
    assert _count(ds, "events") == len(list(agentminutes.iter_events(CC)))
    (row,) = duckdb.sql(f"SELECT harness, error FROM {parquet(ds, 'failures')}").fetchall()
    assert row[0] == "claude-code"
    assert "planted-record" in row[1]
    # Fixed, it is exported and its failures row goes.
    bad.write_bytes(b"".join(lines))
    fixed = export_dataset([bad.parent], to=ds, jobs=1)
    assert (fixed.exported, fixed.failed) == (1, 0)
    assert not list(ds.glob("failures/**/*.parquet"))  # a table without rows has no files
    assert _count(ds, "events", f"transcript = '{bad}'") == len(list(agentminutes.iter_events(bad)))


def test_leftovers_of_an_interrupted_run_are_removed(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    export_dataset([CC], to=ds, jobs=1)
    stray = ds / "events" / "harness=claude-code" / "date=2026-01-01" / "part-crashed-00000.parquet"
    stray.parent.mkdir(parents=True)
    shutil.copy(next(ds.glob("events/*/*/part-*.parquet")), stray)
    assert _count(ds, "events") == 2 * len(list(agentminutes.iter_events(CC)))
    export_dataset([CC], to=ds, jobs=1)
    assert not stray.exists()
    assert _count(ds, "events") == len(list(agentminutes.iter_events(CC)))


def test_a_dataset_keeps_its_options_and_its_schema_version(tmp_path: Path) -> None:
    ds = tmp_path / "ds"
    export_dataset([CC], to=ds, jobs=1)
    with pytest.raises(agentminutes.UsageError, match="other options"):
        export_dataset([CC], to=ds, jobs=1, permissive=True)
    doc = json.loads((ds / "_schema.json").read_text(encoding="utf-8"))
    doc["agentminutes_export_schema"] = "0.9"
    (ds / "_schema.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(agentminutes.UsageError, match=r"schema 0\.9"):
        export_dataset([CC], to=ds, jobs=1)


def test_a_line_still_being_written_is_left_for_the_next_run(tmp_path: Path) -> None:
    from agentminutes.export.tables import TranscriptRows

    live = tmp_path / "live.jsonl"
    whole = CC.read_bytes()
    cut = whole.rfind(b"\n", 0, len(whole) - 1) + 40  # 40 bytes into the last line
    live.write_bytes(whole[:cut])
    planned = live.stat().st_size
    with live.open("ab") as f:  # the agent goes on writing after the run was planned
        f.write(whole[cut : cut + 10])
    rows = TranscriptRows(live, limit=planned)
    events = sum(b.num_rows for t, b in rows.batches() if t == "events")
    complete = tmp_path / "complete.jsonl"
    complete.write_bytes(whole[: whole.rfind(b"\n", 0, len(whole) - 1) + 1])
    assert events == len(list(agentminutes.iter_events(complete)))


def test_targets_and_filters(tmp_path: Path) -> None:
    with pytest.raises(agentminutes.UsageError, match="no such file"):
        export_dataset([tmp_path / "missing.jsonl"], to=tmp_path / "ds")
    with pytest.raises(agentminutes.UsageError, match="without TARGETs"):
        export_dataset([CC], to=tmp_path / "ds", cwd="/src")
    (tmp_path / "file").write_text("x")
    with pytest.raises(agentminutes.UsageError, match="not a folder"):
        export_dataset([CC], to=tmp_path / "file")


def test_no_target_exports_the_harness_folders_as_sessions_finds_them(tmp_path: Path) -> None:
    from session_home import build_home

    home = build_home(tmp_path / "home")
    env = {"HOME": str(home)}
    scan = agentminutes.scan("codex", env=env)
    paths = {r.path for r in scan} | {p for r in scan for p in r.subagent_paths or ()}
    unreadable = {e.path for e in scan.errors if e.path}
    assert paths
    paths |= unreadable  # exported too: each gets its failures row
    ds = tmp_path / "ds"
    result = export_dataset(None, to=ds, harness="codex", env=env, jobs=1)
    assert result.transcripts == len(paths)
    got = duckdb.sql(f"SELECT DISTINCT transcript FROM {parquet(ds, 'sessions')}").fetchall()
    failed = (
        duckdb.sql(f"SELECT transcript FROM {parquet(ds, 'failures')}").fetchall()
        if result.failed
        else []
    )
    assert {os.path.abspath(p) for p in paths} == {r[0] for r in got} | {r[0] for r in failed}
    assert {r[0] for r in failed} == {os.path.abspath(p) for p in unreadable}
    # --session-id narrows to one session, as `sessions` does.
    one = next(r for r in agentminutes.scan("codex", env=env) if r.meta.session_id)
    narrowed = export_dataset(
        None, to=tmp_path / "one", harness="codex", session_id=one.meta.session_id, env=env, jobs=1
    )
    assert narrowed.transcripts == 1 + len(one.subagent_paths or ())


def test_every_fixture_folder_is_covered() -> None:
    assert {p.name for p in HARNESS_FOLDERS} >= {"claude-code", "codex", "copilot", "pi"}
