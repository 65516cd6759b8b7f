"""The adapter protocol every harness module implements, and the helpers they share.

An adapter is plain synchronous, incremental code. It is fed one complete
transcript line at a time (``feed(line, lineno)``) and returns the events
that line completes; ``finish()`` returns whatever was still held (an open
assistant-message fold, a buffered whole-file document). It does no I/O and
knows nothing of asyncio, so the same object serves ``convert``, ``follow``,
``sessions`` (head only) and a map over files in a worker pool.

An adapter that holds a whole transcript until the end (Antigravity's step
sort) may also offer ``drain()``: ``finish()`` as a lazy iterator, which the
pipeline prefers so that memory stays bounded while the events go out.

Accounting: every line handed to an adapter ends as exactly one of

* the provenance of at least one event,
* a counted skip (``skipped[record_type] += 1``, reported in the session report), or
* a :class:`~agentminutes.ParseError` naming harness, version and line
  (in permissive mode: an ``unknown`` event instead).

A stream opens with ``session_meta``. In permissive mode the ``unknown`` events
of lines before the session's first record (a comment, a cut or foreign first
line) are held and come right after it (:meth:`BaseAdapter.hold`,
:meth:`BaseAdapter.opening`), or at the end if no record ever comes.

Some sources are whole documents, not lines: a data export (a JSON array of
conversations, or the ZIP holding it) or an SQLite database. Their adapters
implement :class:`DocumentAdapter` instead: the whole input in, one
:class:`DocumentSession` per conversation out. The same accounting holds per
*record* (a message node, a chat message, a snapshot row: each adapter says
which), numbered from 1 within the conversation; that number stands where a
line number stands for line formats (``Provenance.line``, ``on_skip``).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Protocol, runtime_checkable

import msgspec

from agentminutes.errors import OptionError, ParseError
from agentminutes.schema import (
    NO_RAW,
    ContentBlock,
    Event,
    EventKind,
    Meta,
    Provenance,
    Raw,
    ToolCall,
    ToolKind,
    ToolResult,
    Unknown,
)

if TYPE_CHECKING:
    import pickle
    import sqlite3

__all__ = (
    "AUTO",
    "BOM",
    "SNIFF_BYTES",
    "SNIFF_RECORDS",
    "TEXT_FORMS",
    "Adapter",
    "BaseAdapter",
    "BaseDocumentAdapter",
    "Confidence",
    "ConversationInfo",
    "Document",
    "DocumentAdapter",
    "DocumentSession",
    "DocumentTail",
    "HeadIdentity",
    "ParseOptions",
    "SkipHook",
    "Tailing",
    "detects",
    "document_path",
    "first_line",
    "is_document_adapter",
    "json_or_string",
    "listed_title",
    "newer_format",
    "tool_call",
)

#: How many leading bytes of a transcript detection may look at.
SNIFF_BYTES = 64 * 1024

#: The UTF-8 byte order mark some editors and Windows tools put before a file's first line.
BOM: Final = b"\xef\xbb\xbf"

#: How many records of the head detection grades, the first one included.
SNIFF_RECORDS: Final = 16

SkipHook = Callable[[int, str], None]

#: What :meth:`Adapter.head_identity` makes of a record met before the stream opens:
#: the ``session_meta`` event :meth:`~Adapter.feed` would open the stream with on
#: it; ``"passed"`` for a record ``feed`` would only count as skipped (so the next
#: record can be asked, or fed, as if this one had been fed); ``None`` when only
#: ``feed`` can tell (the caller feeds this record and the rest).
HeadIdentity = Event | Literal["passed"] | None


class Confidence(IntEnum):
    """How sure an adapter is that a transcript head is its format."""

    NO_MATCH = 0
    POSSIBLE = 1
    CERTAIN = 2

    def __str__(self) -> str:
        return ("no-match", "possible", "certain")[self.value]


#: The ``--harness`` value that asks for detection (as an empty name does).
AUTO: Final = "auto"


def detects(harness: str) -> bool:
    """Whether *harness* (a ``--harness`` value) asks for detection rather than naming one."""
    return harness in ("", AUTO)


#: The forms of a system event's text (:attr:`ParseOptions.text_form`).
TEXT_FORMS: Final = ("bare", "delivered")


@dataclass(frozen=True, slots=True)
class ParseOptions:
    """Options shared by every adapter.

    Args:
        permissive: turn records no rule classifies into ``unknown`` events
            instead of raising :class:`ParseError`.
        keep_raw: keep the verbatim source records in each event's provenance.
        harness_version: the harness version for formats that record none;
            metadata only, a version the transcript records wins.
        text_form: ``"bare"`` (a system event's text as recorded) or
            ``"delivered"`` (as the harness delivered it to the model, wrapper
            included, where the transcript records that); any other raises
            :class:`~agentminutes.errors.OptionError`.
        live: the input is a growing file that is followed: an adapter whose
            format would make it wait for the end of input (a whole-file sort)
            emits each record as it arrives instead.
        presorted: the caller has checked, with the adapter's ``is_presorted``,
            that the records already stand in the order a whole-file sort would
            give them, so the adapter converts each as it arrives and holds
            nothing (the output is the same as sorting's).
        check_verbatim: make the verbatim JSON that events copy from their
            records safe to write (a repeated key's earlier members dropped,
            integers past Python's digit limit in exponent form: see
            :mod:`agentminutes.pipeline.verbatim`); off for a caller that
            writes none of it (``stats``), which then skips the cost.
        kinds: the event kinds the caller reads (``None``: every kind). An
            adapter may then leave out events of other kinds and skip the work
            only they need, never the state the wanted kinds depend on; each
            adapter that does says what such a projected read does not check
            (``usage`` reads requests: see ``RequestFolder.KINDS``).
        system_text: give system events their text. Off for a caller that
            reads none of it (``stats`` as JSON counts system events by
            subtype): an adapter may then leave that text empty and skip
            decoding and rendering it (an attachment's file contents, say).
    """

    permissive: bool = False
    keep_raw: bool = False
    harness_version: str = ""
    text_form: str = "bare"
    live: bool = False
    presorted: bool = False
    check_verbatim: bool = True
    kinds: frozenset[str] | None = None
    system_text: bool = True

    def __post_init__(self) -> None:
        if self.text_form not in TEXT_FORMS:
            raise OptionError(
                f'unknown text form "{self.text_form}" (want {" or ".join(TEXT_FORMS)})'
            )


@runtime_checkable
class Adapter(Protocol):
    """One harness's transcript format, parsed line by line into events."""

    #: The harness identifier (``"claude-code"``, ``"codex"`` …).
    name: ClassVar[str]
    #: The newest harness release whose transcripts this adapter was checked against.
    last_checked: ClassVar[str]
    #: Skipped native records so far, by native record type.
    skipped: dict[str, int]
    #: The harness version the transcript revealed, once it has.
    version: str

    def __init__(
        self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None
    ) -> None: ...

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        """Grade whether *head* (at most :data:`SNIFF_BYTES`) starts a transcript of this format."""
        ...

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        """Parse one complete, non-blank line; return the events it completes."""
        ...

    def finish(self) -> list[Event]:
        """End of input: return the events still held."""
        ...

    def head_identity(self, line: bytes, lineno: int) -> HeadIdentity:
        """What a record before the stream opens says, read cheaply (see :data:`HeadIdentity`).

        It changes no state: identity reads ask one adapter about many transcripts."""
        ...

    @property
    def whole_document(self) -> bool:
        """Whether the input is one document converted only at its end (rewritten, not appended)."""
        ...

    def snapshot(self) -> bytes:
        """Serialize the adapter's parsing state, so a follower can resume mid-file."""
        ...

    def restore(self, state: bytes) -> None:
        """Continue from a :meth:`snapshot` taken by an adapter of the same class."""
        ...


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """One conversation inside a multi-conversation source, as listed without parsing it.

    ``created`` and ``updated`` are RFC 3339 times ("" where the source has
    none); ``messages`` counts the conversation's messages as the adapter
    defines them (for a message tree: the messages on its active branch).
    """

    id: str
    title: str = ""
    created: str = ""
    updated: str = ""
    messages: int = 0


def listed_title(text: str) -> str:
    """A conversation's title as listed: its white space folded, at most 80 characters."""
    return " ".join(text.split())[:80]


@dataclass(slots=True)
class DocumentSession:
    """One conversation of a document source, parsed: its events and its skip counts."""

    conversation: ConversationInfo
    events: list[Event]
    skipped: dict[str, int] = field(default_factory=dict)


class Document(Protocol):
    """What a document adapter reads: an opened export file, ZIP member or database.

    The pipeline opens it (:class:`agentminutes.pipeline.document_sources.OpenedDocument`);
    adapters only read through this interface, so the harness layer never
    reaches up into the pipeline.
    """

    name: str

    def payload(self) -> bytes:
        """The JSON payload (the file itself, or the ZIP member), read once."""
        ...

    def connect(self) -> sqlite3.Connection:
        """A read-only connection to the database."""
        ...

    def entries(self, rel: str = "") -> list[tuple[str, bool]]:
        """A folder source's entries under *rel*: ``(name, is_dir)``, by name; ``[]`` if none."""
        ...

    def read(self, rel: str) -> bytes | None:
        """The bytes of the file at *rel* in a folder source, or ``None`` where there is none."""
        ...


def document_path(doc: Document) -> str:
    """The file or folder *doc* was opened from (its name, for one opened from no path)."""
    return getattr(doc, "path", None) or doc.name


@runtime_checkable
class DocumentAdapter(Protocol):
    """A whole-document format (export JSON or ZIP, SQLite database) of many conversations.

    Detection looks at the head of the payload (for a ZIP: of the member that
    holds the conversations). The adapter is handed the opened
    :class:`Document` and yields one
    :class:`DocumentSession` per conversation, in source order, each built
    only when asked for, so a large export never holds more than one
    conversation's events.
    """

    name: ClassVar[str]
    last_checked: ClassVar[str]
    #: The containers this format comes in: ``"json"``, ``"zip"``, ``"sqlite"``.
    containers: ClassVar[frozenset[str]]
    #: Where this format's conversations live inside an export ZIP.
    zip_member: ClassVar[str]

    def __init__(
        self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None
    ) -> None: ...

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        """Grade whether *head* (the payload's first bytes) is this format."""
        ...

    def conversations(self, doc: Document) -> list[ConversationInfo]:
        """List the conversations in *doc* cheaply, without building events."""
        ...

    def sessions(self, doc: Document, only: str | None = None) -> Iterator[DocumentSession]:
        """Parse the conversations of *doc* (only the one with id *only*, if given)."""
        ...


class DocumentTail(Protocol):
    """What ``follow`` drives for a source that is rewritten, not appended to.

    A database takes commits and a task folder's documents are rewritten whole:
    the tail reads only what changed since its last :meth:`poll`.
    """

    #: The adapter the tail converts with (its skip counts are the follow's).
    adapter: Any

    def watched(self) -> list[str]:
        """The files whose size or time says the source changed (a database and its WAL)."""
        ...

    def poll(self) -> list[tuple[str, list[Event]]]:
        """The events that became settled since the last poll, per session id."""
        ...

    def flush(self) -> list[tuple[str, list[Event]]]:
        """At a stop: every event not written yet, settled or not, per session id."""
        ...


@runtime_checkable
class Tailing(Protocol):
    """A :class:`DocumentAdapter` that ``follow`` can read as its source grows.

    Its harness's description says ``tail=True``; the follower asks the
    registry, never the adapter's attributes.
    """

    def tail(self, doc: Document) -> DocumentTail:
        """Follow the opened source *doc*."""
        ...


def is_document_adapter(cls: type[Any]) -> bool:
    """True for a :class:`DocumentAdapter` class, False for a line :class:`Adapter`."""
    return bool(getattr(cls, "containers", None))


class BaseAdapter:
    """Shared plumbing: skip accounting, loud failure, permissive unknowns, provenance."""

    name: ClassVar[str] = ""
    last_checked: ClassVar[str] = ""
    #: Attributes that are configuration, not parsing state (left out of snapshots).
    _config_attrs: ClassVar[frozenset[str]] = frozenset({"options", "on_skip", "projected"})

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        self.options = options or ParseOptions()
        self.on_skip = on_skip
        #: The event kinds the caller reads, when not every kind (``ParseOptions.kinds``).
        self.projected = self.options.kinds
        self.skipped: dict[str, int] = {}
        self.version = ""
        #: Permissive ``unknown`` events of lines before the session's first record,
        #: held until its ``session_meta`` is out (see :meth:`hold`).
        self.early: list[Event] = []
        #: Each tool call's id -> its tool's name, for results that carry only the id
        #: (see :meth:`name_call`).
        self.tool_names: dict[str, str] = {}
        # One string per tool name for all of tool_names' values: a long session has
        # a few names for hundreds of thousands of calls (not sys.intern: on some
        # Pythons its strings live as long as the process, a follower's days).
        self._tool_name_strings: dict[str, str] = {}

    # -- protocol defaults -------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        return Confidence.NO_MATCH

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        raise NotImplementedError

    def finish(self) -> list[Event]:
        return []

    def snapshot(self) -> bytes:
        state = {k: v for k, v in vars(self).items() if k not in self._config_attrs}
        import pickle

        buf = io.BytesIO()
        _snapshot_picklers()[0](buf, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
        return buf.getvalue()

    def restore(self, state: bytes) -> None:
        vars(self).update(_snapshot_picklers()[1](io.BytesIO(state)).load())

    # -- helpers for subclasses -------------------------------------------

    @property
    def whole_document(self) -> bool:
        """Whether the input showed itself to be one document converted only at its end.

        Such a transcript (a legacy JSON session) is rewritten whole rather than
        appended to: a follower re-reads it on each change and writes only the
        events it has not written yet.
        """
        return False

    @property
    def effective_version(self) -> str:
        """The transcript's own version, else the caller's hint."""
        return self.version or self.options.harness_version

    def head_identity(self, line: bytes, lineno: int) -> HeadIdentity:
        """What a record before the stream opens says, read cheaply (see :data:`HeadIdentity`).

        Identity reads (``sessions``) ask this before :meth:`feed`; this default
        always defers to :meth:`feed`. An adapter whose opening record can be
        told from its envelope alone overrides it, so that listing thousands
        of transcripts does not build the events of their first turns. It must
        change no state of the adapter: identity reads ask one adapter of a class
        about every transcript they list, and feed a fresh one from the first
        record it leaves to :meth:`feed`.
        """
        return None

    def name_call(self, call_id: str, name: str) -> None:
        """Remember that *call_id* calls the tool *name* (one copy of each name kept)."""
        self.tool_names[call_id] = self._tool_name_strings.setdefault(name, name)

    def session_meta(
        self,
        provenance: Provenance | None,
        *,
        timestamp: str = "",
        harness_version: str | None = None,
        **meta: Any,
    ) -> Event:
        """The stream's ``session_meta`` event: this harness, its version, and *meta* (Meta fields).

        The version is the caller's hint (``--harness-version``) unless
        *harness_version* says another.
        """
        version = self.options.harness_version if harness_version is None else harness_version
        return Event(
            kind=EventKind.SESSION_META,
            timestamp=timestamp,
            provenance=provenance,
            session_meta=Meta(harness=self.name, harness_version=version, **meta),
        )

    def tool_result(
        self,
        call_id: str,
        content: list[ContentBlock] | None,
        *,
        is_error: bool = False,
        name: str = "",
        enrichment: Raw = NO_RAW,
    ) -> ToolResult:
        """The result of the call *call_id*: no content is ``None``, the tool's name as recorded.

        A result that records no tool name takes the one its call was
        remembered with (:meth:`name_call`), or none.
        """
        return ToolResult(
            tool_call_id=call_id,
            tool_name=name or self.tool_names.get(call_id, ""),
            is_error=is_error,
            content=content or None,
            enrichment=enrichment,
        )

    def skip(self, record_type: str, lineno: int) -> None:
        """Count a documented skip of a native record."""
        self.skipped[record_type] = self.skipped.get(record_type, 0) + 1
        if self.on_skip is not None:
            self.on_skip(lineno, record_type)

    def error(self, reason: str, lineno: int) -> ParseError:
        """Build the loud-failure error for *lineno*."""
        return ParseError(
            self.name,
            reason,
            line=lineno,
            version=self.effective_version,
            last_checked=self.last_checked,
        )

    def unknown_or_fail(self, record_type: str, line: bytes, lineno: int, reason: str) -> Event:
        """Raise :class:`ParseError`, or in permissive mode keep the record as ``unknown``.

        The record is kept verbatim (see :func:`raw_record`: a line that is not
        JSON is kept as a JSON string of its text, so the output stays JSON).
        """
        if not self.options.permissive:
            raise self.error(reason, lineno)
        return Event(
            kind=EventKind.UNKNOWN,
            provenance=Provenance(line=lineno, end_line=lineno),
            unknown=Unknown(record_type=record_type, reason=reason, raw=raw_record(line)),
        )

    def hold(self, event: Event) -> list[Event]:
        """Hold *event*, the ``unknown`` of a line before the session opened; emit nothing now.

        The stream's first event is its ``session_meta``: what came before the
        first record follows it (:meth:`opening`), or ends the stream
        (:meth:`release`) if none comes.
        """
        self.early.append(event)
        return []

    def opening(self, meta: Event) -> list[Event]:
        """The session's ``session_meta``, then the events held before it."""
        if not self.early:
            return [meta]
        held, self.early = self.early, []
        return [meta, *held]

    def opened(self, events: list[Event]) -> list[Event]:
        """*events* of a line fed before the stream opened, put in opening order.

        For adapters that reach ``session_meta`` along many paths: ``unknown``
        events are held until an event of another kind comes; a
        ``session_meta`` among them then goes first, the held ones after it.
        """
        for i, ev in enumerate(events):
            if ev.kind != EventKind.UNKNOWN:
                if ev.kind == EventKind.SESSION_META:
                    return [ev, *self.release(), *events[:i], *events[i + 1 :]]
                return [*self.release(), *events]
        self.early.extend(events)
        return []

    def release(self) -> list[Event]:
        """The events still held (see :meth:`hold`), no longer held."""
        if not self.early:
            return []
        held, self.early = self.early, []
        return held

    def undecodable(self, exc: Exception, line: bytes, lineno: int) -> Event:
        """:meth:`unknown_or_fail` for a line that is not JSON, or not a record of this format."""
        what = "invalid record" if isinstance(exc, msgspec.ValidationError) else "invalid JSON"
        return self.unknown_or_fail("", line, lineno, f"{what}: {exc}")

    def prov(self, line: bytes, lineno: int) -> Provenance:
        """Single-record provenance, with the record itself under ``--keep-raw``."""
        if self.options.keep_raw:
            return Provenance(line=lineno, end_line=lineno, raw=[Raw(line)])
        return Provenance(line=lineno, end_line=lineno)


class BaseDocumentAdapter(BaseAdapter):
    """Shared plumbing for :class:`DocumentAdapter` implementations.

    ``skipped`` holds the skip counts of the conversation being parsed (reset
    by :meth:`begin`); errors name the conversation and the record.

    Formats that come as a folder of files (container ``"folder"``: a Cline
    task folder, an OpenCode storage tree) also grade a folder by the names in
    it (:meth:`sniff_folder`) and say which folder a member file belongs to
    (:meth:`folder_of`); databases whose schema may not be in the file's head
    yet (a WAL database before its first checkpoint) are graded by their table
    names (:meth:`sniff_tables`).
    """

    containers: ClassVar[frozenset[str]] = frozenset()
    zip_member: ClassVar[str] = ""

    @classmethod
    def sniff_folder(cls, names: frozenset[str]) -> Confidence:
        """Grade a folder holding entries *names* (a folder source's top level)."""
        return Confidence.NO_MATCH

    @classmethod
    def folder_transcript(cls, folder: str, names: frozenset[str]) -> str | None:
        """The file that stands for *folder* (entries *names*) when it is one source of
        this format, whose conversion reads the whole folder; ``None`` otherwise.

        What ``export`` lists for a folder it walks: the folders :meth:`sniff_folder`
        is sure of, or a narrower set where it grades more folders than one source.
        """
        return None

    @classmethod
    def sniff_tables(cls, tables: frozenset[str]) -> Confidence:
        """Grade an SQLite database by the names of its tables."""
        return Confidence.NO_MATCH

    @classmethod
    def folder_of(cls, path: str, head: bytes) -> tuple[str, str] | None:
        """For a member file at *path* (head *head*): its folder source and conversation id.

        ``None`` when the file is a document of its own. The conversation id is
        ``""`` where the file does not single one out.
        """
        return None

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.conversation_id = ""

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        raise TypeError(f"{self.name} reads whole documents, not lines")

    def begin(self, conversation_id: str) -> dict[str, int]:
        """Start a conversation: fresh skip counts, which are returned."""
        self.conversation_id = conversation_id
        self.skipped = {}
        return self.skipped

    def error(self, reason: str, lineno: int) -> ParseError:
        """The loud-failure error for record *lineno* of the current conversation."""
        where = f"conversation {self.conversation_id}: " if self.conversation_id else ""
        return ParseError(
            self.name,
            where + reason,
            line=lineno,
            version=self.effective_version,
            last_checked=self.last_checked,
            unit="record",
        )

    def record_prov(self, raw: Raw, record: int, end: int = 0) -> Provenance:
        """Provenance of one record (or a run up to *end*), with *raw* under ``--keep-raw``."""
        if self.options.keep_raw:
            return Provenance(line=record, end_line=end or record, raw=[raw])
        return Provenance(line=record, end_line=end or record)


@functools.cache
def _snapshot_picklers() -> tuple[type[pickle.Pickler], type[pickle.Unpickler]]:
    """The pickler and unpickler of adapter state, made when a follower first saves or resumes.

    They keep :data:`~agentminutes.schema.NO_RAW` the singleton: msgspec omits a
    default by identity, so an unpickled copy of the empty ``Raw`` would be
    written out as an empty (invalid) JSON value. Made here, not with the
    module, because pickle is a few percent of a ``detect``'s start.
    """
    import pickle

    class SnapshotPickler(pickle.Pickler):
        def persistent_id(self, obj: Any) -> str | None:
            return "NO_RAW" if obj is NO_RAW else None

    class SnapshotUnpickler(pickle.Unpickler):
        def persistent_load(self, pid: Any) -> Any:
            if pid == "NO_RAW":
                return NO_RAW
            raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")

    return SnapshotPickler, SnapshotUnpickler


_decode_raw = msgspec.json.Decoder(Raw).decode


def first_line(head: bytes) -> bytes:
    """The first line of a transcript's *head*, without a BOM and the white space around it."""
    if head.startswith(BOM):
        head = head[3:]
    return head.split(b"\n", 1)[0].strip()


def newer_format(reason: str, recorded: str, newest: str) -> str:
    """*reason*, saying the transcript's format (*recorded*) is newer than the *newest* known."""
    return (
        f"{reason} in {recorded}, newer than {newest}"
        " (the newest this adapter knows; likely format drift)"
    )


def tool_call(call_id: str, name: str, tool_input: Raw, kinds: Mapping[str, str]) -> ToolCall:
    """A call of the tool *name*, its ACP kind from the harness's table *kinds* (else ``other``)."""
    return ToolCall(
        tool_call_id=call_id, name=name, kind=kinds.get(name, ToolKind.OTHER), input=tool_input
    )


def json_or_string(text: str) -> Raw:
    """*text* verbatim when it is a JSON text; else *text* as a JSON string.

    How a tool call's arguments, recorded as a string, become its input: the
    JSON the harness sent, and a string that is not JSON kept as a string.
    """
    data = text.encode()
    try:
        msgspec.json.decode(data)
    except msgspec.DecodeError:
        return Raw(msgspec.json.encode(text))
    return Raw(data)


def raw_record(line: bytes) -> Raw:
    """*line* as verbatim JSON when it is JSON; else a JSON string of its text.

    What a permissive ``unknown`` event carries: the output must stay JSON
    whatever the input line was (a comment, a cut record, binary data).
    """
    try:
        return _decode_raw(line)
    except (msgspec.DecodeError, RecursionError):
        return Raw(msgspec.json.encode(line.decode("utf-8", "replace")))
