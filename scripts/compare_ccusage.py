"""Compare ``agentminutes usage`` with ccusage on a Claude Code home built from a corpus folder.

    python scripts/compare_ccusage.py /work/shared/corpus/claude-code [--ccusage PATH]

Builds ``<tmp>/.claude/projects/<repo>/…`` from the corpus (``<repo>__<name>``
entries; folders hold a session and its session folder), runs ccusage
(``ccusage daily --offline --json --breakdown``, TZ=UTC; installed with npm
into a temporary folder unless ``--ccusage`` names its binary) and ours
(``usage --harness claude-code --by model --format json``), and prints per
model both token totals, the differences, and the rule that explains each:

* ``first-snapshot``: ccusage keeps the first streamed line of a message
  (``message.id`` + ``requestId`` seen first wins), whose ``output_tokens``
  is partial; we count the final snapshot (ccusage#901, #938);
* ``no-request-id``: ccusage does not deduplicate lines that lack a
  ``requestId``, so every streamed line of such a message counts (ccusage#976, #985);
* ``refused``: a file we report as an error (it does not parse from its first
  line) and ccusage reads past silently.

ccusage's own rule is re-implemented here only to attribute the differences;
the script checks that this re-implementation reproduces ccusage's totals
exactly before using it. Costs: for models both catalogs price, our catalog's
price of *ccusage's* token counts is compared with ccusage's cost, so a
difference left is the price tables', not the counting.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

FIELDS = ("input", "output", "cache_write", "cache_read")
CCUSAGE = "ccusage@18.0.11"


def build_home(corpus: Path, home: Path) -> Path:
    projects = home / ".claude" / "projects"
    for entry in sorted(corpus.iterdir()):
        if "__" not in entry.name:
            continue
        repo, rest = entry.name.split("__", 1)
        dest = projects / repo
        dest.mkdir(parents=True, exist_ok=True)
        if entry.is_dir():
            shutil.copytree(entry, dest, dirs_exist_ok=True)
        else:
            shutil.copyfile(entry, dest / rest)
    for path in home.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return projects


def run_ccusage(binary: str, home: Path) -> dict[str, dict[str, Any]]:
    env = dict(os.environ, HOME=str(home), TZ="UTC", CLAUDE_CONFIG_DIR=str(home / ".claude"))
    out = subprocess.run(
        [binary, "daily", "--offline", "--json", "--breakdown"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    per: dict[str, dict[str, Any]] = defaultdict(lambda: dict.fromkeys((*FIELDS, "cost"), 0))
    for day in json.loads(out)["daily"]:
        for m in day["modelBreakdowns"]:
            a = per[m["modelName"]]
            a["input"] += m["inputTokens"]
            a["output"] += m["outputTokens"]
            a["cache_write"] += m["cacheCreationTokens"]
            a["cache_read"] += m["cacheReadTokens"]
            a["cost"] += m["cost"]
    return dict(per)


def run_ours(projects: Path) -> tuple[dict[str, dict[str, Any]], list[str]]:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "usage",
            "--harness",
            "claude-code",
            "--root",
            str(projects),
            "--by",
            "model",
            "--format",
            "json",
            "--tz",
            "UTC",
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    per = {}
    for r in json.loads(proc.stdout):
        per[r["model"]] = {
            "input": r["input_tokens"],
            "output": r["output_tokens"],
            "cache_write": r["cache_creation_input_tokens"],
            "cache_read": r["cache_read_input_tokens"],
            "cost": r["cost_usd"],
            "status": r["cost_status"],
        }
    errors = [
        line.split(": ")[2]
        for line in proc.stderr.splitlines()
        if line.startswith("agentminutes: claude-code: /")
    ]
    return per, errors


def _usage(u: dict[str, Any]) -> tuple[int, int, int, int]:
    return (
        u.get("input_tokens", 0) or 0,
        u.get("output_tokens", 0) or 0,
        u.get("cache_creation_input_tokens", 0) or 0,
        u.get("cache_read_input_tokens", 0) or 0,
    )


def raw_messages(projects: Path) -> list[dict[str, Any]]:
    """Every assistant usage line, in ccusage's file order (by each file's first timestamp)."""
    files = sorted(projects.rglob("*.jsonl"))

    def first_ts(f: Path) -> str:
        for line in f.open(errors="replace"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and r.get("timestamp"):
                return str(r["timestamp"])
        return "9999"

    files.sort(key=first_ts)
    out = []
    for f in files:
        for n, line in enumerate(f.open(errors="replace"), 1):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            m = r.get("message") if isinstance(r, dict) else None
            u = m.get("usage") if isinstance(m, dict) else None
            if not isinstance(u, dict) or "input_tokens" not in u or "output_tokens" not in u:
                continue
            if not r.get("timestamp"):
                continue
            out.append(
                {
                    "file": str(f),
                    "line": n,
                    "id": m.get("id"),
                    "request": r.get("requestId"),
                    "model": m.get("model") or "unknown",
                    "usage": _usage(u),
                }
            )
    return out


def ccusage_rule(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines ccusage counts: the first of each (message id, request id); all lines lacking either."""
    seen: set[str] = set()
    kept = []
    for x in lines:
        if x["id"] and x["request"]:
            key = f"{x['id']}:{x['request']}"
            if key in seen:
                continue
            seen.add(key)
        kept.append(x)
    return kept


def explain(
    model: str, lines: list[dict[str, Any]], kept: list[dict[str, Any]], refused: set[str]
) -> dict[str, tuple[list[int], str]]:
    """Per rule: ours − ccusage per field it accounts for, and one message id as the example."""
    by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for x in lines:
        if x["model"] == model and x["id"]:
            by_id[x["id"]].append(x)
    kept_ids: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for x in kept:
        if x["model"] == model and x["id"]:
            kept_ids[x["id"]].append(x)
    out: dict[str, tuple[list[int], str]] = {}

    def add(rule: str, delta: list[int], mid: str) -> None:
        d, ex = out.get(rule, ([0, 0, 0, 0], mid))
        out[rule] = ([a + b for a, b in zip(d, delta, strict=True)], ex)

    for mid, rows in by_id.items():
        final = rows[-1]["usage"]  # the message's last snapshot, in its file
        counted = kept_ids.get(mid, [])
        theirs = [sum(r["usage"][i] for r in counted) for i in range(4)]
        if all(r["file"] in refused for r in rows):
            add("refused", [-t for t in theirs], mid)
            continue
        if not counted:
            continue
        delta = [final[i] - theirs[i] for i in range(4)]
        if not any(delta):
            continue
        rule = "no-request-id" if any(not r["request"] for r in counted) else "first-snapshot"
        add(rule, delta, mid)
    return out


def catalog_cost(model: str, kept: list[dict[str, Any]]) -> float | None:
    """Our catalog's price of the lines ccusage counted for *model*."""
    from agentminutes import timestamps  # noqa: F401  (the same install as the CLI's)
    from agentminutes.usage.prices import Pricer, Tokens

    tokens = []
    for x in kept:
        if x["model"] != model:
            continue
        i, o, cw, cr = x["usage"]
        tokens.append(Tokens(0, i + cw + cr, o, cr, cw, None))
    priced = Pricer().price(model, "claude-code", tokens)
    return float(priced.cost) if priced.cost is not None else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--ccusage", help="the ccusage binary (default: npm install " + CCUSAGE + ")")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        binary = args.ccusage
        if binary is None:
            npm_dir = Path(tmp) / "npm"
            npm_dir.mkdir()
            subprocess.run(["npm", "install", "--silent", CCUSAGE], cwd=npm_dir, check=True)
            binary = str(npm_dir / "node_modules" / ".bin" / "ccusage")
        home = Path(tmp) / "home"
        projects = build_home(args.corpus, home)
        theirs = run_ccusage(binary, home)
        ours, errors = run_ours(projects)
        lines = raw_messages(projects)
        kept = ccusage_rule(lines)
        sim: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for x in kept:
            sim[x["model"]] = [a + b for a, b in zip(sim[x["model"]], x["usage"], strict=True)]
        reproduced = all([theirs[m][f] for f in FIELDS] == sim[m] for m in theirs)
        print(f"ccusage {CCUSAGE.split('@')[1]} (--offline) vs agentminutes usage, {args.corpus}")
        print(
            f"ccusage's counting rule re-implemented: {'reproduces' if reproduced else 'DOES NOT reproduce'} its totals for every model"
        )
        print(f"files we refuse (an error each): {len(errors)}")
        print()
        head = (
            f"{'model':28} {'field':11} {'ccusage':>12} {'ours':>12} {'ours-cc':>11}  explained by"
        )
        print(head)
        print("-" * len(head))
        unexplained = 0
        for model in sorted(set(theirs) | set(ours)):
            t = theirs.get(model, dict.fromkeys(FIELDS, 0))
            o = ours.get(model, dict.fromkeys(FIELDS, 0))
            rules = explain(model, lines, kept, set(errors))
            for i, f in enumerate(FIELDS):
                diff = o[f] - t[f]
                parts = [f"{rule} {d[i]:+,} (e.g. {ex})" for rule, (d, ex) in rules.items() if d[i]]
                left = diff - sum(d[i] for d, _ in rules.values())
                if left:
                    parts.append(f"UNEXPLAINED {left:+,}")
                    unexplained += 1
                mark = "; ".join(parts) if diff else "equal"
                print(f"{model:28} {f:11} {t[f]:>12,} {o[f]:>12,} {diff:>+11,}  {mark}")
        print()
        head = f"{'model':28} {'ccusage $':>10} {'ours $':>10} {'our price of ccusage tokens $':>30} {'vs ccusage':>10}"
        print(head)
        print("-" * len(head))
        for model in sorted(set(theirs) | set(ours)):
            tc = theirs.get(model, {}).get("cost")
            oc = ours.get(model, {}).get("cost")
            status = ours.get(model, {}).get("status", "")
            mine = catalog_cost(model, kept) if model in theirs else None
            ratio = (
                f"{(mine / tc - 1) * 100:+.2f}%"
                if mine and tc
                else ("ccusage $0" if tc == 0 else "")
            )
            oc_text = f"{oc:.4f}" if oc is not None else status
            tc_text = f"{tc:.4f}" if tc is not None else "-"
            mine_text = f"{mine:.4f}" if mine is not None else "-"
            print(f"{model:28} {tc_text:>10} {oc_text:>10} {mine_text:>30} {ratio:>10}")
        print()
        print(f"unexplained token differences: {unexplained}")
        return 1 if unexplained or not reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
