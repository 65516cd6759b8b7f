"""The compact row-digest set: exact on both sides of its spill, and what the Claude Code adapter keeps."""

from __future__ import annotations

import hashlib
import pickle
import random
from pathlib import Path

import pytest

from agentminutes.harness import _row_set
from agentminutes.harness._row_set import SPILL, RowDigests
from agentminutes.harness.claude_code import ClaudeCodeAdapter
from agentminutes.harness.claude_code.adapter import _row_digest
from agentminutes.pipeline.conversion import feed_lines
from conftest import FIXTURES, convert_json

PARENT = FIXTURES / "claude-code" / "ccl" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"


def digests(n: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(8) for _ in range(n)]


def test_it_answers_as_a_set_does_past_the_spill() -> None:
    rng = random.Random(7)
    pool = digests(SPILL + 5_000, 1)
    # Draws with repeats, before and after the spill, against a plain set.
    draws = [rng.choice(pool) for _ in range(3 * len(pool))]
    rows, plain = RowDigests(), set()
    for d in draws:
        assert rows.add(d) is (d not in plain)
        plain.add(d)
    assert len(rows) == len(plain) > SPILL
    assert rows._buckets is not None  # the compact side was exercised
    assert sorted(rows) == sorted(plain)
    assert all(d in rows for d in plain)
    assert not any(d in rows for d in digests(1_000, 2) if d not in plain)


def test_a_match_straddling_two_entries_is_not_a_row() -> None:
    rows = RowDigests(digests(SPILL + 1, 3))
    first, second = b"\x00abcdefg", b"\x00bhijklm"  # one bucket: 0x61, 0x62 share six bits
    assert rows.add(first)
    assert rows.add(second)
    straddling = b"\x00bcdefgb"  # found at offset 1 of that bucket, across both entries
    assert straddling not in rows
    assert rows.add(straddling)
    assert straddling in rows
    assert not rows.add(straddling)


@pytest.mark.parametrize("n", [10, SPILL + 10], ids=["small", "spilled"])
def test_it_survives_pickling(n: int) -> None:
    rows = RowDigests(digests(n, 4))
    back = pickle.loads(pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))
    assert len(back) == n
    assert sorted(back) == sorted(rows)
    assert not any(back.add(d) for d in digests(n, 4))
    assert back.add(b"\xff" * 8)


def test_a_digest_of_another_size_is_refused() -> None:
    rows = RowDigests()
    with pytest.raises(ValueError, match="8 bytes"):
        rows.add(b"short")
    assert b"short" not in rows
    assert len(rows) == 0


def test_reappended_rows_are_dropped_with_the_compact_side_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real session re-appended after itself, with the set spilling after eight rows.
    lines = PARENT.read_bytes().splitlines(keepends=True)
    copy = tmp_path / "reappended.jsonl"
    copy.write_bytes(b"".join(lines) + b"".join(lines[5:60]))
    expected = convert_json(copy)
    monkeypatch.setattr(_row_set, "SPILL", 8)
    spilled = convert_json(copy)
    assert spilled == expected
    assert sum(
        v for k, v in spilled["report"]["skipped_records"].items() if k.endswith("/duplicate")
    )


def test_a_snapshot_of_the_older_int_set_is_read() -> None:
    # A follower's state saved when the digests were a set of ints resumes with
    # the same rows remembered, so a re-appended row after the restart is still a copy.
    lines = list(enumerate(PARENT.read_bytes().split(b"\n"), 1))
    tail = lines[40:] + [(len(lines) + i, line) for i, (_, line) in enumerate(lines[5:40], 1)]
    whole = ClaudeCodeAdapter()
    expected = feed_lines(whole, lines[:40] + tail) + whole.finish()

    first = ClaudeCodeAdapter()
    got = feed_lines(first, lines[:40])
    first.seen_rows = {int.from_bytes(d) for d in first.seen_rows}  # type: ignore[assignment]
    second = ClaudeCodeAdapter()
    second.restore(first.snapshot())
    assert isinstance(second.seen_rows, RowDigests)
    assert len(second.seen_rows) > 0
    got += feed_lines(second, tail) + second.finish()
    assert got == expected
    assert second.skipped == whole.skipped
    assert any(k.endswith("/duplicate") for k in second.skipped)


def test_the_adapter_digest_is_eight_stable_bytes() -> None:
    # The key's layout is part of a follower's saved state: changing it would
    # make a restored follower take every re-appended row for a new one.
    d = _row_digest("2f1c", "user", "2025-01-01T00:00:00Z")
    assert d == hashlib.blake2b(b"2f1c\x00user\x002025-01-01T00:00:00Z", digest_size=8).digest()
    assert len(d) == 8
    assert d == _row_digest("2f1c", "user", "2025-01-01T00:00:00Z")
    assert d != _row_digest("2f1c", "assistant", "2025-01-01T00:00:00Z")
    assert d != _row_digest("2f1c", "user", None)
