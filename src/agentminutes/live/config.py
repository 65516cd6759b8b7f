"""What a follow is told and what it hands out: targets, options, batch marks, envelopes."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
import sys
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from agentminutes.discovery.roots import is_transcript_name, transcript_patterns
from agentminutes.errors import AgentminutesError, UsageError
from agentminutes.harness import ParseOptions
from agentminutes.harness.base import detects
from agentminutes.schema import Event

if TYPE_CHECKING:
    import anyio

    from agentminutes.live.state import FollowState

__all__ = (
    "Envelope",
    "FollowConfig",
    "Mark",
    "Target",
    "event_digest",
    "resolve_targets",
    "target_of",
    "targets_for",
    "transcript_files",
    "watch_roots",
)

_digest_encoder = msgspec.json.Encoder()


def event_digest(event: Event) -> str:
    """A stable digest of an event's JSON (what a flushed-then-restored stop compares)."""
    return hashlib.sha256(_digest_encoder.encode(event)).hexdigest()


class Envelope(msgspec.Struct, kw_only=True):
    """One event of a multi-transcript follow, with the transcript it came from.

    As JSON (one per line): ``{"transcript": "/abs/path.jsonl", "harness":
    "claude-code", "id": "…", "session_id": "…", "is_subagent": false,
    "event": {...}}``; the event is exactly what ``convert --format jsonl``
    prints for that transcript.
    ``id`` is the event's deterministic id (:mod:`agentminutes.live.ids`): the
    same in every delivery of the event, so a collector drops repeats by it.
    ``session_id`` and ``is_subagent`` come from the transcript's
    ``session_meta`` (remembered in ``--state``, so they are there after a
    resume too); empty until the transcript has written one.
    """

    transcript: str
    harness: str
    id: str = ""
    session_id: str = ""
    is_subagent: bool = False
    event: Event


@dataclass(slots=True)
class Mark:
    """What a follow batch completes: a transcript, and the progress to save for it.

    ``transcript`` is the name the transcript is reported under: the path it
    was first followed at (a transcript renamed inside the followed folders
    keeps it; ``path`` is where it is now). ``identity`` is the transcript's
    identity (:func:`~agentminutes.live.ids.transcript_identity`, what event
    ids start with).
    """

    transcript: str
    harness: str
    #: The state entry to record once the batch is delivered (``None``: nothing to record).
    entry: dict[str, Any] | None = None
    #: The transcript ended (removed, moved away, :meth:`Follower.done`): forget its entry.
    forget: bool = False
    #: Where the file is now.
    path: str = ""
    identity: str = ""
    #: The transcript's session id and whether it is a subagent's, once its session_meta showed.
    session_id: str = ""
    is_subagent: bool = False
    #: This batch is the last of the transcript: what it held was written, nothing follows
    #: until its path names a new file.
    done: bool = False
    #: Why it ended, with *done*: ``done`` (the runner said so) or ``removed`` (moved away).
    end: str = ""
    #: Reading the transcript failed here (a bad line): nothing more of it is read.
    error: AgentminutesError | None = None
    #: At a stop: the line the transcript's last, partial line would be, and its bytes
    #: (not parsed: it may still be completed; a later run with the state reads it whole).
    torn: tuple[int, int] | None = None
    #: What the transcript held ended here and it is read again from its start: truncated
    #: or rewritten, replaced by a new file, or not what ``start_at`` said was read of it.
    #: The events after this batch are of its content from the beginning.
    restarted: bool = False

    def record(self, state: FollowState) -> None:
        """Record in *state* what this batch completes (call once the batch is delivered)."""
        if self.forget:
            state.forget(self.transcript)
        elif self.entry is not None:
            state.update(self.transcript, self.entry)


@dataclass(frozen=True, slots=True)
class Target:
    """A path to follow: one transcript (``folder=False``) or every transcript under a folder."""

    path: str
    folder: bool
    patterns: tuple[str, ...] = ("*.jsonl",)


def targets_for(paths: Sequence[str | os.PathLike[str]], harness: str = "auto") -> list[Target]:
    """Classify *paths*: an existing directory (or one written with a trailing slash) is a folder."""
    patterns = transcript_patterns(harness)
    out = []
    for p in paths:
        raw = os.fspath(p)
        path = os.path.abspath(os.path.expanduser(raw))
        folder = os.path.isdir(path) or raw.endswith(("/", os.sep))
        out.append(Target(path, folder, patterns))
    return out


def target_of(targets: Sequence[Target], path: str) -> Target | None:
    """The target *path* belongs to: a folder it is in, or the named transcript it is."""
    for t in targets:
        if t.folder and (path == t.path or path.startswith(t.path.rstrip(os.sep) + os.sep)):
            return t
        if not t.folder and path == t.path:
            return t
    return None


def watch_roots(targets: Sequence[Target]) -> list[tuple[str, bool]]:
    """The folders to watch, ``(folder, recursive)``: each folder target, and the folder of
    each named transcript (that one alone)."""
    roots: list[tuple[str, bool]] = []
    for t in targets:
        root = (t.path, True) if t.folder else (os.path.dirname(t.path), False)
        if root not in roots:
            roots.append(root)
    return roots


def transcript_files(
    folder: str,
    patterns: tuple[str, ...],
    *,
    known: Container[str],
    skip_dirs: Container[str],
    on_dir: Callable[[str], None] | None = None,
) -> Iterator[tuple[str, os.stat_result]]:
    """The transcript files under *folder* (depth first, by name) whose path is not *known*.

    Folders in *skip_dirs* are not walked into; *on_dir* is told each folder walked.
    """
    stack = [folder]
    while stack:
        top = stack.pop()
        try:
            entries = sorted(os.scandir(top), key=lambda e: e.name)
        except OSError:
            continue
        if on_dir is not None:
            on_dir(top)
        subdirs = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in skip_dirs:
                        subdirs.append(entry.path)
                    continue
                if entry.path in known or not is_transcript_name(entry.name, patterns):
                    continue
                st = entry.stat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield entry.path, st
        stack.extend(reversed(subdirs))


def resolve_targets(
    paths: Sequence[str | os.PathLike[str]] | None,
    harness: str,
    env: Mapping[str, str] | None = None,
) -> list[Target]:
    """The targets to follow: *paths*, or with none the harness's own transcript folders
    (found in *env*, default ``os.environ``); with no harness either, the folders of
    every line harness that exist here, as ``sessions`` and ``usage`` scan them."""
    from agentminutes.discovery.roots import default_roots

    if paths:
        return targets_for(list(paths), harness)
    if not detects(harness):
        patterns = transcript_patterns(harness)
        return [Target(str(p), True, patterns) for p in default_roots(harness, env)]
    from agentminutes.harness.registry import harnesses

    found: list[Target] = []
    looked: list[str] = []
    for h in harnesses():  # line transcripts; a database is followed by naming it
        if h.reads != "lines" or h.roots is None:
            continue
        name = h.name
        looked.append(name)
        patterns = transcript_patterns(name)
        found += [
            Target(str(p), True, patterns) for p in default_roots(name, env) if os.path.isdir(p)
        ]
    if not found:
        raise UsageError(
            "no transcripts folder of any harness here (" + ", ".join(looked) + "); give a "
            "TARGET, or --harness NAME to wait for that harness's folders"
        )
    return found


def stderr_notice(message: str) -> None:
    """One ``agentminutes: …`` line on stderr."""
    print(f"agentminutes: {message}", file=sys.stderr, flush=True)


@dataclass
class FollowConfig:
    """How a :class:`~agentminutes.live.follower.Follower` parses, where it starts, what it keeps."""

    harness: str = "auto"
    options: ParseOptions = field(default_factory=ParseOptions)
    from_end: bool = False
    #: Per transcript path (absolute), the offset to start delivering at: just past a
    #: newline, what a reader took of the file before the follow (``usage --follow``).
    #: Transcripts found at the start that it names start there (whatever *from_end*
    #: says); the others as *from_end* says; transcripts that appear later at 0.
    start_at: Mapping[str, int] = field(default_factory=dict)
    poll: bool = False
    idle_exit: float | None = None
    cwd: str | None = None
    session_id: str | None = None
    #: Saved progress to resume from.
    state: FollowState | None = None
    #: Put checkpoint entries (with adapter snapshots) into batch marks.
    checkpoint: bool = False
    #: Setting this event stops the follow as :meth:`Follower.stop` does (flushing).
    stop_event: anyio.Event | None = None
    notice: Callable[[str], None] = stderr_notice

    def __post_init__(self) -> None:
        # Adapters that would otherwise hold a whole file (to reorder it) emit
        # as lines arrive when told the input is live.
        if not self.options.live:
            self.options = dataclasses.replace(self.options, live=True)

    @property
    def filtered(self) -> bool:
        """Whether ``--cwd`` / ``--session-id`` select transcripts by their session_meta."""
        return self.cwd is not None or self.session_id is not None

    def wanted(self, session: dict[str, str]) -> bool:
        """Whether ``--session-id`` / ``--cwd`` select a transcript with this session_meta."""
        if self.session_id is not None and session.get("id", "") != self.session_id:
            return False
        if self.cwd is not None:
            # As sessions and usage mean it: the recorded working directory is DIR.
            from agentminutes.discovery.layouts import clean, wanted_cwd

            cwd = session.get("cwd", "")
            if not cwd or clean(cwd) != wanted_cwd(self.cwd):
                return False
        return True
