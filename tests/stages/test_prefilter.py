"""The RE2 prefilter: it flags every part a gate hits, so redaction is the same with it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentminutes
from agentminutes.stages import redact
from agentminutes.stages.detectors import DETECTORS, Detector, DetectorSet
from agentminutes.stages.prefilter import Prefilter
from agentminutes.stages.redact import Redaction
from conftest import FIXTURES, transcripts
from planting import KINDS, USER_PATTERN, plant

KEY = b"test-key"
PLANTED = (
    "claude-code/fasthooks-main.jsonl",
    "codex/nitta-dotfiles/rollout-2025-09-19T01-53-52-1d480e7c-6376-47af-8312-9a0cf1eef4a6.jsonl",
    "copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
)
UNKNOWN: dict[str, dict[str, Any]] = {
    "claude-code": {"type": "planted_record", "uuid": "p-1", "text": "{secrets}"},
    "codex": {"timestamp": "2025-09-19T02:00:00Z", "type": "planted_record", "payload": {}},
    "copilot": {"type": "planted.record", "id": "p-1", "data": {"text": "{secrets}"}},
}


def _stage(load: str, *, overlap: bool = False) -> Redaction:
    stage = redact(patterns=[USER_PATTERN], key=KEY)
    redactor = stage.redactor
    redactor.prefilter = Prefilter(redactor.detectors.prefilter, load=load)
    return Redaction(redactor, overlap=overlap)


def _redacted(path: Path, stage: Redaction) -> list[Any]:
    enc = msgspec.json.Encoder()
    events = agentminutes.iter_events(path, permissive=True, keep_raw=True, stages=[stage])
    return [json.loads(enc.encode(e)) for e in events]


@pytest.mark.parametrize("fixture", PLANTED)
def test_planted_transcripts_redact_the_same_with_the_prefilter(
    fixture: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "planted.jsonl"
    unknown = dict(UNKNOWN[fixture.split("/")[0]])
    if "payload" in unknown:
        unknown["payload"] = {"text": "{secrets}"}
    planted = plant(FIXTURES / fixture, transcript, unknown)
    calls: list[int] = []
    prefiltered = _stage("always", overlap=True)
    start = prefiltered.redactor.prefilter.start

    def counted(blob: bytes, starts: Any, *, background: bool = False) -> Any:
        result = start(blob, starts, background=background)
        calls.append(background)
        return result

    prefiltered.redactor.prefilter.start = counted  # type: ignore[method-assign]
    plain = _stage("never")
    with_prefilter = _redacted(transcript, prefiltered)
    assert calls
    assert all(calls)
    assert with_prefilter == _redacted(transcript, plain)
    assert prefiltered.counts == plain.counts
    assert set(plain.counts) == set(KINDS)
    assert planted.left_in(json.dumps(with_prefilter)) == []


def _gate_hits(ds: DetectorSet, parts: list[bytes]) -> tuple[set[int], list[int] | None]:
    """The parts a Python gate hits in the joined blob, and those the prefilter flags."""
    blob = b"\0".join(parts)
    starts, pos = [], 0
    for part in parts:
        starts.append(pos)
        pos += len(part) + 1
    hit = set()
    for gate in ds.bytes.gates:
        for m in gate.finditer(blob):
            hit.add(max(i for i, s in enumerate(starts) if s <= m.start()))
    return hit, Prefilter(ds.prefilter, load="always").candidates(blob, starts)


def test_the_prefilter_flags_every_part_a_gate_hits() -> None:
    """Every kind of secret in the contexts the gates' lookarounds look at, part starts
    included (a lookbehind there sees the NUL and the part before it), and real texts."""
    ds = DetectorSet(DETECTORS)
    plant_rng = random.Random(7)
    secrets = [make(plant_rng)[0] for make in KINDS.values()]
    secrets += ["@h", "x@", "ab@c", "/é@", "é@", "cwd: 1", "Cwd=2", "wd = 3", "pwd:4", "PWD=5"]
    secrets += ["1:AA" + "b" * 33, "\\nsk-" + "a" * 8, "(sk-" + "a" * 8, "key'\t:="]
    parts: list[bytes] = []
    for s in secrets:
        for before in ("", "a", "/", "\\n", "\\\\", "é", " ", "c", "9:", "s"):
            parts += [before.encode(), s.encode(), (before + s).encode()]
            parts += [(s + before).encode(), (before + s + before).encode()]
    hit, flagged = _gate_hits(ds, parts)
    assert flagged is not None
    assert len(hit) > len(parts) // 3
    assert hit <= set(flagged)
    real = [
        line
        for harness in ("claude-code", "codex", "copilot", "antigravity")
        for path in transcripts(harness)[:6]
        for line in path.read_bytes().splitlines()
    ]
    hit, flagged = _gate_hits(ds, real)
    assert flagged is not None
    assert hit
    assert hit <= set(flagged)
    # And it is a filter: most real lines hold no gate hit, and it passes most of them over.
    assert len(flagged) < len(real) // 2


def test_a_prefilter_with_a_lookaround_is_refused() -> None:
    bad = Detector("x", "x", r"zz[0-9]+", anchors=("zz",), prefilter=r"zz(?=[0-9])")
    with pytest.raises(ValueError, match="lookaround"):
        DetectorSet([bad])


def test_without_pyarrow_every_part_is_scanned_and_the_same_is_redacted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    transcript = tmp_path / "planted.jsonl"
    plant(FIXTURES / PLANTED[0], transcript, UNKNOWN["claude-code"])
    expected = _redacted(transcript, _stage("never"))
    monkeypatch.setitem(sys.modules, "pyarrow.compute", None)
    stage = _stage("always", overlap=True)
    assert stage.redactor.prefilter.candidates(b"x" * 100_000, [0]) is None
    assert _redacted(transcript, stage) == expected


def test_export_imports_pyarrow_for_the_prefilter_once_a_transcript_is_large() -> None:
    """``load="large"`` in a fresh process: no import for the first blobs, then RE2."""
    code = """
import subprocess
import sys
from agentminutes.stages.detectors import DETECTORS, DetectorSet
from agentminutes.stages.prefilter import IMPORT_AFTER_BYTES, Prefilter
pf = Prefilter(DetectorSet(DETECTORS).prefilter, load="large")
blob = b"Authorization: Bearer " + b"x" * (1 << 20)
seen = []
for _ in range(IMPORT_AFTER_BYTES // len(blob) + 1):
    seen.append((pf.candidates(blob, [0]), "pyarrow.compute" in sys.modules))
print(seen[0], seen[-1])
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["(None,", "False)", "([0],", "True)"]


def test_the_export_stage_chain_redacts_with_the_prefilter_overlapped() -> None:
    from agentminutes.export.runner import ExportOptions

    (stage,) = [s for s in ExportOptions().stages() if isinstance(s, Redaction)]
    assert stage.overlap
    assert stage.redactor.prefilter.load == "large"
