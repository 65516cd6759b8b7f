#!/usr/bin/env python3
"""A command's time against the typed-decode floor of a Claude Code transcript.

    python scripts/bench_floor.py /tmp/cc100.jsonl [--runs 5] [--ours agentminutes]
        [--command stats]

The *floor* is the least a Python reader of the transcript does: read the file
whole, split it into lines, and decode each line with msgspec into a Struct of
only the fields ``usage`` needs (the record's type, time, session and uuid; its
message's id, model and the four usage counts). It runs as a fresh process,
like the command, and is timed two ways: the whole process (start-up and the
msgspec import included, as for the command) and the decode loop alone.

Then ``agentminutes <command> FILE`` (stdout to /dev/null) and the floor run
alternately ``--runs`` times; printed are the medians of wall and CPU time
(user + system, from ``wait4``) and the ratios of the command's CPU time to the
floor's: the steadier figure on a shared machine. The issue's target for
``stats`` on the 100 MB Claude Code benchmark is at most 3x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

FLOOR = r"""
import sys, time
import msgspec

class Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

class Message(msgspec.Struct):
    id: str = ""
    model: str = ""
    usage: Usage | None = None

class Record(msgspec.Struct, rename="camel"):
    type: str = ""
    timestamp: str = ""
    session_id: str = ""
    uuid: str = ""
    message: Message | None = None

decode = msgspec.json.Decoder(Record).decode
errors = (msgspec.DecodeError, msgspec.ValidationError)
start = time.process_time()
with open(sys.argv[1], "rb") as f:
    data = f.read()
records = 0
for line in data.splitlines():
    try:
        decode(line)
        records += 1
    except errors:
        pass
print(time.process_time() - start, records)
"""


def timed(cmd: list[str]) -> tuple[float, float, bytes]:
    """(wall s, CPU s, stdout) of *cmd* as a fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit status {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("transcript", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--command", default="stats")
    ap.add_argument(
        "--ours",
        default=shutil.which("agentminutes") or str(Path(sys.executable).with_name("agentminutes")),
    )
    args = ap.parse_args()
    path = str(args.transcript)
    floor_cmd = [sys.executable, "-c", FLOOR, path]
    ours_cmd = [*args.ours.split(), args.command, path]
    floor: list[tuple[float, float, float]] = []
    ours: list[tuple[float, float]] = []
    for _ in range(max(1, args.runs)):
        wall, cpu, out = timed(floor_cmd)
        loop = float(out.split()[0])
        floor.append((wall, cpu, loop))
        wall, cpu, _ = timed(ours_cmd)
        ours.append((wall, cpu))
    f_wall = statistics.median(w for w, _, _ in floor)
    f_cpu = statistics.median(c for _, c, _ in floor)
    f_loop = statistics.median(loop for _, _, loop in floor)
    o_wall = statistics.median(w for w, _ in ours)
    o_cpu = statistics.median(c for _, c in ours)
    size = args.transcript.stat().st_size / 1e6
    print(f"{path}: {size:.0f} MB, medians of {len(ours)} alternating runs")
    print(f"floor (process)      wall {f_wall:6.3f} s  cpu {f_cpu:6.3f} s")
    print(f"floor (decode loop)                 cpu {f_loop:6.3f} s")
    print(f"{args.command:20} wall {o_wall:6.3f} s  cpu {o_cpu:6.3f} s")
    print(
        f"{args.command} / floor, CPU: {o_cpu / f_cpu:.2f}x (processes), {o_cpu / f_loop:.2f}x (loop)"
    )


if __name__ == "__main__":
    main()
