"""The Cline adapter: task folders with the API history, with UI messages alone, followed live."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agentminutes
from agentminutes.pipeline.detect import detect
from conftest import FIXTURES
from follow_helpers import FollowProc, wait_for

CL = FIXTURES / "cline"
TASK = CL / "1769064454592"
UI_ONLY = CL / "fineye-ui-only"
XML = CL / "constructed" / "1767000000000"


def _load(path: Path) -> agentminutes.Session:
    return agentminutes.load(path)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _cli(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args], capture_output=True, text=True, **kw
    )


# -- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize("task", [TASK, UI_ONLY, XML], ids=lambda p: p.name)
def test_folders_and_their_documents_are_detected_certain(task: Path) -> None:
    assert detect(task) == ("cline", "certain")
    for member in task.glob("*.json"):
        assert detect(member) == ("cline", "certain"), member.name


def test_a_document_converts_its_whole_task() -> None:
    whole = _load(TASK)
    for member in TASK.glob("*.json"):
        assert _load(member).events == whole.events, member.name


# -- with the API history -------------------------------------------------------------------


def test_api_history_maps_messages_tools_and_usage() -> None:
    session = _load(TASK)
    meta = session.meta
    assert (meta.session_id, meta.harness_version) == ("1769064454592", "3.51.0")
    assert meta.cwd == "/workspaces/Online-Card-Architecture"
    api = _json(TASK / "api_conversation_history.json")
    replies = [m for m in api if m["role"] == "assistant"]
    kinds = [e.kind for e in session.events]
    assert kinds.count("assistant_message") == len(replies)
    uses = [b["id"] for m in replies for b in m["content"] if b["type"] == "tool_use"]
    calls = [e.tool_call.tool_call_id for e in session.events if e.tool_call]
    assert calls == uses
    # Every call but the last (the history ends on the model's turn) has its result.
    results = {e.tool_result.tool_call_id for e in session.events if e.tool_result}
    assert set(calls[:-1]) <= results
    assert session.report.orphan_tool_results == 0
    human = [e for e in session.events if e.user_message and e.user_message.origin == "human"]
    assert human
    assert human[0].user_message is not None
    assert human[0].user_message.content is not None
    assert human[0].user_message.content[0].text.startswith("<task>")
    # Usage and cost are those of the API requests the UI recorded.
    ui = _json(TASK / "ui_messages.json")
    requests = [json.loads(m["text"]) for m in ui if m.get("say") == "api_req_started"]
    totals = session.totals
    assert totals is not None
    assert totals.cost == pytest.approx(sum(r["cost"] for r in requests))
    assert totals.output_tokens == sum(r["tokensOut"] for r in requests)
    assert totals.cache_creation_input_tokens == sum(r["cacheWrites"] for r in requests)
    skipped = session.report.skipped_records or {}
    assert skipped["ui/say/api_req_started"] == len(requests)
    assert skipped["task_metadata"] == 1


def test_xml_tool_calls_split_results_refusals_and_retries() -> None:
    session = _load(XML)
    calls = [(e.tool_call.name, e.tool_call.kind) for e in session.events if e.tool_call]
    assert calls == [
        ("read_file", "read"),
        ("replace_in_file", "edit"),
        ("execute_command", "execute"),
    ]
    first = next(e for e in session.events if e.tool_call)
    assert first.tool_call is not None
    assert json.loads(bytes(first.tool_call.input)) == {"path": "main.py"}
    results = [e.tool_result for e in session.events if e.tool_result]
    assert [r.is_error for r in results] == [False, True, False]
    assert results[0].content is not None
    # The header block and the content block after it are one result.
    assert [b.text for b in results[0].content][1] == "def foo():\n    return 1\n"
    assert results[2].content is not None
    assert results[2].content[0].text == "main.py:1:def foo():"
    feedback = [
        e.user_message.content[0].text
        for e in session.events
        if e.user_message and e.user_message.origin == "human" and e.user_message.content
    ]
    assert feedback[1].startswith("<feedback>")
    assert [e.system.subtype for e in session.events if e.system] == ["ui/api_req_retried"]
    assert session.meta.cwd == "/home/dev/tool"
    assert session.meta.harness_version == "3.17.9"


# -- with UI messages alone ---------------------------------------------------------------------


def test_ui_messages_alone_are_the_session() -> None:
    session = _load(UI_ONLY)
    ui = _json(UI_ONLY / "ui_messages.json")
    kinds = [e.kind for e in session.events]
    requests = [m for m in ui if m.get("say") == "api_req_started"]
    assert kinds.count("assistant_message") == len(requests)
    feedback = [m for m in ui if m.get("say") == "user_feedback"]
    assert kinds.count("user_message") == 1 + len(feedback)
    assert kinds.count("thinking") == sum(1 for m in ui if m.get("say") == "reasoning")
    tools = [m for m in ui if m.get("say") == "tool" or m.get("ask") == "tool"]
    assert kinds.count("tool_call") == len(tools)
    assert "unknown" not in kinds
    totals = session.totals
    assert totals is not None
    assert totals.cost == pytest.approx(
        sum(json.loads(m["text"]).get("cost") or 0 for m in requests)
    )


def test_a_folder_without_either_history_is_an_error(tmp_path: Path) -> None:
    task = tmp_path / "1760000000000"
    task.mkdir()
    shutil.copyfile(TASK / "task_metadata.json", task / "task_metadata.json")
    failed = _cli("convert", str(task / "task_metadata.json"))
    assert failed.returncode == 1
    assert "no api_conversation_history.json or ui_messages.json" in failed.stderr
    assert "Traceback" not in failed.stderr


# -- follow ----------------------------------------------------------------------------------

_SAVER = r"""
import json, os, sys, time
src, dst = sys.argv[1], sys.argv[2]
api = json.load(open(os.path.join(src, "api_conversation_history.json")))
ui = json.load(open(os.path.join(src, "ui_messages.json")))
os.makedirs(dst, exist_ok=True)

def save(name, value):
    # Cline writes each document whole: a temporary file renamed over the old one.
    tmp = os.path.join(dst, name + ".tmp")
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, os.path.join(dst, name))

for n in range(2, len(api) + 1, 2):
    save("api_conversation_history.json", api[:n])
    save("ui_messages.json", [m for m in ui if m.get("conversationHistoryIndex", -1) < n - 1])
    if n == 8:  # half-way: wait until the follower has shown what is there
        print("half", flush=True)
        sys.stdin.readline()
    time.sleep(0.1)
save("ui_messages.json", ui)
print("done", flush=True)
"""


def test_follow_a_task_folder_rewritten_whole(tmp_path: Path) -> None:
    task = tmp_path / "1769064454592"
    with subprocess.Popen(
        [sys.executable, "-c", _SAVER, str(TASK), str(task)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as saver:
        assert saver.stdout is not None
        assert saver.stdin is not None
        assert saver.stdout.readline().strip() == "half"
        f = FollowProc(task)
        try:
            wait_for(lambda: len(f.lines) > 3, what="events of the first saves")
            shown = len(f.lines)
            saver.stdin.write("\n")
            saver.stdin.flush()
            assert saver.stdout.readline().strip() == "done"
            wait_for(lambda: len(f.lines) > shown, what="events of the later saves")
            f.wait_quiet(0.5)
            assert f.stop(signal.SIGINT) == 0
        finally:
            f.kill()
    # Record numbers shift as the API history grows; everything else is convert's.
    got = [{k: v for k, v in env["event"].items() if k != "provenance"} for env in f.events]
    done = _cli("convert", "--format", "jsonl", str(task), check=True)
    want = [
        {k: v for k, v in json.loads(x).items() if k != "provenance"}
        for x in done.stdout.splitlines()
    ]
    assert got == want
    assert {env["transcript"] for env in f.events} == {str(task)}


# -- sessions --------------------------------------------------------------------------------


def test_sessions_lists_every_task_in_a_home_built_from_fixtures(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cli_tasks = home / ".cline" / "data" / "tasks"
    ext = home / ".config" / "Code" / "User" / "globalStorage"
    roo = ext / "rooveterinaryinc.roo-cline" / "tasks"
    for parent, task in ((cli_tasks, TASK), (cli_tasks, XML), (roo, UI_ONLY)):
        shutil.copytree(task, parent / task.name)
    (cli_tasks / TASK.name / "context_history.json").write_text("[]")
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CONFIG_HOME", None)
    listed = _cli("sessions", "--harness", "cline", env=env, check=True)
    assert sorted(listed.stdout.split()) == sorted(
        [str(cli_tasks / TASK.name), str(cli_tasks / XML.name), str(roo / UI_ONLY.name)]
    )
    assert "1 not a task document" in listed.stderr
    rooted = _cli(
        "sessions", "--harness", "cline", "--root", str(cli_tasks), "--format", "jsonl", check=True
    )
    refs = [json.loads(x) for x in rooted.stdout.splitlines()]
    assert [r["meta"]["session_id"] for r in refs] == sorted([TASK.name, XML.name])
    for ref in refs:  # a listed path converts that task
        assert _load(Path(ref["path"])).meta.session_id == ref["meta"]["session_id"]


def test_a_3x_session_document_is_a_session_of_its_own(tmp_path: Path) -> None:
    lab = FIXTURES / "lab" / "cline" / "3.0.65" / "text" / "home" / ".cline" / "data"
    sessions = tmp_path / "sessions"
    shutil.copytree(lab / "sessions", sessions)
    (document,) = sessions.glob("*/*.messages.json")
    (document.parent / "notes.txt").write_text("not a session\n")
    beside = [p for p in document.parent.iterdir() if p != document]
    scan = agentminutes.scan("cline", sessions)
    (ref,) = list(scan)
    assert ref.path == str(document)
    assert ref.meta.session_id == document.parent.name
    assert ref.size_bytes == document.stat().st_size
    assert ref.started_at
    assert scan.skipped == {"not a session document": len(beside)}
