"""Our output equals the reference's, as JSON values, for every fixture with a golden.

The goldens in fixtures/golden/ were made by running the reference Go CLI
(agentminutes 0.8.0) on each fixture: see scripts/make_goldens.py. Fixtures
the reference rejects have no golden; their behaviour is pinned by the
adapter tests instead.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import FIXTURES, GOLDEN, convert_json, stats_json

# <transcript path, "/" written "__">.<verb>[.promote-<name>].json, as scripts/make_goldens.py
# names them; the transcript's own name may hold dots (".jsonl", "0.146.0").
_GOLDEN_NAME = re.compile(
    r"(?P<stem>.+)\.(?P<verb>convert|stats)(?:\.promote-(?P<promo>[\w-]+))?\.json"
)


def _goldens() -> list[tuple[Path, Path, str, list[str]]]:
    cases = []
    for golden in sorted(GOLDEN.rglob("*.json")):
        harness = golden.relative_to(GOLDEN).parts[0]
        m = _GOLDEN_NAME.fullmatch(golden.name)
        assert m is not None, f"golden named unlike make_goldens.py does: {golden}"
        transcript = FIXTURES / harness / m["stem"].replace("__", "/")
        promote = [f"{harness}:{m['promo']}"] if m["promo"] else []
        cases.append((transcript, golden, m["verb"], promote))
    return cases


CASES = _goldens()


@pytest.mark.parametrize(
    ("transcript", "golden", "verb", "promote"),
    CASES,
    ids=[str(c[1].relative_to(GOLDEN)) for c in CASES],
)
def test_matches_reference(transcript: Path, golden: Path, verb: str, promote: list[str]) -> None:
    assert transcript.exists(), f"golden without fixture: {golden}"
    expected = json.loads(golden.read_bytes())
    if verb == "convert":
        ours = convert_json(transcript, promote=promote)
    else:
        ours = stats_json(transcript, promote=promote)
    assert ours == expected


def test_there_are_goldens() -> None:
    assert len(CASES) >= 10
