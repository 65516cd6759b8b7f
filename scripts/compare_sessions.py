#!/usr/bin/env python3
"""Compare ``sessions`` and ``stats --include-subagents`` with the reference CLI on a corpus home.

Usage:
  python scripts/compare_sessions.py --ref /tmp/ref/bin/agentminutes --corpus ../shared/corpus

Lays out a temporary home from the shared corpus, every file at the place its
``MANIFEST.tsv`` ``path_in_repo`` column gives (``.claude/projects/<project>/…``,
``.codex/sessions/YYYY/MM/DD/rollout-…``, the Antigravity brain, Copilot
session state; corpus files from elsewhere go to a project or date folder
named after their source), with modification times spread over a year. Then
runs the reference and ours (``python -m agentminutes``) with ``HOME`` set to
it, ``TZ=UTC`` and no relocation variables:

* ``sessions --format jsonl`` with each filter (none, ``--harness``,
  ``--cwd``, ``--session-id``, ``--since``, ``--until``, both), comparing
  every record the reference prints with ours for the same path as JSON
  values (timestamps as instants), the order of those records, and listing
  what ours prints beyond it together with whether the reference failed to
  read that file;
* ``stats --include-subagents`` for every Claude Code session with a
  subagent folder and every Codex rollout, comparing the whole output
  (a skipped candidate's reason only up to the JSON decoder's own words).

It prints the figures and exits 1 when a record differs or is missing.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import canon  # noqa: E402

BASE_MTIME = 1782907200  # 2026-07-01T12:00:00Z
_ERROR_PATH = re.compile(r"^agentminutes: [\w-]+: (/.+?): ", re.M)


def _rows(corpus: Path, harness: str) -> list[dict[str, str]]:
    with open(corpus / harness / "MANIFEST.tsv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def layout(corpus: Path, home: Path) -> None:
    """Copy the corpus into *home* in each harness's own layout."""
    files: list[tuple[Path | None, Path]] = []
    for r in _rows(corpus, "claude-code"):
        name, where = r["file"], r["path_in_repo"]
        prefix, rest = name.split("__", 1)
        if ".claude/projects/" in where:
            project = where.split(".claude/projects/", 1)[1].split("/", 1)[0]
        else:
            project = "-corpus-" + prefix
        parts = rest.split("/")
        files.append(
            (
                corpus / "claude-code" / name,
                home / ".claude/projects" / project / "/".join(parts[1:] or parts),
            )
        )
    for r in _rows(corpus, "codex"):
        name, where = r["file"], r["path_in_repo"]
        base = name.split("__")[-1]
        m = re.search(r"sessions/(\d{4}/\d{2}/\d{2}/.*)$", where)
        day = re.match(r"rollout-(\d{4})-(\d{2})-(\d{2})T", base)
        if m:
            rel = m.group(1)
        elif day:
            rel = f"{day[1]}/{day[2]}/{day[3]}/{base}"
        else:
            rel = "archive/" + ("rollout-" + base if base.endswith(".jsonl") else base)
        files.append((corpus / "codex" / name, home / ".codex/sessions" / rel))
    for harness, marker in (
        ("antigravity", ".gemini/antigravity-cli/brain/"),
        ("copilot", ".copilot/session-state/"),
    ):
        files.extend(
            (corpus / harness / r["file"], home / r["path_in_repo"])
            for r in _rows(corpus, harness)
            if marker in r["path_in_repo"]
        )
    files += [
        (None, home / ".codex/sessions/2026/notes.txt"),
        (None, home / ".claude/projects/stray.txt"),
    ]
    for src, dst in files:
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src is None:
            dst.write_text("not a transcript\n")
        else:
            shutil.copyfile(src, dst)
    for i, p in enumerate(sorted(q for q in home.rglob("*") if q.is_file())):
        ns = (BASE_MTIME - (i % 9) * 40 * 86400) * 10**9 + 123456789
        os.utime(p, ns=(ns, ns))


def run(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "COPILOT_HOME",
            "GEMINI_CLI_HOME",
            "PI_CODING_AGENT_DIR",
        )
    }
    env.update(HOME=str(home), TZ="UTC")
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=home, check=False)


def compare_sessions(ref: str, ours: list[str], home: Path, args: list[str]) -> dict[str, Any]:
    r = run([ref, "sessions", "--format", "jsonl", *args], home)
    o = run([*ours, "sessions", "--format", "jsonl", *args], home)
    theirs = [json.loads(line) for line in r.stdout.splitlines()]
    mine = [json.loads(line) for line in o.stdout.splitlines()]
    by_path = {m["path"]: m for m in mine}
    unreadable = set(_ERROR_PATH.findall(r.stderr))
    equal = sum(1 for t in theirs if t["path"] in by_path and canon(by_path[t["path"]]) == canon(t))
    listed = {t["path"] for t in theirs}
    extra = [m["path"] for m in mine if m["path"] not in listed]
    order = [m["path"] for m in mine if m["path"] in listed] == [
        t["path"] for t in theirs if t["path"] in by_path
    ]
    return {
        "args": " ".join(args) or "(all roots)",
        "ref": len(theirs),
        "equal": equal,
        "differ": sum(1 for t in theirs if t["path"] in by_path) - equal,
        "missing": sum(1 for t in theirs if t["path"] not in by_path),
        "extra": len(extra),
        "extra_unreadable_by_ref": sum(1 for p in extra if p in unreadable),
        "order": order,
        "ref_summary": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "",
        "our_summary": o.stderr.strip().splitlines()[-1] if o.stderr.strip() else "",
    }


def _no_decoder_words(doc: dict[str, Any]) -> dict[str, Any]:
    for skip in doc.get("skipped", []):
        skip["reason"] = skip["reason"].split(" invalid JSON: ")[0]
    return doc


def compare_task(ref: str, ours: list[str], home: Path, path: Path) -> str:
    """One parent's task summary, ours against the reference's.

    Outcomes: ``equal``; ``equal but for …`` (the reference lists as skipped
    candidates that ours reads); ``same transcripts, …`` (the reference only
    reads the transcript permissively and keeps records as unknown events that
    ours reads); ``ref-failed``; ``differ``.
    """
    args = ["stats", "--include-subagents", str(path)]
    r = run([ref, *args], home)
    permissive = False
    if r.returncode:
        args.insert(1, "--permissive")
        permissive = True
        r = run([ref, *args], home)
        if r.returncode:
            return "ref-failed"
    o = run([*ours, *args], home)
    if o.returncode:
        return "ours-failed: " + o.stderr.strip()
    theirs = canon(_no_decoder_words(json.loads(r.stdout)))
    mine = canon(_no_decoder_words(json.loads(o.stdout)))
    if mine == theirs:
        return "equal"
    skipped_r = {s["path"] for s in theirs.pop("skipped", [])}
    skipped_o = {s["path"] for s in mine.pop("skipped", [])}
    fewer = skipped_o <= skipped_r
    if mine == theirs and fewer:
        return f"equal but for {len(skipped_r - skipped_o)} skipped candidates the reference could not read"
    shape = [(t["path"], t.get("subagent_id")) for t in theirs["transcripts"]]
    if (
        permissive
        and fewer
        and shape == [(t["path"], t.get("subagent_id")) for t in mine["transcripts"]]
    ):
        unknown = sum(
            t["stats"].get("event_counts", {}).get("unknown", 0) for t in theirs["transcripts"]
        )
        return f"same transcripts and join; the reference (permissive) kept {unknown} records as unknown events"
    return "differ"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ref", required=True)
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--keep", type=Path, help="build the home here and keep it")
    a = ap.parse_args()
    ours = [sys.executable, "-m", "agentminutes"]
    with tempfile.TemporaryDirectory() as tmp:
        home = a.keep or Path(tmp) / "home"
        if home.exists():
            shutil.rmtree(home)
        layout(a.corpus, home)
        variants = [
            [],
            ["--harness", "claude-code"],
            ["--harness", "codex"],
            ["--harness", "claude-code", "--cwd", "/Users/admin"],
            ["--cwd", "/Users/zhehan/Documents/tools/llm/feipi-session-browser/"],
            ["--harness", "claude-code", "--session-id", "bfadf251-556e-4c28-96f9-a04826eb2f82"],
            ["--harness", "codex", "--session-id", "019ede26-ff03-7a82-bb34-cfab716a498a"],
            ["--session-id", "019edda8-7eca-7710-b78b-6ce7607beaa1"],
            ["--harness", "claude-code", "--since", "2026-03-01"],
            ["--harness", "codex", "--since", "2026-01-01"],
            ["--harness", "claude-code", "--until", "2026-01-15"],
            ["--harness", "codex", "--until", "2025-12-01"],
            [
                "--harness",
                "claude-code",
                "--since",
                "2026-01-01",
                "--until",
                "2026-03-01T12:00:00+02:00",
            ],
            ["--harness", "codex", "--since", "2025-11-14", "--until", "2026-05-01T00:00:00Z"],
        ]
        bad = 0
        total = {"ref": 0, "equal": 0}
        for args in variants:
            res = compare_sessions(a.ref, ours, home, args)
            bad += res["differ"] + res["missing"] + (0 if res["order"] else 1)
            total["ref"] += res["ref"]
            total["equal"] += res["equal"]
            print(
                f"sessions {res['args']}: reference {res['ref']}, equal {res['equal']}, differ {res['differ']}, "
                f"missing {res['missing']}, order {'same' if res['order'] else 'DIFFERENT'}; ours also "
                f"{res['extra']} ({res['extra_unreadable_by_ref']} the reference could not read)"
            )
            print(f"    reference: {res['ref_summary']}\n    ours:      {res['our_summary']}")
        print(f"sessions records: {total['equal']}/{total['ref']} equal")
        parents = [
            p
            for p in sorted((home / ".claude/projects").glob("*/*.jsonl"))
            if (p.with_suffix("") / "subagents").is_dir()
        ]
        rollouts = sorted((home / ".codex/sessions").rglob("rollout-*.jsonl"))
        outcomes: dict[str, int] = {}
        for path in [*parents, *rollouts]:
            outcome = compare_task(a.ref, ours, home, path)
            kind = re.sub(r"\d+", "N", outcome.split(":")[0])
            outcomes[kind] = outcomes.get(kind, 0) + 1
            if not outcome.startswith(("equal", "ref-failed", "same transcripts")):
                bad += 1
            print(f"stats --include-subagents {path.relative_to(home)}: {outcome}")
        print("stats --include-subagents:")
        for kind, n in sorted(outcomes.items()):
            print(f"    {n:3d}  {kind}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
