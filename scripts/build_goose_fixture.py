"""Build ``fixtures/goose/constructed/sessions/sessions.db``: a Goose database, constructed.

The tables are those Goose creates and migrates to schema 13 (block/goose:
``crates/goose/src/session/session_storage.rs`` at commit
2b73d36778f38e56692547076eb381787caadff3 for the base tables,
``crates/goose/src/session/migrations.rs`` at 865e4a030a67eb0c51869874b9c758cb1eb10595
for the columns added since), and ``content_json`` holds messages as Goose's
``MessageContent`` serializes them (``conversation/message``: tagged by
``type``, tool calls and results as ``{status, value | error}``). The
conversation is ours: a session that runs and edits, with a failed tool, a
hidden context message and running totals with a cost; a subagent session.

Run: ``python scripts/build_goose_fixture.py [PATH]``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE,
    session_type TEXT NOT NULL DEFAULT 'user',
    working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}',
    total_tokens INTEGER,
    input_tokens INTEGER,
    output_tokens INTEGER,
    accumulated_total_tokens INTEGER,
    accumulated_input_tokens INTEGER,
    accumulated_output_tokens INTEGER,
    schedule_id TEXT,
    recipe_json TEXT,
    user_recipe_values_json TEXT,
    provider_name TEXT,
    model_config_json TEXT,
    goose_mode TEXT NOT NULL DEFAULT 'auto',
    thread_id TEXT,
    archived_at TIMESTAMP,
    project_id TEXT,
    accumulated_cost REAL
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content_json TEXT NOT NULL,
    created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    tokens INTEGER,
    metadata_json TEXT,
    message_id TEXT
);
CREATE TABLE threads (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT 'New Chat',
    user_set_name BOOLEAN DEFAULT FALSE, working_dir TEXT, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, archived_at TIMESTAMP, metadata_json TEXT DEFAULT '{}');
CREATE INDEX idx_messages_session ON messages(session_id);
"""

T0 = 1767865800
SEEN = json.dumps({"userVisible": True, "agentVisible": True})
HIDDEN_FROM_PERSON = json.dumps({"userVisible": False, "agentVisible": True})
PERSON_ONLY = json.dumps({"userVisible": True, "agentVisible": False})


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def request(cid: str, name: str, args: dict) -> dict:
    return {
        "type": "toolRequest",
        "id": cid,
        "toolCall": {"status": "success", "value": {"name": name, "arguments": args}},
    }


def response(cid: str, out: str) -> dict:
    value = {"content": [{"type": "text", "text": out}], "isError": False}
    return {"type": "toolResponse", "id": cid, "toolResult": {"status": "success", "value": value}}


def failure(cid: str, err: str) -> dict:
    return {"type": "toolResponse", "id": cid, "toolResult": {"status": "error", "error": err}}


def build(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT INTO schema_version (version, applied_at) VALUES (?, '2026-01-08 09:49:00')",
        [(v,) for v in range(1, 14)],
    )
    model = json.dumps(
        {
            "model_name": "gpt-4o",
            "context_limit": 128000,
            "temperature": None,
            "max_tokens": None,
            "toolshim": False,
        }
    )
    conn.executemany(
        "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at, provider_name,"
        " model_config_json, input_tokens, output_tokens, total_tokens, accumulated_input_tokens,"
        " accumulated_output_tokens, accumulated_total_tokens, accumulated_cost) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                "20260108_1",
                "Count lines of code",
                "user",
                "/home/dev/tally",
                "2026-01-08 09:50:00",
                "2026-01-08 09:51:10",
                "openai",
                model,
                3310,
                58,
                3368,
                9480,
                212,
                9692,
                0.02582,
            ),
            (
                "20260108_2",
                "Subagent: list tests",
                "sub_agent",
                "/home/dev/tally",
                "2026-01-08 09:50:40",
                "2026-01-08 09:50:55",
                "openai",
                model,
                1800,
                40,
                1840,
                1800,
                40,
                1840,
                0.0049,
            ),
        ],
    )
    rows = [
        ("20260108_1", "user", [text("How many lines of Python are in this repo?")], T0 + 1, SEEN),
        (
            "20260108_1",
            "user",
            [text("<info-msg>Working directory: /home/dev/tally</info-msg>")],
            T0 + 1,
            HIDDEN_FROM_PERSON,
        ),
        (
            "20260108_1",
            "assistant",
            [
                text("I'll count them with a shell command."),
                request(
                    "call_sh1",
                    "developer__shell",
                    {"command": "find . -name '*.py' | xargs wc -l | tail -1"},
                ),
            ],
            T0 + 4,
            SEEN,
        ),
        ("20260108_1", "user", [response("call_sh1", "  412 total\n")], T0 + 5, SEEN),
        (
            "20260108_1",
            "assistant",
            [
                {
                    "type": "thinking",
                    "thinking": "Check the tests folder separately.",
                    "signature": "c2lnLWdvb3Nl",
                },
                request(
                    "call_ed1",
                    "developer__text_editor",
                    {"command": "view", "path": "/home/dev/tally/tests"},
                ),
            ],
            T0 + 9,
            SEEN,
        ),
        (
            "20260108_1",
            "user",
            [failure("call_ed1", "The path '/home/dev/tally/tests' is a directory")],
            T0 + 10,
            SEEN,
        ),
        (
            "20260108_1",
            "assistant",
            [text("There are 412 lines of Python in total.")],
            T0 + 14,
            SEEN,
        ),
        (
            "20260108_1",
            "assistant",
            [
                {
                    "type": "systemNotification",
                    "notificationType": "inlineMessage",
                    "msg": "Context compacted",
                }
            ],
            T0 + 15,
            PERSON_ONLY,
        ),
        ("20260108_2", "user", [text("List the test files.")], T0 + 41, SEEN),
        (
            "20260108_2",
            "assistant",
            [request("call_sh2", "developer__shell", {"command": "ls tests"})],
            T0 + 43,
            SEEN,
        ),
        (
            "20260108_2",
            "user",
            [response("call_sh2", "test_parse.py\ntest_round.py\n")],
            T0 + 44,
            SEEN,
        ),
        (
            "20260108_2",
            "assistant",
            [text("Two test files: test_parse.py and test_round.py.")],
            T0 + 50,
            SEEN,
        ),
    ]
    for sid, role, content, created, meta in rows:
        cur = conn.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp,"
            " metadata_json) VALUES (?, ?, ?, ?, datetime(?, 'unixepoch'), ?)",
            (sid, role, json.dumps(content), created, created, meta),
        )
        conn.execute(
            "UPDATE messages SET message_id = ? WHERE id = ?",
            (f"msg_{sid}_{cur.lastrowid}", cur.lastrowid),
        )
    conn.commit()
    conn.close()


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(
        here, "..", "fixtures", "goose", "constructed", "sessions", "sessions.db"
    )
    build(sys.argv[1] if len(sys.argv) > 1 else default)
