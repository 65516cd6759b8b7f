"""Which harness wrote a transcript: graded from its first bytes (a ZIP or database by what it holds)."""

from __future__ import annotations

import os
import sys

from agentminutes.errors import SourceError, source_name
from agentminutes.harness import SNIFF_BYTES, Confidence
from agentminutes.harness import detect as detect_head
from agentminutes.pipeline.sources import container_of, open_error

__all__ = ("detect", "detect_source", "read_head")


def detect(source: str | os.PathLike[str]) -> tuple[str, str]:
    """Detect which harness wrote a transcript from its first bytes.

    Returns:
        ``(harness, confidence)`` with confidence ``"certain"`` or ``"possible"``.

    Raises:
        DetectError: no registered adapter recognizes the transcript.
        SourceError: the transcript cannot be read.
    """
    path = os.fspath(source)
    if os.path.isdir(path):  # a folder source (a Cline task, an OpenCode storage tree)
        from agentminutes.pipeline.document_sources import route

        found = route(path)
        assert found.adapter is not None
        return found.adapter.name, str(Confidence.CERTAIN)
    head = read_head(path)
    if not head:
        raise SourceError(f"{path}: empty input, not a transcript")
    name, confidence = detect_source(path, head)
    return name, str(confidence)


def detect_source(source: str, head: bytes) -> tuple[str, Confidence]:
    """Grade *head*; a ZIP or database is graded by what it holds (its adapters' grades,
    :func:`~agentminutes.pipeline.document_sources.pick`)."""
    kind = container_of(head)
    if kind is None:
        cls, confidence = detect_head(head, prefer=_home_of(source))
        return cls.name, confidence
    from agentminutes.pipeline.document_sources import OpenedDocument, pick

    name = source_name(source)
    if source == "-":
        doc = OpenedDocument(name, kind, data=head + sys.stdin.buffer.read())
    else:
        doc = OpenedDocument(name, kind, path=source)
    found, confidence = pick(doc)
    return found.name, confidence


#: Home folders that name the harness writing under them: where two harnesses write one
#: format (Qwen Code's ``logs.json`` is Gemini CLI's), the path decides between them.
_HOME_FOLDERS = {".qwen": "qwen-code", ".gemini": "gemini-cli"}


def _home_of(source: str) -> str:
    """The harness whose home folder *source* lies in (``""``: none, or stdin)."""
    if source == "-":
        return ""
    for part in reversed(os.path.abspath(source).split(os.sep)):
        found = _HOME_FOLDERS.get(part)
        if found:
            return found
    return ""


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
