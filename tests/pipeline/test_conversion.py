"""How a raw line is read before an adapter sees it, as the reference's Go decoder reads it."""

from __future__ import annotations

import json

import pytest

from agentminutes.pipeline.conversion import Rewrite, clean_line


@pytest.mark.parametrize(
    ("raw", "record"),
    [
        (b"  {}\r", b"{}"),
        (b"\xef\xbb\xbf {}", b"{}"),
        (b"\xef\xbb\xbf\r", None),  # a byte-order mark alone: counted like white space
        ("\u00a0{}\u2028".encode(), b"{}"),
        ("\u3000\u00a0".encode(), None),
        (b"", b""),
        (b" \t ", b""),
        # Trimming leaves invalid bytes where they are (they are read later).
        ("\u00a0".encode() + b"{\xff}" + "\u2029".encode(), b"{\xff}"),
    ],
)
def test_clean_line_trims_what_go_trims(raw: bytes, record: bytes | None) -> None:
    assert clean_line(raw, 1) == record


def test_a_valid_line_needs_no_rewrite() -> None:
    assert Rewrite.of('{"a":"é \\ud83d\\ude00 \\\\ud800"}'.encode()) is None


def test_a_rewrite_is_what_go_decodes_and_keeps_what_the_reference_copies() -> None:
    line = b'{"s":"a\\ud800b","raw":{"x":"\xed\xa0\x80","y":"\xff"}}'
    rewrite = Rewrite.of(line)
    assert rewrite is not None
    fed = json.loads(rewrite.fed)
    assert fed == {"s": "a\ufffdb", "raw": {"x": "\ufffd" * 3, "y": "\ufffd"}}
    start = rewrite.fed.index(b'{"x"')
    end = rewrite.fed.index(b"}", start) + 1
    assert json.loads(rewrite.verbatim(start, end)) == {"x": "\ud800", "y": "\ufffd"}
    assert rewrite.verbatim(0, len(rewrite.fed)).startswith(b'{"s":"a\\ud800b"')
