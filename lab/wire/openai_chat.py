"""OpenAI Chat Completions (``POST …/chat/completions``): streaming, tool calls, usage.

Thinking goes out as ``reasoning_content`` (the field DeepSeek and Qwen's servers use and the
OpenAI-compatible harnesses read). The usage chunk is sent when the request asks for it
(``stream_options.include_usage``), as OpenAI does; a non-streamed answer always has usage.
"""

from __future__ import annotations

import json
import time
from typing import Any

from lab.billing import Billing
from lab.wire import Answered, Reply, RequestView, Response, chunks, sse

NAME = "openai-chat"
CACHE_WRITES = False
REASONING_APART = True


def inspect(path: str, body: dict[str, Any]) -> RequestView:
    """The request's model, stream flag, tools and the tool results after its last assistant turn."""
    answered: list[Answered] = []
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool":
            answered.insert(0, Answered(str(message.get("tool_call_id")), None))
        elif message.get("role") == "assistant":
            break
    tools = [
        (t.get("function") or {}).get("name", "")
        for t in body.get("tools") or []
        if isinstance(t, dict)
    ]
    options = body.get("stream_options") or {}
    fmt = body.get("response_format") or {}
    return RequestView(
        model=str(body.get("model", "")),
        stream=bool(body.get("stream", False)),
        tool_names=tools,
        answered=answered,
        side=not tools,
        include_usage=bool(options.get("include_usage", False)),
        json_output=fmt.get("type") in ("json_object", "json_schema"),
    )


def usage(billing: Billing) -> dict[str, Any]:
    """OpenAI's usage object: cached tokens inside the prompt, reasoning inside the completion."""
    return {
        "prompt_tokens": billing.input_tokens,
        "completion_tokens": billing.output_tokens,
        "total_tokens": billing.input_tokens + billing.output_tokens,
        "prompt_tokens_details": {"cached_tokens": billing.cache_read_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": billing.reasoning_output_tokens or 0},
    }


def error(reply: Reply) -> Response:
    """An API error as OpenAI writes one."""
    assert reply.error is not None
    status = int(reply.error.get("status", 503))
    message = reply.error.get("message", "Service unavailable (scripted by the lab)")
    kind = reply.error.get("type", "server_error")
    return Response(status=status, body={"error": {"message": message, "type": kind, "code": kind}})


def render(reply: Reply, billing: Billing, view: RequestView) -> Response:
    """The reply as a chat completion, or its chunks when the request streams."""
    if reply.error:
        return error(reply)
    created = int(time.time())
    finish = "tool_calls" if reply.tool_calls else "stop"
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
        }
        for c in reply.tool_calls
    ]
    if not view.stream:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.thinking:
            message["reasoning_content"] = reply.thinking
        if calls:
            message["tool_calls"] = calls
        return Response(
            body={
                "id": reply.message_id,
                "object": "chat.completion",
                "created": created,
                "model": view.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage(billing),
            }
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        return sse(
            {
                "id": reply.message_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": view.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.thinking:
        events.extend(chunk({"reasoning_content": p}) for p in chunks(reply.thinking))
    if reply.text:
        events.extend(chunk({"content": p}) for p in chunks(reply.text))
    for index, call in enumerate(calls):
        pieces = chunks(call["function"]["arguments"])
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": pieces[0]},
        }
        events.append(chunk({"tool_calls": [first]}))
        events.extend(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in pieces[1:]
        )
    events.append(chunk({}, finish))
    if view.include_usage:
        events.append(
            sse(
                {
                    "id": reply.message_id,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": view.model,
                    "choices": [],
                    "usage": usage(billing),
                }
            )
        )
    events.append(sse("[DONE]"))
    return Response(events=events)
