"""The adapter protocol every harness module implements, and the helpers they share.

An adapter is plain synchronous, incremental code. It is fed one complete
transcript line at a time (``feed(line, lineno)``) and returns the events
that line completes; ``finish()`` returns whatever was still held (an open
assistant-message fold, a buffered whole-file document). It does no I/O and
knows nothing of asyncio, so the same object serves ``convert``, ``follow``,
``sessions`` (head only) and a map over files in a worker pool.

Accounting: every line handed to an adapter ends as exactly one of

* the provenance of at least one event,
* a counted skip (``skipped[record_type] += 1``, reported in the session report), or
* a :class:`~agentminutes.ParseError` naming harness, version and line
  (in permissive mode: an ``unknown`` event instead).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, ClassVar, Protocol, runtime_checkable

from agentminutes._errors import ParseError
from agentminutes.schema import Event, EventKind, Provenance, Raw, Unknown

__all__ = (
    "SNIFF_BYTES",
    "Adapter",
    "BaseAdapter",
    "Confidence",
    "ParseOptions",
    "SkipHook",
    "version_newer",
)

#: How many leading bytes of a transcript detection may look at.
SNIFF_BYTES = 64 * 1024

SkipHook = Callable[[int, str], None]


class Confidence(IntEnum):
    """How sure an adapter is that a transcript head is its format."""

    NO_MATCH = 0
    POSSIBLE = 1
    CERTAIN = 2

    def __str__(self) -> str:
        return ("no-match", "possible", "certain")[self.value]


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
            included, where the transcript records that).
    """

    permissive: bool = False
    keep_raw: bool = False
    harness_version: str = ""
    text_form: str = "bare"


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

    def snapshot(self) -> bytes:
        """Serialize the adapter's parsing state, so a follower can resume mid-file."""
        ...

    def restore(self, state: bytes) -> None:
        """Continue from a :meth:`snapshot` taken by an adapter of the same class."""
        ...


class BaseAdapter:
    """Shared plumbing: skip accounting, loud failure, permissive unknowns, provenance."""

    name: ClassVar[str] = ""
    last_checked: ClassVar[str] = ""
    #: Whether the harness's ``input_tokens`` already count the cached prompt
    #: tokens (OpenAI style), so that sums must not add the cache fields again.
    input_includes_cache: ClassVar[bool] = False
    #: Attributes that are configuration, not parsing state (left out of snapshots).
    _config_attrs: ClassVar[frozenset[str]] = frozenset({"options", "on_skip"})

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        self.options = options or ParseOptions()
        self.on_skip = on_skip
        self.skipped: dict[str, int] = {}
        self.version = ""

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
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, state: bytes) -> None:
        vars(self).update(pickle.loads(state))

    # -- helpers for subclasses -------------------------------------------

    @property
    def effective_version(self) -> str:
        """The transcript's own version, else the caller's hint."""
        return self.version or self.options.harness_version

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
        """Raise :class:`ParseError`, or in permissive mode keep the record as ``unknown``."""
        if not self.options.permissive:
            raise self.error(reason, lineno)
        return Event(
            kind=EventKind.UNKNOWN,
            provenance=Provenance(line=lineno, end_line=lineno),
            unknown=Unknown(record_type=record_type, reason=reason, raw=Raw(line)),
        )

    def prov(self, line: bytes, lineno: int) -> Provenance:
        """Single-record provenance, with the record itself under ``--keep-raw``."""
        if self.options.keep_raw:
            return Provenance(line=lineno, end_line=lineno, raw=[Raw(line)])
        return Provenance(line=lineno, end_line=lineno)


def version_newer(a: str, b: str) -> bool:
    """True when dotted version *a* is strictly newer than *b*.

    Segments compare by their leading digits, missing segments count as zero,
    and a segment without leading digits ends the comparison as "not newer",
    so a malformed version never produces a false drift hint.
    """
    left, right = a.split("."), b.split(".")
    for i in range(max(len(left), len(right))):
        x, y = _segment(left, i), _segment(right, i)
        if x is None or y is None:
            return False
        if x != y:
            return x > y
    return False


def _segment(parts: list[str], i: int) -> int | None:
    if i >= len(parts):
        return 0
    digits = ""
    for ch in parts[i]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def raw_or_none(value: Any) -> Raw | None:
    """Normalize an optional :class:`msgspec.Raw` field: absent or empty becomes ``None``."""
    if value is None or len(value) == 0:
        return None
    return value  # type: ignore[no-any-return]
