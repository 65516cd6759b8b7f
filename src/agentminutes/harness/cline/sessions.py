"""Cline CLI 3.x sessions: ``~/.cline/data/sessions/<id>/<id>.messages.json``.

The 3.x CLI (built on ``@cline/sdk``) no longer writes task folders. Each session is a
folder holding ``<id>.json`` (the run: working directory, provider, model, status, summed
usage) and ``<id>.messages.json``, one JSON object rewritten whole as the session goes:
``{version, updated_at, agent, sessionId, origin: {source, mode, version}, messages,
system_prompt}``. Its ``messages`` are Anthropic shaped (``role``, ``content`` blocks
``text``/``thinking``/``tool_use``/``tool_result``, ``ts`` in milliseconds); an assistant
message carries ``modelInfo`` (``id``, ``provider``) and ``metrics`` (``inputTokens``,
``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``). A ``tool_result``'s
content is a list of ``{query, result, error?, success}``, one per file or command.

Mapping: the messages file is the conversation (records numbered from 1 in ``messages``
order). ``session_meta`` takes the session id and ``origin.version``, and the working
directory from ``<id>.json`` beside it when there is one. A user text block is a
``user_message`` (``human`` when it is the typed prompt, ``<user_input …>``; ``harness``
otherwise); a ``tool_result`` block is a ``tool_result``, an error when any of its entries
failed (``success: false``). An assistant message is its ``thinking`` and ``tool_call``
events, then one ``assistant_message`` with its text, model and usage. ``inputTokens``
counts the cache reads and writes in (the lab's recordings against a server that billed
them show it): the usage keeps input fresh, the cache apart, as the task folders' does.
"""

from __future__ import annotations

import json
import os
import re
from typing import Final

import msgspec
from msgspec import Raw

from agentminutes.harness._anthropic_wire import TypedBlock
from agentminutes.harness._stamp import Stamp
from agentminutes.harness.base import BaseDocumentAdapter, ConversationInfo, listed_title
from agentminutes.schema import (
    AssistantMessage,
    ContentBlock,
    Event,
    Origin,
    Thinking,
    TokenUsage,
    ToolCall,
    ToolKind,
    ToolResult,
    UserMessage,
)
from agentminutes.timestamps import format_ms

#: A 3.x session document's first keys (``version``, ``updated_at``, then the agent).
HEAD: Final = re.compile(
    rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"updated_at"\s*:\s*"[^"]*"\s*,\s*"agent"\s*:'
)
SUFFIX: Final = ".messages.json"

#: The 3.x CLI's tools mapped onto ACP kinds; any other name is ``other``.
TOOL_KINDS: Final[dict[str, str]] = {
    "read_files": ToolKind.READ,
    "search_codebase": ToolKind.SEARCH,
    "run_commands": ToolKind.EXECUTE,
    "fetch_web_content": ToolKind.FETCH,
    "editor": ToolKind.EDIT,
    "ask_question": ToolKind.OTHER,
}


_Block = TypedBlock


class _ModelInfo(msgspec.Struct):
    id: str = ""
    provider: str = ""


class _Metrics(msgspec.Struct, rename="camel"):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None


class _Message(msgspec.Struct, rename="camel"):
    id: str = ""
    role: str = ""
    content: list[Raw] | str | None = None
    ts: int | float | None = None
    model_info: _ModelInfo | None = None
    metrics: _Metrics | None = None


class _Origin(msgspec.Struct):
    version: str = ""
    source: str = ""


class _Session(msgspec.Struct, rename="camel"):
    session_id: str = ""
    origin: _Origin | None = None
    messages: list[Raw] | None = None
    updated_at: str = ""


class _Run(msgspec.Struct):
    cwd: str = ""
    started_at: str = ""


class _Entry(msgspec.Struct):
    success: bool | None = None
    error: str | None = None
    result: str | None = None


_decode_session = msgspec.json.Decoder(_Session).decode
_decode_message = msgspec.json.Decoder(_Message).decode
_decode_block = msgspec.json.Decoder(_Block).decode
_decode_run = msgspec.json.Decoder(_Run).decode
_decode_entries = msgspec.json.Decoder(list[_Entry] | str).decode
_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)


def session_of(payload: bytes, adapter: BaseDocumentAdapter) -> _Session:
    """The session document, or the loud error naming what is wrong with it."""
    try:
        return _decode_session(payload)
    except _ERRORS as exc:
        raise adapter.error(f"not a Cline session document: {exc}", 0) from None


def conversation(payload: bytes, adapter: BaseDocumentAdapter, name: str) -> ConversationInfo:
    """The session's listing: id, first prompt as title, first and last message times."""
    doc = session_of(payload, adapter)
    messages = doc.messages or []
    first = last = None
    title = ""
    for raw in messages:
        try:
            m = _decode_message(raw)
        except _ERRORS:
            continue
        first = m.ts if first is None else first
        last = m.ts if m.ts is not None else last
        if not title and m.role == "user":
            texts = _texts(m)
            title = listed_title(_strip_input(texts[0]) if texts else "")
    return ConversationInfo(
        id=doc.session_id or name,
        title=title,
        created=format_ms(first),
        updated=format_ms(last) or doc.updated_at,
        messages=len(messages),
    )


def _texts(m: _Message) -> list[str]:
    if isinstance(m.content, str):
        return [m.content]
    out = []
    for raw in m.content or []:
        try:
            block = _decode_block(raw)
        except _ERRORS:
            continue
        if block.type == "text" and block.text:
            out.append(block.text)
    return out


_INPUT: Final = re.compile(r"^\s*<user_input[^>]*>(.*)</user_input>\s*$", re.S)


def _strip_input(text: str) -> str:
    m = _INPUT.match(text)
    return m.group(1) if m else text


def _result_failed(content: Raw) -> tuple[bool, list[ContentBlock]]:
    if not content:
        return False, []
    try:
        entries = _decode_entries(content)
    except _ERRORS:
        return False, [ContentBlock(kind="other", raw=content)]
    if isinstance(entries, str):
        return False, [ContentBlock(kind="text", text=entries)]
    failed = any(e.success is False or bool(e.error) for e in entries)
    blocks = [ContentBlock(kind="text", text=e.error or e.result or "") for e in entries]
    return failed, blocks


def events(
    payload: bytes, adapter: BaseDocumentAdapter, name: str, path: str | None
) -> list[Event]:
    """The session's events (see the module docstring)."""
    doc = session_of(payload, adapter)
    version = (doc.origin.version if doc.origin else "") or adapter.options.harness_version
    cwd = ""
    started = ""
    if path:
        run_file = os.path.join(
            os.path.dirname(path), os.path.basename(path).removesuffix(SUFFIX) + ".json"
        )
        try:
            with open(run_file, "rb") as f:
                run = _decode_run(f.read())
            cwd, started = run.cwd, run.started_at
        except (OSError, *_ERRORS):
            pass
    messages = doc.messages or []
    out: list[Event] = []
    first_ts = ""
    for raw in messages[:1]:
        try:
            first_ts = format_ms(_decode_message(raw).ts)
        except _ERRORS:
            first_ts = ""
    prov = adapter.record_prov(messages[0] if messages else Raw(b"{}"), 1)
    out.append(
        adapter.session_meta(
            prov,
            timestamp=first_ts or started,
            harness_version=version,
            session_id=doc.session_id or name,
            cwd=cwd,
        )
    )
    names: dict[str, str] = {}
    for n, raw in enumerate(messages, start=1):
        try:
            m = _decode_message(raw)
        except _ERRORS as exc:
            raise adapter.error(f"message {n}: {exc}", n) from None
        ts = format_ms(m.ts)
        prov = adapter.record_prov(raw, n)
        said = Stamp(ts, prov, id=m.id)
        blocks: list[_Block] = []
        if isinstance(m.content, str):
            blocks = [_Block(type="text", text=m.content)]
        else:
            for b in m.content or []:
                try:
                    blocks.append(_decode_block(b))
                except _ERRORS as exc:
                    raise adapter.error(f"message {n}: a content block: {exc}", n) from None
        if m.role == "user":
            for block in blocks:
                if block.type == "text":
                    words = block.text or ""
                    typed = _INPUT.match(words)
                    origin = Origin.HUMAN if typed else Origin.HARNESS
                    content = [ContentBlock(kind="text", text=typed.group(1) if typed else words)]
                    out.append(said.user_message(UserMessage(origin=origin, content=content)))
                elif block.type == "tool_result":
                    call_id = block.tool_use_id or ""
                    failed, output = _result_failed(block.content)
                    result = ToolResult(
                        tool_call_id=call_id,
                        tool_name=block.name or names.get(call_id, ""),
                        is_error=failed,
                        content=output or None,
                    )
                    out.append(Stamp(ts, prov, id=call_id).tool_result(result))
                else:
                    adapter.skip(f"user/{block.type or 'untyped'}", n)
            continue
        if m.role != "assistant":
            raise adapter.error(f'message {n}: unrecognized role "{m.role}"', n)
        text: list[ContentBlock] = []
        part = Stamp(ts, prov, message_id=m.id)
        for block in blocks:
            if block.type == "thinking":
                thought = Thinking(text=block.thinking or "", signature=block.signature or "")
                out.append(part.thinking(thought))
            elif block.type == "tool_use":
                call_id = block.id or ""
                names[call_id] = block.name or ""
                call = ToolCall(
                    tool_call_id=call_id,
                    name=block.name or "",
                    kind=TOOL_KINDS.get(block.name or "", ToolKind.OTHER),
                    input=block.input or Raw(b"{}"),
                )
                out.append(Stamp(ts, prov, id=call_id, message_id=m.id).tool_call(call))
            elif block.type == "text":
                text.append(ContentBlock(kind="text", text=block.text or ""))
            else:
                text.append(
                    ContentBlock(kind="other", raw=Raw(json.dumps({"type": block.type}).encode()))
                )
        usage = None
        if m.metrics is not None:
            c = m.metrics
            read, write = c.cache_read_tokens, c.cache_write_tokens
            fresh = (
                c.input_tokens - read - write if c.input_tokens >= read + write else c.input_tokens
            )
            usage = TokenUsage(
                input_tokens=fresh,
                output_tokens=c.output_tokens,
                cache_read_input_tokens=read,
                cache_creation_input_tokens=write,
                cost=c.cost,
            )
        model = m.model_info.id if m.model_info else ""
        reply = AssistantMessage(model=model, content=text or None, usage=usage)
        out.append(Stamp(ts, prov, id=m.id, message_id=m.id).assistant_message(reply))
    return out
