"""Where each harness's transcript format hides its churn: one :class:`Vocabulary` per harness.

Record types are each format's own discriminator. Key paths go two levels
deep (``key``, ``key.sub``) plus the nested levels an adapter reads field by
field (usage objects, content blocks, tool-call entries). Discriminators are
the values an adapter branches on and a new release adds to: content block
types, tool names (a new tool needs a tool-kind mapping), subtypes, attachment
types. Values that are user configuration rather than format vocabulary (MCP
tool names) are left out, and ids used as object keys collapse to ``*``, so they
never read as drift.

A harness is listed here when its adapter reads line transcripts, or, with a
``source`` reader, sessions kept in a database or a folder of documents (OpenCode,
Cline); adding one means adding its table here and running
``scripts/build_drift_baselines.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from msgspec import Raw

from agentminutes.drift._vocab import (
    UNTYPED,
    Obj,
    Vocabulary,
    as_list,
    as_obj,
    as_str,
    string_at,
    type_field,
)

__all__ = ("VOCABULARIES", "vocabulary")


def _prefixes(rules: dict[str, tuple[str, ...]]) -> Callable[[str, str], str | None]:
    """A normalizer: values of a path that start with one of its prefixes are not vocabulary."""

    def normalize(path: str, value: str) -> str | None:
        for prefix in rules.get(path, ()):
            if value.startswith(prefix):
                return None
        return value

    return normalize


def _typed_by(base: str, field: str) -> Callable[[Obj], str]:
    """Record type ``type``, refined to ``type/<field>`` for records of type *base*."""

    def record_type(record: Obj) -> str:
        rtype = type_field(record)
        if rtype == base:
            sub = string_at(record, field)
            if sub:
                return f"{rtype}/{sub}"
        return rtype

    return record_type


def _split(doc: Raw, top: str, arrays: dict[str, tuple[str, str]]) -> Iterator[tuple[str, Obj]]:
    """The records of a document object: itself as *top*, and the elements of *arrays*.

    *arrays* maps an array key to ``(prefix, field)``: each element object is a
    record of type ``prefix + element[field]``.
    """
    obj = as_obj(doc)
    if obj is None:
        return
    yield top, obj
    for key, (prefix, field) in arrays.items():
        items = obj.get(key)
        for item in (as_list(items) or []) if items is not None else []:
            rec = as_obj(item)
            if rec is not None:
                sub = rec.get(field)
                yield prefix + ((as_str(sub) if sub is not None else None) or UNTYPED), rec


# -- claude-code -----------------------------------------------------------------


def _claude_dynamic(parent: str, key: str) -> bool:
    # Maps keyed by tool-use id (``wireToolInputs``, ``wireIngestContext``).
    return key.startswith("toolu_")


CLAUDE_CODE: Final = Vocabulary(
    harness="claude-code",
    discriminators={
        "assistant": ("message.content[].type", "message.content[].name"),
        "user": ("message.content[].type", "origin.kind"),
        "system": ("subtype", "level"),
        "attachment": ("attachment.type",),
        "progress": ("data.type",),
        "queue-operation": ("operation",),
    },
    deep={
        "assistant": ("message.usage", "message.content[]"),
        "user": ("message.content[]",),
    },
    dynamic=frozenset({"modelUsage"}),
    dynamic_key=_claude_dynamic,
    normalize=_prefixes({"message.content[].name": ("mcp__",)}),
)


# -- antigravity -----------------------------------------------------------------

ANTIGRAVITY: Final = Vocabulary(
    harness="antigravity",
    discriminators={"*": ("source", "tool_calls[].name")},
    deep={"PLANNER_RESPONSE": ("tool_calls[]",)},
)


# -- codex ---------------------------------------------------------------------------


def _codex_type(record: Obj) -> str:
    """Rollout envelopes by ``type/payload.type``, ``exec --json`` items by ``type/item.type``.

    Legacy rollouts' bare items keep their own ``type``; their metadata line and
    state markers, and a logger's wrapping of ``exec --json`` events, are named
    by what they are.
    """
    rtype = type_field(record)
    if rtype != UNTYPED:
        if rtype in ("response_item", "event_msg"):
            sub = string_at(record, "payload.type")
        elif rtype.startswith("item."):
            sub = string_at(record, "item.type")
        else:
            sub = None
        return f"{rtype}/{sub}" if sub else rtype
    log = string_at(record, "log_type")
    if log:
        inner = string_at(record, "data.type")
        return f"{log}/{inner}" if inner else log
    state = string_at(record, "record_type")
    if state:
        return f"record_type/{state}"
    if "id" in record and "timestamp" in record:
        return "(legacy-meta)"
    return UNTYPED


CODEX: Final = Vocabulary(
    harness="codex",
    record_type=_codex_type,
    discriminators={
        "response_item": ("payload.name", "payload.role", "payload.content[].type"),
        "event_msg": ("payload.item.type",),
        "message": ("role", "content[].type"),
        "function_call": ("name",),
        "stream_output": ("data.item.type",),
    },
    deep={
        "response_item": ("payload.content[]",),
        "event_msg/token_count": (
            "payload.info.last_token_usage",
            "payload.info.total_token_usage",
        ),
        "stream_output": ("data.item",),
    },
    normalize=_prefixes({"payload.name": ("mcp__",), "name": ("mcp__",)}),
)


# -- copilot -----------------------------------------------------------------------


def _copilot_document(doc: Raw) -> Iterator[tuple[str, Obj]]:
    # The legacy single-document session (``history-session-state/session_*.json``).
    return _split(
        doc,
        "(legacy-session)",
        {"chatMessages": ("chatMessages/", "role"), "timeline": ("timeline/", "type")},
    )


COPILOT: Final = Vocabulary(
    harness="copilot",
    discriminators={
        "abort": ("data.reason",),
        "assistant.message": ("data.toolRequests[].name", "data.reasoningBlocks.provider"),
        "hook.start": ("data.hookType",),
        "hook.end": ("data.hookType",),
        "permission.completed": ("data.result.kind", "data.decisionSource"),
        "permission.requested": (
            "data.permissionRequest.kind",
            "data.promptRequest.kind",
            "data.permissionMode",
            "data.agentMode",
        ),
        "session.binary_asset": ("data.type", "data.mimeType"),
        "session.error": ("data.errorType",),
        "session.info": ("data.infoType",),
        "session.model_change": ("data.source", "data.cause"),
        "session.shutdown": ("data.shutdownType",),
        "skill.invoked": ("data.source", "data.trigger"),
        "subagent.completed": ("data.agentName",),
        "subagent.selected": ("data.tools[]",),
        "subagent.started": (
            "data.agentName",
            "data.agentType",
            "data.executionMode",
            "data.modelSelectionSource",
        ),
        "system.notification": ("data.kind",),
        "tool.execution_complete": ("data.error.code",),
        "tool.execution_start": ("data.toolName", "data.mcpConfigSource", "data.mcpTransport"),
        "user.message": ("data.delivery", "data.source"),
    },
    deep={
        "assistant.message": ("data.toolRequests[]",),
        "tool.execution_complete": ("data.result",),
    },
    normalize=_prefixes(
        {
            "data.toolRequests[].name": ("github-mcp-server-",),
            "data.toolName": ("github-mcp-server-",),
            "data.source": ("agent-",),
        }
    ),
    document=_copilot_document,
)


# -- gemini-cli ----------------------------------------------------------------------


def _gemini_type(record: Obj) -> str:
    rtype = type_field(record)
    if rtype != UNTYPED:
        return rtype
    for key in ("$set", "$rewindTo"):
        if key in record:
            return key
    if "sessionId" in record and "projectHash" in record:
        return "(session)"
    return UNTYPED


def _gemini_document(doc: Raw) -> Iterator[tuple[str, Obj]]:
    items = as_list(doc)
    if items is not None:  # logs.json: the project's prompt log
        for item in items:
            rec = as_obj(item)
            if rec is not None:
                yield "logs/" + type_field(rec), rec
        return
    obj = as_obj(doc)
    if obj is None:
        return
    if "messages" in obj:  # a legacy session-*.json: the records of the JSONL recording
        yield "(session)", obj
        for item in as_list(obj["messages"]) or []:
            rec = as_obj(item)
            if rec is not None:
                yield type_field(rec), rec
        return
    # A /chat save or tool checkpoint: Gemini API contents.
    yield "(checkpoint)", obj
    for key in ("history", "clientHistory"):
        value = obj.get(key)
        for item in (as_list(value) or []) if value is not None else []:
            rec = as_obj(item)
            if rec is not None:
                role = string_at(rec, "role") or string_at(rec, "type") or UNTYPED
                yield f"checkpoint/{role}", rec


GEMINI_CLI: Final = Vocabulary(
    harness="gemini-cli",
    record_type=_gemini_type,
    discriminators={
        "gemini": ("toolCalls[].name", "toolCalls[].status", "content[].*"),
        "user": ("content[].*",),
        "checkpoint": ("parts[].*",),
    },
    deep={"gemini": ("toolCalls[]", "thoughts[]")},
    normalize=_prefixes({"toolCalls[].name": ("mcp_",)}),
    document=_gemini_document,
)


# -- pi ------------------------------------------------------------------------------

PI: Final = Vocabulary(
    harness="pi",
    record_type=_typed_by("message", "message.role"),
    discriminators={
        "message": ("message.content[].type", "message.stopReason"),
        "message/assistant": ("message.content[].name",),
        "message/toolResult": ("message.toolName",),
    },
    deep={"message": ("message.usage", "message.content[]")},
)


# -- qwen-code -----------------------------------------------------------------------

QWEN_CODE: Final = Vocabulary(
    harness="qwen-code",
    record_type=_typed_by("system", "subtype"),
    discriminators={
        "assistant": ("message.parts[].*", "message.parts[].functionCall.name"),
        "user": ("message.parts[].*",),
        "tool_result": ("message.parts[].*", "toolCallResult.status"),
        "system/ui_telemetry": ("systemPayload.uiEvent.event.name",),
    },
    deep={
        "assistant": ("message.parts[]", "usageMetadata"),
        "tool_result": ("message.parts[]", "toolCallResult"),
        "system": ("systemPayload",),
    },
    normalize=_prefixes({"message.parts[].functionCall.name": ("mcp__",)}),
)


# -- cline -----------------------------------------------------------------------------


def _cline_source(path: str) -> Iterator[tuple[str, Obj]]:
    """A task folder's records: API messages by role, UI messages by type, the metadata."""
    import os

    folder = path if os.path.isdir(path) else os.path.dirname(path)
    for name, prefix in (("api_conversation_history.json", "api"), ("ui_messages.json", "ui")):
        data = _read(os.path.join(folder, name))
        for item in (as_list(Raw(data)) or []) if data else []:
            rec = as_obj(item)
            if rec is None:
                continue
            if prefix == "api":
                yield f"api/{string_at(rec, 'role') or UNTYPED}", rec
            else:
                # ui/say and ui/ask: their kinds (dozens, growing) are discriminator values.
                yield f"ui/{string_at(rec, 'type') or UNTYPED}", rec
    data = _read(os.path.join(folder, "task_metadata.json"))
    rec = as_obj(Raw(data)) if data else None
    if rec is not None:
        yield "task_metadata", rec


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read().removeprefix(b"\xef\xbb\xbf")
    except OSError:
        return None


CLINE: Final = Vocabulary(
    harness="cline",
    discriminators={
        "api": ("content[].type", "content[].name"),
        "ui/say": ("say",),
        "ui/ask": ("ask",),
    },
    deep={"api/assistant": ("content[]", "metrics.tokens"), "api/user": ("content[]",)},
    normalize=_prefixes({"content[].name": ("use_mcp_tool",)}),
    source=_cline_source,
)


# -- opencode --------------------------------------------------------------------------


def _opencode_source(path: str) -> Iterator[tuple[str, Obj]]:
    """A database's or storage tree's records: sessions, messages by role, parts by type.

    Only the session, message and part tables are read (never account tables).
    """
    import os

    import msgspec

    from agentminutes.pipeline.documents import route

    found = route(path, "opencode")
    doc = found.document
    if doc is None:
        return
    if doc.container == "sqlite":
        conn = doc.connect()
        try:
            cols = [r[1] for r in conn.execute("PRAGMA table_info(session)")]
            for row in conn.execute("SELECT * FROM session"):
                yield (
                    "session",
                    {c: Raw(msgspec.json.encode(v)) for c, v in zip(cols, row, strict=True)},
                )
            for (data,) in conn.execute("SELECT data FROM message"):
                yield from _opencode_record("message", "role", data)
            for (data,) in conn.execute("SELECT data FROM part"):
                yield from _opencode_record("part", "type", data)
        finally:
            conn.close()
        return
    root = doc.path or path
    for folder, _dirs, files in sorted(os.walk(root)):
        rel = os.path.relpath(folder, root).replace(os.sep, "/").split("/")
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            data = _read(os.path.join(folder, name)) or b""
            if "part" in rel:
                yield from _opencode_record("part", "type", data)
            elif "message" in rel:
                yield from _opencode_record("message", "role", data)
            elif "session" in rel:
                rec = as_obj(Raw(data))
                if rec is not None:
                    yield "session", rec


def _opencode_record(table: str, field: str, data: bytes | str) -> Iterator[tuple[str, Obj]]:
    rec = as_obj(Raw(data.encode() if isinstance(data, str) else data))
    if rec is not None:
        yield f"{table}/{string_at(rec, field) or UNTYPED}", rec


OPENCODE: Final = Vocabulary(
    harness="opencode",
    discriminators={
        "part/tool": ("tool", "state.status"),
        "part/step-finish": ("reason",),
        "message/assistant": ("finish", "error.name"),
    },
    deep={"message/assistant": ("tokens", "time"), "part/tool": ("state",)},
    normalize=_prefixes({"tool": ("mcp_", "mcp__")}),
    source=_opencode_source,
)


#: Every harness with a vocabulary, by name (alphabetical).
VOCABULARIES: Final[dict[str, Vocabulary]] = {
    v.harness: v
    for v in (ANTIGRAVITY, CLAUDE_CODE, CLINE, CODEX, COPILOT, GEMINI_CLI, OPENCODE, PI, QWEN_CODE)
}


def vocabulary(harness: str) -> Vocabulary | None:
    """The vocabulary rules of *harness*, or ``None`` if drift scanning does not cover it."""
    return VOCABULARIES.get(harness)
