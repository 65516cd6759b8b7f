#!/usr/bin/env python3
"""Many small transcripts: ``sessions`` over a root, and converting every transcript it lists.

Usage::

    python scripts/bench_many.py --ref /tmp/ref/bin/agentminutes [--ours agentminutes]
                                 [--files 2000] [--runs 3] [--n1]

Builds a Claude Code projects root of ``--files`` transcripts in a temporary
folder: the repository's small Claude Code fixtures that both CLIs convert,
copied round-robin, each under a session id of its own (the fixture's id
replaced in its bytes), 50 to a project folder. Then, ``--runs`` times
each, ours and the reference alternating, stdout to /dev/null:

* ``sessions --harness claude-code --root ROOT`` (paths), both CLIs;
* converting every listed transcript (``--only`` picks one of the two): the reference one process per
  transcript (``xargs -n1 REF convert``, the seed README's pipeline) against
  ours in one process (``xargs OURS convert``: several transcripts, one
  session per line); with ``--n1``, ours through ``xargs -n1`` too (slow).

The targets (issue 17): ours ≤ 0.5× the reference's ``xargs -n1`` loop on
2,000 transcripts; ``sessions`` ≤ 0.7× the reference's on 5,000 (run with
``--files 5000``). The last line gives the ratios and the load average;
figures move with the machine's load (the runs alternate, so both sides
see it).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench import real_binary  # scripts/bench.py: the Go binary behind the wrapper

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "fixtures" / "claude-code"
#: What counts as small here: a transcript below this many bytes.
SMALL_BYTES = 200_000
SESSION_ID = re.compile(rb'"sessionId":\s*"([0-9a-fA-F-]{36})"')
#: The children's environment: bytecode cached and read, as an installed CLI's is.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def converts(argv: list[str], path: Path) -> bool:
    """Whether ``argv convert path`` succeeds."""
    done = subprocess.run(
        [*argv, "convert", str(path)], capture_output=True, check=False, env=ENV, timeout=120
    )
    return done.returncode == 0


def sources(ours: list[str], ref: list[str]) -> list[bytes]:
    """The small Claude Code fixtures with a session id that both CLIs convert."""
    found = []
    for path in sorted(SOURCES.glob("*/*.jsonl")) + sorted(SOURCES.glob("*.jsonl")):
        data = path.read_bytes()
        small = len(data) < SMALL_BYTES and SESSION_ID.search(data)
        if small and converts(ours, path) and converts(ref, path):
            found.append(data)
    if not found:
        raise SystemExit(f"no small Claude Code fixture under {SOURCES} that both CLIs convert")
    return found


def build_root(root: Path, files: int, data: list[bytes]) -> None:
    """*files* transcripts under *root*, 50 to a project folder, each with its own session id."""
    for i in range(files):
        text = data[i % len(data)]
        new = str(uuid.UUID(int=i + 1, version=4))
        old = {m.group(1) for m in SESSION_ID.finditer(text)}
        for sid in old:
            text = text.replace(sid, new.encode())
        folder = root / f"-home-user-project-{i // 50:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{new}.jsonl").write_bytes(text)


def timed_shell(command: str) -> float:
    """Wall seconds of *command* run by ``sh``, stdout to /dev/null; exit status must be 0."""
    start = time.perf_counter()
    done = subprocess.run(
        command, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command}: exit {done.returncode}: {done.stderr[-500:]!r}")
    return wall


def main() -> int:
    """Build the root, measure, print the medians and ratios."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    beside = Path(sys.executable).with_name("agentminutes")
    ap.add_argument("--ours", default=str(beside) if beside.exists() else "agentminutes")
    ap.add_argument("--ref", required=True, help="the reference agentminutes (wrapper or binary)")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--n1", action="store_true", help="also ours one process per transcript")
    ap.add_argument(
        "--only", choices=("sessions", "convert"), help="measure only sessions, or only convert"
    )
    a = ap.parse_args()
    ours, ref = shlex.split(a.ours), real_binary(a.ref)
    work = Path(tempfile.mkdtemp(prefix="bench-many-"))
    try:
        root = work / "projects"
        build_root(root, a.files, sources(ours, ref))
        paths = work / "paths.txt"
        listing = subprocess.run(
            [*ours, "sessions", "--harness", "claude-code", "--root", str(root)],
            capture_output=True,
            check=True,
            env=ENV,
        ).stdout
        paths.write_bytes(listing)
        listed = len(listing.splitlines())
        o, r, p = shlex.join(ours), shlex.join(ref), shlex.quote(str(paths))
        sessions = f"--harness claude-code --root {shlex.quote(str(root))}"
        commands = {
            "ours sessions": f"{o} sessions {sessions}",
            "ref sessions": f"{r} sessions {sessions}",
            "ours xargs convert": f"xargs {o} convert < {p}",
            "ref xargs -n1 convert": f"xargs -n1 {r} convert < {p}",
        }
        if a.n1:
            commands["ours xargs -n1 convert"] = f"xargs -n1 {o} convert < {p}"
        if a.only:
            commands = {k: v for k, v in commands.items() if a.only in k}
        print(
            f"ours: {o}\nref:  {r}\n{a.files} transcripts ({listed} listed), {a.runs} runs each\n"
        )
        samples: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(max(1, a.runs)):
            for key, command in commands.items():
                samples[key].append(timed_shell(command))
        med = {k: statistics.median(v) for k, v in samples.items()}
        for key, value in med.items():
            print(
                f"{key:<24} {value:8.2f} s  (runs: {', '.join(f'{x:.2f}' for x in samples[key])})"
            )
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        ratios = []
        if "ref sessions" in med:
            ratios.append(
                f"sessions {med['ours sessions'] / med['ref sessions']:.2f}x the reference"
            )
        if "ref xargs -n1 convert" in med:
            loop = med["ours xargs convert"] / med["ref xargs -n1 convert"]
            ratios.append(f"xargs convert {loop:.2f}x the reference's xargs -n1 loop")
        print(f"\nmany: {a.files} transcripts: {'; '.join(ratios)} (load average {load})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
