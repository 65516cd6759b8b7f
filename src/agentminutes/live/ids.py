"""Deterministic ids for the events of a follow, so a collector can drop repeats.

Delivery is at least once: a socket sink resends what its collector had not
acknowledged, and a follower restarted from ``--state`` after a kill repeats
what followed its last checkpoint. Each repeat carries the id it had the first
time, because the id is made only of what the transcript holds:

``<transcript>:<line>-<end_line>:<digest>``

* ``transcript`` — the transcript's identity: 16 hex digits of a hash of its
  device, inode and first bytes (the first line, at most
  :data:`IDENTITY_HEAD_BYTES` of it). A rename keeps it; a copy, a new file
  under the same name and a truncation rewritten with other content get new ones.
* ``line-end_line`` — the native line span the event was read from (its
  ``provenance``; ``0-0`` for an event with none).
* ``digest`` — 12 hex digits of a hash of the event's JSON as written. It plays
  the part of an index within the span: a span's events are not always written
  together (a tool call at once, the message folding the same record later),
  so a position counted within the span would need every span's count kept in
  the state, where a digest needs nothing and never gives two different events
  of one span the same id.

The same event therefore has the same id in every run with the same options
and version; an event that changed (a held message flushed at a stop, then
written again complete after the agent continued it) gets a new id, and
supersedes the old one by ``message_id``.
"""

from __future__ import annotations

import hashlib
from typing import Final

from agentminutes.schema import Event

__all__ = ("IDENTITY_HEAD_BYTES", "event_id", "transcript_identity")

#: How much of a transcript's first line its identity covers.
IDENTITY_HEAD_BYTES: Final = 1024


def transcript_identity(dev: int, ino: int, first_line: bytes) -> str:
    """The identity of a transcript: its file (device, inode) and how it begins."""
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{dev}:{ino}\n".encode())
    h.update(first_line[:IDENTITY_HEAD_BYTES])
    return h.hexdigest()


def event_id(transcript: str, event: Event, encoded: bytes) -> str:
    """The id of *event* of *transcript*, whose JSON line (without newline) is *encoded*."""
    prov = event.provenance
    span = "0-0" if prov is None else f"{prov.line}-{prov.end_line or prov.line}"
    digest = hashlib.blake2b(encoded, digest_size=6).hexdigest()
    return f"{transcript}:{span}:{digest}"
