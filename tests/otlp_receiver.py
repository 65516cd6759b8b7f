"""A real OTLP/HTTP trace receiver for the tests: an HTTP server on 127.0.0.1 that decodes
each request's protobuf body with ``opentelemetry-proto`` and keeps the spans.

It answers as a collector does (``200`` with an ``ExportTraceServiceResponse``),
or, while told to refuse (:attr:`Receiver.refuse`), ``503`` without keeping
anything, so retries and held progress can be tested.
"""

from __future__ import annotations

import gzip
import threading
import time
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Received:
    """One span as the receiver decoded it, with its resource's service name and when it came."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start: int
    end: int
    attributes: dict[str, Any]
    status: dict[str, Any]
    service: str
    scope: str
    at: float = field(default=0.0, compare=False)

    def key(self) -> tuple[Any, ...]:
        """Everything but the arrival time: what must equal the file projection's span."""
        return (
            self.trace_id,
            self.span_id,
            self.parent_span_id,
            self.name,
            self.kind,
            self.start,
            self.end,
            tuple(sorted((k, repr(v)) for k, v in self.attributes.items())),
            tuple(sorted(self.status.items())),
            self.service,
        )


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, which) if which else None


def decode_request(body: bytes) -> list[Received]:
    """The spans of one ``ExportTraceServiceRequest`` (protobuf)."""
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    out = []
    now = time.monotonic()
    for rs in request.resource_spans:
        service = next(
            (kv.value.string_value for kv in rs.resource.attributes if kv.key == "service.name"),
            "",
        )
        for ss in rs.scope_spans:
            out.extend(
                Received(
                    trace_id=s.trace_id.hex(),
                    span_id=s.span_id.hex(),
                    parent_span_id=s.parent_span_id.hex(),
                    name=s.name,
                    kind=s.kind,
                    start=s.start_time_unix_nano,
                    end=s.end_time_unix_nano,
                    attributes={kv.key: _value(kv.value) for kv in s.attributes},
                    status=MessageToDict(s.status),
                    service=service,
                    scope=ss.scope.name,
                    at=now,
                )
                for s in ss.spans
            )
    return out


class Receiver:
    """The server, started on a free port of 127.0.0.1; :attr:`url` is the ``--to`` value."""

    def __init__(self, port: int = 0) -> None:
        self.spans: list[Received] = []
        self.requests = 0
        self.refused = 0
        self.refuse = False
        self.paths: set[str] = set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                encoding = self.headers.get("Content-Encoding", "")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "deflate":
                    body = zlib.decompress(body)
                with receiver._lock:
                    receiver.paths.add(self.path)
                    if receiver.refuse:
                        receiver.refused += 1
                        self.send_response(503)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    spans = decode_request(body)
                    receiver.spans.extend(spans)
                    receiver.requests += 1
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"otlp+http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def snapshot(self) -> list[Received]:
        with self._lock:
            return list(self.spans)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


_HEX_IDS = {"traceId": 32, "spanId": 16, "parentSpanId": 16}


def file_spans(path: Any, *args: str) -> list[Received]:
    """What ``agentminutes convert --format otlp-json PATH`` writes (the real CLI), decoded
    the way the receiver decodes a request: OTLP/JSON parsed by ``opentelemetry-proto``
    into the protobuf message, serialized and read back."""
    import base64
    import json
    import subprocess
    import sys

    from google.protobuf.json_format import Parse

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentminutes",
            "convert",
            "--format",
            "otlp-json",
            *args,
            str(path),
        ],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout
    spans: list[Received] = []
    for line in out.splitlines():
        request = json.loads(line)
        for rs in request["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                for span in ss["spans"]:
                    for key in _HEX_IDS:
                        if key in span:  # OTLP/JSON ids are hex, protobuf JSON's base64
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        message = Parse(json.dumps(request), ExportTraceServiceRequest())
        spans.extend(decode_request(message.SerializeToString()))
    return spans
