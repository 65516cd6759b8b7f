#!/usr/bin/env python3
"""Convert every transcript of a corpus strictly, with detection, and report what fails.

Usage:
  python scripts/check_corpus.py [--all] CORPUS_DIR [CORPUS_DIR ...]

A corpus directory holds transcripts and a ``MANIFEST.tsv`` whose columns
include ``file`` and ``genuine_or_synthetic`` (the layout of the team's shared
corpus). By default only files marked ``genuine`` are checked; ``--all`` checks
every transcript the manifest lists. For each file it runs detection and a strict
conversion through the library (no ``--permissive``) and counts the events by
kind; a file fails when it raises or yields ``unknown`` events, and with
``--require-messages`` also when a session has no user or no assistant message
(otherwise that is only noted: some real sessions hold none). An SQLite database's
``-wal`` or ``-shm`` file is checked by reading its database, as SQLite reads them
together. A file inside a folder source (a Cline task's ``ui_messages.json``, a file of
an OpenCode storage tree) converts as the session of its folder. The last line is the
summary; the exit status is 1 if anything failed.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

import agentminutes
from agentminutes import AgentminutesError


def rows(corpus: Path, every: bool) -> list[Path]:
    manifest = corpus / "MANIFEST.tsv"
    out = []
    with manifest.open(newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            kind = row.get("genuine_or_synthetic", "")
            if kind == "sidecar":
                continue
            if every or kind == "genuine":
                out.append(corpus / row["file"])
    return out


def check(path: Path, require_messages: bool) -> tuple[bool, str]:
    for suffix in ("-wal", "-shm"):
        database = path.with_name(path.name[: -len(suffix)])
        if path.name.endswith(suffix) and database.is_file():
            # An SQLite database's WAL or its index: no transcript alone, read with its database.
            good, text = check(database, require_messages)
            return good, f"read with its database {database.name}: {text}"
    try:
        harness, confidence = agentminutes.detect(path)
        sessions = list(agentminutes.iter_sessions(path))
    except AgentminutesError as exc:
        return False, f"error: {exc}"
    kinds: Counter[str] = Counter()
    bare = 0
    for session in sessions:
        counts = Counter(e.kind for e in session.events)
        kinds.update(counts)
        bare += not (counts["user_message"] and counts["assistant_message"])
    problems, notes = [], []
    if kinds["unknown"]:
        problems.append(f"{kinds['unknown']} unknown events")
    if bare:
        (problems if require_messages else notes).append(
            f"{bare} session(s) without a user or an assistant message"
        )
    summary = (
        f"{harness} {confidence}, {len(sessions)} session(s), {sum(kinds.values())} events "
        f"({kinds['user_message']} user, {kinds['assistant_message']} assistant, "
        f"{kinds['tool_call']} tool calls)"
    )
    extra = problems + notes
    return not problems, summary + ("; " + ", ".join(extra) if extra else "")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--all", action="store_true", help="check synthetic files too")
    ap.add_argument(
        "--require-messages",
        action="store_true",
        help="fail a session with no user or no assistant message",
    )
    ap.add_argument("corpora", nargs="+", type=Path)
    a = ap.parse_args()
    ok = bad = 0
    for corpus in a.corpora:
        for path in rows(corpus, a.all):
            good, text = check(path, a.require_messages)
            ok += good
            bad += not good
            print(f"{'ok  ' if good else 'FAIL'} {path.relative_to(corpus.parent)}: {text}")
    print(f"check_corpus: {ok} ok, {bad} failed of {ok + bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
