"""The OpenCode adapter: databases (WAL, read-only, followed live) and JSON storage trees."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agentminutes
from agentminutes.pipeline import document_sources
from agentminutes.pipeline.detect import detect
from conftest import FIXTURES
from follow_helpers import FollowProc, wait_for

OC = FIXTURES / "opencode"
CONSTRUCTED = OC / "constructed" / "opencode.db"
GENUINE = OC / "stunning-memory" / "opencode.db"
STABLE = OC / "dotfiles" / "opencode-stable.db"
TREE = OC / "dotfiles" / "project" / "global" / "storage"
TREE1 = OC / "constructed" / "storage"
PARENT = "ses_0a0000000001ConstructedA1"
CHILD = "ses_0a0000000002ConstructedB2"


def _sessions(path: Path, **kw: Any) -> list[agentminutes.Session]:
    return list(agentminutes.iter_sessions(path, **kw))


def _cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args], capture_output=True, text=True, **kw
    )


# -- detection and routing ----------------------------------------------------------


@pytest.mark.parametrize("path", [CONSTRUCTED, GENUINE, STABLE], ids=lambda p: p.parent.name)
def test_databases_are_detected_certain(path: Path) -> None:
    assert detect(path) == ("opencode", "certain")


def test_trees_and_their_files_are_detected() -> None:
    assert detect(TREE) == ("opencode", "certain")
    assert detect(TREE.parent.parent.parent) == ("opencode", "certain")  # the data folder
    info = next(TREE.glob("session/info/*.json"))
    assert detect(info) == ("opencode", "possible")
    part = next(TREE1.glob("part/*/*.json"))
    assert detect(part) == ("opencode", "possible")


def test_a_file_of_a_tree_converts_its_own_session() -> None:
    for message in TREE.glob("session/message/*/*.json"):
        session = agentminutes.load(message)
        assert session.meta.session_id == message.parent.name
    part = next(TREE1.glob("part/msg_t2/*.json"))
    assert agentminutes.load(part).meta.session_id == "ses_0b0000000001TreeSession01"


def test_wal_database_whose_schema_is_only_in_the_wal_is_detected(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    script = (
        "import sqlite3, shutil, sys, time\n"
        "src, dst = sys.argv[1], sys.argv[2]\n"
        "c = sqlite3.connect(dst)\n"
        "c.execute('pragma journal_mode=wal')\n"
        "c.execute('pragma wal_autocheckpoint=0')\n"
        "s = sqlite3.connect(src)\n"
        "for (sql,) in s.execute(\"select sql from sqlite_master where type='table'\"):\n"
        "    c.execute(sql)\n"
        "c.commit()\n"
        "print('ready', flush=True)\n"
        "sys.stdin.readline()\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, str(CONSTRUCTED), str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as writer:
        assert writer.stdout is not None
        assert writer.stdin is not None
        try:
            assert writer.stdout.readline().strip() == "ready"
            assert b"CREATE TABLE `part`" not in db.read_bytes()[:65536]  # only in the -wal
            assert detect(db) == ("opencode", "certain")
        finally:
            writer.stdin.write("\n")
            writer.stdin.flush()


# -- mapping ---------------------------------------------------------------------------


def test_constructed_database_maps_every_part_type() -> None:
    parent, child = _sessions(CONSTRUCTED)
    assert parent.meta.session_id == PARENT
    assert (parent.meta.cwd, parent.meta.harness_version) == ("/home/dev/app", "1.3.4")
    assert not parent.meta.is_subagent
    # The subagent session names its parent; its own id is the subagent id.
    assert (child.meta.session_id, child.meta.subagent_id, child.meta.is_subagent) == (
        PARENT,
        CHILD,
        True,
    )
    kinds = [e.kind for e in parent.events]
    assert kinds.count("unknown") == 0
    users = [e.user_message for e in parent.events if e.user_message]
    assert [u.origin for u in users] == ["human", "harness", "human"]
    assert users[0].content is not None
    assert [b.kind for b in users[0].content] == ["text", "resource"]
    systems = [e.system.subtype for e in parent.events if e.system]
    assert systems == ["agent", "retry", "patch", "compaction", "error"]
    calls = {e.tool_call.name: e.tool_call.kind for e in parent.events if e.tool_call}
    assert calls == {"task": "other", "bash": "execute", "edit": "edit"}
    results = {e.tool_result.tool_name: e.tool_result for e in parent.events if e.tool_result}
    assert results["bash"].is_error
    assert results["bash"].content is not None
    assert results["bash"].content[0].text == "exit status 1"
    assert json.loads(bytes(results["task"].enrichment))["metadata"] == {"sessionId": CHILD}
    thinking = [e for e in parent.events if e.thinking]
    assert thinking[0].message_id == "msg_a1"


def test_usage_cost_and_prompt_totals() -> None:
    parent, _child = _sessions(CONSTRUCTED)
    msgs = [e.assistant_message for e in parent.events if e.assistant_message]
    first = msgs[0].usage
    assert first is not None
    # No total recorded: reasoning (15) is billed as output beside output (40).
    assert (first.input_tokens, first.output_tokens) == (120, 55)
    assert (first.cache_read_input_tokens, first.cache_creation_input_tokens) == (3000, 200)
    assert first.cost == pytest.approx(0.0123)
    totals = parent.totals
    assert totals is not None
    assert totals.cost == pytest.approx(0.0123 + 0.004 + 0)
    assert totals.total_prompt_tokens == (
        totals.input_tokens + totals.cache_read_input_tokens + totals.cache_creation_input_tokens
    )
    out = _cli("stats", "--conversation", CHILD, str(CONSTRUCTED), check=True)
    assert json.loads(out.stdout)["totals"]["cost"] == pytest.approx(0.001)


def test_genuine_database_calls_all_answered() -> None:
    (session,) = _sessions(GENUINE)
    calls = [e.tool_call.tool_call_id for e in session.events if e.tool_call]
    results = [e.tool_result.tool_call_id for e in session.events if e.tool_result]
    assert calls
    assert calls == results
    assert session.report.skipped_records is None
    with contextlib.closing(sqlite3.connect(GENUINE)) as conn, conn:
        (users,) = conn.execute(
            "SELECT COUNT(*) FROM message WHERE json_extract(data, '$.role') = 'user'"
        ).fetchone()
        (replies,) = conn.execute(
            "SELECT COUNT(*) FROM message WHERE json_extract(data, '$.role') = 'assistant'"
        ).fetchone()
    kinds = [e.kind for e in session.events]
    assert kinds.count("user_message") == users
    assert kinds.count("assistant_message") == replies


def test_trees_of_both_layouts() -> None:
    old = _sessions(TREE)
    assert [s.meta.harness_version for s in old] == ["0.5.28", "0.5.28"]
    assert all(s.meta.cwd for s in old)  # from the assistant's path (0.x records no directory)
    (new,) = _sessions(TREE1)
    assert new.meta.cwd == "/home/dev/site"
    assert [e.kind for e in new.events] == [
        "session_meta",
        "user_message",
        "tool_call",
        "tool_result",
        "assistant_message",
    ]


def test_conversation_must_be_chosen_in_a_database_of_several() -> None:
    failed = _cli("convert", str(CONSTRUCTED))
    assert failed.returncode == 1
    assert "holds 2 conversations" in failed.stderr
    assert "Traceback" not in failed.stderr
    chosen = _cli("convert", "--conversation", CHILD, str(CONSTRUCTED), check=True)
    assert json.loads(chosen.stdout)["meta"]["subagent_id"] == CHILD


# -- the database is only read ------------------------------------------------------------


def test_credential_tables_are_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = document_sources.connect_readonly

    def guarded(path: str) -> sqlite3.Connection:
        conn = opened(path)

        def authorize(action: int, table: str | None, *_: Any) -> int:
            if table == "account" and action == sqlite3.SQLITE_READ:
                raise AssertionError("the account table was read")
            return sqlite3.SQLITE_OK

        conn.set_authorizer(authorize)
        return conn

    monkeypatch.setattr(document_sources, "connect_readonly", guarded)
    sessions = _sessions(CONSTRUCTED, keep_raw=True)
    assert len(sessions) == 2
    assert agentminutes.conversations(CONSTRUCTED)
    text = b"".join(msgspec.json.encode(e) for s in sessions for e in s.events)
    assert b"FIXTURE-TOKEN" not in text


def _tree_digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def test_reading_writes_nothing_beside_the_database(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(CONSTRUCTED, db)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("pragma journal_mode=wal")  # WAL, as OpenCode writes it; closed: no -wal left
    before = _tree_digest(tmp_path)
    assert sorted(before) == ["opencode.db"]
    assert len(_sessions(db)) == 2
    assert detect(db) == ("opencode", "certain")
    _cli("sessions", "--harness", "opencode", "--root", str(tmp_path), check=True)
    assert _tree_digest(tmp_path) == before


def test_reading_does_not_block_a_running_writer(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(CONSTRUCTED, db)
    script = (
        "import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], timeout=0)\n"  # a lock held by a reader fails at once
        "c.execute('pragma journal_mode=wal')\n"
        "end = time.monotonic() + 2.0\n"
        "n = 0\n"
        "while time.monotonic() < end:\n"
        "    c.execute(\"insert into part values (?, 'msg_a3', ?, 1, 1, ?)\",\n"
        "              ('prt_w%06d' % n, 'ses_0a0000000001ConstructedA1',\n"
        '               \'{"type":"step-start"}\'))\n'
        "    c.commit(); n += 1\n"
        "print(n)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, str(db)], stdout=subprocess.PIPE, text=True
    ) as writer:
        wait_for(lambda: (tmp_path / "opencode.db-wal").exists(), what="the writer's WAL")
        reads = 0
        while writer.poll() is None:
            assert len(_sessions(db)) == 2
            reads += 1
        out, _ = writer.communicate()
    assert writer.returncode == 0, "the writer met a lock"
    assert int(out) > 10
    assert reads >= 2
    # Every committed row is seen: the WAL's rows count.
    (parent, _child) = _sessions(db)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        (n,) = conn.execute("SELECT COUNT(*) FROM part WHERE id LIKE 'prt_w%'").fetchone()
    assert n == int(out)
    assert parent.events


# -- follow -------------------------------------------------------------------------------------

_WRITER = Path(__file__).parent.parent / "opencode_writer.py"


def _converted(db: Path) -> dict[str, list[Any]]:
    """What ``convert --format jsonl`` writes for each session of *db*, by session id."""
    want = {}
    for session in _sessions(db):
        sid = session.meta.subagent_id or session.meta.session_id
        proc = _cli("convert", "--format", "jsonl", "--conversation", sid, str(db), check=True)
        want[sid] = [json.loads(x) for x in proc.stdout.splitlines()]
    return want


@pytest.mark.parametrize("source", [GENUINE, CONSTRUCTED], ids=["genuine", "constructed"])
def test_follow_a_database_a_writer_process_keeps_inserting_into(
    tmp_path: Path, source: Path
) -> None:
    db = tmp_path / "opencode.db"
    with subprocess.Popen(
        [sys.executable, str(_WRITER), str(source), str(db)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as writer:
        assert writer.stdout is not None
        assert writer.stdin is not None
        assert writer.stdout.readline().strip() == "half"
        f = FollowProc(db)
        try:
            wait_for(lambda: len(f.lines) > 3, what="events of the first commits")
            shown = len(f.lines)
            writer.stdin.write("\n")
            writer.stdin.flush()
            wait_for(lambda: len(f.lines) > shown, what="events of the commits that follow")
            assert writer.stdout.readline().strip() == "done"
            f.wait_quiet(0.5)
            assert f.stop(signal.SIGINT) == 0
        finally:
            f.kill()
            writer.stdin.write("\n")
            writer.stdin.flush()
    got: dict[str, list[Any]] = {}
    for env in f.events:
        got.setdefault(env["transcript"], []).append(env["event"])
    assert got == {f"{db}#{sid}": events for sid, events in _converted(db).items()}
    assert "Traceback" not in f.stderr
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == ["opencode.db", "opencode.db-shm", "opencode.db-wal"] or leftovers == [
        "opencode.db"
    ]


def test_follow_started_before_the_database_exists_reads_it_from_its_first_commit(
    tmp_path: Path,
) -> None:
    """``follow --harness opencode DB`` beside an agent that has not created its database yet."""
    db = tmp_path / "opencode.db"
    f = FollowProc("--harness", "opencode", db)
    try:
        f.wait_quiet(0.5)  # waiting for the database, not an error
        assert f.proc.poll() is None, f.stderr
        with subprocess.Popen(
            [sys.executable, str(_WRITER), str(GENUINE), str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as writer:
            assert writer.stdout is not None
            assert writer.stdin is not None
            assert writer.stdout.readline().strip() == "half"
            wait_for(lambda: len(f.lines) > 3, what="events of the first commits")
            shown = len(f.lines)
            writer.stdin.write("\n")
            writer.stdin.flush()
            assert writer.stdout.readline().strip() == "done"
            wait_for(lambda: len(f.lines) > shown, what="events of the commits that follow")
            f.wait_quiet(0.5)
            writer.stdin.write("\n")
            writer.stdin.flush()
        assert f.stop(signal.SIGINT) == 0
    finally:
        f.kill()
    got: dict[str, list[Any]] = {}
    for env in f.events:
        got.setdefault(env["transcript"], []).append(env["event"])
    assert got == {f"{db}#{sid}": events for sid, events in _converted(db).items()}
    assert "Traceback" not in f.stderr


def test_follow_started_on_a_database_still_being_made_reads_it_once_it_is(
    tmp_path: Path,
) -> None:
    """The agent has made its database file (WAL, no table yet) when the follow starts: the
    follow waits for the tables instead of failing on them (an internal error before), and
    reads every commit once they are there."""
    from opencode_writer import replay

    db = tmp_path / "opencode.db"
    with contextlib.closing(sqlite3.connect(db)) as made:
        made.execute("pragma journal_mode=wal")  # the file and its header, not one table
        f = FollowProc("--harness", "opencode", db)
        try:
            f.wait_quiet(0.5)
            assert f.proc.poll() is None, f.stderr
            for _ in replay(str(GENUINE), str(db)):
                pass
            assert f.stop(signal.SIGINT) == 0, f.stderr
        finally:
            f.kill()
    got: dict[str, list[Any]] = {}
    for env in f.events:
        got.setdefault(env["transcript"], []).append(env["event"])
    assert got == {f"{db}#{sid}": events for sid, events in _converted(db).items()}
    assert got


def test_follow_of_an_empty_file_that_stays_empty_is_an_error(tmp_path: Path) -> None:
    empty = tmp_path / "opencode.db"
    empty.write_bytes(b"")
    f = FollowProc("--harness", "opencode", empty)
    try:
        f.wait_quiet(0.3)
        assert f.stop(signal.SIGINT) == 1
    finally:
        f.kill()
    assert f.stderr.strip().splitlines()[-1] == f"Error: {empty}: empty, no opencode database"


class _CommitsBetweenStatements:
    """A read-only connection whose writer commits before each statement it runs.

    The worst interleaving for a reader: a poll reads its tables while the
    writer goes on, so whatever one statement saw, the next sees more.
    """

    def __init__(self, path: Path, writer: Iterator[str]) -> None:
        self.path = path
        self.conn: sqlite3.Connection | None = None
        self.writer = writer
        self.writing = True
        self.statements = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        # From one to seven commits between two statements, in a fixed pattern.
        self.statements += 1
        for _ in range(self.statements % 7 + 1):
            if self.writing and next(self.writer, None) is None:
                self.writing = False
        assert self.conn is not None
        return self.conn.execute(sql, *args)

    def open(self) -> _CommitsBetweenStatements:
        """A new read-only connection, as each poll opens one."""
        assert self.conn is None
        self.conn = document_sources.connect_readonly(str(self.path))
        return self

    def close(self) -> None:
        assert self.conn is not None
        self.conn.close()
        self.conn = None


@pytest.mark.parametrize("source", [GENUINE, CONSTRUCTED], ids=["genuine", "constructed"])
def test_a_poll_reads_one_snapshot_while_the_writer_commits_between_its_statements(
    tmp_path: Path, source: Path
) -> None:
    from agentminutes.harness import ParseOptions
    from agentminutes.harness.opencode import DatabaseTail, OpenCodeAdapter
    from opencode_writer import replay

    db = tmp_path / "opencode.db"
    writer = replay(str(source), str(db))
    next(writer)  # the schema is there before a reader comes
    conn = _CommitsBetweenStatements(db, writer)
    tail = DatabaseTail(OpenCodeAdapter(ParseOptions()), conn.open, str(db))
    got: dict[str, list[Any]] = {}
    polls = 0
    while conn.writing or polls < 2:  # two more polls once the writer is done
        polls = polls + 1 if not conn.writing else 0
        for sid, events in tail.poll():
            got.setdefault(sid, []).extend(json.loads(msgspec.json.encode(e)) for e in events)
    for sid, events in tail.flush():
        got.setdefault(sid, []).extend(json.loads(msgspec.json.encode(e)) for e in events)
    assert {sid: events for sid, events in got.items() if events} == _converted(db)


@pytest.mark.parametrize(
    "source",
    [GENUINE, CONSTRUCTED, STABLE],
    ids=["genuine", "constructed", "dotfiles"],
)
def test_a_poll_after_every_commit_writes_what_convert_writes(tmp_path: Path, source: Path) -> None:
    """Every state the writer leaves is polled once: a user message's text part still
    cut short when it is read, and rewritten after; an aborted reply inserted with its
    error before its completion time. Nothing shown may be a state later replaced."""
    from agentminutes.harness import ParseOptions
    from agentminutes.harness.opencode import DatabaseTail, OpenCodeAdapter
    from opencode_writer import replay

    db = tmp_path / "opencode.db"
    writer = replay(str(source), str(db))
    next(writer)
    tail = DatabaseTail(
        OpenCodeAdapter(ParseOptions()), lambda: document_sources.connect_readonly(str(db)), str(db)
    )
    got: dict[str, list[Any]] = {}
    for _ in writer:
        for sid, events in tail.poll():
            got.setdefault(sid, []).extend(json.loads(msgspec.json.encode(e)) for e in events)
    for sid, events in tail.poll() + tail.flush():
        got.setdefault(sid, []).extend(json.loads(msgspec.json.encode(e)) for e in events)
    assert {sid: events for sid, events in got.items() if events} == _converted(db)


# -- sessions ----------------------------------------------------------------------------------


def test_sessions_lists_every_session_in_a_home_built_from_fixtures(tmp_path: Path) -> None:
    data = tmp_path / "home" / ".local" / "share"
    (data / "opencode").mkdir(parents=True)
    (data / "kilo").mkdir()
    shutil.copyfile(STABLE, data / "opencode" / "opencode-stable.db")
    shutil.copyfile(CONSTRUCTED, data / "opencode" / "opencode.db")
    shutil.copytree(OC / "dotfiles" / "project", data / "opencode" / "project")
    shutil.copytree(TREE1, data / "opencode" / "storage")
    shutil.copyfile(GENUINE, data / "kilo" / "kilo.db")
    (data / "opencode" / "auth.json").write_text('{"never": "opened"}')
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    env.pop("XDG_DATA_HOME", None)
    listed = _cli("sessions", "--harness", "opencode", "--format", "jsonl", env=env, check=True)
    refs = [json.loads(x) for x in listed.stdout.splitlines()]
    ids = sorted(r["meta"].get("subagent_id") or r["meta"]["session_id"] for r in refs)
    expected = sorted(
        [c.id for c in agentminutes.conversations(CONSTRUCTED)]
        + [c.id for c in agentminutes.conversations(STABLE)]
        + [c.id for c in agentminutes.conversations(GENUINE)]
        + [c.id for c in agentminutes.conversations(TREE)]
        + [c.id for c in agentminutes.conversations(TREE1)]
    )
    assert ids == expected
    assert "1 not an OpenCode session store" in listed.stderr  # auth.json, skipped by name
    child = next(r for r in refs if r["meta"].get("subagent_id") == CHILD)
    assert child["meta"]["is_subagent"]
    assert child["path"].endswith("opencode.db")
    tree = [r for r in refs if r["path"].endswith(".json")]
    assert len(tree) == 3
    for ref in tree:  # a listed tree path converts that very session
        assert agentminutes.load(ref["path"]).meta.session_id == ref["meta"]["session_id"]
    rooted = _cli("sessions", "--harness", "opencode", "--root", str(data / "kilo"), check=True)
    assert rooted.stdout.split() == [str(data / "kilo" / "kilo.db")]


def test_rows_of_the_newer_projection_are_counted(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    shutil.copyfile(CONSTRUCTED, db)
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL,"
            " type text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL,"
            " data text NOT NULL, seq integer NOT NULL)"
        )
        for i, kind in enumerate(("user", "assistant")):
            conn.execute(
                "INSERT INTO session_message VALUES (?, ?, ?, ?, ?, '{}', ?)",
                (f"evt_{i}", CHILD, kind, i, i, i),
            )
    child = next(s for s in _sessions(db) if s.meta.subagent_id == CHILD)
    assert child.report.skipped_records == {
        "session_message/assistant": 1,
        "session_message/user": 1,
    }
