"""The harness adapters and their registry.

The registry is an explicit list, :data:`REGISTRY`: adding a harness means
writing one module (or package, one module per concern) behind the
:class:`~agentminutes.harness.Adapter` protocol and adding its name and class
here (``ADAPTERS`` holds the classes themselves); a harness whose usage sums
have a prompt total also gets a rule in :data:`agentminutes.schema.summary.PROMPT_RULES`.
Whole-document formats (data exports, databases) implement
:class:`~agentminutes.harness.DocumentAdapter` and are listed in
:data:`DOCUMENT_REGISTRY`. Detection asks each adapter, in this order, to
grade the transcript head and takes the most confident answer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final, cast

from agentminutes.errors import DetectError, UsageError
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
    "ParseOptions",
    "SkipHook",
    "adapter_class",
    "detect",
    "document_adapter_class",
    "harness_names",
    "is_document_adapter",
    "load_line_adapters",
    "sniff_safely",
    "version_newer",
)

#: The registry of line adapters: harness name and ``module:Class``, in detection
#: order (alphabetical by harness name). A module is imported when its adapter is
#: first needed, so a follower resuming one Codex rollout never loads the others.
REGISTRY: Final[tuple[tuple[str, str], ...]] = (
    ("antigravity", "agentminutes.harness.antigravity:AntigravityAdapter"),
    ("claude-code", "agentminutes.harness.claude_code:ClaudeCodeAdapter"),
    ("codex", "agentminutes.harness.codex:CodexAdapter"),
    ("copilot", "agentminutes.harness.copilot:CopilotAdapter"),
    ("gemini-cli", "agentminutes.harness.gemini_cli:GeminiCliAdapter"),
    ("pi", "agentminutes.harness.pi:PiAdapter"),
    ("qwen-code", "agentminutes.harness.qwen_code:QwenCodeAdapter"),
)

#: The registry of whole-document adapters (data exports, databases), likewise.
DOCUMENT_REGISTRY: Final[tuple[tuple[str, str], ...]] = (
    ("chatgpt", "agentminutes.harness.chatgpt:ChatGPTAdapter"),
    ("claude-ai", "agentminutes.harness.claude_ai:ClaudeAIAdapter"),
    ("cline", "agentminutes.harness.cline:ClineAdapter"),
    ("opencode", "agentminutes.harness.opencode:OpenCodeAdapter"),
    ("turns-db", "agentminutes.harness.turns_db:TurnsDBAdapter"),
)

if TYPE_CHECKING:
    #: Every registered line adapter class, in detection order.
    ADAPTERS: tuple[type[Adapter], ...]
    #: Every registered whole-document adapter class, in detection order.
    DOCUMENT_ADAPTERS: tuple[type[DocumentAdapter], ...]


#: The classes :func:`_load` found, by ``module:Class``: detection and ``sessions`` look an
#: adapter up per file, and ``import_module`` takes the import lock each time.
_loaded: dict[str, Any] = {}


def _load(ref: str) -> Any:
    cls = _loaded.get(ref)
    if cls is None:
        module, _, attr = ref.partition(":")
        cls = _loaded[ref] = getattr(importlib.import_module(module), attr)
    return cls


def __getattr__(name: str) -> Any:
    # ADAPTERS and DOCUMENT_ADAPTERS import every adapter module, once.
    if name == "ADAPTERS":
        value: Any = tuple(_load(ref) for _, ref in REGISTRY)
    elif name == "DOCUMENT_ADAPTERS":
        value = tuple(_load(ref) for _, ref in DOCUMENT_REGISTRY)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def load_line_adapters() -> None:
    """Import every line adapter module now (what detecting a first record would import).

    A follower waiting for a transcript's first bytes calls it from a worker
    thread while idle, so the first event is not delayed by imports.
    """
    for _, ref in REGISTRY:
        _load(ref)


def harness_names() -> list[str]:
    """The names of every registered harness, line and document formats alike."""
    return [name for name, _ in REGISTRY + DOCUMENT_REGISTRY]


def document_adapter_class(name: str) -> type[DocumentAdapter] | None:
    """The document adapter class registered for harness *name*, or ``None``."""
    for registered, ref in DOCUMENT_REGISTRY:
        if registered == name:
            return cast("type[DocumentAdapter]", _load(ref))
    return None


def adapter_class(name: str) -> type[Adapter]:
    """Return the adapter class registered for harness *name*."""
    for registered, ref in REGISTRY:
        if registered == name:
            return cast("type[Adapter]", _load(ref))
    if document_adapter_class(name) is not None:
        raise UsageError(f'harness "{name}" reads whole documents (exports, databases), not lines')
    known = ", ".join(f'"{n}"' for n in harness_names())
    raise UsageError(f'unknown harness "{name}" (known: {known}, or "auto")')


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


def detect(head: bytes) -> tuple[type[Adapter] | type[DocumentAdapter], Confidence]:
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
    :func:`agentminutes.pipeline.documents.route`).

    Raises:
        DetectError: no adapter recognizes the head; the message lists those tried.
    """
    head = head[:SNIFF_BYTES]
    best, best_conf = _grade(head, REGISTRY + DOCUMENT_REGISTRY)
    if best_conf < Confidence.CERTAIN:
        for start in _later_records(head):
            cls, conf = _grade(head[start:], REGISTRY)
            if conf > best_conf:
                best, best_conf = cls, conf
                if conf == Confidence.CERTAIN:
                    break
    if best is None:
        tried = ", ".join(harness_names())
        raise DetectError(f"could not detect the source harness (tried {tried})")
    return best, best_conf


def _grade(
    head: bytes, registry: tuple[tuple[str, str], ...]
) -> tuple[type[Adapter] | type[DocumentAdapter] | None, Confidence]:
    best: type[Adapter] | type[DocumentAdapter] | None = None
    best_conf = Confidence.NO_MATCH
    for _, ref in registry:
        cls: type[Adapter] | type[DocumentAdapter] = _load(ref)
        conf = sniff_safely(cls, head)
        if conf > best_conf:
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
