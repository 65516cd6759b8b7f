"""Replay a fixture database into a new one commit by commit, as its harness writes it.

Used by the Crush and Goose follow tests: the test process is the writer (a
real second process beside the follower), a reply streams into its row (Crush)
or lands whole (Goose), and the session rows' running totals move as it goes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path


def copy_schema(src: Path, dst: Path) -> sqlite3.Connection:
    """A new WAL database at *dst* with *src*'s tables, and no rows."""
    d = sqlite3.connect(dst, isolation_level=None)
    try:
        d.execute("pragma journal_mode=wal")
        with closing(sqlite3.connect(src)) as s:
            for (sql,) in s.execute(
                "select sql from sqlite_master where type in ('table', 'index')"
            ):
                if sql and "sqlite_sequence" not in sql:
                    d.execute(sql)
    except BaseException:
        d.close()
        raise
    return d


def replay_crush(src: Path, dst: sqlite3.Connection, pause: float = 0.05) -> None:
    """Crush's order: a session row, then each message; a reply is inserted with no
    finish and then updated whole, and the session's totals are written after it."""
    with closing(sqlite3.connect(src)) as s:
        sessions = s.execute("select * from sessions order by created_at, rowid").fetchall()
        width = len(sessions[0])
        cols = [c[1] for c in s.execute("pragma table_info(messages)")]
        for row in sessions:
            dst.execute(f"insert into sessions values ({','.join('?' * width)})", row)
            dst.execute(
                "update sessions set message_count = 0, prompt_tokens = 0,"
                " completion_tokens = 0, cost = 0 where id = ?",
                (row[0],),
            )
            time.sleep(pause)
        for msg in s.execute("select * from messages order by created_at, rowid").fetchall():
            m = dict(zip(cols, msg, strict=True))
            if m["role"] == "assistant":
                parts = [p for p in json.loads(m["parts"]) if p["type"] != "finish"]
                half = dict(m, parts=json.dumps(parts[:1]), finished_at=None)
                dst.execute(
                    f"insert into messages ({','.join(cols)}) values ({','.join('?' * len(cols))})",
                    [half[c] for c in cols],
                )
                time.sleep(pause)
            else:
                dst.execute(
                    f"insert into messages ({','.join(cols)}) values ({','.join('?' * len(cols))})",
                    [m[c] for c in cols],
                )
            if m["role"] == "assistant":
                dst.execute(
                    "update messages set parts = ?, finished_at = ?, updated_at = ? where id = ?",
                    (m["parts"], m["finished_at"], m["updated_at"], m["id"]),
                )
            time.sleep(pause)
        for row in sessions:
            dst.execute(
                "update sessions set prompt_tokens = ?, completion_tokens = ?, cost = ?,"
                " message_count = ? where id = ?",
                (row[4], row[5], row[6], row[3], row[0]),
            )


def replay_goose(src: Path, dst: sqlite3.Connection, pause: float = 0.05) -> None:
    """Goose's order: a session row, each message whole, the running totals after each reply."""
    with closing(sqlite3.connect(src)) as s:
        scols = [c[1] for c in s.execute("pragma table_info(sessions)")]
        for (v,) in s.execute("select version from schema_version"):
            dst.execute("insert into schema_version (version) values (?)", (v,))
        sessions = s.execute("select * from sessions order by created_at").fetchall()
        for row in sessions:
            dst.execute(f"insert into sessions values ({','.join('?' * len(scols))})", row)
            dst.execute(
                "update sessions set accumulated_input_tokens = null,"
                " accumulated_output_tokens = null, accumulated_cost = null where id = ?",
                (row[0],),
            )
        mcols = [c[1] for c in s.execute("pragma table_info(messages)")]
        for msg in s.execute("select * from messages order by id").fetchall():
            dst.execute(f"insert into messages values ({','.join('?' * len(mcols))})", msg)
            time.sleep(pause)
        for row in sessions:
            r = dict(zip(scols, row, strict=True))
            dst.execute(
                "update sessions set accumulated_input_tokens = ?, accumulated_output_tokens = ?,"
                " accumulated_cost = ? where id = ?",
                (
                    r["accumulated_input_tokens"],
                    r["accumulated_output_tokens"],
                    r["accumulated_cost"],
                    r["id"],
                ),
            )
