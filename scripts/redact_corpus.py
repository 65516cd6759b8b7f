#!/usr/bin/env python3
"""Run a corpus of transcripts through ``agentminutes convert --redact``: what gets redacted.

Usage:
  python scripts/redact_corpus.py [--ours agentminutes] [--samples 20] [--seed 1] CORPUS

Every file under CORPUS that the CLI converts (``--permissive``; files it cannot
read — sidecars, harnesses it does not know — are counted apart) is converted
with ``--redact --format jsonl`` by the real command line. It prints the
redactions per detector (from each run's ``redacted N secrets (…)`` line), the
files with the most, and ``--samples`` markers drawn at random with the
redacted text around them, to check by eye for false positives: the sample
shows the marker and its context, never the secret (open the source file to see
it; keep it out of reports).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shlex
import subprocess
import sys
from collections import Counter

MARKER = re.compile(rb"\[REDACTED:([a-z0-9-]+):[0-9a-f]{8}\]")
SUMMARY = re.compile(r"agentminutes: redacted (\d+) secrets?(?: \((.*)\))?$")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ours", default="agentminutes", help="our CLI command line")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("corpus")
    a = ap.parse_args()
    ours = shlex.split(a.ours)
    counts: Counter[str] = Counter()
    per_file: Counter[str] = Counter()
    samples: list[tuple[str, str, bytes]] = []
    converted = unreadable = 0
    for folder, _, names in sorted(os.walk(a.corpus)):
        for name in sorted(names):
            if name in ("MANIFEST.tsv", "README.md"):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, a.corpus)
            proc = subprocess.run(
                [*ours, "convert", "--redact", "--permissive", "--format", "jsonl", path],
                capture_output=True,
                check=False,
            )
            if proc.returncode != 0:
                unreadable += 1
                continue
            converted += 1
            for line in proc.stderr.decode(errors="replace").splitlines():
                m = SUMMARY.match(line)
                if m and m.group(2):
                    for part in m.group(2).split(", "):
                        detector, n = part.rsplit(" ", 1)
                        counts[detector] += int(n)
                        per_file[rel] += int(n)
            seen = set()  # one sample per distinct secret and file: repeats say nothing new
            for m in MARKER.finditer(proc.stdout):
                if m.group() in seen:
                    continue
                seen.add(m.group())
                context = proc.stdout[max(0, m.start() - 70) : m.end() + 30]
                samples.append((rel, m.group(1).decode(), context))
    total = sum(counts.values())
    print(f"{converted} transcripts converted, {unreadable} not (sidecars, unknown formats)")
    print(f"{total} redactions in {len(per_file)} transcripts, {len(samples)} distinct secrets")
    for detector, n in counts.most_common():
        print(f"  {detector:<22} {n:6}")
    print("most redactions:")
    for rel, n in per_file.most_common(10):
        print(f"  {n:6}  {rel}")
    rng = random.Random(a.seed)
    chosen = rng.sample(samples, min(a.samples, len(samples)))
    print(f"sample of {len(chosen)} markers (redacted context):")
    for rel, detector, context in chosen:
        text = context.decode("utf-8", errors="replace").replace("\n", " ")
        print(f"  {detector}: {rel}\n      …{text}…")
    return 0


if __name__ == "__main__":
    sys.exit(main())
