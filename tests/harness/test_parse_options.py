"""ParseOptions checks what it is given, so the library refuses what the command line refuses."""

from __future__ import annotations

import pytest

from agentminutes import load
from agentminutes.errors import UsageError
from agentminutes.harness.base import TEXT_FORMS, ParseOptions, detects
from conftest import FIXTURES, run_cli

CC = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"


@pytest.mark.parametrize("form", TEXT_FORMS)
def test_the_known_text_forms_are_taken(form: str) -> None:
    assert ParseOptions(text_form=form).text_form == form


def test_an_unknown_text_form_is_a_usage_error_in_the_library_and_the_cli() -> None:
    with pytest.raises(
        UsageError, match='unknown text form "wrapped" \\(want bare or delivered\\)'
    ):
        load(CC, text_form="wrapped")
    for args in (["convert"], ["stats", "--include-subagents"]):
        proc = run_cli(*args, "--text-form", "wrapped", CC)
        assert proc.returncode == 2, proc.stderr
        assert b"Traceback" not in proc.stderr


def test_auto_and_empty_ask_for_detection() -> None:
    assert detects("auto")
    assert detects("")
    assert not detects("codex")
