"""Detection across harnesses: every fixture is recognized as its own harness, and only that."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentminutes
from agentminutes.errors import DetectError
from agentminutes.harness import ADAPTERS, SNIFF_BYTES, Confidence
from conftest import FIXTURES, fixture_id

#: Fixture folders are named after the harness that wrote their files.
CASES = [
    (folder.name, path)
    for folder in sorted(FIXTURES.iterdir())
    if folder.is_dir() and folder.name not in ("golden", "sessions")
    for path in sorted(folder.rglob("*"))
    if path.is_file()
    and path.suffix in (".jsonl", ".json", ".log", ".zip", ".db")
    and not path.name.endswith(".meta.json")
    and path.name != "journal.jsonl"  # a Claude Code workflow run's journal: a sidecar
]


@pytest.mark.parametrize(("harness", "path"), CASES, ids=[fixture_id(p) for _, p in CASES])
def test_each_fixture_is_detected_as_its_harness(harness: str, path: Path) -> None:
    name, confidence = agentminutes.detect(path)
    assert name == harness
    assert confidence in ("certain", "possible")


@pytest.mark.parametrize(("harness", "path"), CASES, ids=[fixture_id(p) for _, p in CASES])
def test_no_other_line_adapter_claims_it(harness: str, path: Path) -> None:
    head = path.read_bytes()[:SNIFF_BYTES]
    for cls in ADAPTERS:
        if cls.name != harness:
            assert cls.sniff(head) == Confidence.NO_MATCH, cls.name


def test_a_file_of_no_known_harness_names_the_harnesses_tried(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(b'{"hello": "world"}\n')
    with pytest.raises(DetectError) as err:
        agentminutes.detect(path)
    for cls in ADAPTERS:
        assert cls.name in str(err.value)
