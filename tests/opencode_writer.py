"""An OpenCode database written the way OpenCode writes it, one commit at a time.

A reply is inserted unfinished; its parts are inserted, then updated as they
stream (tools pending -> completed, texts cut short -> whole); the reply is
completed last. :func:`replay` yields after each commit, so a test decides
what happens between two commits: a subprocess sleeps (a real writer beside
a real follower), an in-process test polls the tail at the worst moment.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator

#: What :func:`replay` yields after a commit.
HALF, EARLY, PART, MESSAGE = "half", "early", "part", "message"


def replay(src: str, dst: str) -> Iterator[str]:
    """Copy the OpenCode database *src* into a new WAL database *dst*, commit by commit.

    Yields :data:`HALF` once, before the first message of the second half.
    """
    s = sqlite3.connect(src)
    d = sqlite3.connect(dst)
    try:
        d.execute("pragma journal_mode=wal")
        for (sql,) in s.execute(
            "select sql from sqlite_master where type='table' and name in"
            " ('project', 'session', 'message', 'part')"
        ):
            d.execute(sql)
        d.commit()
        for t in ("project", "session"):
            rows = s.execute(f"select * from {t}").fetchall()
            width = len(s.execute(f"select * from {t} limit 1").description)
            d.executemany(f"insert into {t} values ({','.join('?' * width)})", rows)
            d.commit()
        messages = s.execute("select * from message order by time_created, id").fetchall()
        for i, m in enumerate(messages):
            if i == len(messages) // 2:
                yield HALF
            data = json.loads(m[4])
            if data.get("role") == "assistant":
                data.get("time", {}).pop("completed", None)
                data.pop("finish", None)
            d.execute("insert into message values (?, ?, ?, ?, ?)", (*m[:4], json.dumps(data)))
            d.commit()
            yield MESSAGE
            for p in s.execute("select * from part where message_id = ? order by id", (m[0],)):
                part = json.loads(p[5])
                early = None
                if part.get("type") == "tool":
                    early = dict(part, state={"status": "pending", "input": {}, "raw": ""})
                elif part.get("type") in ("text", "reasoning"):
                    early = dict(part, text=part.get("text", "")[:3])
                    early.get("time", {}).pop("end", None)
                values = (*p[:5], json.dumps(early or part))
                d.execute("insert into part values (?, ?, ?, ?, ?, ?)", values)
                d.commit()
                if early is not None:
                    yield EARLY
                    d.execute("update part set data = ? where id = ?", (p[5], p[0]))
                    d.commit()
                yield PART
            d.execute("update message set data = ? where id = ?", (m[4], m[0]))
            d.commit()
            yield MESSAGE
    finally:
        s.close()
        d.close()


def main() -> None:
    """As a process: write *src* into *dst* with a writer's pauses; wait for stdin at half-way."""
    import time

    pause = {EARLY: 0.01, PART: 0.005, MESSAGE: 0.0}
    for step in replay(sys.argv[1], sys.argv[2]):
        if step == HALF:  # wait until the follower has shown what is there
            print("half", flush=True)
            sys.stdin.readline()
        else:
            time.sleep(pause[step])
    print("done", flush=True)
    sys.stdin.readline()


if __name__ == "__main__":
    main()
