"""The async library API under every anyio backend (asyncio and trio), and files closed on errors."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import anyio
import pytest

import agentminutes
from follow_helpers import MAIN, lines_of

BACKENDS = ["asyncio", "trio"]


def _open_fds() -> set[str]:
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            out.add(os.readlink(f"/proc/self/fd/{fd}"))
    return out


def _corrupt(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.jsonl"
    lines = lines_of(MAIN)
    bad.write_bytes(
        b"".join(lines[:5]) + b'{"type": "user", "message": 17}\n' + b"".join(lines[5:])
    )
    return bad


@pytest.mark.parametrize("backend", BACKENDS)
def test_parse_and_events_run_under_every_backend(backend: str) -> None:
    async def main() -> tuple[int, int]:
        session = await agentminutes.parse(MAIN)
        streamed = [e async for e in agentminutes.events(MAIN)]
        return len(session.events), len(streamed)

    parsed, streamed = anyio.run(main, backend=backend)
    assert parsed == streamed == len(agentminutes.load(MAIN).events) > 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_parse_error_closes_the_transcript(tmp_path: Path, backend: str) -> None:
    bad = _corrupt(tmp_path)

    async def main() -> list[str]:
        raised = []
        with pytest.raises(agentminutes.ParseError) as first:
            await agentminutes.parse(bad)
        raised.append(str(first.value))
        with pytest.raises(agentminutes.ParseError) as second:
            async for _ in agentminutes.events(bad):
                pass
        raised.append(str(second.value))
        return raised

    raised = anyio.run(main, backend=backend)
    assert all("line 6" in r for r in raised)
    assert str(bad) not in _open_fds()  # closed at the error, not when collected
    with pytest.raises(agentminutes.ParseError):
        agentminutes.load(bad)
    assert str(bad) not in _open_fds()
