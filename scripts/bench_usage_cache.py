"""Time ``agentminutes usage`` twice over a home of many transcripts: cold, then with the summary cache.

    python scripts/bench_usage_cache.py /work/shared/corpus [--transcripts 2000] [--runs 3]

Builds a temporary home of N transcripts copied from the corpus's Claude Code
and Codex folders (each copy under a new name in the harness's own layout),
then runs ``usage --by day,model`` with an empty cache (every transcript read)
and again over the unchanged home (the cache answers; only stats are taken),
each as a fresh process. Prints the wall times (median of the runs) and the
ratio second/first; the target is under 0.10.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path


def sources(corpus: Path) -> tuple[list[Path], list[Path]]:
    claude = sorted(
        p
        for p in (corpus / "claude-code").rglob("*.jsonl")
        if "subagents" not in p.parts and p.stat().st_size > 1000
    )
    codex = sorted(
        p for p in (corpus / "codex").glob("*rollout-*.jsonl") if p.stat().st_size > 1000
    )
    return claude, codex


def build(home: Path, corpus: Path, n: int) -> int:
    claude, codex = sources(corpus)
    pool = [("claude", p) for p in claude] + [("codex", p) for p in codex]
    size = 0
    for i in range(n):
        kind, src = pool[i % len(pool)]
        sid = uuid.UUID(int=i + 1)
        if kind == "claude":
            dest = home / ".claude/projects" / f"-bench-p{i % 50}" / f"{sid}.jsonl"
        else:
            dest = (
                home
                / ".codex/sessions/2026/01"
                / f"{1 + i % 28:02d}"
                / f"rollout-2026-01-01T00-00-00-{sid}.jsonl"
            )
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        size += dest.stat().st_size
    return size


def timed(home: Path, cache: Path) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env.update(HOME=str(home), AGENTMINUTES_CACHE_DIR=str(cache), TZ="UTC")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "agentminutes", "usage", "--by", "day,model", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    took = time.perf_counter() - start
    summary = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return took, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--transcripts", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        size = build(home, args.corpus, args.transcripts)
        print(f"home: {args.transcripts} transcripts, {size / 1e6:.1f} MB")
        cold, warm = [], []
        for run in range(args.runs):
            cache = Path(tmp) / f"cache{run}"
            took, line = timed(home, cache)
            cold.append(took)
            print(f"  cold run {run + 1}: {took:.2f} s  ({line})")
            took, line = timed(home, cache)
            warm.append(took)
            print(f"  cached run {run + 1}: {took:.2f} s  ({line})")
        first, second = statistics.median(cold), statistics.median(warm)
        print(
            f"first run {first:.2f} s, second run {second:.2f} s, ratio {second / first:.3f} (target < 0.10)"
        )
        return 0 if second / first < 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
