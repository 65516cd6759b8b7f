"""Exceptions raised by agentminutes.

::

    AgentminutesError
    ├── ParseError          a transcript line no rule accepts (harness, version, line)
    ├── DetectError         no registered adapter recognizes a transcript's head
    ├── SourceError         a transcript cannot be read at all (missing, a directory, empty …)
    │   └── ScanError       one file a session scan could not read or identify (the scan goes on)
    ├── OutputError         output cannot be written where it should go (a missing folder, a
    │                       full disk, a closed stdout, the input transcript itself)
    └── UsageError          options that contradict each other or name nothing known

Every error renders as one line; the CLI prints it after ``Error:`` and exits non-zero.
What an error quotes from a transcript (a record type, a value) may hold line breaks,
terminal control codes or megabytes: :func:`one_line` escapes and cuts it.
"""

from __future__ import annotations

import os
import re
from typing import Any, Final

__all__ = (
    "AgentminutesError",
    "DetectError",
    "NoConversationError",
    "OptionError",
    "OutputError",
    "ParseError",
    "ScanError",
    "SourceError",
    "UsageError",
    "one_line",
    "source_name",
)

#: Characters escaped in messages: controls (C0, DEL, C1), every character
#: ``str.splitlines`` breaks on (U+2028, U+2029 …) and lone surrogates.
_UNSAFE: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

#: The longest message (in characters) an error renders; the middle of a longer one is cut.
MESSAGE_LIMIT: Final = 2000
#: The longest reason a :class:`ParseError` quotes (values copied from the input).
REASON_LIMIT: Final = 400


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """*text* as one printable line: line breaks and control codes escaped, the middle of
    a text longer than *limit* characters cut (its length said)."""
    if len(text) > limit:
        keep = max(limit // 2 - 20, 1)
        text = f"{text[:keep]}…[{len(text) - 2 * keep} characters cut]…{text[-keep:]}"
    return _UNSAFE.sub(_escape, text)


class AgentminutesError(Exception):
    """Base class of every error agentminutes raises on purpose.

    ``str()`` of one is always a single printable line (see :func:`one_line`).
    """

    def __str__(self) -> str:
        return one_line(super().__str__())


class ParseError(AgentminutesError):
    """A transcript line that no rule of its adapter accepts.

    The message names the harness, the harness version when the transcript
    revealed one, the 1-based line (for whole-document sources: the record,
    ``unit="record"``) and what was wrong. When the transcript was
    written by a release newer than the newest one the adapter was checked
    against, it says that format drift is the likely cause.
    """

    def __init__(
        self,
        harness: str,
        reason: str,
        *,
        line: int = 0,
        version: str = "",
        last_checked: str = "",
        path: str = "",
        unit: str = "line",
    ) -> None:
        self.harness = harness
        self.reason = one_line(reason, REASON_LIMIT)
        self.line = line
        self.version = version
        self.last_checked = last_checked
        self.path = path
        self.unit = unit
        #: Events completed by the lines before the failing one, in the same batch:
        #: a streaming caller writes them before reporting the error.
        self.partial: list[Any] = []
        super().__init__(self._render())

    @property
    def drift_suspected(self) -> bool:
        """True when the transcript's version is newer than the adapter was checked against."""
        from agentminutes.versions import version_newer

        return bool(self.version and self.last_checked) and version_newer(
            self.version, self.last_checked
        )

    def _render(self) -> str:
        text = f"{self.harness}: {self.reason}"
        if self.version:
            if self.drift_suspected:
                text += (
                    f" (harness version {self.version}, newer than last checked "
                    f"{self.last_checked}; likely format drift, check for an agentminutes update)"
                )
            else:
                text += f" (harness version {self.version})"
        if self.line:
            text += f" at {self.unit} {self.line}"
        if self.path:
            text = f"{self.path}: {text}"
        return text

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its fields (the keyword-only ones too), so a worker
        # process's error reaches the parent whole: pickle would call
        # ParseError(message) and fail.
        fields = (self.harness, self.reason, self.line, self.version, self.last_checked)
        return (_parse_error, (*fields, self.path, self.unit, self.partial))

    def with_path(self, path: str) -> ParseError:
        """Return a copy of this error that names the transcript file."""
        copy = ParseError(
            self.harness,
            self.reason,
            line=self.line,
            version=self.version,
            last_checked=self.last_checked,
            path=path,
            unit=self.unit,
        )
        copy.partial = self.partial
        return copy


def _parse_error(
    harness: str,
    reason: str,
    line: int,
    version: str,
    last_checked: str,
    path: str,
    unit: str,
    partial: list[Any],
) -> ParseError:
    error = ParseError(
        harness, reason, line=line, version=version, last_checked=last_checked, path=path, unit=unit
    )
    error.partial = partial
    return error


class NoConversationError(ParseError):
    """A transcript that holds no conversation: empty, or only records that make no event.

    Real homes have them (Claude Code's files of ``summary`` or
    ``file-history-snapshot`` records only); a session scan counts them as
    skipped files, not as errors.
    """

    def __init__(self, harness: str, reason: str = "no events in transcript") -> None:
        super().__init__(harness, reason)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.harness, self.reason))


class DetectError(AgentminutesError):
    """No registered adapter recognizes the transcript."""


class SourceError(AgentminutesError):
    """The transcript cannot be read as a transcript at all."""


class ScanError(SourceError):
    """One file (or root) a session scan could not read or identify.

    Renders as ``<harness>: <path>: <cause>`` (without the path when the
    problem is not one file's, e.g. an ambiguous session id). A scan reports
    it and goes on with the next file.
    """

    def __init__(self, harness: str, cause: str, path: str = "") -> None:
        self.harness = harness
        self.path = path
        self.cause = cause
        if harness:  # a parse error's text names its harness already: once is enough
            cause = cause.removeprefix(f"{harness}: ")
        parts = [p for p in (harness, path) if p]
        super().__init__(": ".join([*parts, cause]))

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.harness, self.cause, self.path))


class OutputError(AgentminutesError):
    """Output cannot be written where it should go; nothing half-written is left there."""


class UsageError(AgentminutesError):
    """Options that contradict each other or name something unknown."""


class OptionError(UsageError):
    """A value given for an option (or a missing argument) that is not allowed.

    The command line reports it as it reports the values its parser refuses:
    one line, a usage hint, exit status 2.
    """


def source_name(source: str | os.PathLike[str]) -> str:
    """How messages name a source: its path, or ``<stdin>`` for ``-``."""
    return "<stdin>" if source == "-" else os.fspath(source)
