"""``agentminutes export --format atif``: one ATIF v1.8 trajectory document per session.

Layout, beside the Parquet dataset's tables when both are exported to one ``DIR``::

    DIR/atif/_manifest.json                                  what was exported, from which file states
    DIR/atif/failures.jsonl                                  a line per transcript that failed
    DIR/atif/harness=<h>/date=<yyyy-mm-dd>/<session-id>.json   a session's trajectory

The sessions, their harness and their partition day are the Parquet dataset's (both
read transcripts with :class:`~agentminutes.export.transcripts.TranscriptEvents`);
each document is :func:`agentminutes.formats.atif.trajectory`'s, subagents that ran
inline embedded. A subagent with a transcript of its own (Claude Code's
``subagents/agent-*.jsonl``) is a document of its own, named
``<session-id>%2F<agent-id>.json`` after its trajectory id.

The manifest (:mod:`agentminutes.export.manifest`) lists the documents each
transcript owns. A document is created exclusively (a session id already taken in
its partition, by a copy of the same session in another transcript, gets its
transcript's hash appended), before the manifest names it; documents the manifest
does not name are left by an interrupted run and deleted by the next. A changed
transcript's documents are deleted and written anew. ``failures.jsonl`` is made
from the manifest at the end of every run: the columns of the dataset's
``failures`` table, one JSON object a line.

Nothing here needs pyarrow.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from agentminutes import timestamps
from agentminutes.export.manifest import (
    Manifest,
    atomic_write,
    delete_files,
    hive_value,
    partition_dir,
)
from agentminutes.export.transcripts import TranscriptEvents, partition_day
from agentminutes.formats.atif import SCHEMA_VERSION, LossReport, TrajectoryBuilder
from agentminutes.schema import EventKind

__all__ = (
    "FAILURES_NAME",
    "FOLDER",
    "SCHEMA_VERSION",
    "Written",
    "collect_garbage",
    "document_files",
    "write_failures",
    "write_transcript",
)

#: The ATIF export's folder under ``--to DIR``.
FOLDER: Final = "atif"
FAILURES_NAME: Final = "failures.jsonl"
#: A partition folder's name starts so (``harness=<h>/date=<d>``, as the dataset's).
_PARTITION_PREFIX: Final = "harness="
_encode: Final = msgspec.json.Encoder()


@dataclass
class Written:
    """What writing one transcript's trajectories came to."""

    harness: str = ""
    sessions: int = 0
    events: int = 0
    files: list[str] = field(default_factory=list)
    loss: LossReport = field(default_factory=LossReport)


def _claim(root: str, folder: str, base: str, transcript: str, data: bytes) -> str:
    """Create ``folder/base.json`` exclusively with *data*; a name taken gets the
    transcript's hash appended (then a counter). Returns the path relative to *root*."""
    os.makedirs(os.path.join(root, folder), exist_ok=True)
    tag = hashlib.sha256(transcript.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    names = [base, f"{base}~{tag}"] + [f"{base}~{tag}-{n}" for n in range(2, 100)]
    for name in names:
        rel = f"{folder}/{name}.json"
        try:
            with open(os.path.join(root, rel), "xb") as f:
                f.write(data)
        except FileExistsError:
            continue
        return rel
    raise FileExistsError(f"{folder}/{base}.json: too many sessions of this id")


def write_transcript(root: str, source: TranscriptEvents) -> Written:
    """Parse one transcript and write each of its sessions' trajectories under *root*.

    On an error the documents already written are deleted before it propagates
    (``source.harness`` then says what it was detected as).
    """
    out = Written()
    builder: TrajectoryBuilder | None = None
    first_ns: int | None = None
    to_ns = timestamps.to_ns
    try:
        for part in source.parts():
            if builder is None:
                builder = TrajectoryBuilder(source.harness)
                first_ns = None
            if isinstance(part, list):
                for ev in part:
                    fresh = builder.meta
                    builder.add(ev)
                    if ev.kind == EventKind.SESSION_META and builder.meta is not fresh:
                        builder.meta = source.identity(builder.meta)
                    if first_ns is None and ev.timestamp:
                        first_ns = to_ns(ev.timestamp)
                out.events += len(part)
                continue
            doc, loss = builder.finish()
            meta = builder.meta
            builder = None
            name = meta.harness or source.harness or "unknown"
            day = partition_day(first_ns, source.mtime_ns)
            folder = partition_dir(FOLDER, name, day).split("/", 1)[1]
            data = _encode.encode(doc) + b"\n"
            out.files.append(
                _claim(root, folder, hive_value(doc["trajectory_id"]), source.transcript, data)
            )
            out.sessions += 1
            out.loss = out.loss.added(loss)
    except BaseException:
        delete_files(root, out.files)
        raise
    out.harness = source.harness
    return out


def document_files(root: str) -> Iterable[str]:
    """Every trajectory document of the layout under *root*, relative to it."""
    try:
        tops = sorted(n for n in os.listdir(root) if n.startswith(_PARTITION_PREFIX))
    except OSError:
        return
    for top in tops:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(".json"):
                    yield os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")


def collect_garbage(root: str, named: Mapping[str, object]) -> int:
    """Delete documents the manifest does not name (left by an interrupted run)."""
    stale = [rel for rel in document_files(root) if rel not in named]
    delete_files(root, stale)
    return len(stale)


def _iso_day(day: int) -> str:
    return (dt.date(1970, 1, 1) + dt.timedelta(days=day)).isoformat()


def _iso_us(ns: int) -> str:
    when = dt.datetime.fromtimestamp(ns // 1_000_000_000, dt.UTC)
    micro = (ns // 1000) % 1_000_000
    return when.replace(microsecond=micro).isoformat().replace("+00:00", "Z")


def write_failures(root: str, manifest: Manifest) -> int:
    """Write ``failures.jsonl`` from the manifest's failed transcripts (removed when none);
    returns how many lines it holds."""
    lines: list[bytes] = []
    for path, entry in sorted(manifest.transcripts.items()):
        if entry.status != "failed":
            continue
        fp = entry.fingerprint
        known = fp.size >= 0
        record: dict[str, Any] = {
            "transcript": path,
            "harness": entry.harness or "unknown",
            "date": _iso_day(partition_day(None, fp.mtime_ns if known else 0)),
            "error_type": entry.error_type or "AgentminutesError",
            "error": entry.error,
            "line": entry.line or None,
            "source_bytes": fp.size if known else None,
            "source_mtime": _iso_us(fp.mtime_ns) if known else None,
        }
        lines.append(_encode.encode(record) + b"\n")
    target = os.path.join(root, FAILURES_NAME)
    if lines:
        atomic_write(target, b"".join(lines))
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(target)
    return len(lines)
