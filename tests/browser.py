"""A real headless Chromium, driven over the DevTools protocol with the standard library only.

:class:`Browser` starts ``chromium`` (Debian's package; ``.ci/run`` installs it)
with a throwaway profile and no network services, finds the page's DevTools
websocket, and speaks the protocol over a minimal RFC 6455 client: open a file,
evaluate JavaScript, type into the page, take a screenshot, and collect every
console error, uncaught exception and log entry (CSP violations among them).
Tests use it to load ``view --html`` pages; ``scripts/view_screenshots.py`` and
``scripts/view_page_load.py`` use it to make the README's pictures and measure
a page's load time.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ("Browser", "chromium_path")


def chromium_path() -> str | None:
    """The Chromium executable, or ``None`` when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _WebSocket:
    """Just enough of a websocket client for DevTools: text frames, masked, one connection."""

    def __init__(self, url: str, timeout: float) -> None:
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        assert m is not None, url
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("DevTools closed the websocket handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(head.decode("latin-1"))
        self.buffer = b""

    def send(self, text: str) -> None:
        data = text.encode()
        header = bytearray([0x81])
        n = len(data)
        if n < 126:
            header.append(0x80 | n)
        elif n < 1 << 16:
            header.append(0x80 | 126)
            header += struct.pack(">H", n)
        else:
            header.append(0x80 | 127)
            header += struct.pack(">Q", n)
        mask = os.urandom(4)
        header += mask
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(bytes(header) + masked)

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("DevTools closed the websocket")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("DevTools closed the websocket")
            if opcode == 0x9:  # ping: answer with a pong
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
                continue
            message += payload
            if b0 & 0x80:
                return message.decode("utf-8", "replace")

    def close(self) -> None:
        self.sock.close()


class Browser:
    """A headless Chromium with one page; a context manager (the process ends on exit)."""

    def __init__(self, *, width: int = 1280, height: int = 900, timeout: float = 60.0) -> None:
        exe = chromium_path()
        if exe is None:
            raise RuntimeError("no chromium installed (apt-get install chromium)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="am-chromium-")
        args = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--remote-debugging-port=0",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        port = self._port()
        self.ws = _WebSocket(self._page_socket(port), timeout)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def _port(self) -> int:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                return int(m.group(1))
        raise RuntimeError("chromium gave no DevTools address")

    def _page_socket(self, port: int) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
                targets = json.load(r)
            for t in targets:
                if t.get("type") == "page":
                    return str(t["webSocketDebuggerUrl"])
            time.sleep(0.05)
        raise RuntimeError("chromium opened no page")

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End the browser and remove its profile."""
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.proc.stderr is not None:
                self.proc.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command; return its result (events that arrive meanwhile are kept)."""
        self.next_id += 1
        ident = self.next_id
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.receive())
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, method: str, since: int = 0) -> dict[str, Any]:
        """Wait for the event *method* (one that arrived after index *since* counts)."""
        for ev in self.events[since:]:
            if ev["method"] == method:
                return ev
        self.ws.sock.settimeout(self.timeout)
        while True:
            msg = json.loads(self.ws.receive())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg

    def open(self, path: str | Path) -> float:
        """Load the file *path*; return the seconds until its load event."""
        url = Path(path).resolve().as_uri()
        mark = len(self.events)
        start = time.monotonic()
        navigated = self.call("Page.navigate", url=url)
        if navigated.get("errorText"):
            raise RuntimeError(f"{url}: {navigated['errorText']}")
        self.wait_for("Page.loadEventFired", mark)
        took = time.monotonic() - start
        # Events are told as they come, and a load event can be the page's before this one
        # (a test then read the old page: seen under load): this page is loaded once the
        # document itself says so.
        deadline = time.monotonic() + self.timeout
        while self._loaded() != url:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url}: not loaded after {self.timeout} s")
            time.sleep(0.01)
        return took

    def _loaded(self) -> str:
        """The URL of the page's document once it is completely loaded, else ``""``."""
        try:
            return str(
                self.evaluate("document.readyState == 'complete' ? location.href : ''") or ""
            )
        except RuntimeError:  # the context went with the old document: look again
            return ""

    def evaluate(self, expression: str) -> Any:
        """The value of the JavaScript *expression* in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    def type_into(self, selector: str, text: str) -> None:
        """Focus *selector* and type *text* as a person would (key events, input events)."""
        self.evaluate(f"document.querySelector({json.dumps(selector)}).focus()")
        self.call("Input.insertText", text=text)

    def errors(self) -> list[str]:
        """Every console error, uncaught exception and error log entry seen so far."""
        found: list[str] = []
        for ev in self.events:
            p = ev.get("params", {})
            if ev["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(p.get("exceptionDetails", {}))[:500])
            elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in (
                "error",
                "assert",
            ):
                found.append(json.dumps(p.get("args", []))[:500])
            elif ev["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                found.append(str(p["entry"].get("text", ""))[:500])
        return found

    def screenshot(self, path: str | Path, *, width: int, height: int) -> None:
        """Save a PNG of the page's top *width* × *height* pixels."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        shot = self.call("Page.captureScreenshot", format="png")
        Path(path).write_bytes(base64.b64decode(shot["data"]))
