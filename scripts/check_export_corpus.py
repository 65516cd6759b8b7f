"""Check that an ``export`` dataset agrees with ``convert`` and ``stats --usage``, run as processes.

    python scripts/check_export_corpus.py /work/shared/corpus [--jobs 2] [--keep DIR]

Runs ``agentminutes export CORPUS/<harness>... --to DIR/ds`` (one process, as a
user would), then, over the transcripts the manifest lists as exported,
``agentminutes convert --all --to-dir`` (every session of each transcript, one
JSON document per line) and ``agentminutes stats --usage --no-cost --to-dir``,
and compares with DuckDB on the Parquet files:

* per session (transcript and session id): the number of events ``convert``
  wrote and the rows of ``events``; ``convert``'s ``totals`` and the token
  columns of ``sessions``;
* per transcript: ``SUM(output_tokens)`` (and the other raw columns) of
  ``requests`` and the sum of ``convert``'s ``totals``; the ``otel_*`` sums of
  ``requests`` and ``stats --usage``'s normalized totals (``usage``'s counting);
* the transcripts ``export`` failed on and those ``convert`` fails on.

Prints one line per harness and every difference; exit status 1 if any.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb

from agentminutes.schema.usage import USAGE_RULES

RAW = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
OTEL = ("input_tokens", "output_tokens", "cache_read.input_tokens", "cache_creation.input_tokens")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "TZ": "UTC"},
    )


def _to_dir(verb: list[str], paths: list[str], out: Path) -> dict[str, Path]:
    """Run ``agentminutes VERB --to-dir OUT --paths-from LIST``; transcript → its file."""
    listing = out.with_suffix(".paths")
    listing.write_text("".join(p + "\n" for p in paths), encoding="utf-8")
    proc = _cli(*verb, "--to-dir", str(out), "--paths-from", str(listing))
    files = {}
    for line in proc.stdout.splitlines():
        transcript, _, file = line.partition("\t")
        files[transcript] = Path(file)
    return files


def _lines(path: Path) -> list[Any]:
    """The JSON documents of a file of one per line (split on newlines only: a document may
    hold U+2028, which ``str.splitlines`` would split on)."""
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


def _source(ds: Path, table: str) -> str:
    return f"read_parquet('{ds}/{table}/**/*.parquet', hive_partitioning=true, union_by_name=true)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="work in DIR (kept) instead of a temporary folder")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="check-export-"))
    work.mkdir(parents=True, exist_ok=True)
    ds = work / "ds"
    folders = sorted(str(p) for p in args.corpus.iterdir() if p.is_dir())
    proc = _cli("export", *folders, "--to", str(ds), "--jobs", str(args.jobs))
    print(f"export: exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1]}")
    manifest = json.loads((ds / "_manifest.json").read_text(encoding="utf-8"))
    entries: dict[str, Any] = manifest["transcripts"]
    ok = sorted(p for p, e in entries.items() if e["status"] == "ok")
    failed = sorted(p for p, e in entries.items() if e["status"] != "ok")
    converted = _to_dir(["convert", "--all"], ok + failed, work / "convert")
    stats = _to_dir(["stats", "--usage", "--no-cost"], ok, work / "stats")

    events = dict(
        duckdb.sql(
            f"SELECT transcript || '\t' || session_id, count(*) FROM {_source(ds, 'events')} "
            "GROUP BY ALL"
        ).fetchall()
    )
    cols = ", ".join(f"sum({c})" for c in RAW)
    otel_cols = ", ".join(f"sum(otel_{c.replace('.', '_')})" for c in OTEL)
    requests = {
        r[0]: r[1:]
        for r in duckdb.sql(
            f"SELECT transcript, {cols}, {otel_cols} FROM {_source(ds, 'requests')} GROUP BY ALL"
        ).fetchall()
    }
    # A subagent's session kept in its parent's source (OpenCode, Cline) carries the parent's
    # session id: sessions are compared per transcript and session id, their counts summed.
    sessions: dict[str, tuple[int, ...]] = {}
    for key, *counts in duckdb.sql(
        f"SELECT transcript || '\t' || session_id, {', '.join(RAW)} FROM {_source(ds, 'sessions')}"
    ).fetchall():
        before = sessions.get(key, (0, 0, 0, 0))
        sessions[key] = tuple(a + (b or 0) for a, b in zip(before, counts, strict=True))
    harness_of = {p: e.get("harness", "?") for p, e in entries.items()}
    tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    bad = 0

    def differs(path: str, what: str) -> None:
        nonlocal bad
        bad += 1
        tally[harness_of.get(path, "?")]["differ"] += 1
        print(f"  {harness_of.get(path, '?')}: {path}: {what}")

    for path in failed:
        if path in converted:
            differs(path, "export failed, convert did not")
        else:
            tally[harness_of[path]]["failed (both)"] += 1
    for path in ok:
        h = harness_of[path]
        if path not in converted:
            differs(path, "exported, but convert failed")
            continue
        docs = _lines(converted[path])
        raw = [0, 0, 0, 0]
        same = True
        per_session: dict[str, list[Any]] = {}
        for doc in docs:
            key = f"{path}\t{doc['meta'].get('session_id', '')}"
            got = per_session.setdefault(key, [0, [0, 0, 0, 0]])
            got[0] += len(doc["events"] or [])
            totals = doc.get("totals") or {}
            for i, c in enumerate(RAW):
                got[1][i] += totals.get(c, 0) or 0
                raw[i] += totals.get(c, 0) or 0
        for key, (n, want) in per_session.items():
            if events.get(key, 0) != n:
                differs(path, f"session {key}: {events.get(key, 0)} event rows, convert {n}")
                same = False
            if sessions.get(key) != tuple(want):
                differs(path, f"session {key}: sessions tokens {sessions.get(key)}, convert {want}")
                same = False
        req = requests.get(path)
        got_raw = tuple(x or 0 for x in req[:4]) if req else (0, 0, 0, 0)
        if got_raw != tuple(raw):
            differs(path, f"requests raw sums {got_raw}, convert totals {tuple(raw)}")
            same = False
        if path in stats:
            usage = json.loads(stats[path].read_bytes())["usage"]
            want_otel = tuple(usage["otel"].get(c, 0) for c in OTEL)
            got_otel = tuple(x or 0 for x in req[4:]) if req else (0, 0, 0, 0)
            if got_otel != want_otel:
                differs(path, f"requests otel sums {got_otel}, stats --usage {want_otel}")
                same = False
            if any(want_otel):
                tally[h]["with usage"] += 1
        elif entries[path].get("sessions", 1) > 1 and harness_of[path] not in USAGE_RULES:
            # A data export of many conversations (stats takes one: --conversation); its
            # harness records no usage, so no request may carry a normalized count.
            got_otel = tuple(x or 0 for x in req[4:]) if req else (0, 0, 0, 0)
            if any(got_otel):
                differs(path, f"requests otel sums {got_otel} for a harness without usage")
                same = False
        else:
            differs(path, "stats --usage failed")
            same = False
        if same:
            tally[h]["equal"] += 1
            tally[h]["sessions"] += len(docs)
    for h in sorted(tally):
        t = tally[h]
        print(
            f"{h}: {t['equal']} transcripts equal ({t['sessions']} sessions, {t['with usage']} "
            f"with usage), {t['differ']} differing, {t['failed (both)']} failed in both"
        )
    total_events = duckdb.sql(f"SELECT count(*) FROM {_source(ds, 'events')}").fetchall()[0][0]
    conv_docs = [d for f in converted.values() for d in _lines(f)]
    conv_events = sum(len(d["events"] or []) for d in conv_docs)
    out_sum = duckdb.sql(f"SELECT sum(output_tokens) FROM {_source(ds, 'requests')}").fetchall()
    conv_out = sum((d.get("totals") or {}).get("output_tokens", 0) for d in conv_docs)
    print(
        f"total: {len(ok)} exported, {len(failed)} failed; events {total_events} "
        f"(convert {conv_events}); requests SUM(output_tokens) {out_sum[0][0]} (convert {conv_out})"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
