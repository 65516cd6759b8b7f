"""The harness adapters and their registry.

A harness is one folder, ``agentminutes/harness/<name>/``, that declares
everything the project knows about it in one
:class:`~agentminutes.harness.description.Harness` (``DESCRIPTION`` in its
``__init__``), listed in :data:`agentminutes.harness.registry.FOLDERS`.
Adding a harness is that folder and one registry line:

1. ``harness/<name>/adapter.py``: the adapter, behind the
   :class:`~agentminutes.harness.Adapter` protocol (line transcripts) or
   :class:`~agentminutes.harness.DocumentAdapter` (exports, databases, task
   folders; one that ``follow`` reads is also a
   :class:`~agentminutes.harness.base.Tailing`);
2. ``harness/<name>/__init__.py``: its ``DESCRIPTION`` (adapter, roots and the
   environment variables that move them, file-name patterns, archive roots,
   layout, tail, drift vocabulary and baseline, usage and prompt rules, display
   name), and its public names re-exported lazily;
3. where its sessions lie, unless one file per session matching its patterns
   (:class:`~agentminutes.harness.files_layout.FilesLocator`) or documents
   under a given root (``layout=None``) say it: ``harness/<name>/layout.py``, a
   :class:`~agentminutes.harness.layout.Locator` (path logic; what only a
   parser can tell it asks the reader discovery gives it);
4. drift, if covered: ``harness/<name>/drift.py`` and its baseline;
5. one line in :data:`~agentminutes.harness.registry.FOLDERS`.

Detection asks each adapter, line formats first, to grade the transcript head
and takes the most confident answer. :data:`REGISTRY` and
:data:`DOCUMENT_REGISTRY` (name and ``module:Class`` per harness) are views of
the registry, kept for code that reads them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from agentminutes.errors import DetectError, OptionError, UsageError
from agentminutes.harness._gojson import C_RECURSION_LIMITED, on_fresh_stack
from agentminutes.harness.base import (
    SNIFF_BYTES,
    SNIFF_RECORDS,
    Adapter,
    BaseAdapter,
    BaseDocumentAdapter,
    Confidence,
    ConversationInfo,
    DocumentAdapter,
    DocumentSession,
    ParseOptions,
    SkipHook,
    is_document_adapter,
)
from agentminutes.harness.description import Harness
from agentminutes.harness.registry import described, harnesses, names
from agentminutes.versions import version_newer

__all__ = (
    "ADAPTERS",
    "DOCUMENT_ADAPTERS",
    "DOCUMENT_REGISTRY",
    "REGISTRY",
    "SNIFF_BYTES",
    "SNIFF_RECORDS",
    "Adapter",
    "BaseAdapter",
    "BaseDocumentAdapter",
    "Confidence",
    "ConversationInfo",
    "DocumentAdapter",
    "DocumentSession",
    "Harness",
    "ParseOptions",
    "SkipHook",
    "adapter_class",
    "described",
    "detect",
    "document_adapter_class",
    "harness_names",
    "harnesses",
    "is_document_adapter",
    "load_line_adapters",
    "sniff_safely",
    "version_newer",
)

if TYPE_CHECKING:
    #: The line adapters: harness name and ``module:Class``, in detection order.
    REGISTRY: tuple[tuple[str, str], ...]
    #: The whole-document adapters (data exports, databases), likewise.
    DOCUMENT_REGISTRY: tuple[tuple[str, str], ...]
    #: Every registered line adapter class, in detection order.
    ADAPTERS: tuple[type[Adapter], ...]
    #: Every registered whole-document adapter class, in detection order.
    DOCUMENT_ADAPTERS: tuple[type[DocumentAdapter], ...]


def _refs(reads: str) -> tuple[tuple[str, str], ...]:
    return tuple((h.name, h.adapter) for h in harnesses() if h.reads == reads)


def __getattr__(name: str) -> Any:
    # Views of the registry; ADAPTERS and DOCUMENT_ADAPTERS import every adapter module, once.
    if name == "REGISTRY":
        value: Any = _refs("lines")
    elif name == "DOCUMENT_REGISTRY":
        value = _refs("documents")
    elif name == "ADAPTERS":
        value = tuple(h.adapter_class() for h in harnesses() if h.reads == "lines")
    elif name == "DOCUMENT_ADAPTERS":
        value = tuple(h.adapter_class() for h in harnesses() if h.reads == "documents")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def load_line_adapters() -> None:
    """Import every line adapter module now (what detecting a first record would import).

    A follower waiting for a transcript's first bytes calls it from a worker
    thread while idle, so the first event is not delayed by imports.
    """
    for h in harnesses():
        if h.reads == "lines":
            h.adapter_class()


def harness_names() -> list[str]:
    """The names of every registered harness, line and document formats alike."""
    return names()


def document_adapter_class(name: str) -> type[DocumentAdapter] | None:
    """The document adapter class registered for harness *name*, or ``None``."""
    found = described(name)
    if found is not None and found.reads == "documents":
        return cast("type[DocumentAdapter]", found.adapter_class())
    return None


def adapter_class(name: str) -> type[Adapter]:
    """Return the adapter class registered for harness *name*."""
    found = described(name)
    if found is not None and found.reads == "lines":
        return cast("type[Adapter]", found.adapter_class())
    if found is not None:
        raise UsageError(f'harness "{name}" reads whole documents (exports, databases), not lines')
    known = ", ".join(f'"{n}"' for n in harness_names())
    raise OptionError(f'unknown harness "{name}" (known: {known}, or "auto")')


def sniff_safely(cls: type[Adapter] | type[DocumentAdapter], head: bytes) -> Confidence:
    """``cls.sniff(head)``, a head nested too deep to decode being no match (not a crash)."""
    try:
        return cls.sniff(head)
    except RecursionError:
        if C_RECURSION_LIMITED:
            try:
                return on_fresh_stack(cls.sniff, head)
            except RecursionError:
                pass
        return Confidence.NO_MATCH


def detect(
    head: bytes, prefer: str = ""
) -> tuple[type[Adapter] | type[DocumentAdapter], Confidence]:
    """Find the adapter whose format *head* (a transcript's first bytes) is.

    Every adapter grades the head (each by its first record, or a document's
    start); line adapters come first, and a document adapter is returned only
    where no line adapter is as sure. When none is certain, the line adapters
    grade the head again from each of the next complete records, up to
    :data:`SNIFF_RECORDS` in all: a transcript may open with bookkeeping no
    adapter can place alone (a Claude Code ``fork-context-ref`` or
    ``teleported-from`` record carries no session id), or with a line that is
    no record at all, which parsing then reports. A ZIP archive is graded by
    the head of its conversations member, not its own (see
    :func:`agentminutes.pipeline.document_sources.route`).

    Raises:
        DetectError: no adapter recognizes the head; the message lists those tried.
    """
    head = head[:SNIFF_BYTES]
    best, best_conf = _grade(head, harnesses(), prefer)
    if best_conf < Confidence.CERTAIN:
        for start in _later_records(head):
            cls, conf = _grade(head[start:], _line_harnesses())
            if conf > best_conf:
                best, best_conf = cls, conf
                if conf == Confidence.CERTAIN:
                    break
    if best is None:
        tried = ", ".join(harness_names())
        raise DetectError(f"could not detect the source harness (tried {tried})")
    return best, best_conf


def _line_harnesses() -> tuple[Harness, ...]:
    return tuple(h for h in harnesses() if h.reads == "lines")


def _grade(
    head: bytes, registry: tuple[Harness, ...], prefer: str = ""
) -> tuple[type[Adapter] | type[DocumentAdapter] | None, Confidence]:
    """The most confident adapter for *head*; among equals the first, or the one named
    *prefer* (a hint from the file's path: two harnesses may write one format)."""
    best: type[Adapter] | type[DocumentAdapter] | None = None
    best_conf = Confidence.NO_MATCH
    for h in registry:
        cls: type[Adapter] | type[DocumentAdapter] = h.adapter_class()
        conf = sniff_safely(cls, head)
        if conf > best_conf or (conf == best_conf > Confidence.NO_MATCH and cls.name == prefer):
            best, best_conf = cls, conf
            if conf == Confidence.CERTAIN:
                break
    return best, best_conf


def _later_records(head: bytes) -> list[int]:
    """Where the 2nd … :data:`SNIFF_RECORDS`-th non-blank lines of *head* start, if complete.

    A line the window cuts short is left out (unless the window holds the
    whole input): a record's fragment is no evidence.
    """
    starts: list[int] = []
    whole = len(head) < SNIFF_BYTES
    pos = head.find(b"\n")
    while pos != -1 and len(starts) < SNIFF_RECORDS - 1:
        start = pos + 1
        pos = head.find(b"\n", start)
        if pos == -1 and not whole:
            break
        if head[start : len(head) if pos == -1 else pos].strip():
            starts.append(start)
    return starts
