#!/usr/bin/env python3
"""Regenerate the golden outputs in fixtures/golden/ with the reference Go CLI.

Usage:
  python scripts/make_goldens.py --ref /tmp/ref/bin/agentminutes [HARNESS ...]

For every transcript fixture under fixtures/<harness>/ the reference (agentminutes
0.8.0, installed apart from this project: `python3 -m venv /tmp/ref &&
/tmp/ref/bin/pip install agentminutes==0.8.0`) is run as

    agentminutes convert FILE        -> fixtures/golden/<harness>/<name>.convert.json
    agentminutes stats FILE          -> fixtures/golden/<harness>/<name>.stats.json
    (and once per promotion listed in PROMOTED for that harness, with --promote)

in strict mode. Where the reference fails strictly (it rejects record types
this project reads) no golden is written and the reason is listed in
fixtures/golden/MANIFEST.tsv, which also records the reference version. The
tests compare our output with these files as JSON values; they never run the
reference themselves.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
GOLDEN = FIXTURES / "golden"
EXTENSIONS = (".jsonl", ".json", ".log")
#: The harnesses the reference reads: the only ones with goldens.
REFERENCE_HARNESSES = ("antigravity", "claude-code", "codex", "copilot")
#: Extra reference runs with opt-in promotions, per harness: (suffix, flags).
PROMOTED = {
    "codex": [
        ("promote-web-search", ["--promote", "codex:web-search"]),
        ("promote-patch-apply", ["--promote", "codex:patch-apply"]),
    ]
}


def transcripts(harness: str) -> list[Path]:
    base = FIXTURES / harness
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file() and p.suffix in EXTENSIONS and not p.name.endswith(".meta.json")
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ref", required=True, help="path of the reference agentminutes binary")
    ap.add_argument("harnesses", nargs="*")
    a = ap.parse_args()
    version = subprocess.run(
        [a.ref, "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    harnesses = a.harnesses or list(REFERENCE_HARNESSES)
    manifest = GOLDEN / "MANIFEST.tsv"
    rows: dict[str, str] = {}
    if manifest.exists():
        for line in manifest.read_text().splitlines()[1:]:
            key = "\t".join(line.split("\t", 2)[:2])  # fixture and run
            rows[key] = line
    for harness in harnesses:
        out_dir = GOLDEN / harness
        out_dir.mkdir(parents=True, exist_ok=True)
        for path in transcripts(harness):
            rel = path.relative_to(FIXTURES / harness)
            stem = str(rel).replace("/", "__")
            runs = [("convert", "convert", []), ("stats", "stats", [])]
            for suffix, flags in PROMOTED.get(harness, []):
                runs += [
                    (f"convert.{suffix}", "convert", flags),
                    (f"stats.{suffix}", "stats", flags),
                ]
            for name, verb, flags in runs:
                target = out_dir / f"{stem}.{name}.json"
                p = subprocess.run([a.ref, verb, *flags, str(path)], capture_output=True)
                key = f"{harness}/{rel}\t{name}"
                if p.returncode == 0:
                    target.write_bytes(
                        json.dumps(
                            json.loads(p.stdout), separators=(",", ":"), ensure_ascii=False
                        ).encode()
                        + b"\n"
                    )
                    rows[key] = f"{key}\tgolden\t{version}"
                else:
                    target.unlink(missing_ok=True)
                    err = p.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
                    rows[key] = f"{key}\treference-failed: {err[0]}\t{version}"
    manifest.write_text(
        "fixture\trun\toutcome\treference\n" + "\n".join(rows[k] for k in sorted(rows)) + "\n"
    )
    print(f"goldens written under {GOLDEN.relative_to(ROOT)} ({len(rows)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
