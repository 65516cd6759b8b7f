"""The dataset on disk: Hive-partitioned Parquet part files, the manifest that owns them.

Layout::

    DIR/_schema.json                                   the version and every table's columns
    DIR/_manifest.json                                 what was exported, from which file states
    DIR/<table>/harness=<h>/date=<yyyy-mm-dd>/part-<run>-<n>.parquet

A part file holds the rows of several transcripts (one chunk of work, one file per
table and partition), so a dataset of thousands of transcripts is not tens of
thousands of tiny files. The manifest is the source of truth: it lists, per
transcript, the fingerprint of the file it was exported from (size, ``mtime_ns``,
sha256 of the first KiB) and the part files holding its rows. Changes are
copy-on-write, committed by saving the manifest (temporary file, fsync, rename):

* replacing a transcript's rows rewrites each part file holding them, without them,
  under a new name; the manifest then points at the new file and the old one is
  deleted;
* new rows go into new part files, which the manifest adopts when their chunk is done.

A crash between those steps leaves part files the manifest does not name; the next
run deletes them before it starts, so every row the manifest names is there once.
Files of this layout that the manifest does not name are never read as rows.
The manifest itself (shared with the ATIF export) is :mod:`agentminutes.export.manifest`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import msgspec

from agentminutes.errors import UsageError
from agentminutes.export import schemas
from agentminutes.export.manifest import (
    MANIFEST_NAME,
    Entry,
    Fingerprint,
    Manifest,
    RunRecord,
    atomic_write,
    fingerprint,
    new_run_id,
    partition_dir,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = (
    "MANIFEST_NAME",
    "SCHEMA_NAME",
    "Entry",
    "Fingerprint",
    "Manifest",
    "PartWriter",
    "RunRecord",
    "fingerprint",
    "new_run_id",
    "remove_transcripts",
)

pa = schemas.require_pyarrow()
import pyarrow.parquet as pq  # noqa: E402  (after the install check)

SCHEMA_NAME: Final = "_schema.json"
#: Rows of one table buffered before a row group is written, and bytes buffered in all.
ROW_GROUP_ROWS: Final = 65_536
BUFFER_BYTES: Final = 8 << 20
COMPRESSION: Final = "zstd"


def write_schema_document(root: str) -> None:
    """Write ``DIR/_schema.json`` (when it is not already this version's)."""
    data = msgspec.json.format(msgspec.json.encode(schemas.schema_document()), indent=2) + b"\n"
    path = os.path.join(root, SCHEMA_NAME)
    with contextlib.suppress(OSError), open(path, "rb") as f:
        if f.read() == data:
            return
    atomic_write(path, data)


def check_schema_document(root: str) -> None:
    """Refuse a dataset written with another schema version.

    Raises:
        UsageError: ``_schema.json`` names another version.
    """
    path = os.path.join(root, SCHEMA_NAME)
    try:
        with open(path, "rb") as f:
            doc = msgspec.json.decode(f.read())
    except FileNotFoundError:
        return
    except (OSError, msgspec.DecodeError) as exc:
        raise UsageError(f"{path}: not an agentminutes export schema ({exc})") from None
    found = doc.get("agentminutes_export_schema") if isinstance(doc, dict) else None
    if found != schemas.SCHEMA_VERSION:
        raise UsageError(
            f"{root} holds an export of schema {found}; this agentminutes writes "
            f"{schemas.SCHEMA_VERSION}: export into a new folder"
        )


@dataclass
class _Buffer:
    batches: list[tuple[str, pa.RecordBatch]] = field(default_factory=list)
    rows: int = 0
    nbytes: int = 0


class PartWriter:
    """The part files of one chunk of work: one per table and partition, opened on first use.

    Rows are buffered per file and written as row groups of about
    :data:`ROW_GROUP_ROWS` rows, with at most :data:`BUFFER_BYTES` held in all.
    :meth:`discard` drops a transcript's buffered rows (a transcript that failed
    midway); :meth:`flushed` says whether some were written already.
    """

    def __init__(self, root: str, name: str) -> None:
        self.root = root
        self.name = name
        self._writers: dict[str, pq.ParquetWriter] = {}
        self._buffers: dict[str, _Buffer] = {}
        self._owners: dict[str, set[str]] = {}
        self._flushed: dict[str, set[str]] = {}
        self._buffered = 0
        # Row groups are encoded and compressed on a thread of their own (pyarrow lets go
        # of the GIL while it writes), one at a time, while parsing goes on.
        self._thread: ThreadPoolExecutor | None = None
        self._writing: Future[None] | None = None
        self._broken: BaseException | None = None

    def add(self, transcript: str, table: str, batch: pa.RecordBatch) -> None:
        """Buffer *batch* (rows of *transcript* in *table*) for its partition's file."""
        if not batch.num_rows:
            return
        harness = batch.column("harness")[0].as_py()
        day = batch.column("date")[0].value
        rel = f"{partition_dir(table, harness, day)}/part-{self.name}.parquet"
        body = batch.drop_columns(list(schemas.PARTITION_COLUMNS))
        buf = self._buffers.get(rel)
        if buf is None:
            buf = self._buffers[rel] = _Buffer()
            self._owners.setdefault(rel, set())
        buf.batches.append((transcript, body))
        buf.rows += body.num_rows
        size = body.nbytes
        buf.nbytes += size
        self._buffered += size
        self._owners[rel].add(transcript)
        if buf.rows >= ROW_GROUP_ROWS:
            self._flush(rel, table)
        while self._buffered > BUFFER_BYTES:
            largest = max(self._buffers, key=lambda r: self._buffers[r].nbytes)
            self._flush(largest, largest.split("/", 1)[0])

    def _flush(self, rel: str, table: str) -> None:
        buf = self._buffers.get(rel)
        if buf is None or not buf.batches:
            return
        writer = self._writers.get(rel)
        if writer is None:
            path = os.path.join(self.root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            writer = pq.ParquetWriter(
                path, schemas.file_schema(schemas.SCHEMAS[table]), compression=COMPRESSION
            )
            self._writers[rel] = writer
        table = pa.Table.from_batches([b for _, b in buf.batches], schema=writer.schema)
        self._wait()  # one row group in flight: memory stays bounded
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="agentminutes-parquet")
        self._writing = self._thread.submit(writer.write_table, table, row_group_size=1 << 30)
        self._flushed.setdefault(rel, set()).update(t for t, _ in buf.batches)
        self._buffered -= buf.nbytes
        buf.batches, buf.rows, buf.nbytes = [], 0, 0

    def _wait(self) -> None:
        """Wait for the row group being written (its error, if any, is raised here)."""
        writing, self._writing = self._writing, None
        if writing is not None:
            try:
                writing.result()
            except BaseException as exc:
                # Rows of several transcripts are lost with it: the chunk fails at close.
                self._broken = exc
                raise

    def discard(self, transcript: str) -> None:
        """Drop the buffered rows of *transcript* (what was flushed stays; see :meth:`flushed`)."""
        for buf in self._buffers.values():
            kept = [(t, b) for t, b in buf.batches if t != transcript]
            if len(kept) != len(buf.batches):
                dropped = sum(b.nbytes for t, b in buf.batches if t == transcript)
                buf.batches = kept
                buf.rows = sum(b.num_rows for _, b in kept)
                buf.nbytes -= dropped
                self._buffered -= dropped
        for rel, owners in self._owners.items():
            if transcript not in self._flushed.get(rel, ()):
                owners.discard(transcript)

    def flushed(self, transcript: str) -> bool:
        """Whether rows of *transcript* are already in a file."""
        return any(transcript in names for names in self._flushed.values())

    def close(self) -> dict[str, list[str]]:
        """Write what is buffered, close the files; return each file with its transcripts."""
        try:
            for rel in list(self._buffers):
                self._flush(rel, rel.split("/", 1)[0])
            self._wait()
        finally:
            if self._thread is not None:
                self._thread.shutdown(wait=True)
                self._thread = None
        if self._broken is not None:
            raise self._broken
        for writer in self._writers.values():
            writer.close()
        return {rel: sorted(self._owners[rel]) for rel in self._writers if self._owners[rel]}


def remove_transcripts(
    root: str, rel: str, drop: Iterable[str], new_name: str
) -> tuple[str | None, list[str]]:
    """Rewrite part file *rel* without the rows of the transcripts *drop*.

    The rows left go to a new file (``part-<new_name>.parquet`` in the same partition),
    one row group at a time; the old file is left for the caller to delete once the
    manifest no longer names it. Returns the new file (``None`` when no row is left)
    and the transcripts that still have rows in it.
    """
    import pyarrow.compute as pc

    dropped = pa.array(sorted(set(drop)), pa.string())
    source = pq.ParquetFile(os.path.join(root, rel))
    folder = os.path.dirname(rel)
    out_rel = f"{folder}/part-{new_name}.parquet"
    writer: pq.ParquetWriter | None = None
    left: set[str] = set()
    try:
        for i in range(source.num_row_groups):
            group = source.read_row_group(i)
            keep = group.filter(pc.invert(pc.is_in(group.column("transcript"), value_set=dropped)))
            if not keep.num_rows:
                continue
            left.update(pc.unique(keep.column("transcript")).to_pylist())
            if writer is None:
                writer = pq.ParquetWriter(
                    os.path.join(root, out_rel), source.schema_arrow, compression=COMPRESSION
                )
            writer.write_table(keep, row_group_size=1 << 30)
    finally:
        if writer is not None:
            writer.close()
        source.close()
    return (out_rel if writer is not None else None), sorted(left)


def part_files(root: str) -> Iterable[str]:
    """Every part file of the layout under *root*, relative to it."""
    for table in schemas.TABLES:
        yield from _parts_under(root, table)


def _parts_under(root: str, rel: str) -> Iterator[str]:
    # The relative names are built as the walk goes (a dataset holds thousands of part
    # files; ``os.path.relpath`` on each costs more than the walk).
    try:
        with os.scandir(os.path.join(root, rel)) as it:
            entries = list(it)
    except OSError:
        return
    for e in entries:
        name = e.name
        if e.is_dir(follow_symlinks=False):
            yield from _parts_under(root, f"{rel}/{name}")
        elif name.startswith("part-") and name.endswith(".parquet"):
            yield f"{rel}/{name}"


def collect_garbage(root: str, named: Mapping[str, object]) -> int:
    """Delete part files the manifest does not name (left by an interrupted run)."""
    removed = 0
    for rel in list(part_files(root)):
        if rel not in named:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(root, rel))
                removed += 1
    return removed
