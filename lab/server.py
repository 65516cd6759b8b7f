"""The scripted model server: each conversation request gets the scenario's next step.

:class:`ScriptedModel` holds a scenario's steps and the ground truth; :class:`LabServer` is a
threaded HTTP server on 127.0.0.1 routing each request by its path to a wire protocol
(:mod:`lab.wire`)::

    model = ScriptedModel(load_scenario("tools"), namer=claude_code_tools)
    with LabServer(model) as server:          # server.url == "http://127.0.0.1:<port>"
        run the CLI with its base URL set to server.url
    model.ground_truth()                     # per request: billed tokens, tool calls asked for

Routes: ``/v1/messages`` (and ``/count_tokens``) Anthropic; ``…/chat/completions`` OpenAI Chat;
``…/responses`` OpenAI Responses; ``…/models/<m>:generateContent``, ``:streamGenerateContent``
and ``:countTokens`` Gemini. Anything else is answered 404 and listed under ``unhandled``.

A *side* request (no tools offered, or JSON output demanded: titles, quota probes,
classifiers) gets a short answer, takes no step and is recorded with ``"side": true``.
"""

from __future__ import annotations

import gzip
import json
import secrets
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from lab.billing import bill
from lab.scenario import Scenario, ToolCall
from lab.wire import (
    NamedCall,
    Reply,
    RequestView,
    Response,
    anthropic,
    gemini,
    openai_chat,
    openai_responses,
)

#: Names a scenario's abstract tool call for the harness: ``(call, offered tool names) ->
#: (tool name, arguments)``. Drivers supply one (:mod:`lab.drivers`).
ToolNamer = Callable[[ToolCall, list[str]], tuple[str, dict[str, Any]]]

#: What a side request demanding JSON gets: it satisfies the Gemini CLI's next-speaker,
#: model-router and loop checks alike.
SIDE_JSON = {
    "reasoning": "scripted by the lab",
    "next_speaker": "user",
    "model_choice": "flash",
    "confidence": 0.0,
}


def route(path: str) -> tuple[ModuleType, str] | None:
    """The wire module and the operation (``answer`` or ``count``) for a request path."""
    bare = urlsplit(path).path.rstrip("/")
    if bare.endswith("/messages/count_tokens"):
        return anthropic, "count"
    if bare.endswith("/messages"):
        return anthropic, "answer"
    if bare.endswith("/chat/completions"):
        return openai_chat, "answer"
    if bare.endswith("/responses"):
        return openai_responses, "answer"
    if ":countTokens" in bare:
        return gemini, "count"
    if ":generateContent" in bare or ":streamGenerateContent" in bare:
        return gemini, "answer"
    return None


def _default_namer(call: ToolCall, offered: list[str]) -> tuple[str, dict[str, Any]]:
    return call.kind, dict(call.params)


class ScriptedModel:
    """A scenario's steps, handed out one per conversation request, and what was billed."""

    def __init__(
        self,
        scenario: Scenario,
        namer: ToolNamer | None = None,
        *,
        is_side: Callable[[RequestView, dict[str, Any]], bool] | None = None,
        requests_dir: Path | None = None,
    ) -> None:
        self.scenario = scenario
        self.namer = namer or _default_namer
        self.is_side = is_side
        self.requests_dir = requests_dir
        self.records: list[dict[str, Any]] = []
        self.unhandled: list[dict[str, Any]] = []
        self._cursor = 0
        self._conversation_requests = 0
        self._lock = threading.Lock()
        #: Makes this run's message and tool-call ids its own, as a provider's are: two
        #: recordings in one home are two sessions to a reader that counts each id once.
        self.run_id = secrets.token_hex(3)

    @property
    def steps_left(self) -> int:
        """Steps not yet handed out."""
        return len(self.scenario.steps) - self._cursor

    def answer(self, path: str, body: dict[str, Any]) -> Response:
        """Answer one request (thread-safe) and record it."""
        routed = route(path)
        if routed is None:
            with self._lock:
                self.unhandled.append({"path": path})
            return Response(
                status=404, body={"error": {"message": f"the lab does not serve {path}"}}
            )
        wire, operation = routed
        if operation == "count":
            return wire.count_tokens(body)  # type: ignore[no-any-return]
        view: RequestView = wire.inspect(path, body)
        if self.is_side is not None:
            view.side = self.is_side(view, body)
        with self._lock:
            n = len(self.records)
            record: dict[str, Any] = {
                "n": n,
                "protocol": wire.NAME,
                "path": urlsplit(path).path,
                "model": view.model,
                "stream": view.stream,
                "side": view.side,
                "answered": [
                    {
                        "id": a.call_id,
                        "is_error": a.is_error,
                        **({"name": a.name} if a.name else {}),
                    }
                    for a in view.answered
                ],
            }
            if self.requests_dir is not None:
                self.requests_dir.mkdir(parents=True, exist_ok=True)
                (self.requests_dir / f"{n:03d}.json").write_text(json.dumps(body, indent=1))
            reply, expected = self._reply(n, view, wire, record)
            index = 0 if view.side else self._conversation_requests
            billing = bill(
                request_bytes=len(json.dumps(body)),
                conversation_index=index,
                reply_chars=reply.chars,
                thinking_chars=len(reply.thinking),
                cache_writes=wire.CACHE_WRITES,
                reasoning_apart=wire.REASONING_APART,
            )
            if reply.error:
                record["status"] = int(reply.error.get("status", 503))
                record["billed"] = None
            else:
                record["status"] = 200
                record["billed"] = billing.as_json()
                if not view.side:
                    self._conversation_requests += 1
            record["text"] = reply.text
            record["thinking"] = reply.thinking
            record["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments, "fails": f}
                for c, f in zip(reply.tool_calls, expected, strict=True)
            ]
            if wire is openai_chat and view.stream and not view.include_usage:
                record["usage_sent"] = False
            self.records.append(record)
        return wire.render(reply, billing, view)  # type: ignore[no-any-return]

    def _reply(
        self, n: int, view: RequestView, wire: ModuleType, record: dict[str, Any]
    ) -> tuple[Reply, list[bool]]:
        message_id = f"msg_lab{self.run_id}{n:03d}"
        record["message_id"] = message_id
        if view.side:
            text = json.dumps(SIDE_JSON) if view.json_output else "Lab session"
            return Reply(text=text, message_id=message_id), []
        if self._cursor >= len(self.scenario.steps):
            record["beyond_script"] = True
            return Reply(text="(the lab's scenario has no more steps)", message_id=message_id), []
        record["step"] = self._cursor
        step = self.scenario.steps[self._cursor]
        self._cursor += 1
        prefix = "toolu_" if wire is anthropic else "call_"
        calls = []
        for i, call in enumerate(step.tool_calls):
            name, args = self.namer(call, view.tool_names)
            calls.append(
                NamedCall(id=f"{prefix}lab{self.run_id}{n:03d}{i}", name=name, arguments=args)
            )
        reply = Reply(
            text=step.text,
            thinking=step.thinking,
            tool_calls=tuple(calls),
            error=step.error,
            message_id=message_id,
        )
        return reply, [c.fails for c in step.tool_calls]

    def ground_truth(self) -> dict[str, Any]:
        """The recording's ground truth: every request, and the conversation's totals."""
        with self._lock:
            records = [dict(r) for r in self.records]
            unhandled = list(self.unhandled)
        conversation = [r for r in records if not r["side"] and r.get("billed")]
        totals: dict[str, int | None] = {}
        for key in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "reasoning_output_tokens",
        ):
            values = [r["billed"][key] for r in conversation]
            totals[key] = None if any(v is None for v in values) else sum(values)
        answered = {a["id"]: a for r in records for a in r["answered"]}
        calls = []
        for r in records:
            for c in r["tool_calls"]:
                got = answered.get(c["id"])
                calls.append(
                    {**c, "answered": got is not None, "answered_error": got and got["is_error"]}
                )
        return {
            "scenario": self.scenario.name,
            "steps": len(self.scenario.steps),
            "steps_used": self._cursor,
            "requests": records,
            "conversation_requests": len(conversation),
            "billed": totals,
            "tool_calls": calls,
            "unhandled": unhandled,
        }


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the ground truth is the log."""

    def _body(self) -> dict[str, Any]:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        if not raw:
            return {}
        value = json.loads(raw)
        return value if isinstance(value, dict) else {"_": value}

    def _send(self, response: Response) -> None:
        if response.events is None:
            payload = json.dumps(response.body).encode()
            self.send_response(response.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in response.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(response.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in response.headers.items():
            self.send_header(k, v)
        self.end_headers()
        for event in response.events:
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:
        """Every model call is a POST."""
        try:
            body = self._body()
        except (ValueError, OSError) as exc:
            self._send(
                Response(status=400, body={"error": {"message": f"bad request body: {exc}"}})
            )
            return
        self._send(self.server.model.answer(self.path, body))

    def do_GET(self) -> None:
        """Model listings: none (the harnesses are told their model)."""
        with self.server.model._lock:
            self.server.model.unhandled.append({"path": self.path, "method": "GET"})
        self._send(
            Response(
                status=404, body={"error": {"message": f"the lab does not serve GET {self.path}"}}
            )
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    model: ScriptedModel

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up between requests (a CLI exiting) is no error worth a traceback."""


class LabServer:
    """The scripted model on ``127.0.0.1`` (a free port unless one is given), in a thread."""

    def __init__(self, model: ScriptedModel, port: int = 0) -> None:
        self.model = model
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.model = model
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The server's base URL."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> LabServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
