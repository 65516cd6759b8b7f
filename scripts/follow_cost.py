#!/usr/bin/env python3
"""What ``follow`` costs: memory on a large folder, and CPU while many transcripts sit idle.

Usage::

    python scripts/follow_cost.py memory ROOT [--cmd agentminutes]
    python scripts/follow_cost.py idle [--files 2000] [--seconds 10] [--poll] [--cmd agentminutes]
    python scripts/follow_cost.py usage-idle [--files 2000] [--seconds 10] [--poll] [--cmd agentminutes]

``memory`` follows ROOT (a folder of transcripts, e.g. copies of real ones
or ones grown with the shared ``inflate`` tool) to stdout, read by this
script, until it has been quiet for 2 s, and prints the bytes on disk, the
time to the first line written, the time to the last, and the follower's
peak RSS (VmHWM, sampled every 20 ms once it has written).

``idle`` writes FILES finished transcripts (the first lines of this
repository's fixtures, each under its own session id) into a temporary
folder, follows it, waits until everything was written and output has been
quiet for 2 s, then measures the follower's CPU seconds and context switches
over SECONDS (with ``--poll``: stat polling instead of notification).

``usage-idle`` is ``idle`` for ``usage --follow``: the same transcripts laid
out as a Claude Code home (``HOME/.claude/projects/…``), followed by
``usage --harness claude-code --follow --format json --no-cost`` with that
HOME (and its own cache folder); measured once the first report is out and
output has been quiet for 2 s.

Linux only (``/proc``). Figures depend on the machine's load: run it on a
quiet machine, and compare runs made together.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / CLK


def _status(pid: int, key: str) -> int:
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(key):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def _hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class _Follow:
    def __init__(
        self,
        cmd: list[str],
        args: list[str],
        verb: str = "follow",
        env: dict[str, str] | None = None,
    ) -> None:
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [*cmd, verb, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.first: float | None = None
        self.last = time.monotonic()
        self.lines = 0
        self.hwm = 0
        self._done = False
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._sample, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for _ in self.proc.stdout:
            now = time.monotonic()
            self.first = self.first or now
            self.last = now
            self.lines += 1
        self._done = True

    def _sample(self) -> None:
        # Only once it has written: before its exec, a vforked child reports our memory.
        while self.proc.poll() is None:
            if self.first is not None:
                self.hwm = max(self.hwm, _hwm_kb(self.proc.pid))
            time.sleep(0.02)

    def quiet(self, secs: float, limit: float = 600) -> None:
        start = time.monotonic()
        while time.monotonic() - max(self.last, start) < secs and time.monotonic() - start < limit:
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.send_signal(2)
        self.proc.wait(60)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


def memory(args: argparse.Namespace, cmd: list[str]) -> None:
    size = sum(p.stat().st_size for p in Path(args.root).rglob("*") if p.is_file())
    f = _Follow(cmd, [args.root])
    while f.first is None and f.proc.poll() is None:
        time.sleep(0.005)
    f.quiet(2.0)
    hwm = max(f.hwm, _hwm_kb(f.proc.pid))
    f.stop()
    first = (f.first - f.t0) if f.first else float("nan")
    print(
        f"follow_cost memory: root={size / 1e6:.0f}MB lines_out={f.lines} "
        f"first_write={first * 1000:.0f}ms last_write={f.last - f.t0:.1f}s peak_rss={hwm / 1024:.0f}MB"
    )


def _lay_out(folder: Path, files: int) -> None:
    """*files* finished transcripts (fixture heads, each its own session) under *folder*."""
    sources = sorted((ROOT / "fixtures" / "claude-code").glob("*.jsonl"))
    heads = [b"".join(p.read_bytes().splitlines(keepends=True)[:15]) for p in sources]
    for i in range(files):
        head = heads[i % len(heads)]
        project = folder / f"-home-u-p{i % 100}"
        project.mkdir(parents=True, exist_ok=True)
        (project / f"{uuid.UUID(int=i + 1)}.jsonl").write_bytes(head)


def idle(args: argparse.Namespace, cmd: list[str]) -> None:
    usage = args.what == "usage-idle"
    with tempfile.TemporaryDirectory(prefix="follow-idle-") as tmp:
        poll = ["--poll"] if args.poll else []
        if usage:
            _lay_out(Path(tmp) / ".claude" / "projects", args.files)
            env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
            env.update(HOME=tmp, XDG_CACHE_HOME=os.path.join(tmp, ".cache"))
            usage_args = ["--harness", "claude-code", "--follow", "--format", "json"]
            f = _Follow(cmd, [*usage_args, "--no-cost", *poll], verb="usage", env=env)
        else:
            _lay_out(Path(tmp), args.files)
            f = _Follow(cmd, [tmp, *poll])
        while f.first is None and f.proc.poll() is None:
            time.sleep(0.005)
        f.quiet(2.0)
        time.sleep(1.0)
        pid = f.proc.pid
        c0, x0, t0 = _cpu(pid), _status(pid, "voluntary_ctxt_switches"), time.monotonic()
        time.sleep(args.seconds)
        c1, x1, t1 = _cpu(pid), _status(pid, "voluntary_ctxt_switches"), time.monotonic()
        threads = len(os.listdir(f"/proc/{pid}/task"))
        f.stop()
    print(
        f"follow_cost {args.what}: files={args.files} mode={'poll' if args.poll else 'notify'} "
        f"cpu={c1 - c0:.3f}s over {t1 - t0:.1f}s wakeups={(x1 - x0) / (t1 - t0):.1f}/s "
        f"threads={threads} first_write={(f.first or 0) - f.t0:.2f}s"
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cmd", default=f"{sys.executable} -m agentminutes")
    sub = ap.add_subparsers(dest="what", required=True)
    m = sub.add_parser("memory")
    m.add_argument("root")
    for name in ("idle", "usage-idle"):
        i = sub.add_parser(name)
        i.add_argument("--files", type=int, default=2000)
        i.add_argument("--seconds", type=float, default=10.0)
        i.add_argument("--poll", action="store_true")
    args = ap.parse_args()
    cmd = shlex.split(args.cmd)
    (memory if args.what == "memory" else idle)(args, cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
