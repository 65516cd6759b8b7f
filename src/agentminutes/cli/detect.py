"""``agentminutes detect``: kept free of the CLI framework so it starts fast."""

from __future__ import annotations

import os

from agentminutes.errors import DetectError, SourceError, source_name
from agentminutes.pipeline.detect import detect, detect_source, read_head

__all__ = ("detect_command",)


def detect_command(transcript: str) -> None:
    """Print ``harness<TAB>certain|possible`` for *transcript*."""
    if transcript != "-" and os.path.isdir(transcript):  # a folder source (a Cline task …)
        print("\t".join(detect(transcript)))
        return
    head = read_head(transcript)
    name = source_name(transcript)
    if not head:
        raise SourceError(f"{name}: empty input, not a transcript")
    try:
        found, confidence = detect_source(transcript, head)
    except DetectError as exc:
        message = str(exc)
        raise DetectError(message if message.startswith(name) else f"{name}: {message}") from None
    print(f"{found}\t{confidence}")
