#!/usr/bin/env python3
"""How big and how fast ``view --html`` is on a huge transcript: page size, write time, load time.

Usage::

    python scripts/view_page_load.py [--inflate /work/shared/tools/inflate] [--mb 100]
                                     [--runs 3] [TRANSCRIPT]

Makes a transcript of ``--mb`` megabytes out of TRANSCRIPT (default: a Claude
Code fixture with 40 tool calls and a subagent) with the ``inflate`` tool,
writes its page with ``agentminutes view --html`` (wall time and peak memory of
that process), then opens the page ``--runs`` times in a fresh headless Chromium
(DevTools protocol, ``tests/browser.py``) and reports, per run, the seconds from
navigation to the load event, then the time the search box takes to filter every
turn. Needs chromium (``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser import Browser  # noqa: E402

DEFAULT = ROOT / "fixtures/claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


def main() -> int:
    """Measure, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("transcript", nargs="?", default=str(DEFAULT))
    parser.add_argument("--inflate", default="/work/shared/tools/inflate")
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.jsonl"
        subprocess.run(
            [sys.executable, args.inflate, "--to-mb", str(args.mb), args.transcript, str(big)],
            check=True,
        )
        page = Path(tmp) / "big.html"
        cli = [sys.executable, "-m", "agentminutes", "view", "--html", str(page), str(big)]
        start = time.monotonic()
        subprocess.run(cli, check=True, stderr=subprocess.DEVNULL)
        wrote = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"transcript {os.path.getsize(big) / 1e6:.1f} MB")
        print(
            f"page       {os.path.getsize(page) / 1e6:.1f} MB, written in {wrote:.1f} s, "
            f"peak {peak:.0f} MB"
        )
        for run in range(args.runs):
            with Browser() as browser:
                loaded = browser.open(page)
                turns = browser.evaluate("document.querySelectorAll('section.turn').length")
                start = time.monotonic()
                browser.type_into("#q", "a")
                filtered = time.monotonic() - start
                errors = browser.errors()
            print(
                f"run {run + 1}: load event {loaded:.2f} s, {turns} turns, "
                f"search filters them in {filtered:.2f} s, {len(errors)} errors"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
