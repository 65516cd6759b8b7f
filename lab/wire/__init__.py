"""The model wire protocols the scripted server speaks, one module each.

Every module has the same two functions: ``inspect(path, body)`` reads a request into a
:class:`RequestView` (the model, whether it streams, the tools offered, the tool results it
carries back) and ``render(reply, billing, view)`` writes a :class:`Reply` as that protocol's
:class:`Response` (one JSON body, or server-sent events when the request streams).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class NamedCall:
    """A tool call as the harness will see it: its id, its tool's name, its arguments."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """The server's answer to one request, before a protocol writes it."""

    text: str = ""
    thinking: str = ""
    tool_calls: tuple[NamedCall, ...] = ()
    #: ``{"status": 529, "type": "overloaded_error", "message": ...}``: an HTTP error instead.
    error: dict[str, Any] | None = None
    #: A stable id for the message (the server numbers its requests).
    message_id: str = "msg_lab_0"

    @property
    def chars(self) -> int:
        """The length of what the reply says, thinking apart (billing counts it)."""
        args = sum(len(json.dumps(c.arguments)) + len(c.name) for c in self.tool_calls)
        return len(self.text) + args


@dataclass(frozen=True)
class Answered:
    """A tool result a request carries back: the call it answers and whether it says it failed."""

    call_id: str
    #: ``None`` where the protocol has no error flag (OpenAI, Gemini): the content says it.
    is_error: bool | None
    name: str | None = None


@dataclass
class RequestView:
    """What the server needs to know about one request."""

    model: str
    stream: bool
    tool_names: list[str] = field(default_factory=list)
    answered: list[Answered] = field(default_factory=list)
    #: Not part of the conversation: a title, a quota probe, a classifier (no tools offered,
    #: or JSON output demanded). Side requests get a short answer and take no step.
    side: bool = False
    #: OpenAI Chat Completions: the client asked for the usage chunk.
    include_usage: bool = False
    #: The request's own JSON schema for its output, where it demands one (Gemini).
    json_output: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Response:
    """An HTTP answer: a status and either one JSON body or a list of server-sent events."""

    status: int = 200
    body: Any = None
    events: list[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event carrying ``data`` as JSON (or as is, when a string)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def chunks(text: str, size: int = 24) -> list[str]:
    """``text`` cut into pieces of ``size`` characters (a stream's deltas)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]
