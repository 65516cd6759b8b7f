"""``agentminutes statusline``: one line for Claude Code's status bar, fast enough for every prompt.

Claude Code runs a statusline command with a JSON object on stdin (the
session's id, its ``transcript_path``, the ``model``'s ``display_name`` …) and
shows the first line it prints. This command prints the model, this session's
cost, today's cost (every harness's transcripts) and the active five-hour
block (its cost, the time left and the burn rate).

Working that out reads the day's transcripts and the price catalog: fractions
of a second with the summary cache warm, seconds without it. A status bar
cannot wait that long on every prompt, so the line is kept in a small file
beside the summary cache with the size and modification time of every
transcript (and folder) it was computed from. When none of them changed, the
kept line is printed and nothing else is imported or read (the warm path,
measured by ``scripts/statusline_time.py``). When one did, the kept line is
printed at once and a detached ``agentminutes statusline --refresh`` computes
the new one for the next prompt; with no kept line yet, it is computed before
printing.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

# The warm path imports nothing beyond the standard library's C modules: msgspec with
# typing_extensions alone cost more than the rest of a warm run. The kept file is
# marshal data (plain dicts, lists, strings and numbers), stdin is read with json.

__all__ = ("compute_line", "run_statusline", "statusline_command")

#: The kept line's file, in the summary cache's folder.
_FILE = "statusline.marshal"
#: Bump when what the kept file holds changes.
_FORMAT = 1


def _cache_dir(cache_dir: str | None) -> str:
    if cache_dir:
        return cache_dir
    explicit = os.environ.get("AGENTMINUTES_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "agentminutes")


def _stat_key(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _fresh(kept: Mapping[str, Any], session: str) -> bool:
    """Whether every file and folder the kept line was computed from is unchanged."""
    if kept.get("format") != _FORMAT or kept.get("session") != session:
        return False
    if kept.get("day") != time.strftime("%Y-%m-%d"):
        return False
    if time.time() >= kept.get("valid_until", 0):  # a block's minutes left move on
        return False
    watched: Mapping[str, list[int] | None] = kept.get("watched", {})
    return all(_stat_key(path) == key for path, key in watched.items())


def _read_kept(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as f:
            data = marshal.loads(f.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def _write_kept(path: str, kept: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(marshal.dumps(dict(kept)))
    os.replace(tmp, path)


def _money(cost: Any) -> str:
    return "unpriced" if cost is None else f"${cost:,.2f}"


def compute_line(
    data: Mapping[str, Any], *, cache_dir: str | None = None, now_ns: int | None = None
) -> tuple[str, dict[str, list[int] | None], int]:
    """The status line for the session *data* describes (Claude Code's statusline JSON).

    Returns the line, the files and folders it was computed from (path → size
    and mtime) and the instant (ns) until which its minutes left hold.
    """
    from agentminutes import timestamps
    from agentminutes.usage.cache import SummaryCache
    from agentminutes.usage.prices import Pricer, catalog_available
    from agentminutes.usage.report import build_report, collect

    now = time.time_ns() if now_ns is None else now_ns
    model = data.get("model") or {}
    name = model.get("display_name") or model.get("id") if isinstance(model, dict) else ""
    session = str(data.get("session_id") or "")
    transcript = str(data.get("transcript_path") or "")
    cache = SummaryCache(cache_dir or None)
    since = timestamps.format_ns(now - 24 * 3600 * 10**9)
    found = collect(None, since=since, cache=cache)
    cache.save()
    pricer = Pricer() if catalog_available() else None
    today = time.strftime("%Y-%m-%d", time.localtime(now / 1e9))
    day = build_report(found.transcripts, ["day"], pricer=pricer, since=today)
    mine = [t for t in found.transcripts if session and t.session_id == session]
    if not mine and transcript and os.path.isfile(transcript):
        from agentminutes.usage.report import collect_paths

        mine = collect_paths([transcript], cache=cache).transcripts
    own = build_report(mine, ["session"], pricer=pricer)
    blocks = build_report(found.transcripts, ["block"], pricer=pricer, now_ns=now)
    parts = [str(name or "agent")]
    parts.append(f"session {_money(own.totals.cost if pricer else None)}")
    parts.append(f"today {_money(day.totals.cost if pricer else None)}")
    valid_until = now + 60 * 10**9  # minutes left: recomputed once a minute at most
    active = [b for b in blocks.blocks.values() if b.active(now)]
    if active:
        block = max(active, key=lambda b: b.start_ns)
        left = max(0, (block.end_ns - now) // (60 * 10**9))
        text = f"block {_money(block.cost if pricer else None)} ({left // 60}h{left % 60:02d}m left"
        _, rate = block.burn_per_minute()
        if rate is not None and pricer is not None:
            text += f", ${rate * 60:,.2f}/h"
        parts.append(text + ")")
    else:
        parts.append("no active block")
    watched: dict[str, list[int] | None] = {}
    for t in found.transcripts + mine:
        path = t.summary.path
        watched[path] = _stat_key(path)
        folder = os.path.dirname(path)
        watched.setdefault(folder, _stat_key(folder))
        watched.setdefault(os.path.dirname(folder), _stat_key(os.path.dirname(folder)))
    if transcript:
        watched[transcript] = _stat_key(transcript)
    return " | ".join(parts), watched, valid_until


def _refresh_in_background(payload: bytes, cache_dir: str | None) -> None:
    """Start ``agentminutes statusline --refresh`` detached, the session JSON on its stdin."""
    import subprocess
    import tempfile

    fd, path = tempfile.mkstemp(prefix="agentminutes-statusline-")
    with os.fdopen(fd, "wb") as f:
        f.write(payload)
    args = [sys.executable, "-m", "agentminutes", "statusline", "--refresh"]
    if cache_dir:
        args += ["--cache-dir", cache_dir]
    with open(path, "rb") as stdin:
        subprocess.Popen(
            args,
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    os.unlink(path)


def statusline_command(*, cache_dir: str | None = None, refresh: bool = False) -> int:
    """Read Claude Code's statusline JSON on stdin and print the line (see the module)."""
    import json

    payload = sys.stdin.buffer.read()
    try:
        data = json.loads(payload) if payload.strip() else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    folder = _cache_dir(cache_dir)
    path = os.path.join(folder, _FILE)
    session = str(data.get("session_id") or data.get("transcript_path") or "")
    kept = _read_kept(path)
    if not refresh and kept is not None and kept.get("session") == session:
        print(kept.get("line", ""))
        if not _fresh(kept, session):
            _refresh_in_background(payload, cache_dir)
        return 0
    line, watched, valid_until = compute_line(data, cache_dir=cache_dir)
    # A kept line that cannot be written: the line is still right, the next prompt
    # computes it again.
    with contextlib.suppress(OSError):
        _write_kept(
            path,
            {
                "format": _FORMAT,
                "session": session,
                "day": time.strftime("%Y-%m-%d"),
                "valid_until": valid_until / 1e9,
                "line": line,
                "watched": watched,
            },
        )
    if not refresh:
        print(line)
    return 0


def run_statusline() -> int:
    """``agentminutes statusline`` as Claude Code runs it, without the command table's
    loading: any failure is one line on stderr and exit status 1, never a traceback."""
    try:
        return statusline_command()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        from agentminutes.errors import one_line

        print(f"Error: {one_line(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        return 1
