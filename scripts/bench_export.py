#!/usr/bin/env python3
"""Benchmark ``agentminutes export``: a fleet of transcripts, the incremental re-run, a big file.

Usage:
  python scripts/bench_export.py fleet --corpus DIR [--copies 2000] [--jobs 2] [--work /tmp/x]
  python scripts/bench_export.py big TRANSCRIPT [--runs 3]

``fleet`` makes ``--copies`` transcripts out of the line transcripts under ``--corpus``
(each source that converts cleanly, cycled; in every copy each UUID is replaced by one
derived from it and the copy number, so sessions, messages and calls get distinct ids),
then:

1. exports them with ``--jobs N`` (wall time; peak RSS of the parent and of the largest
   worker, from the manifest's ``last_run``);
2. runs ``convert --format jsonl`` once per file, one process after another (the way a
   shell loop converts a folder), and prints the ratio export / convert;
3. touches 10 transcripts (a new modification time) and exports again: how many were
   exported, and the wall time as a share of the first run's.

``big`` runs ``convert --format jsonl`` and ``export`` (one transcript: in one process)
alternately ``--runs`` times on one transcript, e.g. a 100 MB one made with the shared
``inflate`` tool, and prints medians of wall time and peak RSS (from ``wait4``) and the ratio.

Timings on a machine busy with other work are noisy; take them as such.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CLI = [sys.executable, "-m", "agentminutes"]


def run(
    argv: list[str], stdout: int | None = subprocess.DEVNULL
) -> tuple[float, float, int, float]:
    """Run *argv*; return (wall seconds, peak RSS in MB, exit status, CPU seconds).

    The CPU seconds (user + system, from ``wait4``) are the process's and those of its
    children it waited for; on a machine shared with other work they vary less than
    the wall time.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    cpu = usage.ru_utime + usage.ru_stime
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), cpu


def sources(corpus: Path, limit_bytes: int) -> list[Path]:
    """Line transcripts under *corpus* that convert cleanly, smallest first."""
    found = []
    for p in sorted(corpus.rglob("*.jsonl")):
        if p.stat().st_size > limit_bytes:
            continue
        out = subprocess.run([*CLI, "convert", "--format", "jsonl", str(p)], capture_output=True)
        if out.returncode == 0 and out.stdout:
            found.append(p)
    return found


def _fresh(value: bytes, salt: bytes) -> bytes:
    """A UUID derived from *value* and *salt*: the same one for every occurrence in a copy."""
    digest = hashlib.sha1(value + salt).digest()[:16]
    return str(uuid.UUID(bytes=digest)).encode()


def make_copies(srcs: list[Path], copies: int, into: Path) -> list[Path]:
    into.mkdir(parents=True, exist_ok=True)
    made = []
    for k in range(copies):
        src = srcs[k % len(srcs)]
        data = src.read_bytes()
        salt = str(k).encode()

        data = UUID.sub(lambda m, salt=salt: _fresh(m[0], salt), data)
        # Keep the name's shape (detection and layouts read some names), make it unique.
        dest = into / f"{k:05d}" / src.name
        dest.parent.mkdir()
        dest.write_bytes(data)
        made.append(dest)
    return made


def last_run(ds: Path) -> dict[str, object]:
    manifest = json.loads((ds / "_manifest.json").read_text(encoding="utf-8"))
    return dict(manifest["last_run"])


def fleet(args: argparse.Namespace) -> int:
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-export-"))
    src_dir, ds = work / "transcripts", work / "ds"
    shutil.rmtree(src_dir, ignore_errors=True)
    shutil.rmtree(ds, ignore_errors=True)
    srcs = sources(Path(args.corpus), args.max_source_mb << 20)
    paths = make_copies(srcs, args.copies, src_dir)
    total_mb = sum(p.stat().st_size for p in paths) / 1e6
    print(f"{len(paths)} transcripts ({total_mb:.0f} MB) from {len(srcs)} corpus sources in {work}")

    wall, _, code, _ = run(
        [*CLI, "export", str(src_dir), "--to", str(ds), "--jobs", str(args.jobs)]
    )
    info = last_run(ds)
    print(
        f"export --jobs {args.jobs}: {wall:.1f} s wall (exit {code}), {info['exported']} exported, "
        f"{info['failed']} failed, {info['events']} events; peak RSS parent "
        f"{int(info['parent_max_rss_kb']) / 1024:.0f} MB, worker "  # type: ignore[call-overload]
        f"{int(info['worker_max_rss_kb']) / 1024:.0f} MB"  # type: ignore[call-overload]
        f"; load average {os.getloadavg()[0]:.1f}"
    )

    sample = paths if not args.sample else paths[:: max(1, len(paths) // args.sample)]
    start = time.perf_counter()
    for p in sample:
        run([*CLI, "convert", "--format", "jsonl", str(p)])
    convert_wall = (time.perf_counter() - start) * len(paths) / len(sample)
    note = "" if len(sample) == len(paths) else f" (measured on {len(sample)}, scaled)"
    print(
        f"convert --format jsonl once per file: {convert_wall:.1f} s{note}; "
        f"export / convert = {wall / convert_wall:.3f}"
    )

    for p in paths[:: max(1, len(paths) // 10)][:10]:
        os.utime(p)
    again, _, code, cpu = run(
        [*CLI, "export", str(src_dir), "--to", str(ds), "--jobs", str(args.jobs)]
    )
    info = last_run(ds)
    print(
        f"re-run after touching 10: {again:.2f} s wall ({cpu:.2f} s CPU, "
        f"{info.get('workers', 0)} workers; exit {code}), {info['exported']} exported, "
        f"{info['unchanged']} unchanged = {100 * again / wall:.1f} % of the first run; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def big(args: argparse.Namespace) -> int:
    path = args.transcript
    size = os.path.getsize(path) / 1e6
    convert, export = [], []
    with tempfile.TemporaryDirectory(prefix="bench-export-big-") as tmp:
        for i in range(max(1, args.runs)):
            convert.append(run([*CLI, "convert", "--format", "jsonl", path]))
            ds = os.path.join(tmp, f"ds{i}")
            export.append(run([*CLI, "export", path, "--to", ds]))
            shutil.rmtree(ds)
    for name, runs in (("convert --format jsonl", convert), ("export", export)):
        codes = {r[2] for r in runs}
        print(
            f"{name:<22} {statistics.median(r[0] for r in runs):6.2f} s  "
            f"{statistics.median(r[3] for r in runs):6.2f} s CPU  "
            f"{statistics.median(r[1] for r in runs):6.0f} MB  (exit {codes}, {size:.0f} MB input)"
        )
    ratio = statistics.median(r[0] for r in export) / statistics.median(r[0] for r in convert)
    cpu = statistics.median(r[3] for r in export) / statistics.median(r[3] for r in convert)
    print(f"export / convert = {ratio:.2f} (CPU {cpu:.2f}); load average {os.getloadavg()[0]:.1f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fleet")
    f.add_argument("--corpus", required=True)
    f.add_argument("--copies", type=int, default=2000)
    f.add_argument("--jobs", type=int, default=2)
    f.add_argument("--work")
    f.add_argument("--sample", type=int, default=0, help="time convert on this many files only")
    f.add_argument("--max-source-mb", type=int, default=2)
    f.add_argument("--keep", action="store_true")
    b = sub.add_parser("big")
    b.add_argument("transcript")
    b.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    return fleet(args) if args.what == "fleet" else big(args)


if __name__ == "__main__":
    sys.exit(main())
