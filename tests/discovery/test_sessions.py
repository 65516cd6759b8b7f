"""Discovery (``agentminutes sessions``, ``scan()``, ``locate()``) against the reference's output.

The home of ``fixtures/sessions/home.tsv`` holds each harness's folders, laid
out from the fixtures; ``fixtures/sessions/golden.json`` is what the reference
CLI (agentminutes 0.8.0) printed there (scripts/make_session_goldens.py). For
every session the reference lists, ours is equal as a JSON value (timestamps
as instants) and in the same order; ours lists more only where the reference
could not read a file, plus the sources it does not search (Codex
``archived_sessions/``, flat Copilot ``<id>.jsonl``, Gemini CLI and pi).
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

import agentminutes
from agentminutes.discovery.sessions import Scan, ScanProgress
from agentminutes.errors import ParseError, ScanError, SourceError, UsageError
from conftest import FIXTURES, canon
from session_home import GOLDEN, build_home

GOLDENS: dict[str, dict[str, Any]] = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]


def _jsonl(args: list[str]) -> bool:
    return "--format" in args and args[args.index("--format") + 1] == "jsonl"


#: The sessions cases compared record by record (paths and json formats: the CLI tests).
SESSION_CASES = sorted(
    k
    for k, v in GOLDENS.items()
    if v["args"][0] == "sessions" and (_jsonl(v["args"]) or not v["stdout"])
)

#: Sources we search that the reference does not.
_OURS_ONLY = re.compile(
    r"/\.codex/archived_sessions/|/\.copilot/session-state/[^/]+\.jsonl$|/\.gemini/tmp/|/\.pi/"
)
_REF_ERROR = re.compile(r"^agentminutes: [\w-]+: (/.+?\.jsonl): ", re.M)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_home(tmp_path_factory.mktemp("sessions") / "home")


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def _subst(text: str, home: Path) -> str:
    return text.replace("$HOME", str(home))


def _kwargs(args: list[str], home: Path) -> dict[str, Any]:
    """``sessions`` flags as :func:`agentminutes.scan` keywords."""
    names = {
        "--harness": "harness",
        "--root": "root",
        "--cwd": "cwd",
        "--session-id": "session_id",
        "--since": "since",
        "--until": "until",
    }
    out: dict[str, Any] = {}
    it = iter(args[1:])
    for flag in it:
        value = next(it)
        if flag in names:
            out[names[flag]] = _subst(value, home)
    return out


def _records(stdout: str, home: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _subst(stdout, home).splitlines()]


def _check(ours: list[dict[str, Any]], case: dict[str, Any], home: Path) -> None:
    ref = _records(case["stdout"], home)
    unreadable = set(_REF_ERROR.findall(_subst(case["stderr"], home)))
    by_path = {r["path"]: r for r in ours}
    for r in ref:
        assert r["path"] in by_path, f"not listed: {r['path']}"
        assert canon(by_path[r["path"]]) == canon(r), r["path"]
    listed = {r["path"] for r in ref}
    extra = [o["path"] for o in ours if o["path"] not in listed]
    for path in extra:
        assert path in unreadable or _OURS_ONLY.search(path), f"listed beyond the reference: {path}"
    assert [p for p in (o["path"] for o in ours) if p in listed] == [r["path"] for r in ref]


def _lookup(args: list[str]) -> bool:
    """A session looked up by id: no folder walk, so nothing to skip."""
    return "--session-id" in args and "--harness" in args


def _summary(stderr: str) -> dict[str, int]:
    last = stderr.strip().splitlines()[-1]
    m = re.search(
        r"(\d+) sessions?, (\d+) filtered out(?: \((\d+) without recorded cwd\))?, "
        r"(\d+) skipped files?, (\d+) errors?",
        last,
    )
    assert m is not None, last
    keys = ("sessions", "filtered", "no_cwd", "skipped", "errors")
    return {k: int(v or 0) for k, v in zip(keys, m.groups(), strict=True)}


@pytest.mark.parametrize("name", SESSION_CASES)
def test_records_equal_the_references(name: str, home: Path) -> None:
    case = GOLDENS[name]
    args = case["args"]
    found = agentminutes.scan(**_kwargs(args, home), env=_env(home))
    ours = [json.loads(msgspec.json.encode(r)) for r in found]
    _check(ours, case, home)
    ref = _summary(case["stderr"])
    harness = _kwargs(case["args"], home).get("harness")
    if harness in ("claude-code", "codex", "antigravity"):
        # Same layouts, same accounting; ours reads some files the reference cannot, and
        # counts a file with no conversation (the home's empty.jsonl) as skipped, where
        # the reference calls it an error.
        empty = found.skipped.get("no conversation", 0)
        assert empty == (1 if harness == "claude-code" and not _lookup(args) else 0)
        assert found.skipped_files - empty == ref["skipped"]
        assert len(found.errors) + empty <= ref["errors"]
    if "cwd" in _kwargs(case["args"], home) and harness:
        assert found.no_cwd >= ref["no_cwd"]


def test_what_we_list_beyond_the_reference(home: Path) -> None:
    found = agentminutes.scan(env=_env(home))
    ours = {r.path for r in found}
    ref = {r["path"] for r in _records(GOLDENS["all"]["stdout"], home)}
    extra = sorted(os.path.relpath(p, home) for p in ours - ref)
    assert extra == [
        ".claude/projects/-ccl/07f2e15c-a38b-454b-9148-60edc06de401.jsonl",  # summary first
        ".codex/archived_sessions/rollout-2025-12-15T14-05-30-019b221d-b310-7143-9b06-d60f82aef7f2.jsonl",
        ".codex/sessions/2025/08/26/rollout-2025-08-26T03-00-07-81037e80-2462-435b-bb4c-b4437eae0f88.jsonl",
        ".copilot/session-state/27d7ef99-f7c7-43eb-8599-cb469623c8f7.jsonl",
        ".gemini/tmp/ticketing-vc/chats/session-2026-04-25T08-23-e435870b.jsonl",
        ".pi/agent/sessions/--tmp-as-agent-fixture-project--/2026-05-12T01-02-27-657Z_019e19b4-eb48-746a-aa6b-8dfcfa37954b.jsonl",
    ]
    # The two files no adapter reads; the order of harnesses is the registry's. The
    # empty one holds no conversation: skipped, not an error.
    assert [e.path for e in found.errors] == [
        str(home / ".claude/projects/-x-proj/deadbeef-0000-4000-8000-000000000000.jsonl"),
        str(home / ".codex/sessions/2026/06/19/rollout-2026-06-19T11-00-00-bad.jsonl"),
    ]
    assert found.skipped["no conversation"] == 1
    harnesses = [r.meta.harness for r in agentminutes.scan(env=_env(home))]
    assert harnesses == sorted(
        harnesses, key=["antigravity", "claude-code", "codex", "copilot", "gemini-cli", "pi"].index
    )


# -- the command line ----------------------------------------------------------------------------


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    keep = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    keep.update(HOME=str(home), TZ="UTC", **env)
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env=keep,
        cwd=home,
        timeout=60,
        check=False,
    )


def test_cli_jsonl_and_summary(home: Path) -> None:
    case = GOLDENS["claude"]
    p = _cli(home, *[_subst(a, home) for a in case["args"]])
    _check(_records(p.stdout, home), case, home)
    assert p.returncode == 1  # the unreadable file
    ours, ref = _summary(p.stderr), _summary(case["stderr"])
    # The empty file: a counted skip here, an error to the reference.
    assert (ours["skipped"], ours["filtered"]) == (ref["skipped"] + 1, ref["filtered"])
    assert ours["sessions"] == ref["sessions"] + 1  # 07f2e15c, which the reference rejects
    *errors, why, _ = p.stderr.splitlines()
    assert why == (
        "agentminutes: skipped files: 9 not a subagent transcript, 1 no conversation, "
        "1 not a project directory, 1 not a session transcript, 1 session directory sidecar"
    )
    # The harness named once, not once by the scan and again by the parser.
    assert errors == [
        f"agentminutes: claude-code: {home}/.claude/projects/-x-proj/deadbeef-0000-4000-8000-000000000000.jsonl: "
        "invalid JSON: JSON is malformed: invalid character (byte 0) at line 1",
    ]


def test_cli_paths_format(home: Path) -> None:
    case = GOLDENS["all-paths"]
    p = _cli(home, "sessions")
    ref = _subst(case["stdout"], home).splitlines()
    ours = p.stdout.splitlines()
    assert [line for line in ours if line in ref] == ref
    assert all(
        _OURS_ONLY.search(line) or "07f2e15c" in line or "81037e80" in line
        for line in ours
        if line not in ref
    )


def test_cli_json_format(home: Path) -> None:
    case = GOLDENS["all-json"]
    p = _cli(home, "sessions", "--format", "json", "--harness", "codex")
    ours = json.loads(p.stdout)
    ref = [r for r in json.loads(_subst(case["stdout"], home)) if r["meta"]["harness"] == "codex"]
    assert canon([o for o in ours if o["path"] in {r["path"] for r in ref}]) == canon(ref)
    assert p.stdout.startswith('[\n  {\n    "meta": {\n')
    empty = _cli(
        home, "sessions", "--format", "json", "--harness", "claude-code", "--session-id", "nope"
    )
    assert (empty.stdout, empty.returncode) == ("[]\n", 0)
    assert empty.stderr == "agentminutes: 0 sessions, 0 filtered out, 0 skipped files, 0 errors\n"


def test_cli_usage_errors(home: Path, tmp_path: Path) -> None:
    def err(*args: str) -> tuple[int, str]:
        p = _cli(home, "sessions", *args)
        return p.returncode, p.stderr

    usage = "Usage: agentminutes sessions [OPTIONS]  (see agentminutes sessions --help)\n"
    assert err("--root", "/x") == (2, "Error: --root needs --harness\n" + usage)
    want = "want a time: RFC 3339 (2026-01-31T09:00:00Z) or a day (YYYY-MM-DD)"
    assert err("--since", "2026/07/01") == (2, f'Error: --since "2026/07/01": {want}\n' + usage)
    assert err("--until", "2026-07-01T12:00:00") == (
        2,
        f'Error: --until "2026-07-01T12:00:00": {want}\n' + usage,
    )
    code, text = err("--harness", "nope")
    assert code == 2
    assert text.startswith('Error: --harness "nope": want a harness: aider, amp, antigravity, ')
    assert err("--harness", "codex", "--format", "xml") == (
        2,
        'Error: --format "xml": want one of paths, json, jsonl, table\n' + usage,
    )
    assert err("--harness", "codex", "--root", str(tmp_path / "nonexist")) == (
        1,
        f"Error: stat {tmp_path}/nonexist: no such file or directory\n",
    )
    code, text = err("--harness", "claude-code", "--root", str(FIXTURES / "README.md"))
    assert code == 1
    assert f"claude-code: {FIXTURES}/README.md: open {FIXTURES}/README.md: not a directory" in text
    assert err("extra") == (2, 'Error: unexpected argument "extra"\n' + usage)


def test_an_empty_home_says_no_harness_is_there(tmp_path: Path) -> None:
    p = _cli(tmp_path, "sessions", "--format", "json")
    assert (p.returncode, p.stdout) == (0, "[]\n")
    # Missing folders are no skipped files; with none of them there, one line says so.
    assert p.stderr == (
        "agentminutes: no transcripts folder of any harness here (amp, antigravity, claude-code, "
        "codex, continue-cli, copilot, cursor, droid, gemini-cli, kimi, pi, qwen-code, cline, "
        "crush, goose, hermes, opencode, openhands); --harness NAME --root DIR reads another folder\n"
        "agentminutes: 0 sessions, 0 filtered out, 0 skipped files, 0 errors\n"
    )
    # A home with one harness's folder says nothing of the others.
    (tmp_path / ".codex" / "sessions").mkdir(parents=True)
    p = _cli(tmp_path, "sessions")
    assert (p.returncode, p.stderr) == (
        0,
        "agentminutes: 0 sessions, 0 filtered out, 0 skipped files, 0 errors\n",
    )
    one = _cli(tmp_path, "sessions", "--harness", "codex")
    assert one.stderr == "agentminutes: 0 sessions, 0 filtered out, 0 skipped files, 0 errors\n"


# -- relocation ------------------------------------------------------------------------------------


def test_claude_config_dirs_are_added_up(home: Path, tmp_path: Path) -> None:
    default = [r.path for r in agentminutes.scan("claude-code", env=_env(home))]
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    (a / "projects").symlink_to(home / ".claude" / "projects")
    b.mkdir()
    env = _env(tmp_path, CLAUDE_CONFIG_DIR=f"{a}, {b}")
    relocated = [r.path for r in agentminutes.scan("claude-code", env=env)]
    assert relocated == [p.replace(str(home / ".claude"), str(a)) for p in default]


@pytest.mark.parametrize(
    ("variable", "link", "under"),
    [
        ("CODEX_HOME", "codex", ".codex"),
        ("COPILOT_HOME", "copilot", ".copilot"),
        ("PI_CODING_AGENT_DIR", "pi", ".pi/agent"),
        ("GEMINI_CLI_HOME", "gemini-cli", "."),
    ],
)
def test_relocation_variables(
    home: Path, tmp_path: Path, variable: str, link: str, under: str
) -> None:
    base = tmp_path / "relocated"
    base.symlink_to(home / under)
    default = [
        os.path.relpath(r.path, home / under) for r in agentminutes.scan(link, env=_env(home))
    ]
    assert default
    moved = agentminutes.scan(link, env=_env(tmp_path / "nohome", **{variable: str(base)}))
    assert [os.path.relpath(r.path, base) for r in moved] == default


# -- the library --------------------------------------------------------------------------------------


def test_scan_is_an_async_iterator_too(home: Path) -> None:
    async def collect() -> list[str]:
        return [r.path async for r in agentminutes.scan("claude-code", env=_env(home))]

    assert anyio.run(collect) == [r.path for r in agentminutes.scan("claude-code", env=_env(home))]


def test_scan_errors_go_on(home: Path) -> None:
    seen: list[ScanError] = []
    found = agentminutes.scan("claude-code", env=_env(home), on_error=seen.append)
    refs = list(found)
    assert len(refs) == 12
    assert len(seen) == 1
    assert seen == found.errors
    assert found.summary() == "12 sessions, 0 filtered out, 13 skipped files, 1 error"
    # .meta.json sidecars, the workflow folder's 7 files, tool-results/, notes.txt, stray.txt,
    # and the empty transcript.
    assert found.skipped == {
        "no conversation": 1,
        "not a subagent transcript": 9,
        "session directory sidecar": 1,
        "not a session transcript": 1,
        "not a project directory": 1,
    }
    nested = agentminutes.scan("claude-code", env=_env(home), all_subagents=True)
    assert len(list(nested)) == 12
    assert nested.skipped["not a subagent transcript"] == 6  # the workflow's agents are not skipped


def test_window_bounds_take_datetimes_and_dates(home: Path) -> None:
    from datetime import UTC, datetime

    dates = agentminutes.scan("claude-code", since="2026-01-10", env=_env(home))
    moments = agentminutes.scan(
        "claude-code", since=datetime(2026, 1, 10, tzinfo=UTC), env=_env(home, TZ="UTC")
    )
    assert [r.path for r in dates] == [r.path for r in moments]
    with pytest.raises(UsageError, match="invalid time"):
        agentminutes.scan("claude-code", until="yesterday")
    with pytest.raises(SourceError, match="no such file or directory"):
        agentminutes.scan("claude-code", home / "nope")


def test_all_subagents_adds_the_nested_workflow_agents(home: Path) -> None:
    sid = "11110000-0000-4000-8000-000000000001"
    plain = agentminutes.locate_sync("claude-code", sid, env=_env(home))
    assert plain is not None
    assert plain.subagent_paths is None
    nested = agentminutes.locate_sync("claude-code", sid, all_subagents=True, env=_env(home))
    assert nested is not None
    assert nested.subagent_paths is not None
    assert [os.path.basename(p) for p in nested.subagent_paths] == [
        "agent-ag000001.jsonl",
        "agent-ag000002.jsonl",
        "agent-ag000003.jsonl",
    ]
    listed = agentminutes.scan("claude-code", session_id=sid, all_subagents=True, env=_env(home))
    assert [r.subagent_paths for r in listed] == [nested.subagent_paths]
    scanned = agentminutes.scan("claude-code", cwd="/repo", all_subagents=True, env=_env(home))
    assert [r.subagent_paths for r in scanned] == [nested.subagent_paths]


def test_locate(home: Path) -> None:
    ef958 = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    ref = agentminutes.locate_sync("claude-code", ef958, env=_env(home))
    assert ref is not None
    assert ref.path == str(home / f".claude/projects/-experiments-worktrees/{ef958}.jsonl")
    assert ref.subagent_paths == [
        str(
            home
            / f".claude/projects/-experiments-worktrees/{ef958}/subagents/agent-a36efb2a1231c41e2.jsonl"
        )
    ]
    assert anyio.run(lambda: agentminutes.locate("claude-code", ef958, env=_env(home))) == ref
    child = agentminutes.locate_sync(
        "codex", "c0000001-0000-7000-8000-000000000001", env=_env(home)
    )
    assert child is not None
    assert child.meta.is_subagent
    archived = agentminutes.locate_sync(
        "codex", "019b221d-b310-7143-9b06-d60f82aef7f2", env=_env(home)
    )
    assert archived is not None
    assert "/archived_sessions/" in archived.path
    assert agentminutes.locate_sync("claude-code", "nope", env=_env(home)) is None
    with pytest.raises(ScanError, match=r'invalid session id "a\*"'):
        agentminutes.locate_sync("claude-code", "a*", env=_env(home))
    with pytest.raises(UsageError):
        agentminutes.locate_sync("nope", ef958)


def test_ambiguous_and_mismatched_ids(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    sid = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
    source = FIXTURES / f"claude-code/ccl/{sid}.jsonl"
    for proj in ("-a", "-b"):
        (root / proj).mkdir(parents=True)
        (root / proj / f"{sid}.jsonl").write_bytes(source.read_bytes())
    with pytest.raises(
        ScanError, match=rf'session "{sid}" is ambiguous under {root}: \[{root}/-a/'
    ):
        agentminutes.locate_sync("claude-code", sid, root=root)
    other = "00000000-0000-4000-8000-000000000000"
    (root / "-a" / f"{other}.jsonl").write_bytes(source.read_bytes())
    with pytest.raises(ScanError, match=f'records session id "{sid}", not "{other}"'):
        agentminutes.locate_sync("claude-code", other, root=root)


def test_document_sources_list_their_conversations(tmp_path: Path) -> None:
    found = agentminutes.scan("chatgpt", FIXTURES / "chatgpt")
    refs = list(found)
    listed = agentminutes.conversations(FIXTURES / "chatgpt" / "conversations.json")
    ids = [r.meta.session_id for r in refs if r.path.endswith("conversations.json")]
    assert ids == [c.id for c in listed]
    assert all(r.meta.harness == "chatgpt" and r.updated_at for r in refs)
    old = agentminutes.scan("chatgpt", FIXTURES / "chatgpt", until="2024-01-01")
    assert {r.path for r in old} == {str(FIXTURES / "chatgpt" / "conversations.json")}
    db = list(agentminutes.scan("turns-db", FIXTURES / "turns-db" / "turns.db"))
    assert len(db) == 2
    with pytest.raises(UsageError, match="no default folder"):
        agentminutes.scan("chatgpt")


def test_gemini_subagent_recordings_join_their_parent(tmp_path: Path) -> None:
    chats = tmp_path / ".gemini" / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    parent = FIXTURES / "gemini-cli/vibe-comparison/session-2026-04-25T08-41-3494a697.jsonl"
    (chats / parent.name).write_bytes(parent.read_bytes())
    sid = json.loads(parent.read_bytes().split(b"\n")[0])["sessionId"]
    sub = chats / sid / "helper.jsonl"
    sub.parent.mkdir()
    header = {"sessionId": "sub-1", "projectHash": "p", "startTime": "2026-04-25T08:42:00Z",
              "lastUpdated": "2026-04-25T08:42:00Z", "kind": "subagent"}  # fmt: skip
    sub.write_text(json.dumps(header) + "\n")
    refs = list(agentminutes.scan("gemini-cli", env={"HOME": str(tmp_path)}))
    assert [r.path for r in refs] == [str(chats / parent.name)]
    assert refs[0].subagent_paths == [str(sub)]


def test_progress_line_only_on_a_terminal_after_a_second() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    progress = ScanProgress(quiet)
    progress._next -= 5
    progress.file("x")
    assert quiet.getvalue() == ""
    tty = Tty()
    fresh = ScanProgress(tty)
    fresh.file("x")
    assert tty.getvalue() == ""  # under a second: nothing
    fresh._next -= 2
    fresh.file("y")
    assert tty.getvalue() == "\ragentminutes: scanning… 2 transcripts read\x1b[K"
    fresh.clear()
    assert tty.getvalue().endswith("\r\x1b[K")


def test_scan_object_counts(home: Path) -> None:
    found = Scan("claude-code", cwd="/Users/admin", env=_env(home))
    assert [r.meta.cwd for r in found] == ["/Users/admin"]
    assert (found.matched, found.no_cwd) == (1, 1)
    assert found.filtered == 11
    assert found.details()[1] == "filtered out: 11 by --cwd (1 without recorded cwd)"
    looked_up = Scan(
        "claude-code",
        session_id="ef958aa1-0e93-49f0-bb71-150f63befcd1",
        until="2025-01-01",
        env=_env(home),
    )
    assert list(looked_up) == []
    assert looked_up.details() == ["filtered out: 1 outside --since/--until"]


@pytest.mark.parametrize(
    "relative",
    [
        # a first record of 21 KB: longer than the first read of a head (8 KiB)
        "codex/exact2026/rollout-2026-05-07T15-38-21-019e0317-0939-7262-9c00-59e4b98f1c8b-first329.jsonl",
        "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
    ],
)
def test_the_identity_read_from_the_head_is_the_converted_session_meta(relative: str) -> None:
    from agentminutes.discovery.layouts.base import read_identity

    path = FIXTURES / relative
    harness = relative.split("/")[0]
    meta, started = read_identity(harness, str(path))
    first = next(agentminutes.iter_events(path))
    assert first.session_meta is not None
    assert meta == first.session_meta
    assert started == first.timestamp


def _first_event_or_error(path: Path) -> object:
    try:
        return next(agentminutes.iter_events(path, harness="claude-code"))
    except Exception as exc:  # the error a conversion gives, to compare with the identity read's
        return type(exc).__name__


def _identity_or_error(path: Path) -> object:
    from agentminutes.discovery.layouts.base import read_identity

    try:
        return read_identity("claude-code", str(path))
    except Exception as exc:
        return type(exc).__name__


def _claude_heads(tmp_path: Path) -> list[Path]:
    """Every Claude Code fixture, and real records arranged as heads the envelope path must read."""
    fixtures = sorted((FIXTURES / "claude-code").rglob("*.jsonl"))
    lines = fixtures[0].read_bytes().splitlines()
    skipped = b'{"type":"queue-operation","operation":"enqueue","content":"%s","sessionId":"s"}'
    heads = {
        "no-newline": b"\n".join(lines[:3]),
        "crlf": b"\r\n".join(lines[:6]) + b"\r\n",
        "bom": b"\xef\xbb\xbf" + b"\n".join(lines[:6]),
        "blank-lines-first": b"\n \n\t\n" + b"\n".join(lines[:6]),
        "nbsp-around-the-first-record": b"\xc2\xa0" + lines[0] + b"\xc2\xa0\n" + lines[1],
        # a skipped record longer than a whole head read (64 KiB), then the opener
        "long-skipped-first": (skipped % (b"x" * 200_000)) + b"\n" + b"\n".join(lines[:6]),
        "long-skipped-no-newline": (skipped % (b"x" * 70_000)) + b"\n" + lines[0],
        "undecodable-first": b"{not json\n" + b"\n".join(lines[:6]),
        "unknown-type-first": b'{"type":"brand-new","sessionId":"s"}\n' + b"\n".join(lines[:6]),
        "invalid-utf8-in-cwd": lines[0].replace(b'"cwd":"', b'"cwd":"\xff', 1) + b"\n",
        "lone-surrogate-in-cwd": lines[0].replace(b'"cwd":"', b'"cwd":"\\ud800', 1) + b"\n",
        "only-skipped": skipped % b"q",
        "empty": b"",
    }
    made = []
    for name, data in heads.items():
        made.append(tmp_path / f"{name}.jsonl")
        made[-1].write_bytes(data)
    return fixtures + made


def test_an_identity_told_from_the_envelope_is_the_converted_session_meta(tmp_path: Path) -> None:
    told = 0
    for path in _claude_heads(tmp_path):
        first = _first_event_or_error(path)
        identity = _identity_or_error(path)
        if isinstance(first, str):
            assert identity == first or isinstance(identity, str), path
            continue
        assert isinstance(identity, tuple), (path, identity)
        assert first.session_meta == identity[0], path
        assert first.timestamp == identity[1], path
        told += 1
    assert told >= 20


def test_identity_reads_build_no_events_where_the_envelope_tells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentminutes.discovery.layouts.base import read_identity
    from agentminutes.harness.claude_code.adapter import ClaudeCodeAdapter

    fed: list[int] = []
    feed = ClaudeCodeAdapter.feed

    def counted(self: ClaudeCodeAdapter, line: bytes, lineno: int) -> list[Any]:
        fed.append(lineno)
        return feed(self, line, lineno)

    monkeypatch.setattr(ClaudeCodeAdapter, "feed", counted)
    heads = {p.stem: p for p in _claude_heads(tmp_path)}
    assert read_identity("claude-code", str(heads["long-skipped-first"]))[0].session_id
    assert read_identity("claude-code", str(heads["crlf"]))[0].session_id
    assert fed == []
    # a line the envelope cannot tell is fed: the adapter's own error, as a conversion gives it
    with pytest.raises(ParseError, match='unrecognized record type "brand-new" at line 1'):
        read_identity("claude-code", str(heads["unknown-type-first"]))
    assert fed == [1]
