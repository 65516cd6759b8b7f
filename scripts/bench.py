#!/usr/bin/env python3
"""Benchmark our CLI against the reference Go CLI, in one run, on the same transcript.

Usage:
  python scripts/bench.py --ref /tmp/ref/bin/agentminutes [--ours agentminutes]
                          [--runs 3] [--harness H] [--redact] TRANSCRIPT [TRANSCRIPT ...]
  python scripts/bench.py --redact [--ours agentminutes] TRANSCRIPT ...   # no reference

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
    inflate --to-mb 100 fixtures/codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl /tmp/codex100.jsonl
    inflate --to-mb 100 fixtures/copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl /tmp/copilot100.jsonl
    inflate --to-mb 100 fixtures/antigravity/vibe-coding/cli-d580aa81/transcript_full.jsonl /tmp/ag100.jsonl
    python scripts/bench_linear.py --renumber-steps /tmp/ag100.jsonl

Inflation repeats Antigravity's ``step_index`` values; the last command renumbers
them 0, 1, 2, … in file order, so the transcript is in step order as real ones
are (otherwise both CLIs benchmark their out-of-order path, not the common one).
Copilot CLI's ``events.jsonl`` needs nothing more. The Codex source is a real
rollout the reference reads (it refuses ``codex_small_0.146.0.jsonl``, whose
tool arguments are objects, so a benchmark on it stops at the reference's error).

The reference (agentminutes 0.8.0 from PyPI) is installed apart from this
project: ``python3 -m venv /tmp/ref && /tmp/ref/bin/pip install agentminutes==0.8.0``.

``--redact`` adds what redaction costs: our ``convert --redact`` against our
``convert``, alternately, the same number of runs (the target is at most 1.3x).
Without ``--ref`` only that is measured.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

#: The children's environment: bytecode cached and read, as an installed CLI's is (with
#: ``PYTHONDONTWRITEBYTECODE`` set, each run of ours would compile its modules again).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

COMMANDS = (
    ("convert --format jsonl", ["convert", "--format", "jsonl"]),
    ("convert", ["convert"]),
    ("stats", ["stats"]),
)


def measure(argv: list[str]) -> tuple[float, float, int]:
    """Run *argv* once; return (wall seconds, peak RSS in MB, exit status)."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null, env=ENV)
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
    ap.add_argument("--ref", help="the reference agentminutes (wrapper or binary)")
    ap.add_argument("--ours", default="agentminutes", help="our CLI command line")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--harness", default="", help="pass --harness to both (default: detect)")
    ap.add_argument(
        "--redact", action="store_true", help="also: convert --redact against convert (ours)"
    )
    ap.add_argument("transcripts", nargs="+")
    a = ap.parse_args()
    if not a.ref and not a.redact:
        ap.error("give --ref (ours against the reference), --redact, or both")
    runs = max(3, a.runs)
    ours = shlex.split(a.ours)
    extra = ["--harness", a.harness] if a.harness else []
    if a.ref:
        code = against_reference(ours, real_binary(a.ref), runs, extra, a.transcripts)
        if code:
            return code
    if a.redact:
        return redaction_cost(ours, runs, extra, a.transcripts)
    return 0


def alternate(
    sides: list[tuple[str, list[str]]], runs: int
) -> dict[str, tuple[float, float]] | str:
    """Run each side's argv in turn, *runs* rounds; per side (median wall s, peak RSS MB).

    Alternating the sides spreads a loaded machine's swings over both. A side
    that exits non-zero ends the measurement: its name is returned instead.
    """
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in sides}
    for _ in range(runs):
        for name, argv in sides:
            wall, rss, code = measure(argv)
            if code != 0:
                return f"{name} failed ({code}): {' '.join(argv)}"
            samples[name].append((wall, rss))
    return {
        name: (statistics.median(s[0] for s in got), max(s[1] for s in got))
        for name, got in samples.items()
    }


def _label(path: str) -> str:
    return f"{os.path.basename(path)[:18]} ({os.path.getsize(path) / 1e6:.0f} MB)"


def redaction_cost(ours: list[str], runs: int, extra: list[str], transcripts: list[str]) -> int:
    """``convert --redact`` against ``convert``, both ours, alternating; the wall-time ratio."""
    print(f"\nredaction: {' '.join(ours)} convert --redact vs convert, {runs} runs each\n")
    header = f"{'transcript':<28} {'convert s':>9} {'--redact s':>10} {'ratio':>6} {'MB':>5} {'--redact MB':>11}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for path in transcripts:
        got = alternate(
            [
                ("plain", [*ours, "convert", *extra, path]),
                ("redact", [*ours, "convert", "--redact", *extra, path]),
            ],
            runs,
        )
        if isinstance(got, str):
            print(got, file=sys.stderr)
            return 2
        (pw, pm), (rw, rm) = got["plain"], got["redact"]
        worst = max(worst, rw / pw)
        print(f"{_label(path):<28} {pw:9.2f} {rw:10.2f} {rw / pw:6.2f} {pm:5.0f} {rm:11.0f}")
    print(f"\nworst convert --redact / convert: {worst:.2f}")
    return 0


def against_reference(
    ours: list[str], ref: list[str], runs: int, extra: list[str], transcripts: list[str]
) -> int:
    """Each command, ours against the reference, alternating; the wall-time ratios."""
    print(f"ours: {' '.join(ours)}\nref:  {' '.join(ref)}\nruns: {runs} each, alternating\n")
    header = f"{'transcript':<28} {'command':<22} {'ours s':>7} {'ref s':>7} {'ratio':>6} {'ours MB':>8} {'ref MB':>7}"
    print(header)
    print("-" * len(header))
    worst = 0.0
    for path in transcripts:
        for name, verb in COMMANDS:
            got = alternate(
                [("ours", [*ours, *verb, *extra, path]), ("ref", [*ref, *verb, *extra, path])],
                runs,
            )
            if isinstance(got, str):
                print(got, file=sys.stderr)
                return 2
            (ow, om), (rw, rm) = got["ours"], got["ref"]
            worst = max(worst, ow / rw)
            print(
                f"{_label(path):<28} {name:<22} {ow:7.2f} {rw:7.2f} {ow / rw:6.2f} {om:8.0f} {rm:7.0f}"
            )
    print(f"\nworst wall-time ratio ours/ref: {worst:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
