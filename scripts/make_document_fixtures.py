#!/usr/bin/env python3
"""Make the OpenCode and Cline fixtures: trimmed copies of corpus files, and constructed ones.

Usage:
  python scripts/make_document_fixtures.py [--corpus ../shared/corpus]

* ``fixtures/opencode/<name>.db`` — the corpus databases with only the tables the
  adapter reads (``project``, ``session``, ``message``, ``part``, schema verbatim):
  the account and credential tables a real database holds are never copied;
* ``fixtures/opencode/dotfiles/…`` — the corpus's 0.x JSON storage tree, as is;
* ``fixtures/opencode/constructed/opencode.db`` and ``constructed/storage/`` — a
  database and a 1.x storage tree with the shapes no corpus file has;
* ``fixtures/cline/<task>/`` — corpus task folders, long ones cut to their first
  API messages (and the UI messages up to the same point);
* ``fixtures/cline/constructed/<task>/`` — a task of the XML tool-call era.

Constructed content is invented (see fixtures/README.md).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

#: The tables a fixture database keeps: what the adapter reads, and nothing else.
TABLES = ("project", "session", "message", "part")


def copy_tables(source: Path, target: Path) -> None:
    """*source*'s OpenCode tables (schema and rows) into a new database *target*."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro&immutable=1", uri=True)
    dst = sqlite3.connect(target)
    for name in TABLES:
        (sql,) = src.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        dst.execute(sql)
        rows = src.execute(f"SELECT * FROM {name}").fetchall()
        if rows:
            marks = ",".join("?" * len(rows[0]))
            dst.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
    dst.commit()
    dst.execute("VACUUM")
    dst.close()
    src.close()


def _ms(n: int) -> int:
    return 1785000000000 + n * 1000


def constructed_database(target: Path) -> None:
    """Two sessions (a parent and the subagent its task tool started) with every part type."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    db = sqlite3.connect(target)
    db.executescript(
        """
        CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text,
          `name` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
          `sandboxes` text NOT NULL);
        CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL,
          `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL,
          `title` text NOT NULL, `version` text NOT NULL, `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL);
        CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL,
          `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
        CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL,
          `session_id` text NOT NULL, `time_created` integer NOT NULL,
          `time_updated` integer NOT NULL, `data` text NOT NULL);
        CREATE TABLE `account` (`id` text PRIMARY KEY, `email` text NOT NULL,
          `access_token` text NOT NULL, `refresh_token` text NOT NULL);
        """
    )
    db.execute(
        "INSERT INTO account VALUES ('acc_1', 'dev@example.com', 'FIXTURE-TOKEN-NEVER-READ', 'x')"
    )
    db.execute("INSERT INTO project VALUES ('p1', '/home/dev/app', 'git', NULL, 1, 1, '[]')")
    parent, child = "ses_0a0000000001ConstructedA1", "ses_0a0000000002ConstructedB2"
    db.execute(
        "INSERT INTO session VALUES (?, 'p1', NULL, 'brave-fox', '/home/dev/app',"
        " 'Fix the failing test', '1.3.4', ?, ?)",
        (parent, _ms(0), _ms(40)),
    )
    db.execute(
        "INSERT INTO session VALUES (?, 'p1', ?, 'calm-owl', '/home/dev/app',"
        " 'Find the test (@explore subagent)', '1.3.4', ?, ?)",
        (child, parent, _ms(10), _ms(20)),
    )
    tokens = {"input": 120, "output": 40, "reasoning": 15, "cache": {"read": 3000, "write": 200}}
    assistant = {
        "role": "assistant",
        "parentID": "msg_u1",
        "modelID": "claude-sonnet-4-5",
        "providerID": "anthropic",
        "mode": "build",
        "agent": "build",
        "path": {"cwd": "/home/dev/app", "root": "/home/dev/app"},
    }
    rows = [
        # parent session: a user prompt with a file mention (synthetic content) and an agent part
        (
            parent,
            "msg_u1",
            {
                "role": "user",
                "time": {"created": _ms(1)},
                "agent": "build",
                "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
            },
            [
                ("prt_u1a", {"type": "text", "text": "Fix the failing test in @tests/test_app.py"}),
                (
                    "prt_u1b",
                    {
                        "type": "text",
                        "synthetic": True,
                        "text": "Called the Read tool with the following input: "
                        '{"filePath":"/home/dev/app/tests/test_app.py"}',
                    },
                ),
                (
                    "prt_u1c",
                    {
                        "type": "file",
                        "mime": "text/plain",
                        "filename": "test_app.py",
                        "url": "file:///home/dev/app/tests/test_app.py",
                    },
                ),
                ("prt_u1d", {"type": "agent", "name": "explore"}),
            ],
        ),
        (
            parent,
            "msg_a1",
            dict(
                assistant,
                time={"created": _ms(2), "completed": _ms(9)},
                cost=0.0123,
                tokens=tokens,
                finish="tool-calls",
            ),
            [
                ("prt_a1a", {"type": "step-start", "snapshot": "4b825dc6"}),
                (
                    "prt_a1b",
                    {
                        "type": "reasoning",
                        "text": "Let a subagent find the test first.",
                        "time": {"start": _ms(2), "end": _ms(3)},
                    },
                ),
                (
                    "prt_a1c",
                    {
                        "type": "tool",
                        "tool": "task",
                        "callID": "toolu_task1",
                        "state": {
                            "status": "completed",
                            "input": {"description": "find the test", "subagent_type": "explore"},
                            "output": "tests/test_app.py::test_add fails",
                            "title": "find the test",
                            "metadata": {"sessionId": child},
                            "time": {"start": _ms(3), "end": _ms(8)},
                        },
                    },
                ),
                (
                    "prt_a1d",
                    {
                        "type": "tool",
                        "tool": "bash",
                        "callID": "toolu_bash1",
                        "state": {
                            "status": "error",
                            "input": {"command": "pytest -x"},
                            "error": "exit status 1",
                            "time": {"start": _ms(8), "end": _ms(9)},
                        },
                    },
                ),
                (
                    "prt_a1e",
                    {
                        "type": "step-finish",
                        "reason": "tool-calls",
                        "cost": 0.0123,
                        "tokens": tokens,
                    },
                ),
            ],
        ),
        (
            parent,
            "msg_a2",
            dict(
                assistant,
                time={"created": _ms(21), "completed": _ms(30)},
                cost=0.004,
                finish="stop",
                tokens={
                    "input": 80,
                    "output": 60,
                    "reasoning": 0,
                    "total": 3140,
                    "cache": {"read": 3000, "write": 0},
                },
            ),
            [
                ("prt_a2a", {"type": "step-start"}),
                (
                    "prt_a2b",
                    {
                        "type": "retry",
                        "attempt": 1,
                        "time": {"created": _ms(22)},
                        "error": {
                            "name": "APIError",
                            "data": {"message": "Overloaded", "isRetryable": True},
                        },
                    },
                ),
                (
                    "prt_a2c",
                    {
                        "type": "tool",
                        "tool": "edit",
                        "callID": "toolu_edit1",
                        "state": {
                            "status": "completed",
                            "input": {
                                "filePath": "/home/dev/app/app.py",
                                "oldString": "a - b",
                                "newString": "a + b",
                            },
                            "output": "Edit applied.",
                            "title": "app.py",
                            "metadata": {"diff": "-a - b\n+a + b"},
                            "time": {"start": _ms(23), "end": _ms(24)},
                        },
                    },
                ),
                ("prt_a2d", {"type": "patch", "hash": "9f1c2e", "files": ["/home/dev/app/app.py"]}),
                (
                    "prt_a2e",
                    {
                        "type": "text",
                        "text": "Fixed: `add` subtracted.",
                        "time": {"start": _ms(25), "end": _ms(29)},
                    },
                ),
                (
                    "prt_a2f",
                    {
                        "type": "step-finish",
                        "reason": "stop",
                        "cost": 0.004,
                        "tokens": {
                            "input": 80,
                            "output": 60,
                            "reasoning": 0,
                            "cache": {"read": 3000, "write": 0},
                        },
                    },
                ),
            ],
        ),
        (
            parent,
            "msg_u2",
            {
                "role": "user",
                "time": {"created": _ms(31)},
                "agent": "build",
                "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
            },
            [
                ("prt_u2a", {"type": "compaction", "auto": True}),
            ],
        ),
        (
            parent,
            "msg_a3",
            dict(
                assistant,
                time={"created": _ms(32), "completed": _ms(33)},
                cost=0,
                summary=True,
                tokens={"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                error={
                    "name": "MessageAbortedError",
                    "data": {"message": "The operation was aborted."},
                },
            ),
            [],
        ),
        # the subagent's session
        (
            child,
            "msg_c1",
            {
                "role": "user",
                "time": {"created": _ms(11)},
                "agent": "explore",
                "model": {"providerID": "anthropic", "modelID": "claude-haiku-4-5"},
            },
            [
                ("prt_c1a", {"type": "text", "text": "find the test"}),
                (
                    "prt_c1b",
                    {
                        "type": "subtask",
                        "prompt": "find the test",
                        "description": "find the test",
                        "agent": "explore",
                    },
                ),
            ],
        ),
        (
            child,
            "msg_c2",
            dict(
                assistant,
                modelID="claude-haiku-4-5",
                agent="explore",
                time={"created": _ms(12), "completed": _ms(19)},
                cost=0.001,
                finish="stop",
                tokens={
                    "input": 50,
                    "output": 20,
                    "reasoning": 0,
                    "cache": {"read": 0, "write": 0},
                },
            ),
            [
                ("prt_c2a", {"type": "step-start"}),
                (
                    "prt_c2b",
                    {
                        "type": "tool",
                        "tool": "grep",
                        "callID": "toolu_grep1",
                        "state": {
                            "status": "completed",
                            "input": {"pattern": "def test_add"},
                            "output": "tests/test_app.py:3: def test_add():",
                            "title": "def test_add",
                            "metadata": {"matches": 1},
                            "time": {"start": _ms(13), "end": _ms(14)},
                        },
                    },
                ),
                ("prt_c2c", {"type": "snapshot", "snapshot": "5d1f"}),
                ("prt_c2d", {"type": "text", "text": "tests/test_app.py::test_add fails"}),
                (
                    "prt_c2e",
                    {
                        "type": "step-finish",
                        "reason": "stop",
                        "cost": 0.001,
                        "tokens": {
                            "input": 50,
                            "output": 20,
                            "reasoning": 0,
                            "cache": {"read": 0, "write": 0},
                        },
                    },
                ),
            ],
        ),
    ]
    for sid, mid, data, parts in rows:
        created = data["time"]["created"]
        db.execute(
            "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
            (mid, sid, created, created, json.dumps(data, separators=(",", ":"))),
        )
        for pid, pdata in parts:
            db.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                (pid, mid, sid, created, created, json.dumps(pdata, separators=(",", ":"))),
            )
    db.commit()
    db.close()


def constructed_tree(root: Path) -> None:
    """A 1.x storage tree: ``session/<project>/``, ``message/<session>/``, ``part/<message>/``."""
    if root.exists():
        shutil.rmtree(root)
    sid = "ses_0b0000000001TreeSession01"

    def write(rel: str, value: object) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2) + "\n")

    write(
        f"session/4e8912cc/{sid}.json",
        {
            "id": sid,
            "version": "1.0.85",
            "projectID": "4e8912cc",
            "directory": "/home/dev/site",
            "title": "Add a dark mode toggle",
            "time": {"created": _ms(100), "updated": _ms(110)},
        },
    )
    write(
        f"message/{sid}/msg_t1.json",
        {"id": "msg_t1", "sessionID": sid, "role": "user", "time": {"created": _ms(101)}},
    )
    write(
        "part/msg_t1/prt_t1a.json",
        {
            "id": "prt_t1a",
            "sessionID": sid,
            "messageID": "msg_t1",
            "type": "text",
            "text": "Add a dark mode toggle",
        },
    )
    write(
        f"message/{sid}/msg_t2.json",
        {
            "id": "msg_t2",
            "sessionID": sid,
            "role": "assistant",
            "modelID": "gpt-5",
            "providerID": "openai",
            "mode": "build",
            "cost": 0.02,
            "path": {"cwd": "/home/dev/site", "root": "/home/dev/site"},
            "tokens": {
                "input": 900,
                "output": 300,
                "reasoning": 120,
                "cache": {"read": 0, "write": 0},
            },
            "time": {"created": _ms(102), "completed": _ms(109)},
        },
    )
    write(
        "part/msg_t2/prt_t2a.json",
        {"id": "prt_t2a", "sessionID": sid, "messageID": "msg_t2", "type": "step-start"},
    )
    write(
        "part/msg_t2/prt_t2b.json",
        {
            "id": "prt_t2b",
            "sessionID": sid,
            "messageID": "msg_t2",
            "type": "tool",
            "tool": "write",
            "callID": "call_w1",
            "state": {
                "status": "completed",
                "input": {"filePath": "/home/dev/site/theme.js", "content": "export {}"},
                "output": "",
                "title": "theme.js",
                "metadata": {},
                "time": {"start": _ms(103), "end": _ms(104)},
            },
        },
    )
    write(
        "part/msg_t2/prt_t2c.json",
        {
            "id": "prt_t2c",
            "sessionID": sid,
            "messageID": "msg_t2",
            "type": "text",
            "text": "Added `theme.js`.",
        },
    )
    write(
        "part/msg_t2/prt_t2d.json",
        {
            "id": "prt_t2d",
            "sessionID": sid,
            "messageID": "msg_t2",
            "type": "step-finish",
            "cost": 0.02,
            "tokens": {
                "input": 900,
                "output": 300,
                "reasoning": 120,
                "cache": {"read": 0, "write": 0},
            },
        },
    )


def trim_task(source: Path, target: Path, keep: int | None) -> None:
    """A Cline task folder, its API history cut to *keep* messages (the UI to the same point)."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    api_path, ui_path = source / "api_conversation_history.json", source / "ui_messages.json"
    api = json.loads(api_path.read_text()) if api_path.exists() else None
    ui = json.loads(ui_path.read_text())
    if keep is not None:
        if api is not None:
            api = api[:keep]
            ui = [m for m in ui if m.get("conversationHistoryIndex", -1) < keep - 1]
        else:
            ui = ui[:keep]
    if api is not None:
        (target / api_path.name).write_text(json.dumps(api, separators=(",", ":")))
    (target / ui_path.name).write_text(json.dumps(ui, separators=(",", ":")))
    meta = source / "task_metadata.json"
    if meta.exists():
        shutil.copyfile(meta, target / meta.name)


def constructed_xml_task(target: Path) -> None:
    """A task of the XML tool-call era: calls in the text, results as user text, a refusal."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    env = "<environment_details>\n# Current Working Directory (/home/dev/tool) Files\nmain.py\n</environment_details>"
    api = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<task>\nRename foo to bar in main.py\n</task>"},
                {"type": "text", "text": env},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "<thinking>Read the file first.</thinking>\n<read_file>\n<path>main.py</path>\n</read_file>",
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "[read_file for 'main.py'] Result:"},
                {"type": "text", "text": "def foo():\n    return 1\n"},
                {"type": "text", "text": env},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "<replace_in_file>\n<path>main.py</path>\n<diff>\n------- SEARCH\ndef foo():\n=======\ndef bar():\n+++++++ REPLACE\n</diff>\n</replace_in_file>",
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "text",
                    "text": "Tool [replace_in_file for 'main.py'] was not executed because the user denied it.",
                },
                {"type": "text", "text": "<feedback>\nalso update the callers\n</feedback>"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Updating the callers too."},
                {
                    "type": "tool_use",
                    "id": "toolu_x1",
                    "name": "execute_command",
                    "input": {"command": "grep -rn foo .", "requires_approval": False},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_x1",
                    "content": [{"type": "text", "text": "main.py:1:def foo():"}],
                }
            ],
        },
    ]
    base = 1767000000000

    def req(i: int, h: int, cost: float) -> dict[str, object]:
        text = json.dumps(
            {
                "request": "<task>…</task>" if i == 0 else "[tool] Result: …",
                "tokensIn": 12 + i,
                "tokensOut": 80 + i,
                "cacheWrites": 900,
                "cacheReads": 4000 * i,
                "cost": cost,
            }
        )
        return {
            "ts": base + 1000 * (3 * i + 1),
            "type": "say",
            "say": "api_req_started",
            "text": text,
            "conversationHistoryIndex": h,
        }

    ui = [
        {
            "ts": base,
            "type": "say",
            "say": "text",
            "text": "Rename foo to bar in main.py",
            "conversationHistoryIndex": -1,
        },
        req(0, -1, 0.0112),
        {
            "ts": base + 2000,
            "type": "say",
            "say": "tool",
            "text": json.dumps({"tool": "readFile", "path": "main.py"}),
            "conversationHistoryIndex": 0,
        },
        req(1, 1, 0.0051),
        {
            "ts": base + 5000,
            "type": "ask",
            "ask": "tool",
            "text": json.dumps({"tool": "editedExistingFile", "path": "main.py", "diff": "…"}),
            "conversationHistoryIndex": 2,
        },
        {
            "ts": base + 6000,
            "type": "say",
            "say": "user_feedback",
            "text": "also update the callers",
            "conversationHistoryIndex": 2,
        },
        {"ts": base + 6500, "type": "say", "say": "api_req_retried", "conversationHistoryIndex": 3},
        req(2, 3, 0.0047),
        {
            "ts": base + 8000,
            "type": "say",
            "say": "command",
            "text": "grep -rn foo .",
            "conversationHistoryIndex": 4,
        },
        {
            "ts": base + 8500,
            "type": "ask",
            "ask": "command_output",
            "text": "main.py:1:def foo():",
            "conversationHistoryIndex": 4,
        },
    ]
    (target / "api_conversation_history.json").write_text(json.dumps(api, indent=2))
    (target / "ui_messages.json").write_text(json.dumps(ui, indent=2))
    (target / "task_metadata.json").write_text(
        json.dumps(
            {
                "files_in_context": [],
                "model_usage": [],
                "environment_history": [
                    {"ts": base, "os_name": "linux", "cline_version": "3.17.9"}
                ],
            },
            indent=2,
        )
    )


def constructed_ui_task(target: Path) -> None:
    """A UI-only task with the UI kinds no corpus fixture has: MCP calls, failures, resumption."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    base = 1768000000000
    info = {"providerId": "anthropic", "modelId": "claude-sonnet-4-5", "mode": "act"}

    def req(i: int, cost: float) -> dict[str, object]:
        return {
            "request": "…",
            "tokensIn": 20 + i,
            "tokensOut": 90,
            "cacheWrites": 0,
            "cacheReads": 1000 * i,
            "cost": cost,
        }

    ui: list[dict[str, object]] = [
        {
            "type": "say",
            "say": "text",
            "text": "What is the weather in Paris?",
            "images": [],
            "files": [],
        },
        {"type": "say", "say": "api_req_started", "text": json.dumps(req(0, 0.01))},
        {"type": "say", "say": "text", "text": "I will ask the weather server.", "partial": False},
        {"type": "say", "say": "load_mcp_documentation", "text": ""},
        {
            "type": "ask",
            "ask": "use_mcp_server",
            "text": json.dumps(
                {
                    "type": "use_mcp_tool",
                    "serverName": "weather",
                    "toolName": "forecast",
                    "arguments": '{"city": "Paris"}',
                }
            ),
        },
        {"type": "say", "say": "mcp_server_request_started"},
        {"type": "say", "say": "mcp_server_response", "text": "Paris: 18°C, light rain"},
        {
            "type": "say",
            "say": "api_req_started",
            "text": json.dumps(
                dict(
                    req(1, 0.0),
                    cancelReason="streaming_failed",
                    streamingFailedMessage="overloaded",
                )
            ),
        },
        {"type": "ask", "ask": "api_req_failed", "text": "529 overloaded"},
        {"type": "say", "say": "error_retry", "text": json.dumps({"attempt": 1, "maxAttempts": 3})},
        {"type": "say", "say": "api_req_retried"},
        {"type": "say", "say": "api_req_started", "text": json.dumps(req(2, 0.012))},
        {
            "type": "ask",
            "ask": "followup",
            "text": json.dumps(
                {"question": "Celsius or Fahrenheit?", "options": ["Celsius", "Fahrenheit"]}
            ),
        },
        {"type": "say", "say": "user_feedback", "text": "Celsius", "images": [], "files": []},
        {"type": "say", "say": "deleted_api_reqs", "text": json.dumps(req(3, 0.001))},
        {"type": "ask", "ask": "auto_approval_max_req_reached", "text": "20 requests"},
        {"type": "ask", "ask": "resume_task"},
        {"type": "say", "say": "api_req_started", "text": json.dumps(req(4, 0.005))},
        {"type": "say", "say": "completion_result", "text": "18°C and light rain in Paris."},
        {"type": "ask", "ask": "completion_result", "text": ""},
    ]
    saved = []
    for i, m in enumerate(ui):  # as Cline writes them: ts first
        entry: dict[str, object] = {"ts": base + 1000 * i, **m, "conversationHistoryIndex": -1}
        if m["type"] == "say":
            entry["modelInfo"] = info
        saved.append(entry)
    (target / "ui_messages.json").write_text(json.dumps(saved, indent=2))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    a = ap.parse_args()
    oc, cl = FIXTURES / "opencode", FIXTURES / "cline"
    oc.mkdir(parents=True, exist_ok=True)
    corpus_oc, corpus_cl = a.corpus / "opencode", a.corpus / "cline"
    copy_tables(corpus_oc / "stunning-memor__opencode.db", oc / "stunning-memory" / "opencode.db")
    copy_tables(
        corpus_oc / "dotfiles__opencode__opencode-stable.db", oc / "dotfiles" / "opencode-stable.db"
    )
    tree = oc / "dotfiles" / "project"
    if tree.exists():
        shutil.rmtree(tree)
    shutil.copytree(corpus_oc / "dotfiles__opencode" / "project", tree)
    for p in tree.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    constructed_database(oc / "constructed" / "opencode.db")
    constructed_tree(oc / "constructed" / "storage")
    trim_task(corpus_cl / "online-card-ar__exported_task_1769064454592", cl / "1769064454592", None)
    trim_task(corpus_cl / "fineye", cl / "fineye-ui-only", 120)
    trim_task(corpus_cl / "mcp-vscode-ser", cl / "mcp-ui-only", 30)
    constructed_xml_task(cl / "constructed" / "1767000000000")
    constructed_ui_task(cl / "constructed" / "1768000000000")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
