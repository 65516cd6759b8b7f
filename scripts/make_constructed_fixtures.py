#!/usr/bin/env python3
"""Build the constructed document fixtures (no genuine sample of these exists in the corpus).

Usage:
  python scripts/make_constructed_fixtures.py

Writes, from the formats as documented publicly (go-minitrace's adapter
reference and the Geppetto/Pinocchio turn store schema), not from real data:

* fixtures/chatgpt/constructed-modern.json — one conversation in a recent
  ChatGPT export shape (per-conversation JSON): hidden custom instructions,
  reasoning (``thoughts``, ``reasoning_recap``), a python call and its
  ``execution_output``, an image prompt and a DALL·E call, memory context, a
  regenerated answer on an abandoned branch, and a content type this version
  has no rule for;
* fixtures/claude-ai/export.zip — a claude.ai privacy export: conversations.json
  (three conversations: tool use with web search and a failing repl call,
  thinking, an attachment; a message tree with a regenerated answer and
  id-less tool blocks; and a human message with nothing in it) plus users.json
  and projects.json;
* fixtures/turns-db/turns.db — a Pinocchio turn store: two conversations, turns
  snapshotted at several phases, a system prompt re-created each turn, tool
  calls with a result and with an error, reasoning, a middleware-written block.

Output is deterministic (fixed times; the ZIP's member dates are fixed).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

T0 = 1767225600  # 2026-01-01T00:00:00Z


# -- ChatGPT -----------------------------------------------------------------------


def _msg(
    node_id: str,
    role: str,
    content: dict[str, Any],
    t: float | None,
    *,
    name: str | None = None,
    recipient: str = "all",
    metadata: dict[str, Any] | None = None,
    weight: float = 1.0,
    status: str = "finished_successfully",
) -> dict[str, Any]:
    return {
        "id": node_id,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": t,
        "update_time": None,
        "content": content,
        "status": status,
        "end_turn": None,
        "weight": weight,
        "metadata": metadata or {},
        "recipient": recipient,
        "channel": None,
    }


def chatgpt_modern() -> dict[str, Any]:
    t = T0 + 0.25
    model = {"model_slug": "o4-mini", "default_model_slug": "o4-mini"}
    chain = [
        ("client-created-root", None),
        (
            "sys-1",
            _msg(
                "sys-1",
                "system",
                {"content_type": "text", "parts": [""]},
                None,
                weight=0.0,
                metadata={"is_visually_hidden_from_conversation": True},
            ),
        ),
        (
            "ctx-1",
            _msg(
                "ctx-1",
                "user",
                {
                    "content_type": "user_editable_context",
                    "user_profile": "The user is a data engineer.",
                    "user_instructions": "Answer briefly.",
                },
                None,
                metadata={
                    "is_visually_hidden_from_conversation": True,
                    "user_context_message_data": {},
                },
            ),
        ),
        (
            "mem-1",
            _msg(
                "mem-1",
                "system",
                {
                    "content_type": "model_editable_context",
                    "model_set_context": "1. [2025-12-01]. Prefers matplotlib.",
                    "repository": None,
                    "repo_summary": None,
                },
                t,
                metadata={"is_visually_hidden_from_conversation": True},
            ),
        ),
        (
            "u-1",
            _msg(
                "u-1",
                "user",
                {"content_type": "text", "parts": ["Plot a sine wave and tell me its period."]},
                t + 1.5,
                metadata={"request_id": "req-1", "message_source": None},
            ),
        ),
        (
            "th-1",
            _msg(
                "th-1",
                "assistant",
                {
                    "content_type": "thoughts",
                    "thoughts": [
                        {
                            "summary": "Planning the plot",
                            "content": "Use numpy and matplotlib; the period of sin(x) is 2π.",
                            "chunks": [],
                            "finished": True,
                        }
                    ],
                    "source_analysis_msg_id": "x",
                },
                t + 2.0,
                metadata={**model, "request_id": "req-1"},
            ),
        ),
        (
            "rr-1",
            _msg(
                "rr-1",
                "assistant",
                {"content_type": "reasoning_recap", "content": "Thought for 4 seconds"},
                t + 6.0,
                metadata={**model, "request_id": "req-1"},
            ),
        ),
        (
            "code-1",
            _msg(
                "code-1",
                "assistant",
                {
                    "content_type": "code",
                    "language": "unknown",
                    "response_format_name": None,
                    "text": "import numpy as np\nimport matplotlib.pyplot as plt\n"
                    "x = np.linspace(0, 4*np.pi, 400)\nplt.plot(x, np.sin(x))\nplt.show()",
                },
                t + 6.5,
                recipient="python",
                metadata={**model, "request_id": "req-1"},
            ),
        ),
        (
            "out-1",
            _msg(
                "out-1",
                "tool",
                {"content_type": "execution_output", "text": "<<ImageDisplayed>>"},
                t + 8.0,
                name="python",
                metadata={
                    "aggregate_result": {"status": "success", "run_id": "run-1", "code": "…"},
                    "is_complete": True,
                },
            ),
        ),
        (
            "a-1",
            _msg(
                "a-1",
                "assistant",
                {
                    "content_type": "text",
                    "parts": ["Here is the plot. The period of sin(x) is 2π."],
                },
                t + 9.0,
                metadata={**model, "finish_details": {"type": "stop", "stop_tokens": [200002]}},
            ),
        ),
        (
            "u-2",
            _msg(
                "u-2",
                "user",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://file-Abc123",
                            "size_bytes": 52311,
                            "width": 640,
                            "height": 480,
                            "metadata": None,
                        },
                        "Draw this as a poster.",
                    ],
                },
                t + 60.0,
            ),
        ),
        (
            "dalle-1",
            _msg(
                "dalle-1",
                "assistant",
                {
                    "content_type": "text",
                    "parts": ['{"prompt": "A poster of a sine wave", "size": "1024x1024"}'],
                },
                t + 61.0,
                recipient="dalle.text2im",
                metadata={"model_slug": "gpt-4o"},
            ),
        ),
        (
            "img-1",
            _msg(
                "img-1",
                "tool",
                {
                    "content_type": "multimodal_text",
                    "parts": [
                        {
                            "content_type": "image_asset_pointer",
                            "asset_pointer": "file-service://file-Gen456",
                            "size_bytes": 301122,
                            "width": 1024,
                            "height": 1024,
                            "metadata": {
                                "dalle": {"gen_id": "g1", "prompt": "A poster of a sine wave"}
                            },
                        }
                    ],
                },
                t + 75.0,
                name="dalle.text2im",
            ),
        ),
        (
            "web-1",
            _msg(
                "web-1",
                "assistant",
                {
                    "content_type": "code",
                    "language": "unknown",
                    "text": '{"search_query": [{"q": "sine wave poster"}]}',
                },
                t + 76.0,
                recipient="web.run",
                metadata={"model_slug": "gpt-4o"},
            ),
        ),
        (
            "web-out-1",
            _msg(
                "web-out-1",
                "tool",
                {
                    "content_type": "future_search_result",
                    "results": [{"url": "https://example.com/sine", "title": "Sine posters"}],
                    "text": "1 result",
                },
                t + 77.0,
                name="web.run",
            ),
        ),
        (
            "a-2",
            _msg(
                "a-2",
                "assistant",
                {"content_type": "text", "parts": ["Here is your poster."]},
                t + 78.0,
                metadata={"model_slug": "gpt-4o", "finish_details": {"type": "stop"}},
            ),
        ),
    ]
    mapping: dict[str, Any] = {}
    for i, (node_id, message) in enumerate(chain):
        parent = chain[i - 1][0] if i else None
        child = [chain[i + 1][0]] if i + 1 < len(chain) else []
        mapping[node_id] = {"id": node_id, "message": message, "parent": parent, "children": child}
    # A regenerated first answer: an abandoned sibling of th-1, under u-1.
    mapping["a-0"] = {
        "id": "a-0",
        "message": _msg(
            "a-0",
            "assistant",
            {"content_type": "text", "parts": ["(first, regenerated answer)"]},
            t + 3.0,
            metadata={**model, "finish_details": {"type": "stop"}},
        ),
        "parent": "u-1",
        "children": [],
    }
    mapping["u-1"]["children"].insert(0, "a-0")
    return {
        "title": "Sine wave plot and poster",
        "create_time": T0 + 0.25,
        "update_time": T0 + 78.0,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": "a-2",
        "plugin_ids": None,
        "conversation_id": "6790a1b2-0000-4000-8000-00000000c0de",
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "o4-mini",
        "id": "6790a1b2-0000-4000-8000-00000000c0de",
    }


# -- claude.ai -----------------------------------------------------------------------


def _iso(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claude_ai_conversations() -> list[dict[str, Any]]:
    t = T0 + 86400
    tools = {
        "uuid": "c1000000-0000-4000-8000-000000000001",
        "name": "Weather in Lisbon",
        "summary": "",
        "created_at": _iso(t),
        "updated_at": _iso(t + 120),
        "account": {"uuid": "acc00000-0000-4000-8000-000000000000"},
        "chat_messages": [
            {
                "uuid": "m1000000-0000-4000-8000-000000000001",
                "text": "What will the weather be in Lisbon tomorrow? My notes are attached.",
                "content": [
                    {
                        "start_timestamp": _iso(t),
                        "stop_timestamp": _iso(t),
                        "type": "text",
                        "text": "What will the weather be in Lisbon tomorrow? My notes are attached.",
                        "citations": [],
                    }
                ],
                "sender": "human",
                "created_at": _iso(t),
                "updated_at": _iso(t),
                "attachments": [
                    {
                        "file_name": "notes.txt",
                        "file_size": 31,
                        "file_type": "txt",
                        "extracted_content": "Trip: Lisbon, 2 Jan, outdoors.",
                    }
                ],
                "files": [{"file_name": "notes.txt"}],
            },
            {
                "uuid": "m1000000-0000-4000-8000-000000000002",
                "text": "",
                "content": [
                    {
                        "start_timestamp": _iso(t + 2),
                        "stop_timestamp": _iso(t + 4),
                        "type": "thinking",
                        "thinking": "The user wants a forecast; search the web.",
                        "summaries": [{"summary": "Planning a web search."}],
                        "cut_off": False,
                    },
                    {
                        "start_timestamp": _iso(t + 4),
                        "stop_timestamp": _iso(t + 4),
                        "type": "text",
                        "text": "Let me look that up.",
                        "citations": [],
                    },
                    {
                        "start_timestamp": _iso(t + 5),
                        "stop_timestamp": _iso(t + 7),
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "web_search",
                        "input": {"query": "Lisbon weather 2 January"},
                        "message": "Searching the web",
                        "integration_name": None,
                        "display_content": None,
                    },
                    {
                        "start_timestamp": _iso(t + 7),
                        "stop_timestamp": _iso(t + 7),
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "name": "web_search",
                        "content": [
                            {
                                "type": "knowledge",
                                "title": "Lisbon forecast",
                                "url": "https://weather.example/lisbon",
                                "metadata": {
                                    "type": "webpage_metadata",
                                    "site_domain": "weather.example",
                                },
                                "text": "Sunny, 17°C.",
                                "is_missing": False,
                            }
                        ],
                        "is_error": False,
                        "message": None,
                        "display_content": None,
                    },
                    {
                        "start_timestamp": _iso(t + 8),
                        "stop_timestamp": _iso(t + 9),
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "repl",
                        "input": {"code": "console.log((17 * 9) / 5 + 32)"},
                        "message": "Converting to Fahrenheit",
                    },
                    {
                        "start_timestamp": _iso(t + 10),
                        "stop_timestamp": _iso(t + 10),
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "name": "repl",
                        "content": [
                            {"type": "text", "text": "ReferenceError: console is not defined"}
                        ],
                        "is_error": True,
                    },
                    {
                        "start_timestamp": _iso(t + 11),
                        "stop_timestamp": _iso(t + 12),
                        "type": "text",
                        "text": "Tomorrow in Lisbon: sunny, about 17°C (63°F).",
                        "citations": [],
                    },
                ],
                "sender": "assistant",
                "created_at": _iso(t + 2),
                "updated_at": _iso(t + 12),
                "attachments": [],
                "files": [],
            },
            {
                "uuid": "m1000000-0000-4000-8000-000000000003",
                "text": "Thanks!",
                "content": [{"type": "text", "text": "Thanks!", "citations": []}],
                "sender": "human",
                "created_at": _iso(t + 60),
                "updated_at": _iso(t + 60),
                "attachments": [],
                "files": [],
            },
            {
                "uuid": "m1000000-0000-4000-8000-000000000004",
                "text": "You're welcome — enjoy Lisbon.",
                "content": [
                    {"type": "text", "text": "You're welcome — enjoy Lisbon.", "citations": []}
                ],
                "sender": "assistant",
                "created_at": _iso(t + 61),
                "updated_at": _iso(t + 61),
                "attachments": [],
                "files": [],
            },
        ],
    }
    t2 = t + 3600
    root = "00000000-0000-4000-8000-000000000000"
    tree = {
        "uuid": "c2000000-0000-4000-8000-000000000002",
        "name": "Rename files",
        "summary": "The user asked for a rename script.",
        "created_at": _iso(t2),
        "updated_at": _iso(t2 + 40),
        "account": {"uuid": "acc00000-0000-4000-8000-000000000000"},
        "current_leaf_message_uuid": "m2000000-0000-4000-8000-000000000003",
        "chat_messages": [
            {
                "uuid": "m2000000-0000-4000-8000-000000000001",
                "parent_message_uuid": root,
                "text": "Write a shell one-liner to lowercase all file names.",
                "content": [
                    {"type": "text", "text": "Write a shell one-liner to lowercase all file names."}
                ],
                "sender": "human",
                "created_at": _iso(t2),
                "updated_at": _iso(t2),
                "attachments": [],
                "files": [],
            },
            {
                "uuid": "m2000000-0000-4000-8000-000000000002",
                "parent_message_uuid": "m2000000-0000-4000-8000-000000000001",
                "text": 'for f in *; do mv "$f" "${f,,}"; done',
                "content": [{"type": "text", "text": 'for f in *; do mv "$f" "${f,,}"; done'}],
                "sender": "assistant",
                "created_at": _iso(t2 + 5),
                "updated_at": _iso(t2 + 5),
                "attachments": [],
                "files": [],
            },
            {
                "uuid": "m2000000-0000-4000-8000-000000000003",
                "parent_message_uuid": "m2000000-0000-4000-8000-000000000001",
                "text": "",
                "content": [
                    {"type": "text", "text": "Let me check the shell first."},
                    {
                        "type": "tool_use",
                        "name": "bash_tool",
                        "input": {"command": "echo $BASH_VERSION"},
                    },
                    {
                        "type": "tool_result",
                        "name": "bash_tool",
                        "content": "5.2.21(1)-release",
                        "is_error": False,
                    },
                    {
                        "type": "voice_note",
                        "title": "Reply",
                        "text": "Bash 5 lowercases with ${f,,}.",
                    },
                    {"type": "text", "text": 'Bash 5: for f in *; do mv -n "$f" "${f,,}"; done'},
                ],
                "sender": "assistant",
                "created_at": _iso(t2 + 30),
                "updated_at": _iso(t2 + 40),
                "attachments": [],
                "files": [],
            },
        ],
    }
    empty = {
        "uuid": "c3000000-0000-4000-8000-000000000003",
        "name": "",
        "summary": "",
        "created_at": _iso(t2 + 7200),
        "updated_at": _iso(t2 + 7201),
        "account": {"uuid": "acc00000-0000-4000-8000-000000000000"},
        "chat_messages": [
            {
                "uuid": "m3000000-0000-4000-8000-000000000001",
                "text": "",
                "content": [],
                "sender": "human",
                "created_at": _iso(t2 + 7200),
                "updated_at": _iso(t2 + 7200),
                "attachments": [],
                "files": [],
            },
            {
                "uuid": "m3000000-0000-4000-8000-000000000002",
                "text": "Hello! How can I help?",
                "content": [{"type": "text", "text": "Hello! How can I help?"}],
                "sender": "assistant",
                "created_at": _iso(t2 + 7201),
                "updated_at": _iso(t2 + 7201),
                "attachments": [],
                "files": [],
            },
        ],
    }
    return [tools, tree, empty]


def write_zip(path: Path, members: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 3, 12, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)


# -- turns.db ------------------------------------------------------------------------

SCHEMA = """
CREATE TABLE turns (
    conv_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    turn_created_at_ms INTEGER NOT NULL,
    turn_metadata_json TEXT NOT NULL DEFAULT '{}',
    turn_data_json TEXT NOT NULL DEFAULT '{}',
    runtime_key TEXT NOT NULL DEFAULT '',
    inference_id TEXT NOT NULL DEFAULT '',
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (conv_id, session_id, turn_id)
);
CREATE TABLE blocks (
    block_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    hash_algorithm TEXT NOT NULL DEFAULT 'sha256-canonical-json-v1',
    kind TEXT NOT NULL,
    role TEXT NOT NULL DEFAULT '',
    payload_json TEXT NOT NULL DEFAULT '{}',
    block_metadata_json TEXT NOT NULL DEFAULT '{}',
    first_seen_at_ms INTEGER NOT NULL,
    PRIMARY KEY (block_id, content_hash)
);
CREATE TABLE turn_block_membership (
    conv_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    phase TEXT NOT NULL,
    snapshot_created_at_ms INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    block_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (conv_id, session_id, turn_id, phase, snapshot_created_at_ms, ordinal),
    FOREIGN KEY (block_id, content_hash) REFERENCES blocks(block_id, content_hash)
);
"""

Block = tuple[str, str, str, dict[str, Any], dict[str, Any]]  # id, kind, role, payload, metadata


def _hash(kind: str, role: str, payload: dict[str, Any], metadata: dict[str, Any]) -> str:
    material = json.dumps(
        {"kind": kind, "role": role, "payload": payload, "metadata": metadata},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(material.encode()).hexdigest()


def turns_db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    ms = T0 * 1000 + 2 * 86_400_000
    seen: dict[tuple[str, str], int] = {}

    def snapshot(
        conv: str, session: str, turn: str, phase: str, at: int, blocks: list[Block]
    ) -> None:
        for ordinal, (block_id, kind, role, payload, metadata) in enumerate(blocks):
            chash = _hash(kind, role, payload, metadata)
            if (block_id, chash) not in seen:
                seen[(block_id, chash)] = at
                conn.execute(
                    "INSERT INTO blocks(block_id, content_hash, kind, role, payload_json,"
                    " block_metadata_json, first_seen_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (block_id, chash, kind, role, json.dumps(payload), json.dumps(metadata), at),
                )
            conn.execute(
                "INSERT INTO turn_block_membership VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (conv, session, turn, phase, at, ordinal, block_id, chash),
            )

    def turn(conv: str, session: str, turn_id: str, at: int, model: str, runtime: str) -> None:
        conn.execute(
            "INSERT INTO turns(conv_id, session_id, turn_id, turn_created_at_ms,"
            " turn_metadata_json, runtime_key, inference_id, updated_at_ms)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                conv,
                session,
                turn_id,
                at,
                json.dumps({"geppetto.model@v1": model} if model else {}),
                runtime,
                f"inf-{turn_id}",
                at + 5000,
            ),
        )

    system = "You are a file assistant. Use tools to inspect the workspace."
    conv = "5cf06c5f-0460-485e-a7c5-92d56af826f9"
    sys1: Block = ("sys-t1", "system", "system", {"text": system}, {})
    u1: Block = ("user-1", "user", "user", {"text": "Which files are in the workspace?"}, {})
    r1: Block = (
        "rs_1",
        "reasoning",
        "assistant",
        {"text": "List the directory first.", "item_id": "rs_1"},
        {},
    )
    tc1: Block = (
        "fc_1",
        "tool_call",
        "assistant",
        {"id": "call_1", "name": "list_files", "args": {"dir": "."}},
        {},
    )
    tu1: Block = ("tu-1", "tool_use", "tool", {"id": "call_1", "result": "a.txt\nb.txt\n"}, {})
    l1: Block = (
        "llm-1",
        "llm_text",
        "assistant",
        {"text": "There are two files: a.txt and b.txt."},
        {},
    )
    turn(conv, "sess-1", "turn-1", ms, "gpt-5-mini", "gpt-5-mini")
    snapshot(conv, "sess-1", "turn-1", "pre_inference", ms + 10, [sys1, u1])
    snapshot(conv, "sess-1", "turn-1", "post_inference", ms + 900, [sys1, u1, r1, tc1])
    snapshot(conv, "sess-1", "turn-1", "final", ms + 2000, [sys1, u1, r1, tc1, tu1, l1])
    ms2 = ms + 60_000
    sys2: Block = ("sys-t2", "system", "system", {"text": system}, {})  # re-created, same content
    mode: Block = (
        "mode-2",
        "user",
        "user",
        {"text": "<currentMode>cautious</currentMode> Ask before deleting."},
        {"geppetto.middleware@v1": "agentmode"},
    )
    u2: Block = ("user-2", "user", "user", {"text": "Delete b.txt please."}, {})
    tc2: Block = (
        "fc_2",
        "tool_call",
        "assistant",
        {"id": "call_2", "name": "delete_file", "args": {"path": "b.txt"}},
        {},
    )
    tu2: Block = (
        "tu-2",
        "tool_use",
        "tool",
        {"id": "call_2", "result": None, "error": "permission denied"},
        {},
    )
    l2: Block = (
        "llm-2",
        "llm_text",
        "assistant",
        {"text": "I could not delete b.txt: permission denied."},
        {},
    )
    turn(conv, "sess-1", "turn-2", ms2, "gpt-5-mini", "gpt-5-mini")
    history = [sys2, u1, r1, tc1, tu1, l1]
    snapshot(conv, "sess-1", "turn-2", "input", ms2 + 5, [*history, u2])
    snapshot(conv, "sess-1", "turn-2", "final", ms2 + 3000, [*history, mode, u2, tc2, tu2, l2])
    conv2 = "9a1d2e3f-0000-4000-8000-000000000002"
    ms3 = ms + 3_600_000
    turn(conv2, "sess-2", "turn-1", ms3, "", "cerebras-llama-3.3-70b")
    snapshot(
        conv2,
        "sess-2",
        "turn-1",
        "final",
        ms3 + 700,
        [
            ("sys-c2", "system", "system", {"text": "You are an assistant"}, {}),
            ("user-c2", "user", "user", {"text": "hello"}, {}),
            ("other-c2", "other", "", {"text": "debug marker", "source": "ui"}, {}),
            ("llm-c2", "llm_text", "assistant", {"text": "Hi! How can I help?"}, {}),
        ],
    )
    conn.commit()
    conn.execute("VACUUM")
    conn.close()


def main() -> None:
    modern = FIXTURES / "chatgpt" / "constructed-modern.json"
    modern.parent.mkdir(parents=True, exist_ok=True)
    modern.write_text(json.dumps(chatgpt_modern(), indent=2, ensure_ascii=False) + "\n")
    conversations = json.dumps(claude_ai_conversations(), ensure_ascii=False).encode()
    users = json.dumps([{"uuid": "acc00000-0000-4000-8000-000000000000", "full_name": "A. User"}])
    write_zip(
        FIXTURES / "claude-ai" / "export.zip",
        {
            "users.json": users.encode(),
            "projects.json": b"[]",
            "conversations.json": conversations,
        },
    )
    turns_db(FIXTURES / "turns-db" / "turns.db")
    for p in (modern, FIXTURES / "claude-ai" / "export.zip", FIXTURES / "turns-db" / "turns.db"):
        print(f"{p.relative_to(ROOT)}: {p.stat().st_size} bytes")


if __name__ == "__main__":
    main()
