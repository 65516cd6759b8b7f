"""Anthropic Messages (``POST /v1/messages``): streaming and not, thinking, ``tool_use``."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from lab.billing import Billing
from lab.wire import Answered, Reply, RequestView, Response, chunks, sse

NAME = "anthropic"
CACHE_WRITES = True
REASONING_APART = False


def inspect(path: str, body: dict[str, Any]) -> RequestView:
    """The request's model, stream flag, tools and the tool results it sends back."""
    answered: list[Answered] = []
    messages = body.get("messages") or []
    # Only the last user message carries this turn's results; earlier ones were counted.
    if messages and messages[-1].get("role") == "user":
        content = messages[-1].get("content")
        if isinstance(content, list):
            answered.extend(
                Answered(str(block.get("tool_use_id")), bool(block.get("is_error", False)))
                for block in content
                if isinstance(block, dict) and block.get("type") == "tool_result"
            )
    tools = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
    return RequestView(
        model=str(body.get("model", "")),
        stream=bool(body.get("stream", False)),
        tool_names=tools,
        answered=answered,
        side=not tools,
    )


def signature(thinking: str) -> str:
    """A stable stand-in for the signature Anthropic puts on a thinking block."""
    return base64.b64encode(hashlib.sha256(thinking.encode()).digest() * 2).decode()


def usage(billing: Billing) -> dict[str, int]:
    """Anthropic's usage object: fresh input apart from cache reads and writes."""
    return {
        "input_tokens": billing.fresh_input_tokens,
        "cache_creation_input_tokens": billing.cache_creation_input_tokens,
        "cache_read_input_tokens": billing.cache_read_input_tokens,
        "output_tokens": billing.output_tokens,
    }


def _blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.thinking:
        blocks.append(
            {"type": "thinking", "thinking": reply.thinking, "signature": signature(reply.thinking)}
        )
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
        for c in reply.tool_calls
    )
    return blocks


def error(reply: Reply) -> Response:
    """An API error as Anthropic writes one."""
    assert reply.error is not None
    status = int(reply.error.get("status", 529))
    kind = reply.error.get("type", "overloaded_error" if status == 529 else "api_error")
    message = reply.error.get("message", "Overloaded (scripted by the lab)")
    return Response(
        status=status,
        body={"type": "error", "error": {"type": kind, "message": message}},
        headers={"x-should-retry": "true"},
    )


def render(reply: Reply, billing: Billing, view: RequestView) -> Response:
    """The reply as a Messages response, streamed as Anthropic streams it when asked."""
    if reply.error:
        return error(reply)
    blocks = _blocks(reply)
    stop = "tool_use" if reply.tool_calls else "end_turn"
    message = {
        "id": reply.message_id,
        "type": "message",
        "role": "assistant",
        "model": view.model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage(billing),
    }
    if not view.stream:
        return Response(body=message)
    start_usage = {**usage(billing), "output_tokens": 1}
    events = [
        sse(
            {
                "type": "message_start",
                "message": {**message, "content": [], "stop_reason": None, "usage": start_usage},
            },
            "message_start",
        ),
        sse({"type": "ping"}, "ping"),
    ]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in chunks(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in chunks(block["text"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in chunks(json.dumps(block["input"]))
            ]
        events.append(
            sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
        )
        events.extend(
            sse({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
            for d in deltas
        )
        events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    events.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": usage(billing),
            },
            "message_delta",
        )
    )
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return Response(events=events)


def count_tokens(body: dict[str, Any]) -> Response:
    """``/v1/messages/count_tokens``: a count that grows with the request."""
    return Response(body={"input_tokens": 1200 + len(json.dumps(body)) // 50})
