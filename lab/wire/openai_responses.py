"""OpenAI Responses (``POST …/responses``): the streamed events Codex reads.

Codex builds its history from ``response.output_item.done`` items and takes the usage from
``response.completed`` (a stream that ends without it is an error there), so every item is
announced, streamed and closed, and the stream always completes. Thinking goes out as a
``reasoning`` item with a summary and an opaque ``encrypted_content``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from lab.billing import Billing
from lab.wire import Answered, Reply, RequestView, Response, chunks, sse
from lab.wire.anthropic import signature

NAME = "openai-responses"
CACHE_WRITES = False
REASONING_APART = True

_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")


def inspect(path: str, body: dict[str, Any]) -> RequestView:
    """The request's model, stream flag, tools and the tool outputs after its last call."""
    answered: list[Answered] = []
    items = body.get("input")
    if isinstance(items, list):
        for item in reversed(items):
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind in _OUTPUTS:
                answered.insert(0, Answered(str(item.get("call_id")), None))
            elif kind in _CALLS or item.get("role") == "assistant":
                break
    tools = [
        str(t.get("name") or t.get("type") or "")
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]
    text = body.get("text") or {}
    fmt = text.get("format") if isinstance(text, dict) else None
    return RequestView(
        model=str(body.get("model", "")),
        stream=bool(body.get("stream", False)),
        tool_names=tools,
        answered=answered,
        side=not tools,
        json_output=isinstance(fmt, dict) and fmt.get("type") == "json_schema",
    )


def usage(billing: Billing) -> dict[str, Any]:
    """The Responses usage object: cached input inside input, reasoning inside output."""
    return {
        "input_tokens": billing.input_tokens,
        "input_tokens_details": {"cached_tokens": billing.cache_read_input_tokens},
        "output_tokens": billing.output_tokens,
        "output_tokens_details": {"reasoning_tokens": billing.reasoning_output_tokens or 0},
        "total_tokens": billing.input_tokens + billing.output_tokens,
    }


def _items(reply: Reply) -> list[dict[str, Any]]:
    base = reply.message_id.removeprefix("msg_")
    items: list[dict[str, Any]] = []
    if reply.thinking:
        items.append(
            {
                "type": "reasoning",
                "id": f"rs_{base}",
                "summary": [{"type": "summary_text", "text": reply.thinking}],
                "encrypted_content": signature(reply.thinking),
            }
        )
    if reply.text:
        items.append(
            {
                "type": "message",
                "id": f"msg_{base}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    items.extend(
        {
            "type": "function_call",
            "id": f"fc_{base}_{i}",
            "call_id": c.id,
            "name": c.name,
            "arguments": json.dumps(c.arguments),
            "status": "completed",
        }
        for i, c in enumerate(reply.tool_calls)
    )
    return items


def error(reply: Reply) -> Response:
    """An API error as OpenAI writes one."""
    assert reply.error is not None
    status = int(reply.error.get("status", 503))
    message = reply.error.get("message", "Service unavailable (scripted by the lab)")
    kind = reply.error.get("type", "server_error")
    return Response(status=status, body={"error": {"message": message, "type": kind, "code": kind}})


def render(reply: Reply, billing: Billing, view: RequestView) -> Response:
    """The reply as a Responses object, or its event stream when the request streams."""
    if reply.error:
        return error(reply)
    response_id = f"resp_{reply.message_id.removeprefix('msg_')}"
    items = _items(reply)
    done = {
        "id": response_id,
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": view.model,
        "output": items,
        "usage": usage(billing),
    }
    if not view.stream:
        return Response(body=done)
    seq = 0

    def event(kind: str, **fields: Any) -> bytes:
        nonlocal seq
        seq += 1
        return sse({"type": kind, "sequence_number": seq, **fields}, kind)

    started = {**done, "status": "in_progress", "output": [], "usage": None}
    events = [
        event("response.created", response=started),
        event("response.in_progress", response=started),
    ]
    for index, item in enumerate(items):
        kind = item["type"]
        if kind == "reasoning":
            opened = {**item, "summary": []}
        elif kind == "message":
            opened = {**item, "status": "in_progress", "content": []}
        else:
            opened = {**item, "status": "in_progress", "arguments": ""}
        events.append(event("response.output_item.added", output_index=index, item=opened))
        if kind == "reasoning":
            text = item["summary"][0]["text"]
            part = {"type": "summary_text", "text": ""}
            events.append(
                event(
                    "response.reasoning_summary_part.added",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    part=part,
                )
            )
            events.extend(
                event(
                    "response.reasoning_summary_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    delta=p,
                )
                for p in chunks(text)
            )
            events.append(
                event(
                    "response.reasoning_summary_text.done",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    text=text,
                )
            )
            events.append(
                event(
                    "response.reasoning_summary_part.done",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    part={**part, "text": text},
                )
            )
        elif kind == "message":
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(
                event(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part=part,
                )
            )
            events.extend(
                event(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    delta=p,
                )
                for p in chunks(text)
            )
            events.append(
                event(
                    "response.output_text.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    text=text,
                )
            )
            events.append(
                event(
                    "response.content_part.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    part={**part, "text": text},
                )
            )
        else:
            events.extend(
                event(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=p,
                )
                for p in chunks(item["arguments"])
            )
            events.append(
                event(
                    "response.function_call_arguments.done",
                    item_id=item["id"],
                    output_index=index,
                    arguments=item["arguments"],
                )
            )
        events.append(event("response.output_item.done", output_index=index, item=item))
    events.append(event("response.completed", response=done))
    return Response(events=events)
