"""The growing-file reader and the wakers, on real files."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from agentminutes.live.tail import MARKER_BYTES, TailFile, tail_lines


def _write(path: Path, data: bytes, mode: str = "ab") -> None:
    with open(path, mode) as f:
        f.write(data)


def test_partial_line_is_held_and_completed_once(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    _write(p, b'{"a":1}\n{"b":')
    t = TailFile(str(p))
    lines, reset = t.read()
    assert (lines, reset) == ([(1, b'{"a":1}')], None)
    assert (t.splitter.offset, t.read_pos, t.pending) == (8, 13, 5)
    assert t.read() == ([], None)
    _write(p, b'2}\n\n{"c":3}\r\n')
    assert t.read() == ([(2, b'{"b":2}'), (3, b""), (4, b'{"c":3}\r')], None)
    pos = t.position()
    assert (pos["offset"], pos["line"]) == (p.stat().st_size, 4)
    t.close()


def test_multi_megabyte_line_in_several_reads(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    big = b'{"x":"' + b"y" * (5 << 20) + b'"}'
    _write(p, big + b"\n" + b'{"z":1}\n')
    t = TailFile(str(p))
    got = []
    while True:
        lines, _ = t.read(limit=1 << 20)
        got.extend(lines)
        if not t.behind:
            break
    assert got == [(1, big), (2, b'{"z":1}')]
    t.close()


def test_truncation_by_size_and_by_marker(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    _write(p, b"one\ntwo\n")
    t = TailFile(str(p))
    assert len(t.read()[0]) == 2
    with open(p, "r+b") as f:
        f.truncate(4)
    assert t.read() == ([], "truncated")
    t.restart()
    assert t.read()[0] == [(1, b"one")]
    # rewritten in place, longer than before: the bytes before the offset changed
    _write(p, b"ONE\nTWO\nTHREE\n", mode="r+b")
    assert t.read() == ([], "truncated")
    t.close()


def test_replacement_and_removal(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    _write(p, b"old1\n")
    t = TailFile(str(p))
    assert t.read()[0] == [(1, b"old1")]
    _write(p, b"old2\n")  # written to the old file before it was replaced
    fresh = tmp_path / "fresh"
    _write(fresh, b"new1\n")
    os.replace(fresh, p)
    assert t.read() == ([(2, b"old2")], "moved")  # what the old file held is read first
    assert t.vanished() == "deleted"  # replaced by a rename: the old file has no name left
    assert not t.names_it(str(p))
    t.restart()
    assert t.read() == ([(1, b"new1")], None)
    os.rename(p, tmp_path / "elsewhere")
    _write(tmp_path / "elsewhere", b"new2\n")
    assert t.read() == ([(2, b"new2")], "moved")  # still read where it went
    assert t.vanished() == "renamed"
    assert t.names_it(str(tmp_path / "elsewhere"))
    os.unlink(tmp_path / "elsewhere")
    assert t.read() == ([], "moved")
    assert t.vanished() == "deleted"
    t.restart()
    assert t.read() == ([], None)  # waits for the path to exist again
    t.close()


def test_resume_checks_identity(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    _write(p, b"a" * 2000 + b"\nline two\npartial")
    t = TailFile(str(p))
    t.read()
    pos = t.position()
    t.close()
    assert pos["head_len"] == 1024
    assert pos["offset"] == 2010

    def resume() -> str | None:
        r = TailFile(str(p))
        assert r.open()
        try:
            return r.resume(
                offset=pos["offset"],
                lineno=pos["line"],
                head=(pos["head_len"], pos["head_sha256"]),
                marker=pos["marker_sha256"],
            )
        finally:
            r.close()

    assert resume() is None
    _write(p, b" and more\n")
    assert resume() is None
    data = p.read_bytes()
    p.write_bytes(b"b" + data[1:])
    assert "first bytes differ" in (resume() or "")
    p.write_bytes(data[: 2010 - MARKER_BYTES] + b"x" * MARKER_BYTES + data[2010:])
    assert "before the saved offset changed" in (resume() or "")
    p.write_bytes(data[:100])
    assert "shorter" in (resume() or "")


def test_tail_lines_follows_a_file_that_appears(tmp_path: Path) -> None:
    p = tmp_path / "later.jsonl"

    async def main() -> list[tuple[int, bytes]]:
        stop = anyio.Event()
        got: list[tuple[int, bytes]] = []

        async def writer() -> None:
            await anyio.sleep(0.1)
            for i in range(5):
                _write(p, f"line {i}".encode())
                await anyio.sleep(0.01)
                _write(p, b"\n")

        async with anyio.create_task_group() as tg:
            tg.start_soon(writer)
            async for batch in tail_lines(p, stop=stop):
                got.extend(batch)
                if len(got) >= 5:
                    stop.set()
        return got

    assert anyio.run(main) == [(i + 1, f"line {i}".encode()) for i in range(5)]
