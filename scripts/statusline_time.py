#!/usr/bin/env python3
"""How long ``agentminutes statusline`` takes, cold and warm, as Claude Code runs it.

Builds a temporary home holding real Claude Code sessions from ``fixtures/``
(their records' times moved so the last request was a few minutes ago: a live
block, today's cost), runs ``agentminutes statusline`` once with the session
JSON on stdin (cold: no summary cache, no kept line), then ``--runs`` times
more with nothing changed (warm), each as a fresh process, and prints the
wall-clock times. For scale it also times ``python -c pass`` and
``python -c "import agentminutes"``: on a loaded machine everything is slower.

    python scripts/statusline_time.py --runs 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "claude-code"
SESSIONS = (
    "ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
    "cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
    "ohcconfig/b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl",
)


def _moved(source: Path, minutes_ago: float) -> str:
    records = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines() if x.strip()]
    times = [
        datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00"))
        for r in records
        if isinstance(r.get("timestamp"), str)
    ]
    delta = datetime.now(UTC) - timedelta(minutes=minutes_ago) - max(times)
    out = []
    for r in records:
        if isinstance(r.get("timestamp"), str):
            t = datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")) + delta
            r["timestamp"] = t.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        out.append(json.dumps(r))
    return "\n".join(out) + "\n"


def _time(args: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    start = time.perf_counter()
    subprocess.run(args, input=stdin, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="warm runs (default 20)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="statusline-time-"))
    try:
        project = tmp / "home" / ".claude" / "projects" / "-work-app"
        project.mkdir(parents=True)
        for i, rel in enumerate(SESSIONS):
            source = FIXTURES / rel
            (project / source.name).write_text(_moved(source, 3 + 20 * i), encoding="utf-8")
        live = project / Path(SESSIONS[0]).name
        payload = json.dumps(
            {
                "session_id": live.stem,
                "transcript_path": str(live),
                "model": {"id": "claude-opus-4-7", "display_name": "Opus 4.7"},
            }
        ).encode()
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
        env.update(HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "cache"))
        command = [sys.executable, "-m", "agentminutes", "statusline"]
        cold = _time(command, env, payload)
        line = subprocess.run(
            command, input=payload, env=env, capture_output=True, check=True
        ).stdout.decode()
        warm = [_time(command, env, payload) for _ in range(args.runs)]
        bare = [_time([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
        package = [_time([sys.executable, "-c", "import agentminutes"], env) for _ in range(5)]
        print(f"line: {line.strip()}")
        print(f"cold (no cache): {cold * 1000:.0f} ms")
        print(
            f"warm ({args.runs} runs): median {statistics.median(warm) * 1000:.0f} ms, "
            f"min {min(warm) * 1000:.0f} ms"
        )
        print(
            f"for scale: python -c pass median {statistics.median(bare) * 1000:.0f} ms; "
            f"import agentminutes median {statistics.median(package) * 1000:.0f} ms; "
            f"load average {os.getloadavg()[0]:.1f}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
