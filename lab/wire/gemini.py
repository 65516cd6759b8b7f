"""Gemini (``POST /v1beta/models/<model>:generateContent`` and ``:streamGenerateContent``).

Thinking goes out as parts marked ``thought`` with a ``thoughtSignature``; usage counts
thoughts apart from the candidates (``candidatesTokenCount`` excludes them) and cached
content inside the prompt, as Gemini does. A request demanding JSON output
(``responseMimeType: application/json``, the Gemini CLI's classifiers) is a side request.
"""

from __future__ import annotations

import re
from typing import Any

from lab.billing import Billing
from lab.wire import Answered, Reply, RequestView, Response, chunks, sse
from lab.wire.anthropic import signature

NAME = "gemini"
CACHE_WRITES = False
REASONING_APART = True

_MODEL = re.compile(r"/models/([^/:]+):")


def inspect(path: str, body: dict[str, Any]) -> RequestView:
    """The request's model (from the path), stream flag, tools and function responses."""
    answered: list[Answered] = []
    contents = body.get("contents") or []
    if contents and contents[-1].get("role") == "user":
        for part in contents[-1].get("parts") or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                answered.append(
                    Answered(str(response.get("id", "")), None, name=response.get("name"))
                )
    tools = [
        str(decl.get("name", ""))
        for tool in body.get("tools") or []
        if isinstance(tool, dict)
        for decl in tool.get("functionDeclarations") or []
        if isinstance(decl, dict)
    ]
    config = body.get("generationConfig") or body.get("config") or {}
    json_output = config.get("responseMimeType") == "application/json"
    match = _MODEL.search(path)
    return RequestView(
        model=match.group(1) if match else str(body.get("model", "")),
        stream=":streamGenerateContent" in path,
        tool_names=tools,
        answered=answered,
        side=json_output or not tools,
        json_output=json_output,
    )


def usage(billing: Billing) -> dict[str, int]:
    """Gemini's usage metadata: cache inside the prompt, thoughts apart from candidates."""
    thoughts = billing.reasoning_output_tokens or 0
    meta = {
        "promptTokenCount": billing.input_tokens,
        "candidatesTokenCount": billing.output_tokens - thoughts,
        "totalTokenCount": billing.input_tokens + billing.output_tokens,
        "cachedContentTokenCount": billing.cache_read_input_tokens,
    }
    if thoughts:
        meta["thoughtsTokenCount"] = thoughts
    return meta


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if reply.thinking:
        parts.append(
            {"text": reply.thinking, "thought": True, "thoughtSignature": signature(reply.thinking)}
        )
    if reply.text:
        parts.append({"text": reply.text})
    parts.extend(
        {"functionCall": {"id": c.id, "name": c.name, "args": c.arguments}}
        for c in reply.tool_calls
    )
    return parts


def error(reply: Reply) -> Response:
    """An API error as Google writes one."""
    assert reply.error is not None
    status = int(reply.error.get("status", 503))
    message = reply.error.get("message", "The model is overloaded (scripted by the lab)")
    return Response(
        status=status,
        body={
            "error": {
                "code": status,
                "message": message,
                "status": reply.error.get("type", "UNAVAILABLE"),
            }
        },
    )


def render(reply: Reply, billing: Billing, view: RequestView) -> Response:
    """The reply as a generateContent response, or a stream of partial ones."""
    if reply.error:
        return error(reply)
    parts = _parts(reply)

    def candidate(parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            out["finishReason"] = finish
        return out

    whole = {
        "candidates": [candidate(parts, "STOP")],
        "usageMetadata": usage(billing),
        "modelVersion": view.model,
        "responseId": reply.message_id,
    }
    if not view.stream:
        return Response(body=whole)
    events: list[bytes] = []
    for part in parts:
        if "text" in part:
            pieces = chunks(part["text"], 64)
            for i, piece in enumerate(pieces):
                one = {**part, "text": piece}
                if "thoughtSignature" in part and i < len(pieces) - 1:
                    one.pop("thoughtSignature")
                events.append(
                    sse(
                        {
                            "candidates": [candidate([one], None)],
                            "modelVersion": view.model,
                            "responseId": reply.message_id,
                        }
                    )
                )
        else:
            events.append(
                sse(
                    {
                        "candidates": [candidate([part], None)],
                        "modelVersion": view.model,
                        "responseId": reply.message_id,
                    }
                )
            )
    events.append(
        sse(
            {
                "candidates": [candidate([{"text": ""}], "STOP")],
                "usageMetadata": usage(billing),
                "modelVersion": view.model,
                "responseId": reply.message_id,
            }
        )
    )
    return Response(events=events)


def count_tokens(body: dict[str, Any]) -> Response:
    """``:countTokens``: a count that grows with the request."""
    import json

    return Response(body={"totalTokens": 1200 + len(json.dumps(body)) // 50})
