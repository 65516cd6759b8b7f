"""An export's manifest: which transcripts it holds, from which file states, in which files.

Both exports keep one (``DIR/_manifest.json`` for the Parquet dataset,
``DIR/atif/_manifest.json`` for the ATIF trajectories): it is their source of
truth, saved atomically (temporary file, fsync, rename), and it is what makes a
run incremental. A transcript's fingerprint (size, ``mtime_ns``, sha256 of the
first KiB) unchanged since the last run means its files are left alone.

This module needs nothing but msgspec (the ATIF export runs without pyarrow).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import secrets
import time
from collections.abc import Iterable
from typing import Final

import msgspec

from agentminutes.errors import UsageError

__all__ = (
    "HEAD_BYTES",
    "MANIFEST_FORMAT",
    "MANIFEST_NAME",
    "Entry",
    "Fingerprint",
    "Manifest",
    "RunRecord",
    "atomic_write",
    "delete_files",
    "fingerprint",
    "hive_value",
    "new_run_id",
    "partition_dir",
)

MANIFEST_NAME: Final = "_manifest.json"
#: The manifest's own format (not the tables' schema version).
MANIFEST_FORMAT: Final = 1
#: Bytes of a transcript's head that its fingerprint hashes.
HEAD_BYTES: Final = 1024


class Fingerprint(msgspec.Struct, frozen=True):
    """A transcript file's state: a change in any part means its rows are re-exported."""

    size: int
    mtime_ns: int
    head: str


def fingerprint(path: str) -> Fingerprint:
    """The file's size, modification time and sha256 of its first KiB (raises ``OSError``)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        head = f.read(HEAD_BYTES)
    return Fingerprint(st.st_size, st.st_mtime_ns, hashlib.sha256(head).hexdigest())


class Entry(msgspec.Struct, omit_defaults=True):
    """One transcript of the export: its fingerprint, outcome and the files holding it.

    ``status`` is ``ok`` (rows in the tables, or trajectory documents), ``failed`` (a
    ``failures`` record) or ``skipped`` (a file a folder walk met that is no transcript).
    ``error_type`` and ``line`` are the failure's class and line (the ATIF export's
    ``failures.jsonl`` is made from them; the Parquet dataset has its ``failures`` table).
    """

    fingerprint: Fingerprint
    status: str
    harness: str = ""
    sessions: int = 0
    events: int = 0
    files: list[str] = msgspec.field(default_factory=list)
    error: str = ""
    error_type: str = ""
    line: int = 0


class RunRecord(msgspec.Struct, omit_defaults=True):
    """What the last run did (also read by ``scripts/bench_export.py``)."""

    started: str
    wall_s: float
    jobs: int
    transcripts: int
    exported: int
    unchanged: int
    failed: int
    skipped: int
    events: int
    parent_max_rss_kb: int = 0
    worker_max_rss_kb: int = 0
    #: Worker processes started (0: the run was small enough for the calling process).
    workers: int = 0


class Manifest(msgspec.Struct, omit_defaults=True):
    """``_manifest.json``: the transcripts of an export and the files they own."""

    format: int = MANIFEST_FORMAT
    #: What the files are, where the export keeps it here (the ATIF export: its version;
    #: the Parquet dataset keeps its version in ``_schema.json``).
    schema_version: str = ""
    #: The parse options every row was made with; a run with others would mix them.
    options: dict[str, object] = msgspec.field(default_factory=dict)
    transcripts: dict[str, Entry] = msgspec.field(default_factory=dict)
    last_run: RunRecord | None = None

    @classmethod
    def load(cls, root: str) -> Manifest | None:
        """The manifest of the dataset at *root*, or ``None`` for a new dataset.

        Raises:
            UsageError: the file is not a manifest this version reads.
        """
        path = os.path.join(root, MANIFEST_NAME)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise UsageError(f"{path}: cannot read the manifest: {exc.strerror or exc}") from None
        try:
            found = msgspec.json.decode(data, type=Manifest)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise UsageError(f"{path}: not an agentminutes export manifest ({exc})") from None
        if found.format != MANIFEST_FORMAT:
            raise UsageError(
                f"{path}: manifest format {found.format}; this version reads {MANIFEST_FORMAT}"
            )
        return found

    def save(self, root: str) -> None:
        """Write the manifest atomically: temporary file, fsync, rename."""
        atomic_write(os.path.join(root, MANIFEST_NAME), msgspec.json.encode(self))

    def owners(self) -> dict[str, list[str]]:
        """Each part file named by the manifest, with the transcripts that have rows in it."""
        out: dict[str, list[str]] = {}
        for path, entry in self.transcripts.items():
            for rel in entry.files:
                out.setdefault(rel, []).append(path)
        return out


def atomic_write(path: str, data: bytes) -> None:
    """Write *path* whole or not at all: a temporary file, fsync, rename."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def new_run_id() -> str:
    """A name part unique to one run: the UTC time and a few random hex digits."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def partition_dir(table: str, harness: str, day: int) -> str:
    """``<table>/harness=<h>/date=<yyyy-mm-dd>``, relative to the dataset root."""
    date = (dt.date(1970, 1, 1) + dt.timedelta(days=day)).isoformat()
    return f"{table}/harness={hive_value(harness)}/date={date}"


def hive_value(value: str) -> str:
    """*value* as one path component: path-unsafe characters ``%XX``-escaped, as Hive does."""
    # Hive escapes path-unsafe characters in partition values; harness names are tame,
    # but a stray one must not make a path component of its own.
    return "".join(c if c.isalnum() or c in "-_." else f"%{ord(c):02X}" for c in value) or "unknown"


def delete_files(root: str, rels: Iterable[str]) -> None:
    """Delete the files *rels* (relative to *root*) the manifest no longer names, and the
    folders they leave empty, up to *root* itself."""
    for rel in rels:
        path = os.path.join(root, rel)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        folder = os.path.dirname(path)
        while os.path.abspath(folder) != os.path.abspath(root):
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
