"""A temporary home with each harness's session folders, laid out from the fixtures.

``fixtures/sessions/home.tsv`` lists the home's files: a path under the home,
where its bytes come from (a fixture path under ``fixtures/``, ``text:`` and
the content with ``\\n`` for newlines, or ``empty:``) and its modification
time (RFC 3339). The session tests build this home and compare what we list
with ``fixtures/sessions/golden.json``, which ``scripts/make_session_goldens.py``
made by running the reference CLI on the same home.
"""

from __future__ import annotations

import csv
import os
import shutil
from datetime import datetime
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LAYOUT = FIXTURES / "sessions" / "home.tsv"
GOLDEN = FIXTURES / "sessions" / "golden.json"


def layout() -> list[tuple[str, str, str]]:
    """The rows of ``home.tsv``: (path under the home, source, mtime)."""
    with open(LAYOUT, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, delimiter="\t") if r and not r[0].startswith("#")]
    return [(r[0], r[1], r[2]) for r in rows[1:]]


def build_home(home: Path) -> Path:
    """Lay the session folders out under *home* (created); return it."""
    for rel, source, mtime in layout():
        dest = home / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.startswith("text:"):
            dest.write_text(source[5:].replace("\\n", "\n"), encoding="utf-8")
        elif source == "empty:":
            dest.write_bytes(b"")
        else:
            shutil.copyfile(FIXTURES / source, dest)
        ns = int(datetime.fromisoformat(mtime.replace("Z", "+00:00")).timestamp()) * 10**9
        os.utime(dest, ns=(ns, ns))
    return home
