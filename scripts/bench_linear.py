#!/usr/bin/env python3
"""Is every adapter linear in its input? Time per MB of ``convert --format jsonl`` at two sizes.

Usage:
  python scripts/bench_linear.py --inflate /work/shared/tools/inflate
                                 [--ours "agentminutes"] [--small-mb 10] [--large-mb 100]
                                 [--runs 1] [--keep DIR] [HARNESS=FIXTURE ...]
  python scripts/bench_linear.py --renumber-steps INFLATED_ANTIGRAVITY.jsonl ...

For one real fixture per harness (the defaults below, or ``HARNESS=PATH`` pairs)
the shared ``inflate`` tool makes a SMALL and a LARGE transcript (Antigravity's
step indexes, repeated by inflation, are renumbered so the file stays in step
order, as a real one is); our CLI converts each, ``--runs`` times (the median
is kept), with stdout to /dev/null, and so is the fixture itself, whose time
(start-up, per-file work) is taken off both. The table gives CPU seconds per
MB (the child's user + system time, which a loaded machine disturbs less than
wall time) at both sizes, and the ratios LARGE/SMALL of CPU and wall time per MB; a
ratio over 1.3 is flagged: time that grows faster than the input (a quadratic
step in an adapter) shows up there long before it shows up in a test.
Exit status 1 if any harness is flagged.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: One real transcript per line harness (fixtures/), chosen for a varied mix of records.
DEFAULTS = {
    "antigravity": "fixtures/antigravity/vibe-coding/cli-d580aa81/transcript_full.jsonl",
    "claude-code": "fixtures/claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
    "codex": "fixtures/codex/agent-sessions/codex_small_0.146.0.jsonl",
    "copilot": "fixtures/copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
    "gemini-cli": "fixtures/gemini-cli/vibe-comparison/session-2026-04-25T08-23-e435870b.jsonl",
    "pi": "fixtures/pi/pi-mono/before-compaction.jsonl",
    "qwen-code": "fixtures/qwen-code/todo-list/c85afb93-5dc4-4bb5-be6e-0f2771b8e976.jsonl",
}
FLAG_RATIO = 1.3
_STEP = re.compile(rb'"step_index"\s*:\s*\d+')


def renumber_steps(path: str) -> None:
    """Give an inflated Antigravity transcript's lines step indexes 0, 1, 2, … in file order."""
    tmp = path + ".renumbered"
    with open(path, "rb") as src, open(tmp, "wb") as out:
        for n, line in enumerate(src):
            out.write(_STEP.sub(b'"step_index":%d' % n, line, count=1))
    os.replace(tmp, path)


def make_input(inflate: str, harness: str, source: str, mb: int, folder: str) -> str:
    """Inflate *source* to *mb* MB in *folder* (renumbered for Antigravity); return its path."""
    out = os.path.join(folder, f"{harness}-{mb}mb.jsonl")
    if not os.path.exists(out):
        subprocess.run([sys.executable, inflate, "--to-mb", str(mb), source, out], check=True)
        if harness == "antigravity":
            renumber_steps(out)
    return out


def measure(argv: list[str]) -> tuple[float, float]:
    """Run *argv* once; return (CPU seconds of the child, wall seconds)."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{shlex.join(argv)} failed: {err.decode(errors='replace').strip()}")
    return usage.ru_utime + usage.ru_stime, wall


def _median_run(argv: list[str], runs: int) -> tuple[float, float]:
    """The median CPU and wall seconds of *runs* runs of *argv*."""
    done = [measure(argv) for _ in range(max(1, runs))]
    return statistics.median(r[0] for r in done), statistics.median(r[1] for r in done)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--inflate", required=True, help="the shared inflate tool")
    ap.add_argument("--ours", default=f"{sys.executable} -m agentminutes")
    ap.add_argument("--small-mb", type=int, default=10)
    ap.add_argument("--large-mb", type=int, default=100)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--keep", default="", help="make (and reuse) the inputs in this folder")
    ap.add_argument("pairs", nargs="*", metavar="HARNESS=FIXTURE")
    if sys.argv[1:2] == ["--renumber-steps"]:
        for path in sys.argv[2:]:
            renumber_steps(path)
        return 0
    a = ap.parse_args()
    chosen = dict(p.split("=", 1) for p in a.pairs) if a.pairs else DEFAULTS
    ours = shlex.split(a.ours)
    folder = a.keep or tempfile.mkdtemp(prefix="bench-linear-")
    os.makedirs(folder, exist_ok=True)
    print(f"ours: {' '.join(ours)}; sizes {a.small_mb} and {a.large_mb} MB; runs {a.runs}\n")
    header = (
        f"{'harness':<12} {'cpu s/MB small':>14} {'cpu s/MB large':>14} {'cpu ratio':>9} "
        f"{'wall ratio':>10}"
    )
    print(header)
    print("-" * len(header))
    flagged = []
    for harness, fixture in chosen.items():
        source = fixture if os.path.isabs(fixture) else os.path.join(ROOT, fixture)
        per_mb = []
        # The fixture itself: start-up and the per-file cost, taken off both sizes so
        # the ratio compares the work per MB, not the fixed cost spread over more MB.
        base_size = os.path.getsize(source) / 1e6
        base = _median_run(
            [*ours, "convert", "--format", "jsonl", "--harness", harness, source], a.runs
        )
        for mb in (a.small_mb, a.large_mb):
            path = make_input(a.inflate, harness, source, mb, folder)
            size = os.path.getsize(path) / 1e6 - base_size
            argv = [*ours, "convert", "--format", "jsonl", "--harness", harness, path]
            cpu, wall = _median_run(argv, a.runs)
            per_mb.append(((cpu - base[0]) / size, (wall - base[1]) / size))
        cpu_ratio = per_mb[1][0] / per_mb[0][0]
        wall_ratio = per_mb[1][1] / per_mb[0][1]
        mark = "  <-- grows faster than its input" if cpu_ratio > FLAG_RATIO else ""
        if mark:
            flagged.append(harness)
        print(
            f"{harness:<12} {per_mb[0][0]:>14.4f} {per_mb[1][0]:>14.4f} {cpu_ratio:>9.2f} "
            f"{wall_ratio:>10.2f}{mark}",
            flush=True,
        )
    if not a.keep:
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
    if flagged:
        print(f"\nnot linear (ratio > {FLAG_RATIO}): {', '.join(flagged)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
