#!/usr/bin/env python3
"""How long a tool span takes from its result line landing on disk to an OTLP receiver.

    python scripts/otel_live_latency.py [--pause SECONDS] [TRANSCRIPT ...]

For each transcript (default: a Claude Code, a Codex and a Copilot fixture) an
OTLP/HTTP receiver is started on 127.0.0.1 (an HTTP server decoding each
request with ``opentelemetry-proto``, noting when each span arrived), the real
CLI follows an empty copy (``follow COPY --to otlp+http://… --idle-exit``), and
the transcript is written into it one line at a time, *pause* seconds apart,
as an agent writes. For every tool result, the delay is the time from the write
of the line that completes it to the arrival of its tool call's span. Writer
and receiver share one process, so one monotonic clock. Prints p50, p95 and max
per transcript and over all.

Timing on a shared machine is noisy: say how loaded it was (the load average is
printed) and take the final figures on a quiet one.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULTS = [
    ROOT / "fixtures/claude-code/fasthooks-main.jsonl",
    ROOT
    / "fixtures/codex/feipi/rollout-2026-06-19T10-14-27-019edda8-7eca-7710-b78b-6ce7607beaa1.jsonl",
    ROOT / "fixtures/copilot/hawzx-ai/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
]


class _Receiver:
    """An OTLP/HTTP receiver noting when each tool call's span arrived."""

    def __init__(self) -> None:
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
            ExportTraceServiceResponse,
        )

        self.arrived: dict[str, float] = {}
        reply = ExportTraceServiceResponse().SerializeToString()
        arrived = self.arrived

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                now = time.monotonic()
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for rs in request.resource_spans:
                    for ss in rs.scope_spans:
                        for span in ss.spans:
                            for kv in span.attributes:
                                if kv.key == "gen_ai.tool.call.id":
                                    arrived.setdefault(kv.value.string_value, now)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"otlp+http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _result_lines(path: Path) -> dict[int, str]:
    """Line number (1-based) completing each tool result whose call came first -> call id."""
    from agentminutes import load

    calls: set[str] = set()
    out: dict[int, str] = {}
    for ev in load(path, permissive=True).events:
        if ev.tool_call is not None:
            calls.add(ev.tool_call.tool_call_id)
        result = ev.tool_result
        if result is not None and result.tool_call_id in calls and ev.provenance is not None:
            out.setdefault(ev.provenance.end_line or ev.provenance.line, result.tool_call_id)
    return out


def _wait_open(pid: int, path: Path, timeout: float = 30.0) -> None:
    fds = Path(f"/proc/{pid}/fd")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if any(os.readlink(fd) == str(path) for fd in fds.iterdir()):
                return
        except OSError:
            pass
        time.sleep(0.01)
    raise SystemExit(f"the follower did not open {path}")


def measure(path: Path, pause: float, workdir: Path) -> list[float]:
    """The delays (s) of *path*'s tool spans."""
    results = _result_lines(path)
    lines = path.read_bytes().splitlines(keepends=True)
    target = workdir / path.name
    target.write_bytes(b"")
    receiver = _Receiver()
    command = [sys.executable, "-m", "agentminutes", "follow", str(target), "--permissive"]
    command += ["--to", receiver.url, "--idle-exit", str(max(2.0, 4 * pause))]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE)
    written: dict[str, float] = {}
    try:
        _wait_open(proc.pid, target)
        with open(target, "ab", buffering=0) as f:
            for number, line in enumerate(lines, 1):
                f.write(line)
                if number in results:
                    written[results[number]] = time.monotonic()
                time.sleep(pause)
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 0 or any(c not in receiver.arrived for c in written):
            raise SystemExit(f"follow failed: {err.decode(errors='replace')}")
    finally:
        if proc.poll() is None:
            proc.kill()
        receiver.close()
    missing = [c for c in written if c not in receiver.arrived]
    if missing:
        raise SystemExit(f"{path}: {len(missing)} tool spans never arrived")
    return [receiver.arrived[c] - t for c, t in written.items()]


def _p(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def _line(name: str, delays: list[float]) -> str:
    ms = [d * 1000 for d in delays]
    return (
        f"{name}: {len(ms)} tool spans; delay from result line on disk to span at the "
        f"receiver p50 {_p(ms, 50):.1f} ms, p95 {_p(ms, 95):.1f} ms, max {max(ms):.1f} ms"
    )


def main() -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("transcripts", nargs="*", type=Path, default=DEFAULTS)
    parser.add_argument("--pause", type=float, default=0.02, help="seconds between lines")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    every: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.transcripts:
            delays = measure(path, args.pause, Path(tmp))
            every += delays
            print(_line(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path), delays))
    print(_line("all", every))
    print(f"load average {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
