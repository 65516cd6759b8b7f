"""``agentminutes follow`` on a live harness CLI's home: delay from a line on disk to its event.

    python scripts/lab_follow_latency.py --harness claude-code --scenario tools --runs 3

For each run the lab records the scenario (``scripts/lab.py``'s recording, into a temporary
folder) while ``agentminutes follow`` watches the harness's folder in the temporary HOME,
started before the CLI and stopped after it exits. A clock thread polls the transcripts every
millisecond and notes when each line is complete on disk; each event ``follow`` prints names
its last line in its id (``<transcript>:<line>-<end_line>:<digest>``). Two delays: the
follower's own, from the last growth of the file before the event was printed (the figure held
to 50 ms at p95), and from the event's own last line (which adds what the format makes wait:
a Claude Code message is known whole only when the next record comes). Events ``follow`` holds until it is
stopped (the last message's final event, released once the transcript's end is known) are
counted apart. The script also checks that what ``follow`` printed for each transcript is
exactly what ``convert`` prints for the finished file, and prints p50/p95/max per harness.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.check import converted_events  # noqa: E402
from lab.drivers import Run, driver  # noqa: E402
from lab.record import record  # noqa: E402
from lab.scenario import load_scenario  # noqa: E402

_ID = re.compile(r":(\d+)-(\d+):[0-9a-f]+$")


class LineClock(threading.Thread):
    """Notes the monotonic time each transcript line under ``root`` is complete on disk."""

    def __init__(self, root: Path) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.seen: dict[tuple[str, int], float] = {}
        self._offsets: dict[Path, tuple[int, int]] = {}
        self._halt = threading.Event()

    def run(self) -> None:
        """Poll every millisecond until stopped."""
        while not self._halt.is_set():
            self.poll()
            time.sleep(0.001)
        self.poll()

    def poll(self) -> None:
        """Read what grew since the last look and note each new line's time."""
        now = time.monotonic()
        for path in self.root.rglob("*"):
            if not path.is_file() or path.suffix not in (".jsonl", ".json"):
                continue
            offset, lines = self._offsets.get(path, (0, 0))
            try:
                with path.open("rb") as f:
                    f.seek(offset)
                    data = f.read()
            except OSError:
                continue
            end = data.rfind(b"\n")
            if end < 0:
                continue
            for _ in range(data[: end + 1].count(b"\n")):
                lines += 1
                self.seen[(str(path), lines)] = now
            self._offsets[path] = (offset + end + 1, lines)

    def stop(self) -> None:
        """Stop after one last look."""
        self._halt.set()
        self.join(5)


class Follower:
    """``agentminutes follow ROOT`` in a subprocess, each output line with its arrival time."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "agentminutes", "follow", str(root)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: list[tuple[float, dict[str, Any]]] = []
        self.stopped_at = 0.0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), json.loads(line)))

    def wait_watching(self, timeout: float = 20.0) -> None:
        """Until the follower holds a file-notification descriptor (its watch is set), then a
        moment more: on a loaded machine its start-up alone can take over a second."""
        fds = Path(f"/proc/{self.proc.pid}/fd")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if any("inotify" in os.readlink(fd) for fd in fds.iterdir()):
                    break
            time.sleep(0.01)
        time.sleep(0.3)

    def stop(self) -> str:
        """SIGINT, wait, and return its stderr."""
        self.stopped_at = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(30)
        self._reader.join(5)
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")


def one_run(harness: str, version: str, scenario: str, out: Path) -> dict[str, Any]:
    """Record once with ``follow`` watching; the delays and whether its output equals convert's."""
    d = driver(harness)
    if d.follows is None:
        raise SystemExit(f"{harness}: the lab does not follow it (no `follows` folder)")
    state: dict[str, Any] = {}

    @contextlib.contextmanager
    def around(run: Run) -> Iterator[None]:
        root = run.home / str(d.follows)
        root.mkdir(parents=True, exist_ok=True)
        follower = Follower(root)
        follower.wait_watching()
        clock = LineClock(root)
        clock.start()
        try:
            yield
        finally:
            time.sleep(1.0)  # let the last lines through before the stop
            clock.stop()
            state["stderr"] = follower.stop()
            state["lines"] = follower.lines
            state["stopped_at"] = follower.stopped_at
            state["seen"] = clock.seen
            state["home"] = str(run.home)

    rec = record(d, version, load_scenario(scenario), out, around=around)
    delays: list[float] = []
    since_line: list[float] = []
    held = 0
    got: dict[str, list[Any]] = {}
    lines_of: dict[str, list[tuple[int, float]]] = {}
    for (path, line), at in state["seen"].items():
        lines_of.setdefault(path, []).append((line, at))
    for arrived, envelope in state["lines"]:
        path = envelope["transcript"]
        got.setdefault(path, []).append(envelope["event"])
        m = _ID.search(envelope["id"])
        if m is None:
            continue
        own = int(m.group(2))
        if arrived >= state["stopped_at"]:
            held += 1
            continue
        appeared = state["seen"].get((path, own))
        if appeared is not None:
            since_line.append(max(0.0, arrived - appeared) * 1000)
        # The follower's own delay: from the last growth of the transcript, at or after the
        # event's last line, that came before it was printed (a message known whole only when
        # the next record comes is timed from that record). The clock polls; where it saw the
        # line after the event was out, the delay is below its resolution: 0.
        after = [at for line, at in lines_of.get(path, []) if line >= own and at <= arrived]
        delays.append((arrived - max(after)) * 1000 if after else 0.0)
    equal = True
    for path, events in got.items():
        copy = out / "home" / Path(path).relative_to(state["home"])
        want, error = converted_events(copy)
        equal = equal and not error and want == events
    return {
        "ok": rec.ok,
        "events": sum(len(v) for v in got.values()),
        "delays_ms": delays,
        "since_own_line_ms": since_line,
        "held_until_stop": held,
        "follow_equals_convert": equal and bool(got),
    }


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)] if ordered else float("nan")


def main(argv: list[str] | None = None) -> int:
    """Record ``--runs`` times per harness and print the delay percentiles."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--harness", action="append", required=True)
    parser.add_argument("--scenario", default="tools")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    failed = False
    for harness in args.harness:
        delays: list[float] = []
        own: list[float] = []
        held = events = 0
        equal = True
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                result = one_run(harness, driver(harness).pinned, args.scenario, Path(tmp) / "rec")
            print(
                f"  run: {result['events']} events, follow == convert: "
                f"{result['follow_equals_convert']}, recording ok: {result['ok']}",
                file=sys.stderr,
            )
            delays += result["delays_ms"]
            own += result["since_own_line_ms"]
            held += result["held_until_stop"]
            events += result["events"]
            equal = equal and result["follow_equals_convert"] and result["ok"]
        p95 = _p95(delays)
        print(
            f"{harness} {driver(harness).pinned} {args.scenario} x{args.runs}: {events} events, "
            f"{len(delays)} timed, {held} held until the stop; after the file grew: ms p50 "
            f"{statistics.median(delays) if delays else float('nan'):.1f} p95 {p95:.1f} "
            f"max {max(delays) if delays else float('nan'):.1f}; after the event's own last "
            f"line: p50 {statistics.median(own) if own else float('nan'):.1f} p95 {_p95(own):.1f}; "
            f"follow == convert: {equal}"
        )
        failed = failed or not equal or not (p95 <= 50)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
