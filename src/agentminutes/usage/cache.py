"""The summary cache: one file of per-transcript summaries, so an unchanged home is only stat'ed.

An entry is used when the transcript's path, size and ``mtime_ns`` are those
it was summarized at and the cache file's *fingerprint* is this release's:
the agentminutes version and the summary format, whose change (new adapter
rules, new counting rules) must re-read everything. Transcripts are append-only
(a change changes the size) and rewritten documents get a new mtime; a content
hash would cost a read per file, which is what the cache exists to avoid.
File identity is the path, never the inode (unstable over 9P/WSL mounts).

The file lives in the user cache folder (``$XDG_CACHE_HOME/agentminutes``,
else ``~/.cache/agentminutes``; ``AGENTMINUTES_CACHE_DIR`` or
``--cache-dir`` override it), written whole to a temporary file and renamed,
so a reader never sees half of it. A cache that cannot be read (corrupt, from
another format) is ignored and rebuilt; one that cannot be written is said
once on stderr and the report goes on.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping

import msgspec

from agentminutes._version import __version__
from agentminutes.schema import Meta
from agentminutes.usage.summary import TranscriptSummary

__all__ = ("FORMAT", "SummaryCache", "default_cache_dir")

#: The summary format; bump when what a summary holds or how it is computed changes.
FORMAT = 2

_FILE = "usage-summaries.msgpack"


def _fingerprint() -> str:
    # Not hashlib, whose import loads OpenSSL: a warm report imports next to nothing.
    return f"agentminutes {__version__} usage {FORMAT}"


def default_cache_dir(env: Mapping[str, str] | None = None) -> str:
    """The folder the cache file goes in: ``AGENTMINUTES_CACHE_DIR``, else the XDG cache folder."""
    env = os.environ if env is None else env
    explicit = env.get("AGENTMINUTES_CACHE_DIR")
    if explicit:
        return explicit
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "agentminutes")


class _CacheFile(msgspec.Struct):
    fingerprint: str
    entries: dict[str, TranscriptSummary]


class SummaryCache:
    """Per-transcript summaries by path; :meth:`get` answers only for an unchanged file."""

    def __init__(self, folder: str | None = None, *, enabled: bool = True) -> None:
        self.folder = folder or default_cache_dir()
        self.path = os.path.join(self.folder, _FILE)
        self.enabled = enabled
        self.fingerprint = _fingerprint()
        self._entries: dict[str, TranscriptSummary] = {}
        self._dirty = False
        self.hits = 0
        self.misses = 0
        if enabled:
            self._load()

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return
        try:
            doc = msgspec.msgpack.decode(data, type=_CacheFile)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return  # another format or a damaged file: rebuilt
        if doc.fingerprint == self.fingerprint:
            self._entries = doc.entries

    def get(self, path: str, st: os.stat_result) -> TranscriptSummary | None:
        """The summary of *path* if it was made at this size and mtime, else ``None``."""
        entry = self._entries.get(path)
        if entry is None or entry.size != st.st_size or entry.mtime_ns != st.st_mtime_ns:
            return None
        return entry

    def identity(self, path: str, st: os.stat_result) -> tuple[Meta, str] | None:
        """The identity a scan would read from the head of an unchanged *path* (the scan hook)."""
        entry = self.get(path, st)
        if entry is None or entry.error:
            return None
        return msgspec.structs.replace(entry.meta), entry.started_at

    def put(self, summary: TranscriptSummary) -> None:
        """Keep *summary* (written out by :meth:`save`)."""
        self._entries[summary.path] = summary
        self._dirty = True

    def forget_except(self, paths: set[str]) -> None:
        """Drop the entries of transcripts not in *paths* (after a scan of every root)."""
        gone = [p for p in self._entries if p not in paths]
        for p in gone:
            del self._entries[p]
        if gone:
            self._dirty = True

    def save(self) -> str:
        """Write the cache if it changed; return an error text, ``""`` when written or unneeded."""
        if not self.enabled or not self._dirty:
            return ""
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(self.folder, exist_ok=True)
            data = msgspec.msgpack.encode(_CacheFile(self.fingerprint, self._entries))
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return f"cache {self.path}: {exc.strerror or exc}"
        self._dirty = False
        return ""
