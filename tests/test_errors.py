"""Errors cross process boundaries whole: a worker's ParseError is the parent's ParseError."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import agentminutes
from agentminutes.discovery.layouts.base import build_ref
from agentminutes.errors import (
    AgentminutesError,
    DetectError,
    OutputError,
    ParseError,
    ScanError,
    SourceError,
    UsageError,
)
from conftest import FIXTURES

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"


def test_every_error_of_ours_survives_a_process_pool(tmp_path: Path) -> None:
    """One bad file among good ones costs its own future only, and its error arrives intact."""
    lines = CC.read_bytes().splitlines(keepends=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(lines[:4]) + b'{"type": "user", oops\n' + b"".join(lines[4:]))
    headless = tmp_path / "headless.jsonl"  # its first record, which identifies it, is broken
    headless.write_bytes(b'{"type": "user", oops\n' + b"".join(lines))
    notes = tmp_path / "notes.jsonl"
    notes.write_bytes(b'{"hello": "world"}\n')
    paths = [CC, bad, CC, tmp_path / "missing.jsonl", notes, CC]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        loads = [pool.submit(agentminutes.load, p) for p in paths]
        scan = pool.submit(build_ref, "claude-code", str(headless))
        done = [f.exception() or f.result() for f in loads]
        scanned = scan.exception()
    expected = agentminutes.load(CC)
    assert [type(d) for d in done] == [
        type(expected),
        ParseError,
        type(expected),
        SourceError,
        DetectError,
        type(expected),
    ]
    assert done[0] == expected
    with pytest.raises(ParseError) as local:
        agentminutes.load(bad)
    remote = done[1]
    assert isinstance(remote, ParseError)
    assert str(remote) == str(local.value)
    assert (remote.harness, remote.line, remote.path, remote.version) == (
        "claude-code",
        5,
        str(bad),
        local.value.version,
    )
    assert isinstance(scanned, ScanError)
    assert (scanned.harness, scanned.path) == ("claude-code", str(headless))
    assert "at line 1" in scanned.cause


@pytest.mark.parametrize(
    "error",
    [
        ParseError(
            "codex", "bad", line=3, version="0.1", last_checked="0.2", path="/x", unit="record"
        ),
        ScanError("codex", "cannot read", "/x/y.jsonl"),
        DetectError("x: could not detect"),
        SourceError("x: empty input"),
        UsageError("--to: no file path"),
        OutputError("x: disk full"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_each_error_pickles_to_an_equal_one(error: AgentminutesError) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
