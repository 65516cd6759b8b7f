"""Build ``fixtures/crush/constructed/project/.crush/crush.db``: a Crush database, constructed.

The tables are those Crush's migrations create (charmbracelet/crush at commit
37f36e93824e5c4f892e4a817f7f628e2682fe14, ``internal/db/migrations``), and the
``parts`` column holds messages as ``internal/message`` marshals them
(``[{"type": …, "data": {…}}]``). The conversation is ours: a session that
reads, edits and runs a test, starts a subagent (whose session id is the
``agent`` call's id, with the parent's id as its parent) and ends; a second
session whose only reply fails. Times are in seconds, as Crush's
``strftime('%s', 'now')`` writes them.

Run: ``python scripts/build_crush_fixture.py [PATH]``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL,
    is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT,
    title TEXT NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    prompt_tokens INTEGER NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens INTEGER NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    cost REAL NOT NULL DEFAULT 0.0 CHECK (cost >= 0.0),
    updated_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    summary_message_id TEXT,
    todos TEXT
);
CREATE TABLE files (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
    version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE,
    UNIQUE(path, session_id, version)
);
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    parts TEXT NOT NULL default '[]',
    model TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    provider TEXT,
    is_summary_message INTEGER DEFAULT 0 NOT NULL,
    FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE
);
CREATE TABLE read_files (
    session_id TEXT NOT NULL CHECK (session_id != ''), path TEXT NOT NULL CHECK (path != ''),
    read_at INTEGER NOT NULL, PRIMARY KEY (path, session_id)
);
CREATE INDEX idx_messages_session_id ON messages (session_id);
CREATE TRIGGER update_session_message_count_on_insert AFTER INSERT ON messages
BEGIN UPDATE sessions SET message_count = message_count + 1 WHERE id = new.session_id; END;
"""

T0 = 1767865800
MODEL = "claude-sonnet-4-5-20250929"


def text(t: str) -> dict:
    return {"type": "text", "data": {"text": t}}


def reasoning(t: str, at: int) -> dict:
    return {
        "type": "reasoning",
        "data": {
            "thinking": t,
            "signature": "c2lnLWNydXNo",
            "thought_signature": "",
            "tool_id": "",
            "responses_data": None,
            "started_at": at,
            "finished_at": at + 2,
        },
    }


def call(cid: str, name: str, args: dict) -> dict:
    data = {"id": cid, "name": name, "input": json.dumps(args), "provider_executed": False}
    return {"type": "tool_call", "data": {**data, "finished": True}}


def result(cid: str, name: str, content: str, *, error: bool = False, meta: str = "") -> dict:
    return {
        "type": "tool_result",
        "data": {
            "tool_call_id": cid,
            "name": name,
            "content": content,
            "data": "",
            "mime_type": "",
            "metadata": meta,
            "is_error": error,
        },
    }


def finish(reason: str, at: int, message: str = "") -> dict:
    data: dict = {"reason": reason, "time": at}
    if message:
        data["message"] = message
    return {"type": "finish", "data": data}


def build(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT INTO goose_db_version (version_id, is_applied, tstamp)"
        " VALUES (?, 1, '2026-01-08 09:49:00')",
        [
            (0,),
            (20250424200609,),
            (20250515105448,),
            (20250624000000,),
            (20250627000000,),
            (20250810000000,),
            (20250812000000,),
            (20260127000000,),
        ],
    )
    parent, child, failed = (
        "7d1e0b52-3c4a-4f6e-8a9b-0c1d2e3f4a5b",
        "toolu_01Agent7Q",
        "e2f3a4b5-6c7d-4e8f-9a0b-1c2d3e4f5a6b",
    )
    sessions = [
        # id, parent, title, prompt tokens and completion tokens of the last request, cost
        (parent, None, "Fix the tally rounding", 18240, 96, 0.0712, T0 + 95, T0),
        (child, parent, "Find other callers", 6120, 141, 0.0108, T0 + 60, T0 + 40),
        (failed, None, "Explain the build", 0, 0, 0.0, T0 + 300, T0 + 290),
    ]
    conn.executemany(
        "INSERT INTO sessions (id, parent_session_id, title, prompt_tokens, completion_tokens,"
        " cost, updated_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        sessions,
    )
    msgs = [
        (
            parent,
            "user",
            [text("round() in tally.py rounds 2.5 down; make it round half up")],
            None,
            T0 + 1,
            None,
        ),
        (
            parent,
            "assistant",
            [
                reasoning("Read tally.py first.", T0 + 2),
                text("Let me look at the code."),
                call("toolu_01View", "view", {"file_path": "/home/dev/tally/tally.py"}),
                finish("tool_use", T0 + 5),
            ],
            MODEL,
            T0 + 2,
            T0 + 5,
        ),
        (
            parent,
            "tool",
            [
                result(
                    "toolu_01View",
                    "view",
                    "<file>\n     1|def total(xs):\n     2|    return round(sum(xs))\n</file>",
                )
            ],
            None,
            T0 + 6,
            None,
        ),
        (
            parent,
            "assistant",
            [
                text("Python rounds half to even. I'll use Decimal with ROUND_HALF_UP."),
                call(
                    "toolu_01Edit",
                    "edit",
                    {
                        "file_path": "/home/dev/tally/tally.py",
                        "old_string": "return round(sum(xs))",
                        "new_string": "return int(Decimal(sum(xs)).quantize(0, ROUND_HALF_UP))",
                    },
                ),
                call(
                    "toolu_01Bash", "bash", {"command": "pytest -q", "description": "Run the tests"}
                ),
                finish("tool_use", T0 + 20),
            ],
            MODEL,
            T0 + 12,
            T0 + 20,
        ),
        (
            parent,
            "tool",
            [
                result(
                    "toolu_01Edit",
                    "edit",
                    "<result>\nContent replaced in file: /home/dev/tally/tally.py\n</result>",
                    meta=json.dumps({"additions": 1, "removals": 1}),
                ),
                result(
                    "toolu_01Bash", "bash", "2 passed in 0.03s", meta=json.dumps({"exit_code": 0})
                ),
            ],
            None,
            T0 + 30,
            None,
        ),
        (
            parent,
            "assistant",
            [
                call(
                    child,
                    "agent",
                    {
                        "prompt": "Find every caller of total() and say whether any relies on half-even rounding."
                    },
                ),
                finish("tool_use", T0 + 39),
            ],
            MODEL,
            T0 + 35,
            T0 + 39,
        ),
        (
            child,
            "user",
            [
                text(
                    "Find every caller of total() and say whether any relies on half-even rounding."
                )
            ],
            None,
            T0 + 40,
            None,
        ),
        (
            child,
            "assistant",
            [
                call("toolu_02Grep", "grep", {"pattern": "total\\(", "path": "/home/dev/tally"}),
                finish("tool_use", T0 + 44),
            ],
            MODEL,
            T0 + 41,
            T0 + 44,
        ),
        (
            child,
            "tool",
            [
                result(
                    "toolu_02Grep",
                    "grep",
                    "Found 2 matches\n/home/dev/tally/report.py:\n  Line 9: print(total(rows))\n/home/dev/tally/tally.py:\n  Line 1: def total(xs):",
                )
            ],
            None,
            T0 + 45,
            None,
        ),
        (
            child,
            "assistant",
            [
                text(
                    "One caller, report.py line 9; it only prints the total, so nothing relies on half-even rounding."
                ),
                finish("end_turn", T0 + 58),
            ],
            MODEL,
            T0 + 50,
            T0 + 58,
        ),
        (
            parent,
            "tool",
            [
                result(
                    child,
                    "agent",
                    "One caller, report.py line 9; it only prints the total, so nothing relies on half-even rounding.",
                )
            ],
            None,
            T0 + 60,
            None,
        ),
        (
            parent,
            "assistant",
            [
                text(
                    "Done: total() now rounds half up, the tests pass, and the one caller is unaffected."
                ),
                finish("end_turn", T0 + 95),
            ],
            MODEL,
            T0 + 88,
            T0 + 95,
        ),
        (failed, "user", [text("explain the build script")], None, T0 + 291, None),
        (
            failed,
            "assistant",
            [finish("error", T0 + 296, "Provider Error: 529 overloaded")],
            MODEL,
            T0 + 292,
            T0 + 296,
        ),
    ]
    for i, (sid, role, parts, model, created, finished) in enumerate(msgs, 1):
        conn.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at,"
            " finished_at, provider) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                f"msg-{i:02d}",
                sid,
                role,
                json.dumps(parts, separators=(",", ":")),
                model,
                created,
                finished or created,
                finished,
                "anthropic" if model else None,
            ),
        )
    conn.commit()
    conn.close()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(
        here, "..", "fixtures", "crush", "constructed", "project", ".crush", "crush.db"
    )
    build(sys.argv[1] if len(sys.argv) > 1 else default)
