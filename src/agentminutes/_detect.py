"""``agentminutes detect``: kept free of the CLI framework so it starts fast."""

from __future__ import annotations

import os
import sys

from agentminutes._errors import DetectError, SourceError
from agentminutes._sources import open_error
from agentminutes.harness import SNIFF_BYTES, detect

__all__ = ("detect_command", "read_head")


def read_head(transcript: str) -> bytes:
    """Read the first bytes of *transcript* (a path or ``"-"``) that detection may inspect."""
    if transcript == "-":
        return sys.stdin.buffer.read(SNIFF_BYTES)
    err = open_error(transcript)
    if err is not None:
        raise err
    try:
        with open(transcript, "rb") as f:
            return f.read(SNIFF_BYTES)
    except OSError as exc:
        raise SourceError(f"{transcript}: {exc.strerror or exc}") from None


def detect_command(transcript: str) -> None:
    """Print ``harness<TAB>certain|possible`` for *transcript*."""
    head = read_head(transcript)
    name = "<stdin>" if transcript == "-" else os.fspath(transcript)
    if not head:
        raise SourceError(f"{name}: empty input, not a transcript")
    try:
        cls, confidence = detect(head)
    except DetectError as exc:
        raise DetectError(f"{name}: {exc}") from None
    print(f"{cls.name}\t{confidence}")
