#!/usr/bin/env python3
"""Benchmark our CLI against the reference Go CLI, in one run, on the same transcript.

Usage:
  python scripts/bench.py --ref /tmp/ref/bin/agentminutes [--ours agentminutes]
                          [--runs 3] [--harness H] TRANSCRIPT [TRANSCRIPT ...]

For each transcript and each command (``convert --format jsonl``, ``convert``,
``stats``) both CLIs run alternately, ``--runs`` times each (at least 3), with
stdout to /dev/null. Wall time is measured around the process; peak RSS comes
from ``wait4`` (the child's ``ru_maxrss``). The table reports the medians and
the ratio ours/reference; a ratio under 1 means we are faster.

Make a large input from a real transcript with the shared ``inflate`` tool, e.g.
``inflate --to-mb 100 SOURCE /tmp/cc100.jsonl``. Running on a machine busy with
other work skews both sides alike, since the runs alternate. Any harness both
CLIs read works, detected from the head (``--harness`` names it instead); for
the four the issue tracks::

    inflate --to-mb 100 fixtures/claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl /tmp/cc100.jsonl
    inflate --to-mb 100 fixtures/codex/agent-sessions/codex_small_0.146.0.jsonl /tmp/codex100.jsonl
    inflate --to-mb 100 fixtures/copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl /tmp/copilot100.jsonl
    inflate --to-mb 100 fixtures/antigravity/vibe-coding/cli-d580aa81/transcript_full.jsonl /tmp/ag100.jsonl
    python scripts/bench_linear.py --renumber-steps /tmp/ag100.jsonl

Inflation repeats Antigravity's ``step_index`` values; the last command renumbers
them 0, 1, 2, … in file order, so the transcript is in step order as real ones
are (otherwise both CLIs benchmark their out-of-order path, not the common one).
Copilot CLI's ``events.jsonl`` needs nothing more.

The reference (agentminutes 0.8.0 from PyPI) is installed apart from this
project: ``python3 -m venv /tmp/ref && /tmp/ref/bin/pip install agentminutes==0.8.0``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

COMMANDS = (
    ("convert --format jsonl", ["convert", "--format", "jsonl"]),
    ("convert", ["convert"]),
    ("stats", ["stats"]),
)


def measure(argv: list[str]) -> tuple[float, float, int]:
    """Run *argv* once; return (wall seconds, peak RSS in MB, exit status)."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def real_binary(ref: str) -> list[str]:
    """The Go binary behind the reference's PyPI wrapper script, so its Python start is not timed."""
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(ref))), "lib")
    for root, _, files in os.walk(lib):
        if root.endswith(os.path.join("agentminutes", "bin")) and "agentminutes" in files:
            return [os.path.join(root, "agentminutes")]
    return [ref]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ref", required=True, help="the reference agentminutes (wrapper or binary)")
    ap.add_argument("--ours", default="agentminutes", help="our CLI command line")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--harness", default="", help="pass --harness to both (default: detect)")
    ap.add_argument("transcripts", nargs="+")
    a = ap.parse_args()
    runs = max(3, a.runs)
    ours = shlex.split(a.ours)
    ref = real_binary(a.ref)
    extra = ["--harness", a.harness] if a.harness else []
    print(f"ours: {' '.join(ours)}\nref:  {' '.join(ref)}\nruns: {runs} each, alternating\n")
    header = f"{'transcript':<28} {'command':<22} {'ours s':>7} {'ref s':>7} {'ratio':>6} {'ours MB':>8} {'ref MB':>7}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for path in a.transcripts:
        size = os.path.getsize(path) / 1e6
        label = f"{os.path.basename(path)[:18]} ({size:.0f} MB)"
        for name, verb in COMMANDS:
            samples: dict[str, list[tuple[float, float]]] = {"ours": [], "ref": []}
            for _ in range(runs):
                for side, cmd in (("ours", ours), ("ref", ref)):
                    wall, rss, code = measure([*cmd, *verb, *extra, path])
                    if code != 0:
                        print(f"{side} failed ({code}) on {name} {path}", file=sys.stderr)
                        return 2
                    samples[side].append((wall, rss))
            ow = statistics.median(s[0] for s in samples["ours"])
            rw = statistics.median(s[0] for s in samples["ref"])
            om = max(s[1] for s in samples["ours"])
            rm = max(s[1] for s in samples["ref"])
            worst = max(worst, ow / rw)
            print(f"{label:<28} {name:<22} {ow:7.2f} {rw:7.2f} {ow / rw:6.2f} {om:8.0f} {rm:7.0f}")
    print(f"\nworst wall-time ratio ours/ref: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
