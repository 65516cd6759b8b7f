"""The normalized session schema: msgspec Structs whose JSON is the output contract.

The JSON encoding of ``Session`` (:mod:`agentminutes.schema.session`), :class:`Event` and :class:`Stats` is a
cross-language contract shared with the reference Go implementation
(``agentminutes_schema`` 0.2.0). Field names, which fields are omitted when
empty and the shape of every value follow that contract, so three rules hold
throughout this module:

* A field declared with a default is left out of the JSON while it holds that
  default (``omit_defaults``). Collections that the contract omits when empty
  therefore default to ``None`` and are only ever set when non-empty.
* A field declared *without* a default is always written, even when ``None``
  (``UserMessage.content`` is ``null`` for a message with no blocks).
* Verbatim native payloads (tool input, enrichment, system details, raw
  records) are :class:`msgspec.Raw`: the source bytes are written back as they
  were read, never decoded and re-encoded.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import Raw

__all__ = (
    "NO_RAW",
    "SCHEMA_VERSION",
    "AgentStats",
    "AssistantMessage",
    "ContentBlock",
    "Event",
    "EventKind",
    "FetchInfo",
    "Meta",
    "Origin",
    "Provenance",
    "Raw",
    "Report",
    "Stats",
    "SystemEvent",
    "TaskSkip",
    "TaskStats",
    "TaskTranscript",
    "Thinking",
    "TokenUsage",
    "ToolCall",
    "ToolInteraction",
    "ToolKind",
    "ToolResult",
    "Unknown",
    "UserMessage",
    "to_builtins",
)

#: The normalized-schema revision written into every whole-session document.
SCHEMA_VERSION: Final = "0.2.0"

#: The absent verbatim payload. msgspec omits a default by identity, so every
#: optional :class:`msgspec.Raw` field defaults to this one object, and code that
#: builds events passes it (or a non-empty ``Raw``), never a fresh ``Raw()``.
NO_RAW: Final = Raw()


class EventKind:
    """The event kinds; exactly one payload field of :class:`Event` matches the kind."""

    SESSION_META: Final = "session_meta"
    USER_MESSAGE: Final = "user_message"
    ASSISTANT_MESSAGE: Final = "assistant_message"
    THINKING: Final = "thinking"
    TOOL_CALL: Final = "tool_call"
    TOOL_RESULT: Final = "tool_result"
    SYSTEM: Final = "system"
    UNKNOWN: Final = "unknown"


class Origin:
    """Who authored user-role content: a person, or the harness injecting context."""

    HUMAN: Final = "human"
    HARNESS: Final = "harness"


class ToolKind:
    """ACP tool-kind vocabulary used to classify tool calls."""

    READ: Final = "read"
    EDIT: Final = "edit"
    DELETE: Final = "delete"
    MOVE: Final = "move"
    SEARCH: Final = "search"
    EXECUTE: Final = "execute"
    THINK: Final = "think"
    FETCH: Final = "fetch"
    SWITCH_MODE: Final = "switch_mode"
    OTHER: Final = "other"


class _Struct(msgspec.Struct, omit_defaults=True, kw_only=True, gc=False):
    """Base for every schema type: keyword construction, empty fields omitted.

    Not tracked by the cyclic garbage collector (``gc=False``): a conversion
    makes hundreds of thousands of these, none of them part of a reference
    cycle, and tracking them cost 0.10–0.16 s of collections per 100 MB
    transcript (0.01–0.04 s untracked).
    """


class ContentBlock(_Struct, kw_only=True):
    """One unit of message or tool-result content.

    ``text`` is set for text blocks; other kinds (``image``, ``document``,
    ``resource``, ``other``) keep the native block verbatim in ``raw``. A block
    whose payload exceeded ``--max-payload-bytes`` has ``truncated`` set and
    carries the original ``size`` and sha256 ``digest`` instead.
    """

    kind: str
    text: str = ""
    mime_type: str = ""
    uri: str = ""
    raw: Raw = NO_RAW
    truncated: bool = False
    size: int = 0
    digest: str = ""


class TokenUsage(_Struct, kw_only=True):
    """Token accounting for one assistant API message, or a session sum.

    ``total_prompt_tokens`` is only set on sums (``totals``): every prompt token
    billed, fresh or cached. ``cost`` is the cost the harness itself recorded
    for the message (in its own currency, USD for OpenCode and Cline), set only
    by harnesses that record one and summed in the totals; absent, not zero,
    where nothing recorded it. ``extra`` keeps harness-specific usage fields
    verbatim and is never summed.
    """

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    total_prompt_tokens: int = 0
    cost: float | None = None
    extra: dict[str, Raw] | None = None

    def add(self, other: TokenUsage) -> None:
        """Accumulate *other*'s counts (and cost) into this usage (``extra`` is not merged)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        if other.cost is not None:
            self.cost = other.cost if self.cost is None else self.cost + other.cost


class Provenance(_Struct, kw_only=True):
    """Where an event came from: the 1-based native line range, and optionally the records.

    For whole-document sources (data exports, databases) the range counts the
    adapter's records within the conversation (a message node, a chat message,
    a snapshot row: each document adapter's module says which).
    """

    line: int
    end_line: int = 0
    raw: list[Raw] | None = None


class Meta(_Struct, kw_only=True):
    """Session identity known when parsing starts; also the ``session_meta`` payload."""

    harness: str
    harness_version: str = ""
    session_id: str = ""
    subagent_id: str = ""
    is_subagent: bool = False
    cwd: str = ""
    git_branch: str = ""


class UserMessage(_Struct, kw_only=True):
    """Content presented to the model in the user role, marked by ``origin``."""

    origin: str
    content: list[ContentBlock] | None


class AssistantMessage(_Struct, kw_only=True):
    """One complete assistant API message: the accounting anchor for its usage."""

    model: str = ""
    content: list[ContentBlock] | None = None
    stop_reason: str = ""
    usage: TokenUsage | None = None


class Thinking(_Struct, kw_only=True):
    """An extended-thinking block."""

    text: str
    signature: str = ""


class ToolCall(_Struct, kw_only=True):
    """A tool invocation, with its ACP ``kind`` and the input as recorded."""

    tool_call_id: str
    name: str
    kind: str
    input: Raw = NO_RAW
    promoted_from: str = ""


class FetchInfo(_Struct, kw_only=True):
    """Retrieval metrics a harness recorded for a fetch-kind tool result."""

    url: str = ""
    raw_bytes: int = 0
    status_code: int = 0
    duration_ms: int = 0


class ToolResult(_Struct, kw_only=True):
    """The outcome of a tool call, correlated by ``tool_call_id``."""

    tool_call_id: str
    tool_name: str = ""
    is_error: bool = False
    content: list[ContentBlock] | None = None
    fetch: FetchInfo | None = None
    enrichment: Raw = NO_RAW
    promoted_from: str = ""


class SystemEvent(_Struct, kw_only=True):
    """Harness or API activity: injected context, diagnostics, errors, telemetry."""

    subtype: str
    level: str = ""
    text: str = ""
    details: Raw = NO_RAW


class Unknown(_Struct, kw_only=True):
    """A record no rule classified, kept verbatim (permissive mode only)."""

    record_type: str = ""
    reason: str
    raw: Raw


class Event(_Struct, kw_only=True):
    """One entry of a normalized session; exactly one payload field is set, matching ``kind``.

    ``timestamp`` is the harness's RFC 3339 time for the record, as written by the
    harness. Events folded out of one assistant API message share ``message_id``;
    ``agent_id`` names the subagent that produced an event, for harnesses that record
    subagents inline in the parent's transcript.
    """

    kind: str
    timestamp: str = ""
    id: str = ""
    parent_id: str = ""
    message_id: str = ""
    agent_id: str = ""
    provenance: Provenance | None = None
    session_meta: Meta | None = None
    user_message: UserMessage | None = None
    assistant_message: AssistantMessage | None = None
    thinking: Thinking | None = None
    tool_call: ToolCall | None = None
    tool_result: ToolResult | None = None
    system: SystemEvent | None = None
    unknown: Unknown | None = None


class Report(_Struct, kw_only=True):
    """Everything that did not become an ordinary event, so nothing vanishes silently."""

    skipped_records: dict[str, int] | None = None
    unknown_events: int = 0
    orphan_tool_results: int = 0


class ToolInteraction(_Struct, kw_only=True):
    """A tool call joined with its results (``call`` is ``None`` for orphaned results)."""

    call: Event | None = None
    results: list[Event] = msgspec.field(default_factory=list)


class AgentStats(_Struct, kw_only=True):
    """One agent's share of a session, for transcripts that interleave several agents."""

    events: int
    assistant_messages: int
    tool_calls: int
    tool_calls_by_name: dict[str, int] | None = None
    tool_calls_by_kind: dict[str, int] | None = None
    tool_errors: int = 0
    models: list[str] | None = None
    totals: TokenUsage | None = None


class Stats(_Struct, kw_only=True):
    """The behavioural summary of one session (``agentminutes stats``)."""

    events: int
    event_counts: dict[str, int] | None = None
    user_messages: int
    harness_messages: int = 0
    tool_calls: int
    tool_calls_by_name: dict[str, int] | None = None
    tool_calls_by_kind: dict[str, int] | None = None
    tool_errors: int = 0
    unanswered_calls: int = 0
    orphan_results: int = 0
    result_bytes: int
    result_bytes_by_name: dict[str, int] | None = None
    fetch_raw_bytes: int = 0
    tool_time_ms_by_name: dict[str, int] | None = None
    system_by_subtype: dict[str, int] | None = None
    models: list[str] | None = None
    totals: TokenUsage | None = None
    start_time: str = ""
    end_time: str = ""
    wall_time_ms: int = 0
    final_answer: str = ""
    by_agent: dict[str, AgentStats] | None = None


class TaskTranscript(_Struct, kw_only=True):
    """One transcript of a task (``stats --include-subagents``) and its own summary."""

    path: str
    subagent_id: str = ""
    is_subagent: bool = False
    stats: Stats


class TaskSkip(_Struct, kw_only=True):
    """A transcript or child conversation the task could not include, and why."""

    path: str
    reason: str


class TaskStats(_Struct, kw_only=True):
    """A task's summary: the parent session and every subagent transcript, nothing counted twice.

    ``join`` says how the subagent transcripts were found (``layout``: beside
    the parent, Claude Code; ``session_id``: rollouts that record the parent's
    id, Codex; ``content``: named in the parent's results, Antigravity;
    ``inline``: inside the parent transcript, attributed by ``agent_id``).
    ``task`` aggregates the transcripts' summaries, with a per-agent split in
    ``task.by_agent``.
    """

    agentminutes_schema: str
    harness: str
    #: Always written, also when empty (a transcript outside its harness's layout).
    session_id: str
    join: str
    transcripts: list[TaskTranscript]
    task: Stats
    skipped: list[TaskSkip] | None = None


def to_builtins(obj: Any) -> Any:
    """Convert a schema object to plain Python values (dicts, lists, strings, numbers)."""
    return msgspec.json.decode(msgspec.json.encode(obj))
