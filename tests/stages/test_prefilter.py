"""The RE2 prefilter: it flags every part a pattern matches in, so redaction is the same with it."""

from __future__ import annotations

import dataclasses
import json
import random
import re
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


def _long_enough(secret: str, groups: dict[str, str | None]) -> bool:
    """What secret-assignment's prefilter takes from its check: a value of eight characters
    after a password's name, sixteen after any other (``random_looking``'s least)."""
    password = re.search(r"(?i)(?:word|wd|pass|pwd)$", groups.get("name") or "")
    return len(secret) >= (8 if password else 16)


def _matched(parts: list[bytes]) -> tuple[set[int], list[int] | None]:
    """The parts in which a detector's pattern matches for a gate hit (its check left out, so
    look-alikes count too; of secret-assignment's, only the value's length), and those the
    prefilter flags."""
    blob = b"\0".join(parts)
    starts, ends, pos = [], [], 0
    for part in parts:
        starts.append(pos)
        ends.append(pos + len(part))
        pos += len(part) + 1
    unchecked = DetectorSet(
        [
            dataclasses.replace(d, check=_long_enough if d.name == "secret-assignment" else None)
            for d in DETECTORS
        ]
    )
    matched = unchecked.flagged(blob, starts, ends)
    return matched, Prefilter(DetectorSet(DETECTORS).prefilter, load="always").candidates(
        blob, starts
    )


#: What a mutation puts in: the characters the patterns, fences and gates look at.
_EDITS = [*"aZ9_-.:=/@\\\"' \t\n\x0b>+!#$%&*?^|~`<(", "\\n", '\\"', "\\/", "é", "://"]


def _mutants(text: str, rng: random.Random, n: int) -> list[str]:
    """*n* copies of *text*, each with one to three characters inserted, deleted or replaced."""
    out = []
    for _ in range(n):
        t = text
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t) + 1)
            op = rng.randrange(3)
            if op == 0 or not t:
                t = t[:i] + rng.choice(_EDITS) + t[i:]
            elif op == 1:
                t = t[:i] + t[i + 1 :]
            else:
                t = t[:i] + rng.choice(_EDITS) + t[i + 1 :]
        out.append(t)
    return out


def test_the_prefilter_flags_every_part_a_pattern_matches_in() -> None:
    """Every kind of secret in the contexts the gates' lookarounds look at, part starts
    included (a lookbehind there sees the NUL and the part before it), look-alikes the
    checks reject, mutated secrets, and real texts."""
    plant_rng = random.Random(7)
    secrets = [make(plant_rng)[0] for make in KINDS.values()]
    secrets += ["@h", "x@", "ab@c", "/é@", "é@", "cwd: 1", "Cwd=2", "wd = 3", "pwd:4", "PWD=5"]
    secrets += ["1:AA" + "b" * 33, "\\nsk-" + "a" * 8, "(sk-" + "a" * 8, "key'\t:="]
    secrets += ["api_key =\x0b'aaaaaaaa", 'token:\n\\"bbbbbbbb', "db://u:p@h", "x+y://:p@h"]
    secrets += ["Basic \x0bQWxhZGRp", "Bearer\x0baaaaaaaaaaaaaaaa", "PASSWORD=hunter22"]
    # Secret-assignment's lengths, each side of the least its check takes.
    value = "q7Xv2Lp9Zr4Tn8Wk"
    boundary = [
        f"api_key={value}",
        f'"token": "{value}"',
        "db_password=Zq8!rT2#",
        "PASSWD: 'Zq8!rT2#'",
    ]
    secrets += boundary + [b[:-2] + b[-1] if b[-1] in "'\"" else b[:-1] for b in boundary]
    parts: list[bytes] = []
    for s in secrets:
        for before in ("", "a", "/", "\\n", "\\\\", "é", " ", "c", "9:", "s"):
            parts += [before.encode(), s.encode(), (before + s).encode()]
            parts += [(s + before).encode(), (before + s + before).encode()]
    # Near-misses: each secret (as the harnesses write it, and JSON-escaped) mutated, so
    # every fence, repeat and separator a pattern and its prefilter share is crossed.
    rng = random.Random(11)
    for s in secrets:
        for form in (s, json.dumps(s)[1:-1]):
            parts += [m.encode() for m in _mutants(form, rng, 150)]
    matched, flagged = _matched(parts)
    assert flagged is not None
    assert len(matched) > len(parts) // 5
    assert matched <= set(flagged)
    assert {parts.index(b.encode()) for b in boundary} <= matched
    # … and those lengths are the check's: the real set redacts each, not one shorter.
    shorter = [b[:-2] + b[-1] if b[-1] in "'\"" else b[:-1] for b in boundary]
    checked = DetectorSet(DETECTORS)
    assert all(checked.flagged(b.encode(), [0], [len(b)]) for b in boundary)
    assert not any(checked.flagged(b.encode(), [0], [len(b)]) for b in shorter)
    real = [
        line
        for harness in ("claude-code", "codex", "copilot", "antigravity")
        for path in transcripts(harness)[:6]
        for line in path.read_bytes().splitlines()
    ]
    matched, flagged = _matched(real)
    assert flagged is not None
    assert matched
    assert matched <= set(flagged)
    # And it is a filter: most real lines hold no pattern's match, and it passes most over.
    assert len(flagged) < len(real) // 4


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
    from agentminutes.export.command import ExportOptions

    (stage,) = [s for s in ExportOptions().stages() if isinstance(s, Redaction)]
    assert stage.overlap
    assert stage.redactor.prefilter.load == "large"
