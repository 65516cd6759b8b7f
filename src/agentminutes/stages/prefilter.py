"""Which parts of a joined blob a gate could hit: one RE2 pass, before Python's.

Python's regular expression engine scans the redaction gates (one pattern per
anchor character, :mod:`agentminutes.stages.detectors`) at about 40 ms per 100 MB
each, and there are fourteen: most of what ``--redact`` costs on a large
transcript, for parts that almost never hold a secret. RE2 (in pyarrow's compute
functions) matches one alternation of every detector's :attr:`Detector.prefilter`
in a single pass, byte by byte, three to five times faster than all the gates. Each
prefilter matches in every part where its gate hits, so the gates then run only
over the parts it flags, and what is redacted is exactly what a full scan redacts.

pyarrow is an optional dependency, imported only where used: :class:`Prefilter`
takes it where it is loaded already, and ``export`` (``load="large"``) imports it
once a transcript's blobs have reached :data:`IMPORT_AFTER_BYTES` (a transcript that
large pays the import back; a worker keeps it loaded for the next ones). For
``convert --redact`` importing it would cost about what it saves on a 100 MB
transcript (0.15 s; there the pass cannot overlap the parsing: each batch is
written at once) and double the resident memory (+50 MB), so every part is scanned
by Python as before, as it is wherever pyarrow is not installed.
"""

from __future__ import annotations

import importlib.util
import sys
from array import array
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ("IMPORT_AFTER_BYTES", "MIN_BLOB_BYTES", "Load", "Prefilter", "pattern_of")

#: When a :class:`Prefilter` uses pyarrow.
Load = Literal["loaded", "large", "always", "never"]

#: With ``load="large"``, blobs of this many bytes in all import pyarrow (about 0.1 s,
#: what Python's gates take over 2 MB).
IMPORT_AFTER_BYTES: Final = 4 << 20
#: Smaller blobs are scanned by Python alone (unless ``load="always"``): a pass over them
#: costs less than the call.
MIN_BLOB_BYTES: Final = 64 << 10


def pattern_of(prefilters: Sequence[str]) -> str:
    """One RE2 alternation of *prefilters* (each an RE2 pattern)."""
    return "|".join(f"(?:{p})" for p in prefilters)


class Prefilter:
    """The parts of a blob a gate could hit, found by RE2 (``None``: not available, scan all).

    *pattern* is an RE2 alternation (:func:`pattern_of`). *load* says when to use
    pyarrow for it: ``"loaded"`` (where it is imported already), ``"large"`` (also
    importing it after :data:`IMPORT_AFTER_BYTES` of blobs), ``"always"`` (import it;
    every blob, however small), or ``"never"``.
    """

    def __init__(self, pattern: str, *, load: Load = "loaded") -> None:
        self.pattern = pattern
        self.load = load
        self._compute: Any = None
        self._seen = 0
        self._tried = load == "never"
        self._pool: ThreadPoolExecutor | None = None

    def _module(self, size: int) -> Any:
        if self._compute is not None or self._tried:
            return self._compute
        loaded = "pyarrow.compute" in sys.modules
        self._seen += size
        wanted = self.load == "always" or (
            self.load == "large" and self._seen >= IMPORT_AFTER_BYTES
        )
        if not loaded and not wanted:
            return None  # asked again: it may be imported later in the process
        self._tried = True
        try:
            if not loaded and importlib.util.find_spec("pyarrow") is None:
                return None
            import pyarrow.compute as pc

            # Fails at once on a pattern RE2 does not take, not on the first blob.
            _match(pc, self.pattern, b"", [0])
        except (ImportError, ValueError, OSError):
            return None
        self._compute = pc
        return pc

    def candidates(self, blob: bytes, starts: Sequence[int]) -> list[int] | None:
        """The indexes of the parts (part *i* starts at ``starts[i]``, the last ends with
        *blob*) where a gate could hit, in order; ``None``: every part is to be scanned."""
        return self.start(blob, starts)()

    def start(
        self, blob: bytes, starts: Sequence[int], *, background: bool = False
    ) -> Callable[[], list[int] | None]:
        """:meth:`candidates`, started: call the result for them. With *background* the
        pass runs on a thread (RE2 releases the GIL), while the caller goes on."""
        small = len(blob) < MIN_BLOB_BYTES and self.load != "always"
        pc = None if small else self._module(len(blob))
        if pc is None:
            return _scan_everything
        if not background:
            found = _match(pc, self.pattern, blob, starts)
            return lambda: found
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="agentminutes-prefilter")
        return self._pool.submit(_match, pc, self.pattern, blob, starts).result

    def close(self) -> None:
        """Stop the thread :meth:`start` may have started (it ends with its pass)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


def _scan_everything() -> None:
    """No candidates: the gates scan every part."""
    return None


def _match(pc: Any, pattern: str, blob: bytes, starts: Sequence[int]) -> list[int]:
    import pyarrow as pa

    offsets = array("q", starts)
    offsets.append(len(blob))
    # Binary arrays are matched byte by byte (RE2's Latin-1 mode), as Python's gates
    # match the blob's bytes; each part keeps the NUL after it, which no pattern holds.
    parts = pa.Array.from_buffers(
        pa.large_binary(), len(starts), [None, pa.py_buffer(offsets), pa.py_buffer(blob)]
    )
    found: list[int] = pc.indices_nonzero(pc.match_substring_regex(parts, pattern)).to_pylist()
    return found
