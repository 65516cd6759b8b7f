"""Antigravity CLI step transcripts.

``~/.gemini/antigravity-cli/brain/<id>/.system_generated/logs/transcript_full.jsonl``,
the compact ``transcript.jsonl`` beside it (content cut, every argument value a
JSON-encoded string: both kept as written), and the IDE/desktop variant under
``~/.gemini/antigravity-ide/brain/…`` share one format: one *step* per line,
``{"step_index", "source", "type", "status", "created_at", "content",
"thinking", "error", "tool_calls", "media", …}``.

* A ``PLANNER_RESPONSE`` step is one model turn: thinking, then one
  ``assistant_message`` anchor (``message_id`` ``step-N``), then its tool calls,
  whose ids are derived from the step (``step-N:call-K``).
* Result steps (``RUN_COMMAND``, ``VIEW_FILE`` … and ``MCP_TOOL``) answer the
  pending calls of the latest planner in order; ``GENERIC``, ``ASK_QUESTION``
  and ``BROWSER_NAVIGATE`` are results only while a call is pending, else
  system events. A result with nothing pending is an orphan, ``step-N:orphan``.
* The format records no token usage (``totals`` is left out, never a zero), no
  session id and no harness version: ``--harness-version`` is metadata only.
* ``KNOWLEDGE_ARTIFACTS``, ``MCP_TOOL`` and ``BROWSER_NAVIGATE`` steps, which the
  reference CLI rejects, are read as described above (IDE sessions have them).

Ordering, and what a follower sees
----------------------------------
The reference orders the whole file by ``step_index`` (a stable sort; steps
without one go last) before it emits anything, so a step appended late with a
small index is reported at its index, and pairing follows that order. No
streaming design can reproduce that exactly: a step that arrives last may
belong first. So this adapter has two modes, chosen by
:attr:`~agentminutes.harness.ParseOptions.live`:

* **Whole file** (the default: ``convert``, ``stats``, the library). ``feed``
  validates each line at once, in file order, so a malformed line fails where
  the reference fails, and holds the line with its sort key; at the end it
  sorts the keys and produces the events lazily (``drain()``, which the
  pipeline takes in bounded batches), releasing each line as it goes. Output equals the reference's for every input. The cost is
  memory: the non-blank lines of the transcript are held until the end
  (about the file's size, e.g. ~100 MB more for a 100 MB transcript; real
  sessions are a few hundred KB) and nothing is emitted before end of input.
* **Presorted** (``convert``, ``stats`` and the library on a regular file,
  which is nearly always in step order): the pipeline first reads the file
  once through :meth:`AntigravityAdapter.is_presorted`, a light decode of
  each line's ``step_index``. Where every step has an index and none is
  smaller than the one before it, the sort would change nothing, so each step
  is converted as it arrives, nothing is held, and memory stays flat; the
  output is the same as the whole-file mode's.
* **Live** (``follow``). Each step is converted as it arrives, in file order,
  and nothing is held. The Antigravity CLI appends steps in index order, so
  for every genuine transcript in the corpus this equals the whole-file
  output; a step that arrives out of order (or without an index) is reported
  where it arrives, since events already sent cannot be taken back.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import itemgetter
from typing import ClassVar, Final

import msgspec
from msgspec import Raw

from agentminutes.harness._gojson import (
    FieldError,
    fold_fields,
    go_trim,
    json_kind,
    normalize_line,
    type_error,
)
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import (
    BaseAdapter,
    Confidence,
    ParseOptions,
    SkipHook,
    first_line,
    tool_call,
)
from agentminutes.schema import (
    NO_RAW,
    AssistantMessage,
    ContentBlock,
    Event,
    EventKind,
    Origin,
    Provenance,
    SystemEvent,
    Thinking,
    ToolKind,
    ToolResult,
    Unknown,
    UserMessage,
)
from agentminutes.timestamps import valid_timestamp

__all__ = ("AntigravityAdapter",)

HARNESS: Final = "antigravity"


class _ToolCall(msgspec.Struct, forbid_unknown_fields=True):
    name: str | None = None
    args: Raw = NO_RAW


class _Step(msgspec.Struct, forbid_unknown_fields=True):
    """One step record. Unknown keys (or known ones in another letter case) make the
    fast decode fail, and the line is then read with Go's rules (``_decode_go``)."""

    step_index: int | None = None
    source: str | None = None
    type: str | None = None
    created_at: str | None = None
    content: str | None = None
    thinking: str | None = None
    error: str | None = None
    tool_calls: list[_ToolCall | None] | None = None
    media: list[Raw] | None = None
    # Present in transcripts, read by nothing (kept in details and raw).
    status: Raw = NO_RAW
    error_code: Raw = NO_RAW
    exit_code: Raw = NO_RAW
    truncated_fields: Raw = NO_RAW
    prompt_variant: Raw = msgspec.field(default=NO_RAW, name="promptVariant")
    telemetry: Raw = NO_RAW


class _Head(msgspec.Struct):
    step_index: int | None = None
    source: str | None = None
    type: str | None = None
    created_at: str | None = None


_decode_step = msgspec.json.Decoder(_Step).decode
_decode_head = msgspec.json.Decoder(_Head).decode
_decode_int = msgspec.json.Decoder(int | None).decode
_decode_str = msgspec.json.Decoder(str | None).decode
_decode_list = msgspec.json.Decoder(list[Raw] | None).decode

#: Steps that are always a tool result.
RESULT_TYPES: Final = frozenset(
    {
        "RUN_COMMAND",
        "VIEW_FILE",
        "LIST_DIRECTORY",
        "GREP_SEARCH",
        "SEARCH_WEB",
        "READ_URL_CONTENT",
        "CODE_ACTION",
        "MCP_TOOL",
    }
)
#: Steps that are a tool result while a call is pending, else a system event.
AMBIGUOUS_TYPES: Final = frozenset({"GENERIC", "ASK_QUESTION", "BROWSER_NAVIGATE"})
#: Steps that become a system event of their own subtype, text from ``content``.
SYSTEM_TYPES: Final[Mapping[str, str]] = {
    "SYSTEM_MESSAGE": "system_message",
    "CHECKPOINT": "checkpoint",
    "KNOWLEDGE_ARTIFACTS": "knowledge_artifacts",
}
#: Every step type this adapter reads (detection is certain for these).
KNOWN_TYPES: Final = (
    RESULT_TYPES
    | AMBIGUOUS_TYPES
    | SYSTEM_TYPES.keys()
    | {"USER_INPUT", "CONVERSATION_HISTORY", "ERROR_MESSAGE", "PLANNER_RESPONSE"}
)
_SOURCES: Final = frozenset({"USER_EXPLICIT", "MODEL", "SYSTEM"})

#: Native tool names mapped onto ACP tool kinds; any other name is ``other``.
TOOL_KINDS: Final[Mapping[str, str]] = {
    "run_command": ToolKind.EXECUTE,
    "write_to_file": ToolKind.EDIT,
    "replace_file_content": ToolKind.EDIT,
    "view_file": ToolKind.READ,
    "list_dir": ToolKind.READ,
    "grep_search": ToolKind.SEARCH,
    "search_web": ToolKind.FETCH,
    "read_url_content": ToolKind.FETCH,
}


#: The model label of a settings change inside a USER_INPUT (Go RE2 semantics:
#: ``.`` stops at a newline, ``\s`` is ASCII white space without ``\v``).
# Compiled when first needed: detection imports this module for every transcript.
@functools.cache
def _model() -> re.Pattern[str]:
    return re.compile(r"`Model Selection` from .*? to (.+?)\.[\t\n\f\r ]")


@functools.cache
def _exit_code() -> re.Pattern[str]:
    return re.compile(r"The command exited with code ([0-9]+)\.")


_REQUEST_OPEN: Final = "<USER_REQUEST>"
_REQUEST_CLOSE: Final = "</USER_REQUEST>"
#: Sort key of steps with no step index (and unreadable lines): after every step.
_LAST: Final = 1 << 64
_INT64: Final = 1 << 63

_FIELDS: Final = frozenset(
    {
        "step_index",
        "source",
        "type",
        "created_at",
        "content",
        "thinking",
        "error",
        "error_code",
        "tool_calls",
        "media",
    }
)
_STRING_FIELDS: Final = frozenset({"source", "type", "created_at", "content", "thinking", "error"})
_MEDIA_FIELDS: Final = frozenset({"mime_type", "uri"})
_CALL_FIELDS: Final = frozenset({"name", "args"})


class _Bad(Exception):
    """A line that is not a readable step: the reason, and whether it is JSON at all."""

    def __init__(self, reason: str, is_json: bool) -> None:
        super().__init__(reason, is_json)
        self.reason = reason
        self.is_json = is_json


class AntigravityAdapter(BaseAdapter):
    """Parses Antigravity CLI (and IDE) step transcripts."""

    name: ClassVar[str] = HARNESS
    #: The reference was validated against 1.2.11 and these rules equal its
    #: rules; the transcripts record no version of their own.
    last_checked: ClassVar[str] = "1.2.11"

    def __init__(self, options: ParseOptions | None = None, *, on_skip: SkipHook | None = None):
        super().__init__(options, on_skip=on_skip)
        self.meta_sent = False
        #: The model label of the latest settings change.
        self.model = ""
        #: Calls of the latest planner still waiting for a result, in order.
        self.pending: list[tuple[str, str]] = []
        #: Whole-file mode: ``(sort key, line number, line, bad)`` per non-blank line.
        self.held: list[tuple[int, int, bytes, tuple[str, bool] | None]] = []
        #: A read that writes no verbatim JSON and keeps no record (``stats``, an
        #: identity, usage) takes each line as it is first (see :meth:`_lean_feed`).
        self.lean_feed = (
            self._lean_feed
            if not self.options.check_verbatim and not self.options.keep_raw
            else None
        )

    # -- detection ---------------------------------------------------------

    @classmethod
    def sniff(cls, head: bytes) -> Confidence:
        first = first_line(head)
        try:
            rec = _decode_head(first)
        except (msgspec.DecodeError, msgspec.ValidationError):
            if b'"step_index"' in head and b'"source"' in head and b'"created_at"' in head:
                return Confidence.POSSIBLE
            return Confidence.NO_MATCH
        if rec.step_index is None or not rec.source or not rec.type:
            return Confidence.NO_MATCH
        if rec.source in _SOURCES and rec.type in KNOWN_TYPES:
            return Confidence.CERTAIN
        return Confidence.POSSIBLE

    @classmethod
    def is_presorted(cls, lines: Iterable[bytes | memoryview], options: ParseOptions) -> bool:
        """True when *lines* already stand in the order the whole-file sort gives.

        Every non-blank line must decode with a ``step_index`` no smaller than
        the one before it (a stable sort then changes nothing). Anything
        unusual — a line that does not decode as a plain step, a step without
        an index, and in permissive mode any line the reference rejects (those
        sort last) — answers ``False``, and the adapter holds and sorts. A line
        may be a view of the reader's buffer, read before the next is asked for.
        """
        last = -1
        for view in lines:
            try:
                if options.permissive:
                    line = bytes(view)
                    if not line.strip():
                        continue
                    read = _read(line)
                    if read is None:
                        continue
                    step = read[0].step_index
                else:
                    # Decoded as it is: only a line that fails is looked at for blankness.
                    step = _decode_head(view).step_index
            except (msgspec.DecodeError, msgspec.ValidationError, _Bad):
                if not options.permissive and not bytes(view).strip():
                    continue
                return False
            if step is None or step < last:
                return False
            last = step
        return True

    # -- reading -----------------------------------------------------------

    def feed(self, line: bytes, lineno: int) -> list[Event]:
        try:
            read = _read(line)
        except _Bad as bad:
            if not self.options.permissive:
                raise self.error(bad.reason, lineno) from None
            if self.options.live or self.options.presorted:
                return self._bad(line, lineno, bad.reason, bad.is_json)
            self.held.append((_LAST, lineno, line, (bad.reason, bad.is_json)))
            return []
        if read is None:  # only Unicode white space: a blank line to Go
            return []
        rec, line = read
        if self.options.live or self.options.presorted:
            return self._step(rec, line, lineno)
        step = rec.step_index
        self.held.append((_LAST if step is None else step, lineno, line, None))
        return []

    def _lean_feed(self, line: bytes, lineno: int) -> list[Event] | None:
        """:meth:`feed` for a plain step that decodes as it is; ``None``, nothing done, for
        any other line (the pipeline then feeds it as a full read does).

        The full read first looks for what Go reads differently from the bytes
        (a lone surrogate escape, invalid UTF-8) and feeds the line as Go reads
        it. A step the strict decode takes as it is holds neither in a string it
        decodes (those fail it); where else they could stand is verbatim JSON
        (a tool's arguments, the record kept as a system event's details), which
        this read writes nowhere. Media, read field by field, take the full read.
        """
        try:
            rec = _decode_step(line)
        except (
            msgspec.ValidationError,
            msgspec.DecodeError,
            UnicodeDecodeError,
        ):  # msgspec < 0.19 raises the last on invalid UTF-8
            return None
        step = rec.step_index
        if rec.media or (step is not None and not -_INT64 <= step < _INT64):
            return None
        if self.options.live or self.options.presorted:
            return self._step(rec, line, lineno)
        self.held.append((_LAST if step is None else step, lineno, line, None))
        return []

    def finish(self) -> list[Event]:
        return list(self.drain())

    def drain(self) -> Iterator[Event]:
        """:meth:`finish` as a lazy iterator: each held line is released once converted."""
        held, self.held = self.held, []
        if not held:
            return iter(())
        held.sort(key=itemgetter(0))
        return self._release(held)

    def _release(
        self, held: list[tuple[int, int, bytes, tuple[str, bool] | None]]
    ) -> Iterator[Event]:
        for i, (_, lineno, line, bad) in enumerate(held):
            held[i] = _RELEASED
            if bad is not None:
                yield from self._bad(line, lineno, *bad)
            else:
                read = _read(line)
                assert read is not None
                yield from self._step(read[0], line, lineno)

    # -- converting one step -------------------------------------------------

    def _meta(self, timestamp: str, prov: Provenance) -> Event:
        self.meta_sent = True
        return self.session_meta(prov, timestamp=timestamp)

    def _bad(self, line: bytes, lineno: int, reason: str, is_json: bool) -> list[Event]:
        out = []
        if not self.meta_sent:
            out.append(self._meta("", Provenance(line=lineno, end_line=lineno)))
        # A line that is not JSON is kept as a JSON string, so the output stays JSON.
        raw = Raw(line) if is_json else Raw(msgspec.json.encode(line.decode("utf-8", "replace")))
        out.append(
            Event(
                kind=EventKind.UNKNOWN,
                provenance=Provenance(line=lineno, end_line=lineno),
                unknown=Unknown(reason=reason, raw=raw),
            )
        )
        return out

    def _step(self, rec: _Step, line: bytes, lineno: int) -> list[Event]:
        ts = valid_timestamp(rec.created_at)
        prov = self.prov(line, lineno)
        said = Stamp(ts, prov)  # every event of the step: its time and line
        out: list[Event] = []
        if not self.meta_sent:
            out.append(self._meta(ts, prov))
        kind = rec.type or ""
        if rec.step_index is None:
            out.append(self.unknown_or_fail(kind, line, lineno, "record has no step_index"))
            return out
        if kind == "PLANNER_RESPONSE":
            self._planner(rec, said, out)
        elif kind in RESULT_TYPES or (kind in AMBIGUOUS_TYPES and self.pending):
            out.append(self._result(rec, said))
        elif kind == "USER_INPUT":
            self._user_input(rec, line, said, out)
        elif kind in SYSTEM_TYPES:
            out.append(_system(said, SYSTEM_TYPES[kind], "", rec.content, line))
        elif kind == "CONVERSATION_HISTORY":
            # The IDE writes the history into ``content``; it stays in details only.
            out.append(_system(said, "conversation_history", "", None, line))
        elif kind == "ERROR_MESSAGE":
            text = rec.error or rec.content
            out.append(_system(said, "error_message", "error", text, line))
        elif kind in AMBIGUOUS_TYPES:
            out.append(_system(said, kind.lower(), "", rec.content, line))
        else:
            reason = f'unrecognized record type "{kind}"'
            out.append(self.unknown_or_fail(kind, line, lineno, reason))
        return out

    def _user_input(self, rec: _Step, line: bytes, said: Stamp, out: list[Event]) -> None:
        content = rec.content or ""
        if "`Model Selection`" in content:
            m = _model().search(content)
            if m is not None:
                self.model = m[1]
        start = content.find(_REQUEST_OPEN)
        end = content.find(_REQUEST_CLOSE)
        if start < 0 or end < start:
            request, context = go_trim(content), ""
        else:
            request = go_trim(content[start + len(_REQUEST_OPEN) : end])
            context = go_trim(content[:start] + content[end + len(_REQUEST_CLOSE) :])
        request_text = [ContentBlock(kind="text", text=request)]
        out.append(said.user_message(UserMessage(origin=Origin.HUMAN, content=request_text)))
        if context:
            out.append(_system(said, "user_input_context", "", context, line))

    def _planner(self, rec: _Step, said: Stamp, out: list[Event]) -> None:
        # A new model turn abandons whatever the previous one still waited for.
        self.pending = pending = []
        message_id = f"step-{rec.step_index}"
        turn = Stamp(said.timestamp, said.provenance, message_id=message_id)
        if rec.thinking:
            out.append(turn.thinking(Thinking(text=rec.thinking)))
        content = [ContentBlock(kind="text", text=rec.content)] if rec.content else None
        out.append(turn.assistant_message(AssistantMessage(model=self.model, content=content)))
        for k, call in enumerate(rec.tool_calls or ()):
            name, args = (call.name or "", call.args) if call is not None else ("", NO_RAW)
            call_id = f"{message_id}:call-{k}"
            pending.append((call_id, name))
            out.append(turn.tool_call(tool_call(call_id, name, args, TOOL_KINDS)))

    def _result(self, rec: _Step, said: Stamp) -> Event:
        content = rec.content or ""
        if self.pending:
            call_id, name = self.pending.pop(0)
        else:
            call_id, name = f"step-{rec.step_index}:orphan", ""
        is_error = bool(rec.error)
        if not is_error and name == "run_command":
            m = _exit_code().match(content)
            is_error = m is not None and m[1] != "0"
        blocks = [ContentBlock(kind="text", text=content)]
        if rec.media:
            blocks.extend(_media_block(raw) for raw in rec.media)
        return said.tool_result(
            ToolResult(tool_call_id=call_id, tool_name=name, is_error=is_error, content=blocks)
        )


_RELEASED: Final = (0, 0, b"", None)


def _system(said: Stamp, subtype: str, level: str, text: str | None, line: bytes) -> Event:
    return said.system(
        SystemEvent(subtype=subtype, level=level, text=text or "", details=Raw(line))
    )


# -- decoding ------------------------------------------------------------------


def _read(line: bytes) -> tuple[_Step, bytes] | None:
    """Decode one step, the way the reference reads it; raise :class:`_Bad` if it cannot.

    ``None`` for a line of Unicode white space, which the reference skips as blank.
    """
    try:
        try:
            rec = _decode_step(line)
        except msgspec.ValidationError:
            # The typed decode stops at the first field it cannot take, before the
            # end of the line: reading it Go's way may still find it is not JSON.
            rec = _decode_go(line)
    except msgspec.DecodeError as exc:
        fixed = normalize_line(line)
        if fixed is None:
            raise _Bad(f"invalid JSON: {exc}", False) from None
        return _read(fixed) if fixed else None
    step = rec.step_index
    if step is not None and not -_INT64 <= step < _INT64:
        msg = f"json: cannot unmarshal number {step} into Go struct field record.step_index of type int"
        raise _Bad(f"invalid JSON: {msg}", True)
    if rec.media:
        try:
            for raw in rec.media:
                _media_fields(raw)
        except FieldError as exc:
            raise _Bad(f"invalid JSON: {exc}", True) from None
    return rec, line


def _decode_go(line: bytes) -> _Step:
    """Read a step with Go's rules: keys in any letter case, Go's type errors."""
    try:
        fields = fold_fields(line, _FIELDS, _STRING_FIELDS)
    except msgspec.ValidationError:
        msg = f"json: cannot unmarshal {json_kind(line)} into Go value of type antigravity.record"
        raise _Bad(f"invalid JSON: {msg}", True) from None
    if fields is None:
        return _Step()
    values: dict[str, object] = {}
    first: FieldError | None = None
    for name, raw in fields.items():
        try:
            values[name] = _FIELD_READERS[name](raw)
        except FieldError as exc:
            first = first or exc
    if first is not None:
        raise _Bad(f"invalid JSON: {first}", True)
    return _Step(**values)  # type: ignore[arg-type]


def _read_int(raw: Raw) -> int | None:
    try:
        return _decode_int(raw)
    except msgspec.ValidationError:
        raise type_error(raw, "Go struct field record.step_index", "int", int_target=True) from None


def _string_reader(where: str) -> Callable[[Raw], str | None]:
    def read(raw: Raw) -> str | None:
        try:
            return _decode_str(raw)
        except msgspec.ValidationError:
            raise type_error(raw, where, "string") from None

    return read


def _read_calls(raw: Raw) -> list[_ToolCall | None] | None:
    try:
        items = _decode_list(raw)
    except msgspec.ValidationError:
        raise type_error(
            raw, "Go struct field record.tool_calls", "[]antigravity.toolCall"
        ) from None
    if items is None:
        return None
    calls: list[_ToolCall | None] = []
    read_name = _string_reader("Go struct field toolCall.tool_calls.name")
    for item in items:
        try:
            fields = fold_fields(item, _CALL_FIELDS, frozenset({"name"}))
        except msgspec.ValidationError:
            raise type_error(
                item, "Go struct field record.tool_calls", "antigravity.toolCall"
            ) from None
        if fields is None:
            calls.append(None)
            continue
        name = read_name(fields["name"]) if "name" in fields else None
        calls.append(_ToolCall(name=name, args=fields.get("args", NO_RAW)))
    return calls


def _read_media(raw: Raw) -> list[Raw] | None:
    try:
        items = _decode_list(raw)
    except msgspec.ValidationError:
        raise type_error(raw, "Go struct field record.media", "[]antigravity.mediaRef") from None
    if items is not None:
        for item in items:
            _media_fields(item)
    return items


def _media_fields(raw: Raw) -> tuple[str, str]:
    """The ``mime_type`` and ``uri`` of one media element (Go's rules)."""
    try:
        fields = fold_fields(raw, _MEDIA_FIELDS, _MEDIA_FIELDS)
    except msgspec.ValidationError:
        raise type_error(raw, "Go struct field record.media", "antigravity.plain") from None
    if not fields:
        return "", ""
    values = []
    for name in ("mime_type", "uri"):
        value = fields.get(name)
        values.append(
            _string_reader(f"Go struct field record.media.{name}")(value) or ""
            if value is not None
            else ""
        )
    return values[0], values[1]


def _media_block(raw: Raw) -> ContentBlock:
    mime_type, uri = _media_fields(raw)
    kind = "image" if mime_type.startswith("image/") else "other"
    return ContentBlock(kind=kind, mime_type=mime_type, uri=uri, raw=raw)


_FIELD_READERS: Final[Mapping[str, Callable[[Raw], object]]] = {
    "step_index": _read_int,
    **{name: _string_reader(f"Go struct field record.{name}") for name in _STRING_FIELDS},
    "error_code": lambda raw: raw,
    "tool_calls": _read_calls,
    "media": _read_media,
}
