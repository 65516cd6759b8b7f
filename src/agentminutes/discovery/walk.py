"""The transcripts under a folder a user names: the one walk ``export`` and ``usage`` share.

A harness's own folders are found by its layout (:mod:`agentminutes.discovery.layouts`);
a folder given on the command line is walked by name instead: every file that may be a
transcript, a data export or a database is offered to detection, and a folder that is
one source (a Cline task, an OpenHands conversation, an OpenCode storage tree) is one
transcript, the file that stands for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Final

__all__ = (
    "CANDIDATE_SUFFIXES",
    "NOT_SESSION_FOLDERS",
    "NOT_TRANSCRIPTS",
    "is_candidate",
    "transcripts_under",
)

#: File names a folder walk offers to detection: transcripts, data exports, databases.
CANDIDATE_SUFFIXES: Final = (".jsonl", ".json", ".zip", ".db", ".sqlite", ".sqlite3")
#: Names a folder walk passes over: sidecars and what agentminutes itself writes.
NOT_TRANSCRIPTS: Final = (".meta.json", ".agentminutes.json")
#: Folders a walk does not enter: no harness writes a session there, and a source tree's
#: dependencies hold many thousands of ``.json`` files whose heads detection would read.
NOT_SESSION_FOLDERS: Final = frozenset({"node_modules", ".git", ".hg", ".svn", "__pycache__"})


def is_candidate(name: str) -> bool:
    """Whether a file named *name* met in a folder walk is offered to detection."""
    if name.startswith(".") or name.endswith(NOT_TRANSCRIPTS):
        return False
    return name.endswith(CANDIDATE_SUFFIXES)


def transcripts_under(top: str, skip: str | None = None) -> Iterator[str]:
    """Every candidate file under *top* in name order, symlinked folders not followed.

    *skip* (an absolute path) is left out, with all under it: the folder a command
    writes into; so are :data:`NOT_SESSION_FOLDERS`. A folder that is one source yields only the file that stands for it,
    whose conversion reads the whole folder. A folder that cannot be listed yields
    nothing (the walk is of what can be read).
    """
    from agentminutes.pipeline.document_sources import folder_transcript

    try:
        with os.scandir(top) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    whole = folder_transcript(top, frozenset(e.name for e in entries))
    if whole is not None:
        yield whole
        return
    for e in entries:
        path = os.path.join(top, e.name)
        try:
            is_dir = e.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            if e.name in NOT_SESSION_FOLDERS:
                continue
            if skip is None or os.path.abspath(path) != skip:
                yield from transcripts_under(path, skip)
        elif is_candidate(e.name):
            yield path
