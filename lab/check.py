"""A recording against its ground truth, through the ``agentminutes`` command as users run it.

:func:`check_recording` runs, on every transcript of a recording folder:

- ``agentminutes detect`` (the harness must be detected, not guessed) and ``agentminutes
  convert --format jsonl`` strict (no ``--harness``, no ``--permissive``): it must succeed and
  hold no ``unknown`` event;
- the tool calls: the converted ``tool_call`` names in order equal the scripted ones, every
  call has a ``tool_result``, and the calls scripted to fail are results marked ``is_error``;
- ``agentminutes usage --by model --format json`` with HOME at the recording's ``home/``:
  the OpenTelemetry token sums equal what the server billed the conversation's requests.

What a harness records differently from what was billed is declared in
:data:`USAGE_EXCEPTIONS` with the reason, and reported as a note rather than a problem.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: ``usage`` fields compared with the billing, ``otel`` key -> ground-truth key.
USAGE_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read.input_tokens": "cache_read_input_tokens",
    "cache_creation.input_tokens": "cache_creation_input_tokens",
    "reasoning.output_tokens": "reasoning_output_tokens",
}

#: Harness -> {ground-truth field: why the harness's record differs from the billing}.
USAGE_EXCEPTIONS: dict[str, dict[str, str]] = {
    "aider": {
        "input_tokens": "Aider prints the prompt rounded to tenths of thousands ('2.4k sent')",
        "reasoning_output_tokens": "Aider's report prints sent and received tokens: no "
        "reasoning count apart (received includes it)",
        "cache_read_input_tokens": "Aider prints cache hits only from Anthropic's and "
        "DeepSeek's usage fields: OpenAI's cached_tokens stay inside 'sent', not printed apart",
    },
    "cline": {
        "reasoning_output_tokens": "the Cline CLI's message metrics record input, output, "
        "cache reads and writes: no reasoning count apart (output includes it)",
    },
    "kimi": {
        "reasoning_output_tokens": "Kimi CLI's token_usage records input_other, input_cache_read, "
        "input_cache_creation and output: the reasoning tokens are inside output, never apart",
    },
    "pi": {
        "reasoning_output_tokens": "pi's usage records input, output, cacheRead and cacheWrite: "
        "the reasoning tokens are inside output, never counted apart",
    },
}

#: Harness -> why its transcript records no usage to compare with the billing.
USAGE_ELSEWHERE: dict[str, str] = {
    "droid": "Factory Droid writes no usage into the session transcript: the session's sums "
    "are in <session id>.settings.json beside it (tokenUsage), which no transcript reader reads",
}

#: Harness -> why its usage comes as sums over several requests, not one row per request.
REQUESTS_SUMMED: dict[str, str] = {
    "hermes": "Hermes records usage per session and model (session_model_usage), summed over "
    "its api_call_count requests: one usage row stands for them all",
}

#: (harness, scenario) -> (steps whose requests the transcript does not record apart, why).
#: Their billing is left out of the comparison and the reason reported as a note.
UNRECORDED_STEPS: dict[tuple[str, str], tuple[frozenset[int], str]] = {
    ("claude-code", "compaction"): (
        frozenset({2}),
        "Claude Code writes a compaction's summary as a user message without the request's "
        "usage; only the session's cost-state ledger (modelUsage) counts it, and usage "
        "counts messages",
    ),
}

#: Harness -> why its tool-call results carry no error flag for a failed call.
ERROR_FLAG_EXCEPTIONS: dict[str, str] = {
    "codex": "a Codex function_call_output has no error flag (the exit code is only in the "
    "output text, 'Process exited with code 1'); the reference reads these rollouts and marks "
    "no error, and the default output stays equal to it",
}


@dataclass
class CheckResult:
    """Problems found (empty: the recording matches its ground truth) and the figures."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


def agentminutes(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the ``agentminutes`` command of this interpreter."""
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
        env.pop("XDG_CACHE_HOME", None)
        env.pop("XDG_DATA_HOME", None)
        env.pop("XDG_CONFIG_HOME", None)
        env.pop("CODEX_HOME", None)
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args], capture_output=True, text=True, env=env
    )


def converted_events(transcript: Path) -> tuple[list[dict[str, Any]], str]:
    """The strict, auto-detected conversion's events (and its error text, if it failed).

    In-process through the library (what ``convert --format jsonl`` prints, event by event):
    the recordings' test runs it on every recording, and a subprocess each would triple its
    time. ``usage`` below goes through the command.
    """
    import msgspec

    from agentminutes import load
    from agentminutes.errors import AgentminutesError

    try:
        session = load(transcript)
    except AgentminutesError as exc:
        return [], str(exc)
    return [json.loads(msgspec.json.encode(e)) for e in session.events], ""


def detected(transcript: Path) -> str:
    """``harness<TAB>certainty`` as ``agentminutes detect`` prints it (or the error)."""
    from agentminutes.errors import AgentminutesError
    from agentminutes.pipeline.detect import detect

    try:
        harness, certainty = detect(transcript)
    except AgentminutesError as exc:
        return f"error: {exc}"
    return f"{harness}\t{certainty}"


def main_transcripts(folder: Path) -> list[Path]:
    """The recording's sources to convert, as ``recording.json`` lists them."""
    note = json.loads((folder / "recording.json").read_text())
    return [folder / p for p in note.get("sources", note["transcripts"])]


def _usage_totals(folder: Path, harness: str) -> dict[str, int | None]:
    from agentminutes.harness.registry import described

    entry = described(harness)
    # A harness with no home folder (Aider writes in each repository) is read under a root.
    root = ["--root", str(folder / "home")] if entry is not None and entry.roots is None else []
    with tempfile.TemporaryDirectory() as cache:
        done = agentminutes(
            "usage",
            *root,
            "--harness",
            harness,
            "--by",
            "model",
            "--format",
            "json",
            "--no-cost",
            "--cache-dir",
            cache,
            home=folder / "home",
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"usage exited {done.returncode}")
    rows = json.loads(done.stdout)
    totals: dict[str, int | None] = {}
    for key in USAGE_FIELDS:
        values = [row.get("otel", {}).get(key) for row in rows]
        present = [v for v in values if v is not None]
        totals[key] = sum(present) if present else None
    totals["requests"] = sum(row.get("requests", 0) for row in rows)
    return totals


def check_recording(folder: Path) -> CheckResult:
    """Check one recording folder (see the module docstring)."""
    result = CheckResult()
    truth = json.loads((folder / "ground_truth.json").read_text())
    note = json.loads((folder / "recording.json").read_text())
    harness = note["harness"]
    transcripts = main_transcripts(folder)
    if not transcripts:
        result.problems.append("no transcript was written")
        return result
    events: list[dict[str, Any]] = []
    for path in transcripts:
        found = detected(path)
        if not found.startswith(f"{harness}\t"):
            result.problems.append(f"{path.name}: detected as {found!r}")
        got, error = converted_events(path)
        if error:
            result.problems.append(f"{path.name}: convert failed: {error}")
            continue
        unknown = [e for e in got if e["kind"] == "unknown"]
        if unknown:
            result.problems.append(f"{path.name}: {len(unknown)} unknown events")
        events.extend(got)
    result.figures["events"] = len(events)

    scripted = truth["tool_calls"]
    calls = [e["tool_call"] for e in events if e["kind"] == "tool_call"]
    results = {
        e["tool_result"]["tool_call_id"]: e["tool_result"]
        for e in events
        if e["kind"] == "tool_result"
    }
    names = [c["name"] for c in calls]
    want = [c["name"] for c in scripted]
    result.figures["tool_calls"] = {"scripted": len(want), "converted": len(names)}
    if names != want:
        result.problems.append(f"tool calls {names} != scripted {want}")
    unanswered = [c["tool_call_id"] for c in calls if c["tool_call_id"] not in results]
    if unanswered:
        result.problems.append(f"tool calls without a result: {unanswered}")
    for call, wanted in zip(calls, scripted, strict=False):
        got = results.get(call["tool_call_id"])
        if got is None:
            continue
        if bool(got.get("is_error", False)) != bool(wanted["fails"]):
            reason = ERROR_FLAG_EXCEPTIONS.get(harness)
            line = (
                f"tool call {call['name']} ({call['tool_call_id']}): is_error "
                f"{bool(got.get('is_error', False))}, scripted to {'fail' if wanted['fails'] else 'succeed'}"
            )
            if reason:
                result.notes.append(f"{line}: {reason}")
            else:
                result.problems.append(line)

    if harness in USAGE_ELSEWHERE:
        result.notes.append(f"usage not compared: {USAGE_ELSEWHERE[harness]}")
        return result
    try:
        totals = _usage_totals(folder, harness)
    except RuntimeError as exc:
        result.problems.append(f"usage failed: {exc}")
        return result
    billed = dict(truth["billed"])
    answered = truth["conversation_requests"]
    unrecorded = UNRECORDED_STEPS.get((harness, truth["scenario"]))
    if unrecorded is not None:
        steps, why = unrecorded
        left_out = [r for r in truth["requests"] if r.get("step") in steps and r.get("billed")]
        for r in left_out:
            for key, value in r["billed"].items():
                if value is not None and billed.get(key) is not None:
                    billed[key] -= value
        answered -= len(left_out)
        result.notes.append(f"{len(left_out)} request(s) left out of the usage comparison: {why}")
    result.figures["usage"] = {"recorded": totals, "billed": billed}
    if harness in REQUESTS_SUMMED:
        result.notes.append(f"requests not compared: {REQUESTS_SUMMED[harness]}")
    elif totals["requests"] != answered:
        result.problems.append(
            f"usage counts {totals['requests']} requests, the server answered {answered}"
        )
    exceptions = USAGE_EXCEPTIONS.get(harness, {})
    for key, truth_key in USAGE_FIELDS.items():
        got_value, want_value = totals[key], billed[truth_key]
        if want_value is None or (want_value == 0 and got_value is None):
            continue
        if got_value != want_value:
            line = f"usage {key}: recorded {got_value}, billed {want_value}"
            if truth_key in exceptions:
                result.notes.append(f"{line}: {exceptions[truth_key]}")
            else:
                result.problems.append(line)
    return result
