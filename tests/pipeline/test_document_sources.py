"""Whole-document sources: record accounting over every document fixture, routing, library API.

For a document adapter the unit of accounting is the *record* its module
docstring names (a ChatGPT mapping node, a claude.ai chat message, a turns.db
membership row), numbered from 1 within each conversation. Every record of
every conversation ends as exactly one of: cited by an event's provenance, or
a counted skip; and the report's skip counts are those skips.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import zipfile
from contextlib import closing
from pathlib import Path

import msgspec
import pytest

from agentminutes import conversations, iter_sessions, load, parse, sessions
from agentminutes.errors import DetectError, UsageError
from agentminutes.harness import DOCUMENT_ADAPTERS, ParseOptions, is_document_adapter
from agentminutes.pipeline.document_sources import DocumentConversion, route
from conftest import FIXTURES, fixture_id, read_db, transcripts

ALL = [p for cls in DOCUMENT_ADAPTERS for p in transcripts(cls.name)]


def _payload(path: Path) -> bytes:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as zf:
            return zf.read("conversations.json")
    return path.read_bytes()


def _record_counts(path: Path, harness: str) -> dict[str, int]:
    """Records per conversation, counted straight from the source (not through an adapter)."""
    if harness == "opencode" and path.suffix == ".db":
        # Messages and their parts; the session row is the session_meta.
        with contextlib.closing(sqlite3.connect(path)) as conn, conn:
            sessions = [r[0] for r in conn.execute("SELECT id FROM session")]
            counts = dict(conn.execute("SELECT session_id, COUNT(*) FROM message GROUP BY 1"))
            for sid, n in conn.execute(
                "SELECT m.session_id, COUNT(*) FROM part p JOIN message m ON p.message_id = m.id"
                " GROUP BY 1"
            ):
                counts[sid] = counts.get(sid, 0) + n
        return {sid: counts.get(sid, 0) for sid in sessions}
    if harness == "opencode":  # a file of a storage tree: the message and part files per session
        storage = next(p for p in [path, *path.parents] if p.name == "storage")
        counts = {}
        for info in storage.glob("session/*/*.json"):
            sid = info.stem
            msgs = list(storage.glob(f"session/message/{sid}/*.json")) or list(
                storage.glob(f"message/{sid}/*.json")
            )
            parts = sum(
                len(list(storage.glob(f"session/part/{sid}/{m.stem}/*.json")))
                + len(list(storage.glob(f"part/{m.stem}/*.json")))
                for m in msgs
            )
            counts[sid] = len(msgs) + parts
        return counts
    if harness == "cline":  # the task folder: API messages, UI messages, the metadata document
        folder = path if path.is_dir() else path.parent
        total = sum(
            len(json.loads((folder / name).read_text()))
            for name in ("api_conversation_history.json", "ui_messages.json")
            if (folder / name).exists()
        )
        return {folder.name: total + (folder / "task_metadata.json").exists()}
    if harness in ("crush", "goose"):  # the session's messages; the session row is its meta
        with closing(sqlite3.connect(path)) as conn, conn:
            sessions = [r[0] for r in conn.execute("SELECT id FROM sessions")]
            counts = dict(conn.execute("SELECT session_id, COUNT(*) FROM messages GROUP BY 1"))
        return {sid: counts.get(sid, 0) for sid in sessions}
    if harness == "turns-db":
        with closing(sqlite3.connect(path)) as conn, conn:
            return dict(
                conn.execute("SELECT conv_id, COUNT(*) FROM turn_block_membership GROUP BY conv_id")
            )
    if harness == "openhands":  # the event files, then the state file
        folder = path if path.is_dir() else path.parent
        folder = folder.parent if folder.name == "events" else folder
        return {folder.name: len(list((folder / "events").glob("event-*.json"))) + 1}
    if harness == "hermes":  # the session row, its messages, its usage rows (a WAL database)
        with read_db(path) as conn:
            counts = {r[0]: 1 for r in conn.execute("SELECT id FROM sessions")}
            for table in ("messages", "session_model_usage"):
                for sid, n in conn.execute(f"SELECT session_id, COUNT(*) FROM {table} GROUP BY 1"):
                    counts[sid] += n
            return counts
    data = json.loads(_payload(path))
    convs = data if isinstance(data, list) else [data]
    if harness == "chatgpt":
        return {c.get("conversation_id") or c["id"]: len(c["mapping"]) for c in convs}
    return {c["uuid"]: len(c["chat_messages"]) for c in convs}


@pytest.mark.parametrize("path", ALL, ids=[fixture_id(p) for p in ALL])
def test_every_record_accounted_once(path: Path) -> None:
    found = route(path)
    assert found.document is not None
    assert found.adapter is not None
    skips: list[int] = []
    docs = DocumentConversion(
        found.document,
        found.adapter,
        ParseOptions(),
        on_skip=lambda record, _type: skips.append(record),
    )
    expected = _record_counts(path, found.adapter.name)
    seen = set()
    for session in docs.sessions():
        conv = session.conversation.id
        seen.add(conv)
        cited: set[int] = set()
        for ev in session.events:
            if ev.kind == "session_meta":
                continue
            p = ev.provenance
            assert p is not None, f"{conv}: {ev.kind} without provenance"
            cited.update(range(p.line, (p.end_line or p.line) + 1))
        skip_set = set(skips)
        assert len(skip_set) == len(skips), f"{conv}: a record was skipped twice"
        assert not cited & skip_set, f"{conv}: records both events and skips: {cited & skip_set}"
        assert cited | skip_set == set(range(1, expected[conv] + 1)), conv
        assert sum(session.skipped.values()) == len(skips)
        assert session.events[0].kind == "session_meta"
        assert [e.kind for e in session.events].count("session_meta") == 1
        skips.clear()
    assert seen == set(expected)


def test_document_fixtures_exist() -> None:
    harnesses = {p.relative_to(FIXTURES).parts[0] for p in ALL}
    assert harnesses == {cls.name for cls in DOCUMENT_ADAPTERS}


def test_registry_kinds() -> None:
    assert all(is_document_adapter(cls) for cls in DOCUMENT_ADAPTERS)


def test_listing_matches_sessions() -> None:
    for path in ALL:
        listed = conversations(path)
        # A subagent's session (OpenCode) names its parent's session; the conversation is its own.
        parsed = [s.meta.subagent_id or s.meta.session_id for s in iter_sessions(path)]
        assert [c.id for c in listed] == parsed, fixture_id(path)
        for c in listed:
            assert c.created, (fixture_id(path), c.id)


def test_load_needs_a_conversation_where_there_are_several() -> None:
    path = FIXTURES / "claude-ai" / "export.zip"
    with pytest.raises(UsageError, match=r"3 conversations.*--conversation.*--all"):
        load(path)
    session = load(path, conversation="c2")
    assert session.meta.session_id == "c2000000-0000-4000-8000-000000000002"
    with pytest.raises(UsageError, match='no conversation "zzz"'):
        load(path, conversation="zzz")
    with pytest.raises(UsageError, match="prefix"):
        load(path, conversation="c")


def test_single_conversation_source_needs_no_choice() -> None:
    session = load(FIXTURES / "chatgpt" / "constructed-modern.json")
    assert session.meta.harness == "chatgpt"
    assert session.totals is None


async def test_async_api_matches_sync() -> None:
    path = FIXTURES / "turns-db" / "turns.db"
    parsed = await parse(path, conversation="5cf06c5f")
    assert msgspec.json.encode(parsed) == msgspec.json.encode(load(path, conversation="5cf06c5f"))
    every = [s async for s in sessions(path)]
    assert [s.meta.session_id for s in every] == [s.meta.session_id for s in iter_sessions(path)]


def test_conversations_rejects_line_transcripts(tmp_path: Path) -> None:
    line = tmp_path / "s.jsonl"
    line.write_text(
        '{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-01-01T00:00:00Z",'
        '"message":{"role":"user","content":"hi"}}\n'
    )
    with pytest.raises(UsageError, match="single-session"):
        conversations(line)
    with pytest.raises(UsageError, match="single-session"):
        load(line, conversation="x")
    assert load(line).meta.harness == "claude-code"


def test_zip_without_conversations(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "nothing here")
    with pytest.raises(DetectError, match=r"without conversations\.json"):
        route(path)


def test_keep_raw_cites_the_record() -> None:
    session = load(FIXTURES / "chatgpt" / "constructed-modern.json", keep_raw=True)
    user = next(e for e in session.events if e.kind == "user_message")
    assert user.provenance is not None
    assert user.provenance.raw is not None
    node = json.loads(bytes(user.provenance.raw[0]))
    assert node["id"] == user.id


def test_a_wal_the_writer_checkpoints_away_while_it_is_copied_is_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer closing checkpoints its WAL into the database and deletes it: the reader
    that saw a WAL without ``-shm`` a moment before looks again, and reads the database."""
    import shutil
    import sqlite3

    from agentminutes.pipeline import document_sources

    live = tmp_path / "live"
    live.mkdir()
    writer = sqlite3.connect(live / "x.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE t (n INTEGER)")
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50)])
    writer.commit()
    # The state a reader meets: a database, its WAL with commits, no -shm.
    db = tmp_path / "x.db"
    shutil.copyfile(live / "x.db", db)
    shutil.copyfile(live / "x.db-wal", str(db) + "-wal")
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.close()
    checkpointed = (live / "x.db").read_bytes()

    real_copy = shutil.copyfile
    calls = []

    def copy_while_the_writer_closes(src: str, dst: str) -> str:
        if not calls:  # the writer's close lands between the look and the copy
            db.write_bytes(checkpointed)
            os.remove(str(db) + "-wal")
        calls.append(src)
        return real_copy(src, dst)

    monkeypatch.setattr(shutil, "copyfile", copy_while_the_writer_closes)
    conn = document_sources.connect_readonly(str(db))
    try:
        assert conn.execute("SELECT count(*) FROM t").fetchone() == (50,)
    finally:
        conn.close()
    assert len(calls) == 1  # the retry found no WAL and read the database itself


def _names(folder: Path) -> frozenset[str]:
    return frozenset(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    ("folder", "stands_for"),
    [
        ("cline/1769064454592", "ui_messages.json"),
        ("cline/fineye-ui-only", "ui_messages.json"),
        ("openhands/lab-1.16.0/ce833f814d2045b9be295de049c1df6c", "base_state.json"),
        (
            "opencode/constructed/storage",
            "session/4e8912cc/ses_0b0000000001TreeSession01.json",
        ),
        ("opencode/constructed", None),  # graded POSSIBLE by sniff_folder: not one source
        ("cline", None),
    ],
)
def test_the_file_that_stands_for_a_folder_source(folder: str, stands_for: str | None) -> None:
    from agentminutes.harness.opencode.adapter import OpenCodeAdapter
    from agentminutes.pipeline.document_sources import folder_transcript

    top = FIXTURES / folder
    found = folder_transcript(str(top), _names(top))
    assert found == (str(top / stands_for) if stands_for else None)
    if folder == "opencode/constructed":
        assert OpenCodeAdapter.sniff_folder(_names(top)) > 0
