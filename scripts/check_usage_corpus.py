"""Check, file by file, that ``usage`` counts what ``convert`` totals say (raw and normalized).

    python scripts/check_usage_corpus.py /work/shared/corpus

For every transcript of every harness that records usage, the summary ``usage``
builds (the same code path, without the cross-file deduplication) is compared
with ``convert``'s ``totals``: the raw sums field by field, and the normalized
view with ``otel_usage`` of the totals. Codex files whose ``token_count``
records are re-emitted with unchanged totals differ by exactly those records'
``last_token_usage`` (``convert`` adds them again); the script checks that and
reports it apart. Copilot CLI transcripts have no ``convert`` totals (the
reference records no Copilot usage): their summary is compared with the
``session.shutdown`` metrics read straight from the JSON lines. Prints one line
per harness and every file that differs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import agentminutes
from agentminutes.errors import AgentminutesError
from agentminutes.harness import SNIFF_BYTES, detect
from agentminutes.schema import TokenUsage
from agentminutes.schema.usage import USAGE_RULES, otel_usage
from agentminutes.usage.summary import summarize


def _replayed(path: Path) -> tuple[int, int, int]:
    prev = None
    out = [0, 0, 0]
    for line in path.read_bytes().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        payload = (rec.get("payload") or {}) if isinstance(rec, dict) else {}
        if not isinstance(payload, dict) or payload.get("type") != "token_count":
            continue
        info = payload.get("info") or {}
        total = info.get("total_token_usage")
        if not total:
            continue
        if total == prev:
            last = info.get("last_token_usage") or {}
            out[0] += last.get("input_tokens", 0)
            out[1] += last.get("output_tokens", 0)
            out[2] += last.get("cached_input_tokens", 0)
        prev = total
    return out[0], out[1], out[2]


def _copilot_shutdowns(path: Path) -> tuple[int, int, int, int] | None:
    """The sums of every session.shutdown's modelMetrics usage, or of its session-wide
    tokenDetails where no model has usage (None: no shutdown with usage).

    Only for files with one shutdown per model and no assistant.usage records, where the
    rule is a plain sum; other files are reported as not checked."""
    out = [0, 0, 0, 0]
    found = False
    for line in path.read_bytes().splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        if rec.get("type") == "assistant.usage":
            return None
        if rec.get("type") != "session.shutdown":
            continue
        data = rec.get("data") or {}
        per_model = False
        for metric in (data.get("modelMetrics") or {}).values():
            usage = metric.get("usage") if isinstance(metric, dict) else None
            if not usage:
                continue
            found = per_model = True
            out[0] += usage.get("inputTokens", 0)
            out[1] += usage.get("outputTokens", 0)
            out[2] += usage.get("cacheReadTokens", 0)
            out[3] += usage.get("cacheWriteTokens", 0)
        details = data.get("tokenDetails")
        if not per_model and isinstance(details, dict):
            # Session-wide counts: input is fresh input, the cache parts apart.
            n = {k: (v or {}).get("tokenCount", 0) for k, v in details.items()}
            found = True
            out[0] += n.get("input", 0) + n.get("cache_read", 0) + n.get("cache_write", 0)
            out[1] += n.get("output", 0)
            out[2] += n.get("cache_read", 0)
            out[3] += n.get("cache_write", 0)
    return (out[0], out[1], out[2], out[3]) if found else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", type=Path)
    args = ap.parse_args()
    bad = 0
    for folder in sorted(p for p in args.corpus.iterdir() if p.is_dir()):
        stats = {
            "files": 0,
            "equal": 0,
            "codex_replays": 0,
            "copilot_shutdowns": 0,
            "differ": 0,
            "unparsed": 0,
        }
        for path in sorted(
            p for p in folder.rglob("*") if p.is_file() and p.name != "MANIFEST.tsv"
        ):
            try:
                with path.open("rb") as f:
                    cls, _ = detect(f.read(SNIFF_BYTES))
            except (AgentminutesError, OSError):
                continue
            harness = cls.name
            if harness not in USAGE_RULES:
                continue
            try:
                session = agentminutes.load(path, harness=harness, permissive=True)
            except AgentminutesError:
                stats["unparsed"] += 1
                continue
            stats["files"] += 1
            summary = summarize(str(path), harness)
            raw = TokenUsage(input_tokens=0, output_tokens=0)
            otel_in = otel_out = 0
            for r in summary.requests:
                raw.add(r.raw())
                o = r.otel()
                if o is not None:
                    otel_in += o.input_tokens
                    otel_out += o.output_tokens
            if harness == "copilot" and session.totals is None:
                shutdowns = _copilot_shutdowns(path)
                got = (
                    raw.input_tokens,
                    raw.output_tokens,
                    raw.cache_read_input_tokens,
                    raw.cache_creation_input_tokens,
                )
                if shutdowns is None and not summary.requests:
                    stats["equal"] += 1  # no usage recorded, none counted
                elif shutdowns == got and (otel_in, otel_out) == (got[0], got[1]):
                    stats["copilot_shutdowns"] += 1
                    print(
                        f"  {folder.name}: {path.name}: no convert totals (as the reference); "
                        f"usage {got} = the session.shutdown metrics"
                    )
                else:
                    stats["differ"] += 1
                    bad += 1
                    print(
                        f"  {folder.name}: {path.name}: DIFFERS usage {got} vs shutdowns {shutdowns}"
                    )
                continue
            t = session.totals or TokenUsage(input_tokens=0, output_tokens=0)
            want = (
                t.input_tokens,
                t.output_tokens,
                t.cache_read_input_tokens,
                t.cache_creation_input_tokens,
            )
            got = (
                raw.input_tokens,
                raw.output_tokens,
                raw.cache_read_input_tokens,
                raw.cache_creation_input_tokens,
            )
            norm = otel_usage(t, harness)
            assert norm is not None
            if got == want and (otel_in, otel_out) == (norm.input_tokens, norm.output_tokens):
                stats["equal"] += 1
                continue
            if harness == "codex":
                rep = _replayed(path)
                if (want[0] - got[0], want[1] - got[1], want[2] - got[2]) == rep:
                    stats["codex_replays"] += 1
                    print(
                        f"  {folder.name}: {path.name}: convert counts {rep[0] + rep[1]:,} tokens of re-emitted token_count records again; usage once"
                    )
                    continue
            stats["differ"] += 1
            bad += 1
            print(f"  {folder.name}: {path.name}: DIFFERS usage {got} vs convert {want}")
        if stats["files"] or stats["unparsed"]:
            print(
                f"{folder.name}: {stats['files']} files with usage rules: {stats['equal']} equal (raw and otel), "
                f"{stats['codex_replays']} Codex files differing by exactly their re-emitted records, "
                f"{stats['copilot_shutdowns']} Copilot files equal to their shutdown metrics, "
                f"{stats['differ']} differing, {stats['unparsed']} not parsed by convert either"
            )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
