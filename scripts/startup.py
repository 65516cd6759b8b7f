#!/usr/bin/env python3
"""What starting the CLI costs: ``detect``'s wall time and ``follow``'s first event, from exec.

Usage::

    python scripts/startup.py [--ours agentminutes] [--ref /tmp/ref/bin/agentminutes]
                              [--runs 10] [TRANSCRIPT]

Each run is a fresh process (a cold start of the interpreter and of every
import; the operating system's file cache is warm, as it is for a user who
runs the tool twice). Measured, ``--runs`` times each, alternating:

* ``python -c pass``: the interpreter's own start, the floor under every figure;
* ``detect TRANSCRIPT``: wall time from exec to exit, and its CPU seconds
  (user + system, from ``wait4``), with stdout to a pipe;
* ``follow TRANSCRIPT`` (the file exists and is complete): the time from exec
  to the first event line read from its stdout, and the CPU seconds it had used
  by then (``/proc``, in clock ticks); the follower is then stopped with SIGINT;
* with ``--ref``: the reference's ``detect`` (its Go binary, not the PyPI
  wrapper's Python start).

The children run with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` is
removed from their environment) and one unmeasured run of each command comes
first, so every module is loaded from its ``.pyc`` as in an installed CLI
(pip compiles wheels when it installs them); from source, each start would
also compile every module it imports. ``--instructions`` adds what does not move with the load: the instructions
(valgrind's callgrind, ``Ir``) of one ``python -c pass``, one ``detect`` and one
``convert`` of the transcript (slow: valgrind runs them some fifty times slower).

The default transcript is a small Claude Code fixture (17 KB). The last
lines give each median with the load average when the runs ended, since the
figures move with the machine's load: compare runs taken together. The
targets (issue 17) are ``detect`` under 100 ms and ``follow``'s first event
under 150 ms, medians.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import real_binary  # scripts/bench.py: the Go binary behind the wrapper

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "fixtures/claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"


#: The children's environment: bytecode is cached and read, as an installed CLI's is.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed_run(argv: list[str]) -> tuple[float, float, int]:
    """Run *argv* to its end; (wall seconds, CPU seconds, exit status)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def cpu_seconds(pid: int) -> float:
    """The CPU seconds (user + system) process *pid* has used so far (Linux: /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def first_event(argv: list[str]) -> tuple[float, float]:
    """Start *argv* (a follow); (seconds from exec to its first line on stdout, CPU seconds
    by then), then stop it."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    cpu = cpu_seconds(proc.pid)
    proc.send_signal(signal.SIGINT)
    proc.stdout.read()  # what the stop flushes, so the follower never blocks on a full pipe
    proc.wait(timeout=30)
    if not line:
        raise SystemExit(f"{shlex.join(argv)}: no event (exit {proc.returncode})")
    return elapsed, cpu


def instructions(argv: list[str]) -> int:
    """The instructions *argv* executes, counted by valgrind's callgrind (load-independent)."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        env=ENV,
        timeout=600,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind {shlex.join(argv)}: exit {done.returncode}")
    return int(found.group(1))


def python_argv(ours: list[str]) -> list[str]:
    """*ours* with its interpreter named, so valgrind follows the Python process itself."""
    first = shutil.which(ours[0]) or ours[0]
    with open(first, "rb") as f:
        shebang = f.readline()
    if shebang.startswith(b"#!") and b"python" in shebang:
        return [shebang[2:].decode().strip(), first, *ours[1:]]
    return [first, *ours[1:]]


def default_ours() -> str:
    """Our CLI next to this interpreter (a venv's), else the one on PATH."""
    beside = Path(sys.executable).with_name("agentminutes")
    return str(beside) if beside.exists() else "agentminutes"


def ms(values: list[float]) -> str:
    """``median (min–max) ms`` of *values* given in seconds."""
    return (
        f"{statistics.median(values) * 1e3:6.1f} ms "
        f"(min {min(values) * 1e3:.1f}, max {max(values) * 1e3:.1f})"
    )


def main() -> int:
    """Measure, print the medians; exit 1 when a command fails."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ours", default=default_ours(), help="our CLI command line")
    ap.add_argument("--ref", help="the reference agentminutes (wrapper or binary)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument(
        "--instructions", action="store_true", help="also count instructions (valgrind)"
    )
    ap.add_argument("transcript", nargs="?", default=str(DEFAULT))
    a = ap.parse_args()
    ours = shlex.split(a.ours)
    ref = real_binary(a.ref) if a.ref else None
    path = a.transcript
    samples: dict[str, list[float]] = {}

    def add(key: str, value: float) -> None:
        samples.setdefault(key, []).append(value)

    print(f"ours: {shlex.join(ours)}\ntranscript: {path}\nruns: {a.runs} each, alternating\n")
    for verb in ("detect", "convert"):
        timed_run([*ours, verb, path])  # writes the bytecode caches: not measured
    first_event([*ours, "follow", path])
    for _ in range(a.runs):
        wall, _cpu, _ = timed_run([sys.executable, "-c", "pass"])
        add("python -c pass", wall)
        wall, cpu, code = timed_run([*ours, "detect", path])
        if code != 0:
            print(f"detect failed ({code}) on {path}", file=sys.stderr)
            return 1
        add("detect", wall)
        add("detect cpu", cpu)
        if ref is not None:
            wall, cpu, code = timed_run([*ref, "detect", path])
            add("ref detect", wall)
            add("ref detect cpu", cpu)
        wall, cpu = first_event([*ours, "follow", path])
        add("follow first event", wall)
        add("follow cpu by then", cpu)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    for key, values in samples.items():
        print(f"{key:<22} {ms(values)}")
    if a.instructions:
        py = python_argv(ours)
        floor = instructions([sys.executable, "-c", "pass"])
        print(f"\ninstructions: python -c pass {floor / 1e6:.1f} M", end="")
        for verb in ("detect", "convert"):
            count = instructions([*py, verb, path])
            print(f", {verb} {count / 1e6:.1f} M", end="")
        print()
    print(
        f"\nstartup: detect {statistics.median(samples['detect']) * 1e3:.0f} ms, "
        f"follow first event {statistics.median(samples['follow first event']) * 1e3:.0f} ms "
        f"(medians of {a.runs}; load average {load})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
