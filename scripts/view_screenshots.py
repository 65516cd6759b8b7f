#!/usr/bin/env python3
"""The README's pictures of ``view`` and ``compare``, made again from the fixtures.

Usage::

    python scripts/view_screenshots.py [--out docs/img]

Writes three PNGs, each taken by a real headless Chromium (``tests/browser.py``):

* ``view-terminal.png``: ``agentminutes view`` of a Claude Code fixture as a
  terminal shows it (rich's own SVG export of the same console output, 100
  columns, the first turns);
* ``view-html.png``: the top of its ``view --html`` page, one turn's tool call
  opened;
* ``compare.png``: ``compare --html`` of that session and a pi session.
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from agentminutes.view.model import default_pricer, load_view  # noqa: E402
from agentminutes.view.terminal import renderables  # noqa: E402
from browser import Browser  # noqa: E402

SESSION = ROOT / "fixtures" / "claude-code" / "fasthooks-main.jsonl"
OTHER = ROOT / "fixtures" / "pi" / "constructed" / "v3-fork-tools.jsonl"


def terminal_svg(path: Path, lines: int) -> str:
    """``view``'s terminal output of *path* (its first *lines* lines) as rich's SVG."""
    from rich.console import Console

    view = load_view(str(path), pricer=default_pricer())
    probe = Console(record=True, width=100, file=io.StringIO(), force_terminal=True)
    for r in renderables(view):
        probe.print(r)
    text = probe.export_text(styles=True).splitlines()[:lines]
    console = Console(record=True, width=100, file=io.StringIO(), force_terminal=True)
    from rich.text import Text

    for line in text:
        console.print(Text.from_ansi(line), no_wrap=True, overflow="crop")
    svg = console.export_svg(title=f"agentminutes view {path.name}")
    # The export names a web font by URL; the picture is taken offline, with local fonts.
    return re.sub(r'url\("https?://[^"]*"\)\s*format\("[^"]*"\)\s*[,;]?', "", svg)


def main() -> int:
    """Make the three pictures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, Browser() as browser:
        svg = Path(tmp) / "terminal.svg"
        svg.write_text(terminal_svg(SESSION, 40), encoding="utf-8")
        browser.open(svg)
        browser.screenshot(out / "view-terminal.png", width=1000, height=760)
        page = Path(tmp) / "view.html"
        cli = [sys.executable, "-m", "agentminutes"]
        subprocess.run([*cli, "view", "--html", str(page), str(SESSION)], check=True)
        browser.open(page)
        browser.evaluate("document.querySelector('details.tool').open = true")
        browser.screenshot(out / "view-html.png", width=1100, height=900)
        compare = Path(tmp) / "compare.html"
        subprocess.run(
            [*cli, "compare", "--html", str(compare), str(SESSION), str(OTHER)], check=True
        )
        browser.open(compare)
        browser.screenshot(out / "compare.png", width=1100, height=1080)
        assert not browser.errors(), browser.errors()
    for name in ("view-terminal.png", "view-html.png", "compare.png"):
        print(f"{out / name}: {(out / name).stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
