"""A whole Claude Code home, cold and warm: ``agentminutes usage`` beside ccusage 20.

    python scripts/bench_home.py /work/shared/corpus/claude-code [--mb 600] [--runs 3]
        [--ccusage PATH] [--home DIR] [--keep]

Builds ``<home>/.claude/projects/`` from a folder of Claude Code transcripts
(the corpus's ``<repo>__<name>`` entries, or ``fixtures/claude-code``),
copied until the home holds about ``--mb`` megabytes. Each copy gets new
identities: a new file and session id, and its message ids and request ids
suffixed with the copy's number, so a copy is a session of its own to every
reader and no deduplication by id folds copies together.

Then, each as a fresh process, medians of ``--runs`` (the sides alternating):

* ours cold: ``usage --by day --format json --no-cache`` (worker processes, forked from
  it on Linux: their CPU time is counted in its own), and the same with ``--jobs 1``;
* ours warm: ``usage --by day --format json`` with the summary cache filled;
* ccusage 20 (native): ``ccusage daily --json --offline`` (``--ccusage`` names
  its launcher; installed with ``npm install ccusage@20.0.20
  @ccusage/ccusage-linux-x64@20.0.20``);

each with its wall time, CPU time and peak RSS (``wait4``), the ratios of ours
to ccusage's wall time and CPU time, and both token totals: ours, ccusage's, and an
independent count made here (each assistant message id once, its last line).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_IDS = re.compile(rb'"(id|requestId|sessionId|uuid|parentUuid|leafUuid)":"([^"]+)"')


def sources(folder: Path) -> list[tuple[Path, Path]]:
    """(file, its path relative to a project folder) of every transcript under *folder*."""
    out: list[tuple[Path, Path]] = []
    for path in sorted(folder.rglob("*.jsonl")):
        rel = path.relative_to(folder)
        repo, _, rest = rel.parts[0].partition("__")
        # A corpus entry <repo>__<session> is a folder holding the session's files (the
        # transcript and its session folder), or <repo>__<name>.jsonl a transcript alone:
        # either way its files go into the project folder <repo>, as Claude Code keeps them.
        inner = Path(*rel.parts[1:]) if len(rel.parts) > 1 else Path(rest or rel.parts[0])
        out.append((path, Path(repo) / inner))
    return out


def build(home: Path, folder: Path, megabytes: int) -> tuple[int, int]:
    """Fill *home* with renamed copies until it holds *megabytes*; (files, bytes) written."""
    projects = home / ".claude" / "projects"
    files = sources(folder)
    if not files:
        raise SystemExit(f"no .jsonl transcripts under {folder}")
    target = megabytes << 20
    total = count = copy = 0
    while total < target:
        copy += 1
        renames: dict[str, str] = {}
        for src, rel in files:
            data = src.read_bytes()

            def rename(
                m: re.Match[bytes], k: int = copy, renames: dict[str, str] = renames
            ) -> bytes:
                value = m.group(2).decode()
                new = renames.get(value)
                if new is None:
                    new = renames[value] = f"{value}-c{k}"
                return b'"%s":"%s"' % (m.group(1), new.encode())

            data = _IDS.sub(rename, data)
            stem = rel.stem
            name = renames.get(stem, f"{stem}-c{copy}") + ".jsonl"
            parts = list(rel.parts)
            parts[0] = f"{parts[0]}-c{copy}"
            parts = [renames.get(p, p) for p in parts[:-1]] + [name]
            dest = projects.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            total += len(data)
            count += 1
            if total >= target:
                break
    return count, total


def independent_count(home: Path) -> dict[str, int]:
    """Token totals with each assistant message id counted once (its last line wins).

    A file whose first line is no JSON is left out, as agentminutes refuses it (an
    error line names it; ccusage reads past such lines silently).
    """
    last: dict[str, dict[str, int]] = {}
    for path in (home / ".claude" / "projects").rglob("*.jsonl"):
        with path.open("rb") as f:
            try:
                json.loads(f.readline())
            except ValueError:
                continue
            f.seek(0)
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                msg = rec.get("message") if isinstance(rec, dict) else None
                if not isinstance(msg, dict) or rec.get("type") != "assistant":
                    continue
                usage = msg.get("usage")
                if not isinstance(usage, dict) or msg.get("model") == "<synthetic>":
                    continue
                # A message without an id is a request of its own, each line once.
                key = str(msg.get("id") or f"{path}:{len(last)}")
                last[key] = {
                    k: int(usage.get(k) or 0)
                    for k in (
                        "input_tokens",
                        "output_tokens",
                        "cache_read_input_tokens",
                        "cache_creation_input_tokens",
                    )
                }
    totals = dict.fromkeys(
        ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
        0,
    )
    for usage in last.values():
        for k, v in usage.items():
            totals[k] += v
    return totals


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """(wall s, CPU s, peak RSS MB, stdout) of *cmd* run as a fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{cmd[0]} failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, out


def ours_totals(out: bytes) -> dict[str, int]:
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    rows = json.loads(out)
    return {k: sum(int(row.get(k) or 0) for row in rows) for k in keys}


def ccusage_totals(out: bytes) -> dict[str, int]:
    doc = json.loads(out)
    t = doc.get("totals", {})
    return {
        "input_tokens": int(t.get("inputTokens", 0)),
        "output_tokens": int(t.get("outputTokens", 0)),
        "cache_read_input_tokens": int(t.get("cacheReadTokens", 0)),
        "cache_creation_input_tokens": int(t.get("cacheCreationTokens", 0)),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, help="a folder of Claude Code transcripts")
    ap.add_argument("--mb", type=int, default=600)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--ccusage", default=shutil.which("ccusage") or "")
    ap.add_argument("--agentminutes", default=str(Path(sys.executable).with_name("agentminutes")))
    ap.add_argument("--home", type=Path, help="build (or reuse) the home here")
    ap.add_argument("--keep", action="store_true", help="keep the home built in a temp folder")
    args = ap.parse_args()

    home = args.home or Path(tempfile.mkdtemp(prefix="bench-home-"))
    projects = home / ".claude" / "projects"
    if projects.is_dir() and any(projects.iterdir()):
        print(f"home: reusing {home}")
    else:
        files, size = build(home, args.source, args.mb)
        print(f"home: {home}: {files} transcripts, {size / 1e6:.0f} MB")
    cache = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "TZ": "UTC",
        "XDG_CACHE_HOME": str(cache),
        "LANG": "C.UTF-8",
    }
    ours = [args.agentminutes, "usage", "--by", "day", "--format", "json"]
    sides = {
        "ours cold": [*ours, "--no-cache"],
        "ours cold -j1": [*ours, "--no-cache", "--jobs", "1"],
        "ours warm": ours,
    }
    if args.ccusage:
        sides["ccusage 20"] = [args.ccusage, "daily", "--json", "--offline"]
    subprocess.run(ours, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results: dict[str, list[tuple[float, float, int]]] = {k: [] for k in sides}
    outputs: dict[str, bytes] = {}
    for _ in range(args.runs):
        for name, cmd in sides.items():
            wall, cpu, rss, out = timed(cmd, env)
            results[name].append((wall, cpu, rss))
            outputs[name] = out
    print(
        "load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg())
    )
    med = {k: statistics.median(w for w, _, _ in v) for k, v in results.items()}
    for name, runs in results.items():
        print(
            f"{name:14} wall {med[name]:6.2f} s  cpu {statistics.median(c for _, c, _ in runs):6.2f} s"
            f"  peak RSS {max(r for _, _, r in runs):5d} MB"
        )
    if "ccusage 20" in med:
        cpu = {k: statistics.median(c for _, c, _ in v) for k, v in results.items()}
        for name in ("ours cold", "ours warm"):
            print(
                f"{name} / ccusage 20: {med[name] / med['ccusage 20']:.2f}x wall,"
                f" {cpu[name] / cpu['ccusage 20']:.2f}x CPU"
            )
    print("tokens (input, output, cache read, cache write):")
    print("  independent", list(independent_count(home).values()))
    try:
        print("  ours       ", list(ours_totals(outputs["ours cold"]).values()))
    except (ValueError, KeyError) as exc:
        print("  ours: unreadable", exc)
    if "ccusage 20" in outputs:
        try:
            print("  ccusage 20 ", list(ccusage_totals(outputs["ccusage 20"]).values()))
        except (ValueError, KeyError) as exc:
            print("  ccusage: unreadable", exc)
    shutil.rmtree(cache, ignore_errors=True)
    if not args.home and not args.keep:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
