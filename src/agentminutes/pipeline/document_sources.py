"""Whole-document sources: export JSON files, export ZIPs and SQLite databases.

Line transcripts stream through :class:`~agentminutes.pipeline.conversion.Conversion`.
Some sources are not lines: a ChatGPT or claude.ai data export (one JSON
array of conversations, alone or inside the export ZIP), an SQLite database
(a Pinocchio ``turns.db``, an OpenCode ``opencode.db``) and folders of JSON
documents (a Cline task folder, an OpenCode storage tree; a member file of
one stands for its folder). They are routed here before any line splitting
happens:

* :func:`route` looks at the source's head (a ZIP's ``PK\\x03\\x04``,
  SQLite's ``SQLite format 3\\0``, otherwise what detection makes of the
  JSON head) and either opens a :class:`OpenedDocument` with the adapter for it,
  or says the source is a line transcript;
* :class:`DocumentConversion` runs a :class:`~agentminutes.harness.DocumentAdapter`
  over the document, one session per conversation, and resolves
  ``--conversation`` selections;
* :func:`feeds` is what the CLI and the library read: the session(s) of any
  source, line transcript or document, as batches plus their skip counts.

Memory stays proportional to the JSON payload plus one conversation's
events: the payload is read once (a ZIP member is inflated once), decoded
lazily per conversation, and each conversation's events are dropped once
handed on. A database is queried in place, never read whole (except from
stdin, which has no file to open).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, BinaryIO, Final, TypeVar

import msgspec

from agentminutes.errors import DetectError, ParseError, SourceError, UsageError
from agentminutes.harness import (
    SNIFF_BYTES,
    Confidence,
    ConversationInfo,
    DocumentAdapter,
    DocumentSession,
    ParseOptions,
    SkipHook,
    detect,
    document_adapter_class,
    is_document_adapter,
    sniff_safely,
)
from agentminutes.harness._gojson import C_RECURSION_LIMITED, go_utf8, on_fresh_stack
from agentminutes.harness.base import BOM, BaseDocumentAdapter, detects
from agentminutes.pipeline.batch import Batch
from agentminutes.pipeline.conversion import (
    Conversion,
    depth_reason,
    open_chunks,
    open_sync_chunks,
    source_name,
)
from agentminutes.pipeline.sources import (
    SQLITE_MAGIC,
    ZIP_MAGIC,
    container_of,
    is_stream,
    open_error,
)
from agentminutes.pipeline.verbatim import safe_events
from agentminutes.schema import Event

if TYPE_CHECKING:
    # Imported where a ZIP or a database is read: a JSONL transcript never needs them.
    import sqlite3
    import zipfile

T = TypeVar("T")

__all__ = (
    "SQLITE_MAGIC",
    "ZIP_MAGIC",
    "DocumentConversion",
    "Feed",
    "OpenedDocument",
    "Route",
    "container_of",
    "feeds",
    "folder_transcript",
    "pick",
    "route",
    "single_session",
)


class OpenedDocument:
    """An opened whole-document source.

    ``container`` is ``"json"`` (the payload is the file), ``"zip"`` (the
    payload is the ZIP member ``member``) or ``"sqlite"``. Exactly one of
    ``path`` and ``data`` is set: a file on disk, or the bytes read from stdin.
    """

    def __init__(
        self,
        name: str,
        container: str,
        *,
        path: str | None = None,
        data: bytes | None = None,
        member: str = "",
    ) -> None:
        self.name = name
        self.container = container
        self.path = path
        self.data = data
        self.member = member
        self._payload: bytes | None = None

    def payload(self) -> bytes:
        """The JSON payload: the file itself, or the ZIP member, read once and kept.

        Pretty-printed JSON is compacted (text-level, numbers untouched), so that
        verbatim values copied into events carry no line breaks into JSONL output.
        """

        if self._payload is None:
            if self.container == "sqlite":
                raise UsageError(f"{self.name}: an SQLite database has no JSON payload")
            try:
                if self.container == "zip":
                    with self._zip() as zf, zf.open(self.member) as f:
                        self._payload = f.read()
                elif self.data is not None:
                    self._payload = self.data
                else:
                    assert self.path is not None
                    with open(self.path, "rb") as f:
                        self._payload = f.read()
            except _zip_errors() as exc:
                raise SourceError(f"{self.name}: cannot read: {exc}") from None
            if self._payload.startswith(BOM):
                self._payload = self._payload[3:]
            if not self._payload.isascii():
                # Verbatim values are cut from the payload: no invalid byte may reach
                # the output (U+FFFD per byte, as Go reads a string).
                try:
                    self._payload.decode()
                except UnicodeDecodeError:
                    self._payload = go_utf8(self._payload).encode()
            if self._payload.find(b"\n", 0, _content_end(self._payload)) >= 0:
                # Invalid or nested too deep: the adapter's decode says so.
                with contextlib.suppress(msgspec.DecodeError, RecursionError):
                    self._payload = msgspec.json.format(self._payload, indent=0)
        return self._payload

    def head(self) -> bytes:
        """The payload's first bytes, for detection (a ZIP member is not inflated whole)."""
        if self._payload is not None:
            return self._payload[:SNIFF_BYTES]
        if self.container == "folder":
            return b""
        if self.container == "zip":
            try:
                with self._zip() as zf, zf.open(self.member) as f:
                    head = f.read(SNIFF_BYTES)
            except _zip_errors() as exc:
                raise SourceError(f"{self.name}: cannot read: {exc}") from None
            return head[3:] if head.startswith(BOM) else head
        if self.data is not None:
            return self.data[:SNIFF_BYTES]
        assert self.path is not None
        with open(self.path, "rb") as f:
            return f.read(SNIFF_BYTES)

    def connect(self) -> sqlite3.Connection:
        """A read-only connection to the database (stdin bytes are loaded into memory).

        See :func:`connect_readonly` for how a database in WAL mode is opened
        without writing anything beside it.
        """
        import sqlite3

        if self.container != "sqlite":
            raise UsageError(f"{self.name}: not an SQLite database")
        conn: sqlite3.Connection | None = None
        try:
            if self.path is not None:
                conn = connect_readonly(self.path)
            else:
                assert self.data is not None
                conn = sqlite3.connect(":memory:")
                conn.deserialize(self.data)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except (sqlite3.Error, OSError) as exc:
            if conn is not None:
                conn.close()  # a connection the probe refused is still open
            raise SourceError(f"{self.name}: cannot open the database: {exc}") from None
        except UnicodeDecodeError:  # a damaged schema, its message not even UTF-8
            if conn is not None:
                conn.close()
            raise SourceError(f"{self.name}: cannot open the database: damaged schema") from None
        return conn

    def entries(self, rel: str = "") -> list[tuple[str, bool]]:
        """A folder source's entries under *rel*: ``(name, is_dir)`` in name order."""
        if self.container != "folder" or self.path is None:
            return []
        try:
            with os.scandir(os.path.join(self.path, rel)) as it:
                found = [(e.name, e.is_dir()) for e in it if not e.name.startswith(".")]
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise SourceError(f"{os.path.join(self.path, rel)}: cannot list: {exc}") from None
        return sorted(found)

    def read(self, rel: str) -> bytes | None:
        """The bytes of the file at *rel* in a folder source (``None`` where there is none)."""
        if self.container != "folder" or self.path is None:
            return None
        path = os.path.join(self.path, rel)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except OSError as exc:
            raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if data.startswith(BOM):
            data = data[3:]
        if data.find(b"\n", 0, _content_end(data)) >= 0:
            # Pretty-printed: compacted (text-level, numbers untouched) so verbatim
            # values copied into events carry no line breaks into JSONL output.
            with contextlib.suppress(msgspec.DecodeError):  # invalid: the adapter says so
                data = msgspec.json.format(data, indent=0)
        return data

    def release(self) -> None:
        """Drop the cached payload."""
        self._payload = None

    def _zip(self) -> zipfile.ZipFile:
        import zipfile

        if self.path is not None:
            return zipfile.ZipFile(self.path)
        assert self.data is not None
        return zipfile.ZipFile(io.BytesIO(self.data))


def _content_end(data: bytes) -> int:
    """Where *data* ends without its trailing whitespace (found without copying it)."""
    end = len(data)
    while end and data[end - 1] in b" \t\r\n":
        end -= 1
    return end


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(path.replace(os.sep, "/"))


def connect_readonly(path: str) -> sqlite3.Connection:
    """Open the database at *path* read-only, writing nothing beside it.

    A database in WAL mode keeps its newest commits in ``<db>-wal``, indexed
    by ``<db>-shm``, until a checkpoint copies them into the file; a reader
    sees the whole database only through both. SQLite creates the two files
    beside the database when a reader opens it without them, so:

    * a database in rollback-journal mode: ``mode=ro`` (a reader creates no file);
    * WAL mode with no WAL file, or an empty one (no harness has the database
      open, or it has written nothing since the last checkpoint): the file is
      opened ``immutable`` — no locks, no ``-shm``, nothing created;
    * a WAL with commits and its ``-shm`` (the harness is running): opened
      ``mode=ro`` the way SQLite readers share a database with its writer —
      the reader never blocks the writer, and keeps each read short so
      checkpoints are not held back;
    * a WAL without ``-shm`` (a writer that crashed): the database and its WAL
      are copied to a private temporary folder and the copy is read.

    The writer may close while this looks: its last connection checkpoints
    the WAL into the database and deletes ``-shm`` and ``-wal``, so a WAL seen
    a moment ago can be gone when it is copied. The choice is then made again
    on what the folder holds now (the database, complete by then).
    """
    for _ in range(_OPEN_ATTEMPTS - 1):
        try:
            return _connect_readonly(path)
        except FileNotFoundError:
            if not os.path.exists(path):
                raise
    return _connect_readonly(path)


#: How often :func:`connect_readonly` looks again when a file vanishes under it.
_OPEN_ATTEMPTS: Final = 5


def _connect_readonly(path: str) -> sqlite3.Connection:
    """One pass of :func:`connect_readonly`'s choice (raises if a file vanishes meanwhile)."""
    import sqlite3

    path = os.path.abspath(path)
    uri = "file:" + _uri_path(path)
    wal, shm = path + "-wal", path + "-shm"
    try:
        wal_size = os.path.getsize(wal)
    except OSError:
        wal_size = 0
    if not _is_wal_mode(path):
        return sqlite3.connect(uri + "?mode=ro", uri=True)
    if wal_size <= _WAL_HEADER:
        return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True)
    if os.path.exists(shm):
        return sqlite3.connect(uri + "?mode=ro", uri=True)
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="agentminutes-db-")
    copy = os.path.join(folder, os.path.basename(path))
    shutil.copyfile(wal, copy + "-wal")
    shutil.copyfile(path, copy)
    try:
        conn = sqlite3.connect(copy)
        try:
            conn.execute("PRAGMA query_only = 1")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # opens the WAL now
        except BaseException:
            conn.close()  # a copy that is no database: its connection is not left open
            raise
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the connection keeps the files it opened
    return conn


#: A WAL file this size or smaller holds no frames (the WAL header is 32 bytes).
_WAL_HEADER: Final = 32


def _is_wal_mode(path: str) -> bool:
    """Whether the database header says WAL (file format versions 2 at offsets 18 and 19)."""
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2 and header[19] == 2


@dataclass
class Route:
    """Where a source goes: a document and its adapter, or the line pipeline.

    For stdin, a FIFO or a device the head was consumed while routing; a line
    transcript gets it back as ``head``, to be put in front of the rest of the
    stream. A FIFO or device is read through ``stream``, opened once here
    (opening it again would wait for a writer that has gone).
    """

    document: OpenedDocument | None = None
    adapter: type[DocumentAdapter] | None = None
    head: bytes = b""
    stream: BinaryIO | None = None
    #: The conversation a member file of a folder source stands for ("" for none).
    conversation: str = ""


def route(source: str | os.PathLike[str], harness: str = "auto") -> Route:
    """Decide whether *source* (a path or ``"-"``) is a whole-document source.

    Raises:
        DetectError: a ZIP or database holds nothing a document adapter reads.
        SourceError: the source cannot be read.
        UsageError: *harness* names a document format the source is not in.
    """
    named = None
    if not detects(harness):
        named = document_adapter_class(harness)
        if named is None:
            return Route()  # a line harness (or an unknown name the line path reports)
    if source == "-":
        head = _read_fd(sys.stdin.buffer.fileno(), SNIFF_BYTES)
        kind = container_of(head)
        if kind is None and not _json_document(head, named):
            return Route(head=head)
        data = head + _read_fd(sys.stdin.buffer.fileno(), -1)
        doc = OpenedDocument("<stdin>", kind or "json", data=data)
    elif is_stream(os.fspath(source)):
        path = os.fspath(source)
        try:
            stream = open(path, "rb", buffering=0)  # noqa: SIM115 (handed on, or read whole)
        except OSError as exc:
            raise SourceError(f"{path}: {exc.strerror or exc}") from None
        head = _read_fd(stream.fileno(), SNIFF_BYTES)
        kind = container_of(head)
        if kind is None and not _json_document(head, named):
            return Route(head=head, stream=stream)
        with stream:
            data = head + _read_fd(stream.fileno(), -1)
        doc = OpenedDocument(path, kind or "json", data=data)
    else:
        path = os.fspath(source)
        if os.path.isdir(path):
            return _folder_route(path, named)
        err = open_error(path)
        if err is not None:
            raise err
        try:
            with open(path, "rb") as f:
                head = f.read(SNIFF_BYTES)
        except OSError as exc:
            raise SourceError(f"{path}: {exc.strerror or exc}") from None
        kind = container_of(head)
        if kind is None and not _json_document(head, named):
            return Route()
        if kind is None:
            member = _member_route(path, head, named)
            if member is not None:
                return member
        doc = OpenedDocument(path, kind or "json", path=path)
    cls, _ = pick(doc, named)
    return Route(document=doc, adapter=cls)


def _folder_adapters(named: type[DocumentAdapter] | None) -> list[type[DocumentAdapter]]:
    from agentminutes import harness  # the registry's classes: only for a folder source

    candidates = [named] if named is not None else list(harness.DOCUMENT_ADAPTERS)
    return [c for c in candidates if "folder" in c.containers]


def folder_transcript(folder: str, names: frozenset[str]) -> str | None:
    """The file that stands for *folder* (entries *names*) when a folder format takes
    it as one source (a Cline task, an OpenHands conversation, an OpenCode storage
    tree), its conversion reading the whole folder; ``None`` for an ordinary folder."""
    for cls in _folder_adapters(None):
        if isinstance(cls, type) and issubclass(cls, BaseDocumentAdapter):
            found = cls.folder_transcript(folder, names)
            if found is not None:
                return found
    return None


def _folder_route(path: str, named: type[DocumentAdapter] | None) -> Route:
    """A folder given as the source: the folder format that claims it, or an error."""
    try:
        with os.scandir(path) as it:
            names = frozenset(e.name for e in it)
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    best: type[DocumentAdapter] | None = None
    best_conf = Confidence.NO_MATCH
    for cls in _folder_adapters(named):
        conf = getattr(cls, "sniff_folder", lambda _n: Confidence.NO_MATCH)(names)
        if conf > best_conf:
            best, best_conf = cls, conf
    if best is None:
        if named is not None and named.name not in {c.name for c in _folder_adapters(None)}:
            raise SourceError(f"{path}: is a directory, not a {named.name} source")
        raise SourceError(
            f"{path}: is a directory, and not a session folder of a known format"
            " (a Cline task folder, an OpenCode storage tree)"
        )
    return Route(document=OpenedDocument(path, "folder", path=path), adapter=best)


def _member_route(path: str, head: bytes, named: type[DocumentAdapter] | None) -> Route | None:
    """A file that belongs to a folder source (a Cline task's ``ui_messages.json`` …)."""
    if named is not None:
        candidates = _folder_adapters(named)
    else:
        try:
            cls, _ = detect(head)
        except DetectError:
            return None
        candidates = _folder_adapters(None) if is_document_adapter(cls) else []
        candidates = [c for c in candidates if c is cls]
    for cls in candidates:
        found = getattr(cls, "folder_of", lambda _p, _h: None)(os.path.abspath(path), head)
        if found is not None:
            folder, conversation = found
            doc = OpenedDocument(folder, "folder", path=folder)
            return Route(document=doc, adapter=cls, conversation=conversation)
    return None


def _json_document(head: bytes, named: type[DocumentAdapter] | None) -> bool:
    """Is a (non-container) head a document: named so, or detected as one."""
    if named is not None:
        return True
    if not head:
        return False
    try:
        cls, _ = detect(head)
    except DetectError:
        return False
    return is_document_adapter(cls)


def pick(
    doc: OpenedDocument, named: type[DocumentAdapter] | None = None
) -> tuple[type[DocumentAdapter], Confidence]:
    """Find the adapter for *doc* and how sure detection is (a named one is checked, not graded)."""
    if named is not None and doc.container not in named.containers:
        raise UsageError(f'{doc.name}: harness "{named.name}" does not read {doc.container} files')
    # Looked up here: importing the registry's classes loads every document adapter
    # (and sqlite3), which a line transcript never needs.
    from agentminutes import harness

    candidates = [named] if named is not None else list(harness.DOCUMENT_ADAPTERS)
    if doc.container == "zip":
        doc.member = _zip_member(doc, candidates)
    if named is not None:
        return named, Confidence.CERTAIN
    head = doc.head()
    best: type[DocumentAdapter] | None = None
    best_conf = Confidence.NO_MATCH
    for cls in candidates:
        if doc.container not in cls.containers:
            continue
        conf = sniff_safely(cls, head)
        if conf > best_conf:
            best, best_conf = cls, conf
    if best_conf < Confidence.CERTAIN and doc.container == "sqlite" and doc.path is not None:
        # The schema may not be in the file yet (a WAL database before its first
        # checkpoint keeps it in the -wal): grade the tables SQLite lists.
        tables = _table_names(doc)
        for cls in candidates:
            sniff_tables = getattr(cls, "sniff_tables", None)
            if doc.container in cls.containers and sniff_tables is not None:
                conf = sniff_tables(tables)
                if conf > best_conf:
                    best, best_conf = cls, conf
    if best is None:
        tried = ", ".join(c.name for c in candidates if doc.container in c.containers)
        what = f"{doc.container} member {doc.member}" if doc.member else f"{doc.container} file"
        raise DetectError(f"{doc.name}: could not detect the format of this {what} (tried {tried})")
    return best, best_conf


def _table_names(doc: OpenedDocument) -> frozenset[str]:
    import sqlite3

    try:
        conn = doc.connect()
    except SourceError:
        return frozenset()
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    except sqlite3.Error:
        return frozenset()
    finally:
        conn.close()
    return frozenset(str(r[0]) for r in rows)


def _zip_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged ZIP archive or member raises, not only ``OSError``.

    A bad header or CRC (``BadZipFile``), a cut or damaged stream (``zlib.error``,
    ``LZMAError``, ``EOFError``), an encrypted member (``RuntimeError``), a method
    this Python cannot inflate (``NotImplementedError``): each is a file that
    cannot be read, reported in one line, never an internal error.
    """
    import zipfile
    import zlib

    errors: list[type[BaseException]] = [
        OSError,
        EOFError,
        RuntimeError,
        NotImplementedError,
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
    ]
    lzma = getattr(zipfile, "lzma", None)  # zipfile imports it when Python has it
    if lzma is not None:
        errors.append(lzma.LZMAError)
    return tuple(errors)


def _zip_member(doc: OpenedDocument, candidates: list[type[DocumentAdapter]]) -> str:
    """The member holding the conversations: the shallowest one a candidate names."""

    wanted = {c.zip_member for c in candidates if "zip" in c.containers and c.zip_member}
    try:
        with doc._zip() as zf:
            names = [i.filename for i in zf.infolist() if not i.is_dir()]
    except _zip_errors() as exc:
        raise SourceError(f"{doc.name}: not a readable ZIP archive: {exc}") from None
    found = [n for n in names if n.rsplit("/", 1)[-1] in wanted and "__MACOSX" not in n]
    if not found:
        listed = ", ".join(sorted(wanted)) or "no member name"
        raise DetectError(
            f"{doc.name}: a ZIP archive without {listed}; not an export this version reads"
        )
    return min(found, key=lambda n: (n.count("/"), n))


def _read_fd(fd: int, limit: int) -> bytes:
    """Read up to *limit* bytes (``-1``: all) from descriptor *fd*, unbuffered.

    The line pipeline reads stdin (or the FIFO) from the descriptor too, so
    bytes read here and handed back as a route's head are never read twice or
    lost.
    """
    parts: list[bytes] = []
    size = 0
    while limit < 0 or size < limit:
        want = 1 << 20 if limit < 0 else min(1 << 20, limit - size)
        chunk = os.read(fd, want)
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


@dataclass
class DocumentConversion:
    """A document source on its way through its adapter, one conversation at a time."""

    document: OpenedDocument
    adapter_class: type[DocumentAdapter]
    options: ParseOptions = field(default_factory=ParseOptions)
    on_skip: SkipHook | None = None

    @property
    def harness(self) -> str:
        return self.adapter_class.name

    def _adapter(self) -> DocumentAdapter:
        return self.adapter_class(self.options, on_skip=self.on_skip)

    def conversations(self) -> list[ConversationInfo]:
        """The conversations in the document, listed without building events."""
        try:
            try:
                return self._adapter().conversations(self.document)
            except RecursionError:
                return self._deep(lambda: self._adapter().conversations(self.document))
        except ParseError as exc:
            raise exc.with_path(self.document.name) from None

    def sessions(self, only: str | None = None) -> Iterator[DocumentSession]:
        """Parse every conversation (or only the one with id *only*), in source order."""
        try:
            done = 0
            try:
                for session in self._adapter().sessions(self.document, only):
                    if self.options.check_verbatim:
                        safe_events(session.events)
                    yield session
                    done += 1
            except RecursionError:
                # Read again on a fresh stack; the sessions written already are not again.
                again = self._deep(lambda: list(self._adapter().sessions(self.document, only)))
                for session in again[done:]:
                    if self.options.check_verbatim:
                        safe_events(session.events)
                    yield session
        except ParseError as exc:
            raise exc.with_path(self.document.name) from None

    def _deep(self, read: Callable[[], T]) -> T:
        """*read* again on a fresh stack (where the C recursion limit binds), or the depth error."""
        if C_RECURSION_LIMITED:
            try:
                return on_fresh_stack(read)
            except RecursionError:
                pass
        cls = self.adapter_class
        raise ParseError(
            cls.name, depth_reason(), last_checked=cls.last_checked, unit="record"
        ) from None

    def resolve(self, conversation: str | None) -> str:
        """The id of the conversation to convert, from an id, a unique id prefix, or nothing.

        Raises:
            UsageError: no such conversation, an ambiguous prefix, or several
                conversations and none chosen; the message says how to find ids.
        """
        listed = self.conversations()
        name = self.document.name
        if conversation is None or conversation == "":
            if len(listed) == 1:
                return listed[0].id
            if not listed:
                raise UsageError(f"{name}: the {self.harness} source holds no conversations")
            raise UsageError(
                f"{name}: the {self.harness} source holds {len(listed)} conversations; "
                f"choose one with --conversation ID, or convert them all with --all "
                f"(JSONL, one session per line). {_examples(listed)}"
            )
        exact = [c for c in listed if c.id == conversation]
        if exact:
            return exact[0].id
        matches = [c for c in listed if c.id.startswith(conversation)]
        if len(matches) == 1:
            return matches[0].id
        if matches:
            raise UsageError(
                f'{name}: conversation id prefix "{conversation}" matches {len(matches)} '
                f"conversations. {_examples(matches)}"
            )
        raise UsageError(
            f'{name}: no conversation "{conversation}" among the {len(listed)} in this '
            f"{self.harness} source. {_examples(listed)}"
        )


def _examples(listed: list[ConversationInfo], n: int = 3) -> str:
    shown = "; ".join(f'{c.id} "{_short(c.title)}"' if c.title else c.id for c in listed[:n])
    more = f" and {len(listed) - n} more" if len(listed) > n else ""
    return (
        f"Ids: {shown}{more} (every session's meta.session_id in `agentminutes convert --all`"
        f" output; agentminutes.conversations(path) lists them)"
    )


def _short(title: str, width: int = 40) -> str:
    title = " ".join(title.split())
    return title if len(title) <= width else title[: width - 1] + "…"


@dataclass
class Feed:
    """One session on its way: its batches of events (no stages applied yet), then its skips.

    ``skipped()`` is complete once ``batches`` is exhausted.
    """

    batches: AsyncIterator[Batch]
    skipped: Callable[[], dict[str, int]]
    #: Lines of only Unicode white space passed over (complete with ``skipped``).
    white_space: Callable[[], int] = field(default=lambda: 0)


def single_session(source: str | os.PathLike[str], conversation: str | None) -> None:
    """Refuse a conversation choice for a line transcript, which is one session."""
    if conversation:
        raise UsageError(
            f"{source_name(source)}: a single-session transcript; --conversation"
            " (conversation=) applies to multi-conversation sources (data exports, turns.db)"
        )


async def _one(events: list[Event]) -> AsyncIterator[Batch]:
    yield Batch(events)


async def _served(batches: Iterable[Batch]) -> AsyncIterator[Batch]:
    """Already-made batches as an async iterator that never suspends."""
    for batch in batches:
        yield batch


def feeds(
    source: str | os.PathLike[str],
    harness: str,
    options: ParseOptions,
    conversation: str | None = None,
    *,
    every: bool = False,
    sync: bool = False,
) -> Iterator[Feed]:
    """The sessions to read from *source*: the one it is (or the one chosen), or all of them.

    A line transcript is one session (*conversation* is then an error). In a
    document source *conversation* picks one by id or unique id prefix, and
    may be left out only where the source holds one conversation; *every*
    goes through all of them, each built only when reached. With *sync* a
    line transcript on a path is read synchronously: its batches never
    suspend, so a caller may drive them without an event loop (the CLI's
    ``convert`` and ``stats``, which need no async stack then).

    Raises:
        UsageError: *conversation* given for a line transcript, missing where
            needed, unknown or ambiguous (the message says how to find ids).
    """
    found = route(source, harness)
    if found.document is None:
        single_session(source, conversation)
        path = None if source == "-" else os.fspath(source)
        conv = Conversion(name=source_name(source), harness=harness, options=options, path=path)
        if sync and source != "-":
            chunks = open_sync_chunks(source, found.head, found.stream)
            batches = _served(conv.iter_batches(chunks))
        else:
            batches = conv.batches(open_chunks(source, found.head, found.stream))
        yield Feed(
            batches,
            lambda: conv.skipped,
            lambda: conv.white_space_lines,
        )
        return
    assert found.adapter is not None
    docs = DocumentConversion(found.document, found.adapter, options)
    chosen = None if every else docs.resolve(conversation or found.conversation or None)
    for session in docs.sessions(chosen):
        yield Feed(_one(session.events), partial(dict, session.skipped))
        if not every:
            return  # ids are unique in a sane export; take the first of any repeats
