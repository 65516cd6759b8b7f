"""The walk of a folder a user names (``usage DIR``, ``export DIR``): what it offers to detection."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentminutes.discovery.walk import transcripts_under

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CLAUDE = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
CLINE_TASK = FIXTURES / "cline/1769064454592"


def test_a_task_folder_is_one_transcript_and_dependencies_are_not_entered(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    shutil.copyfile(CLAUDE, tmp_path / "a/session.jsonl")
    (tmp_path / "a/notes.txt").write_text("not a transcript\n")
    (tmp_path / "a/session.jsonl.meta.json").write_text("{}")
    shutil.copytree(CLINE_TASK, tmp_path / "tasks/1769064454592")
    for pruned in ("node_modules/pkg", ".git/objects"):
        (tmp_path / pruned).mkdir(parents=True)
        shutil.copyfile(CLAUDE, tmp_path / pruned / "session.jsonl")
    (tmp_path / "out").mkdir()
    shutil.copyfile(CLAUDE, tmp_path / "out/session.jsonl")

    found = list(transcripts_under(str(tmp_path), str(tmp_path / "out")))

    rel = [Path(p).relative_to(tmp_path).as_posix() for p in found]
    assert rel[0] == "a/session.jsonl"
    assert len(rel) == 2
    assert rel[1].startswith("tasks/1769064454592/")  # the task folder, once
