#!/usr/bin/env python3
"""``view`` on every file of a corpus that ``convert`` reads: text, Markdown and the HTML page.

Usage:
  python scripts/check_view_corpus.py [--html-dir DIR] CORPUS_DIR [CORPUS_DIR ...]

Each file under the folders (``MANIFEST.tsv`` and ``README`` files aside) is
first converted as ``convert`` converts it (every session of a data export or a
database); a file that does not convert is counted apart, as not ``view``'s to
show. Each session that converts is then laid out as ``view`` lays it out:
plain text, Markdown, and the redacted HTML page (written to ``--html-dir`` to be
looked at, or thrown away). A session fails when any of the three raises, or
when its page or text lacks one of its tool calls (by name) or its final answer.
The last line is the summary; the exit status is 1 if anything failed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from agentminutes import AgentminutesError, iter_sessions
from agentminutes.stages import build_stages
from agentminutes.stages.redact import redact
from agentminutes.view.model import default_pricer, load_view
from agentminutes.view.page import write_page
from agentminutes.view.terminal import render_markdown, render_text


def files(corpora: list[str]) -> list[Path]:
    """Every candidate transcript under *corpora*, sorted."""
    skip = ("MANIFEST.tsv", "README.md", "README")
    return [
        path
        for corpus in corpora
        for path in sorted(Path(corpus).rglob("*"))
        if path.is_file() and path.name not in skip
    ]


def squash(text: str) -> str:
    """*text* with every run of white space one space."""
    return re.sub(r"\s+", " ", text).strip()


def main() -> int:
    """Check every file; print failures and the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpora", nargs="+")
    parser.add_argument("--html-dir", default="")
    args = parser.parse_args()
    pricer = default_pricer()
    out_dir = args.html_dir or tempfile.mkdtemp(prefix="view-corpus-")
    counts = {"files": 0, "not converted": 0, "sessions": 0, "failed": 0, "calls": 0}
    biggest = (0.0, "")
    for path in files(args.corpora):
        counts["files"] += 1
        try:
            sessions = [(s.meta.session_id, len(s.events)) for s in iter_sessions(path)]
        except (AgentminutesError, OSError):
            counts["not converted"] += 1
            continue
        several = len(sessions) > 1
        for ident, _ in sessions:
            counts["sessions"] += 1
            start = time.monotonic()
            try:
                chain = build_stages(redaction=redact())
                view = load_view(
                    str(path),
                    conversation=ident if several else None,
                    stages=chain,
                    pricer=pricer,
                )
                view.redaction = "checked"
                text = render_text(view)
                render_markdown(view)
                page = os.path.join(out_dir, f"{counts['sessions']:04d}.html")
                write_page(view, page)
                html = Path(page).read_text(encoding="utf-8")
                if not args.html_dir:
                    os.unlink(page)
            except Exception as exc:
                counts["failed"] += 1
                print(f"FAIL {path} {ident}: {type(exc).__name__}: {exc}")
                continue
            names = [s.name for s in view.main.tool_steps() if s.call is not None]
            counts["calls"] += len(names)
            missing = [n for n in set(names) if f"● {n}" not in text and n not in html]
            answer = squash(view.stats.final_answer)[:200]
            if missing or (answer and answer not in squash(text)):
                counts["failed"] += 1
                print(f"FAIL {path} {ident}: missing calls {missing[:5]} or the final answer")
            took = time.monotonic() - start
            if took > biggest[0]:
                biggest = (took, f"{path} ({os.path.getsize(path) / 1e6:.1f} MB)")
    print(
        f"{counts['files']} files: {counts['not converted']} not converted (not view's to show); "
        f"{counts['sessions']} sessions shown as text, Markdown and HTML with "
        f"{counts['calls']} tool calls, {counts['failed']} failed; slowest {biggest[0]:.1f} s: "
        f"{biggest[1]}"
    )
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
