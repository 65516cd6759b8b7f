#!/usr/bin/env python3
"""Print a pip constraints file pinning every runtime dependency to its declared floor.

    python scripts/floors.py > floors.txt
    pip install -c floors.txt -e . --group test

``.ci/run`` installs the package this way too, so the lowest versions
``pyproject.toml`` admits (``name>=X`` becomes ``name==X``, environment markers
kept) are tested as well as the newest. Only ``[project].dependencies`` are
pinned: the test tools stay at their newest. A dependency without a ``>=``
floor fails the script: an unbounded one cannot be tested at its lowest.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*"
    r"(?P<specs>[^;]*?)\s*(?:;\s*(?P<marker>.+))?$"
)


def floors(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``name==floor`` (with its marker) for each runtime dependency of *pyproject*."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    pins = []
    # The completion extra's typer too: every command line the tests run goes through it.
    extras = project.get("optional-dependencies", {})
    for requirement in [*project.get("dependencies", []), *extras.get("completion", [])]:
        match = _REQUIREMENT.match(requirement)
        floor = None
        if match is not None:
            for spec in match["specs"].split(","):
                spec = spec.strip()
                if spec.startswith(">="):
                    floor = spec[2:].strip()
        if match is None or floor is None:
            raise SystemExit(f"floors: {requirement!r} declares no >= floor")
        pin = f"{match['name']}=={floor}"
        if match["marker"]:
            pin += f"; {match['marker']}"
        pins.append(pin)
    return pins


def main() -> int:
    """Write the constraints to stdout."""
    sys.stdout.write("".join(pin + "\n" for pin in floors()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
