"""``stats --usage``: the usage block on request, the reference's document untouched otherwise.

Run as a real process over every fixture with a reference golden: the document
without its ``usage`` key is the golden (the reference CLI's output), and the
block's counts are what the transcript records, by each harness's rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import agentminutes
from agentminutes.schema.usage import requests
from session_home import FIXTURES

GOLDEN = FIXTURES / "golden"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_HOME", "_DIR"))}
    env["TZ"] = "UTC"
    return subprocess.run(
        [sys.executable, "-m", "agentminutes", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
        check=False,
    )


def _stats_goldens() -> list[tuple[Path, Path]]:
    """(fixture, its reference stats golden) for every golden of the default stats run."""
    out = []
    with open(GOLDEN / "MANIFEST.tsv", encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            fixture, run, outcome, _ = line.split("\t")
            if run != "stats" or outcome != "golden":
                continue
            harness = fixture.split("/")[0]
            name = "__".join(fixture.split("/")[1:]) + ".stats.json"
            out.append((FIXTURES / fixture, GOLDEN / harness / name))
    return out


def _raw(block: dict[str, Any]) -> tuple[int, int, int, int]:
    return (
        block["input_tokens"],
        block["output_tokens"],
        block["cache_read_input_tokens"],
        block["cache_creation_input_tokens"],
    )


def test_the_usage_block_is_added_to_the_reference_document_and_nothing_else_changes(
    tmp_path: Path,
) -> None:
    cases = _stats_goldens()
    assert {p.relative_to(FIXTURES).parts[0] for p, _ in cases} >= {
        "claude-code",
        "codex",
        "copilot",
        "antigravity",
    }
    listing = tmp_path / "paths.txt"
    listing.write_text("".join(f"{p}\n" for p, _ in cases), encoding="utf-8")
    proc = _cli("stats", "--usage", "--no-cost", "--paths-from", str(listing))
    assert proc.returncode == 0, proc.stderr
    docs = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(docs) == len(cases)
    with_requests = set()
    for (path, golden), doc in zip(cases, docs, strict=True):
        block = doc.pop("usage")
        assert doc == json.loads(golden.read_bytes()), path  # the reference's document
        harness = path.relative_to(FIXTURES).parts[0]
        assert block["harness"] == harness
        reqs = requests(agentminutes.iter_events(path))
        want = [0, 0, 0, 0]
        for r in reqs:
            u = r.usage
            for i, n in enumerate(
                (
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_read_input_tokens,
                    u.cache_creation_input_tokens,
                )
            ):
                want[i] += n
        assert block["requests"] == len({r.key for r in reqs if r.key}) + sum(
            1 for r in reqs if not r.key
        ), path
        assert _raw(block) == tuple(want), path
        assert sum(m["requests"] for m in block["by_model"]) == block["requests"]
        assert "cost_usd" not in block  # --no-cost
        totals = doc.get("totals")
        if harness in ("claude-code", "antigravity") and block["requests"]:
            # Anthropic-shaped usage: the stats totals and the normalized view agree.
            assert _raw(block) == (
                totals["input_tokens"],
                totals["output_tokens"],
                totals.get("cache_read_input_tokens", 0),
                totals.get("cache_creation_input_tokens", 0),
            ), path
            assert block["otel"]["input_tokens"] == totals["total_prompt_tokens"], path
        if harness == "copilot":
            assert totals is None  # the reference records no Copilot usage; the block does
        if harness == "antigravity":
            assert block["normalized"] is False
            assert block["requests"] == 0
        if block["requests"]:
            with_requests.add(harness)
    assert with_requests >= {"claude-code", "codex", "copilot"}


def test_copilot_stats_usage_reads_the_shutdown_metrics() -> None:
    path = FIXTURES / "copilot/agent-sessions/copilot_small_0.0.420.jsonl"
    proc = _cli("stats", "--usage", "--no-cost", str(path))
    assert proc.returncode == 0, proc.stderr
    block = json.loads(proc.stdout)["usage"]
    shutdown = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    (model, metric), *_ = shutdown["data"]["modelMetrics"].items()
    u = metric["usage"]
    (row,) = block["by_model"]
    assert row["model"] == model
    assert _raw(row) == (
        u["inputTokens"],
        u["outputTokens"],
        u["cacheReadTokens"],
        u["cacheWriteTokens"],
    )
    assert row["otel"]["input_tokens"] == u["inputTokens"]  # it counts the cache already
    assert row["otel"]["reasoning.output_tokens"] == u["reasoningTokens"]


def test_a_task_counts_each_request_once_and_the_table_adds_the_usage_table(
    tmp_path: Path,
) -> None:
    parent = FIXTURES / "claude-code/ccl/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    proc = _cli("stats", "--usage", "--no-cost", "--include-subagents", str(parent))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    block = doc["usage"]
    assert len(doc["transcripts"]) > 1
    keys: set[str] = set()
    for t in doc["transcripts"]:
        keys |= {r.key for r in requests(agentminutes.iter_events(t["path"]))}
    assert block["requests"] == len(keys)
    own = json.loads(_cli("stats", "--usage", "--no-cost", str(parent)).stdout)["usage"]
    assert block["requests"] > own["requests"]  # the subagents' requests are in
    assert block["output_tokens"] == doc["task"]["totals"]["output_tokens"]
    table = _cli("stats", "--usage", "--format", "table", "--no-cost", str(parent))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.split("Usage by model\n", 1)[1].splitlines()
    assert lines[0].split()[:3] == ["Model", "Input", "Output"]
    total = next(x for x in lines if x.startswith("Total"))
    assert f"{own['output_tokens']:,}" in total


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--no-cost"], "--no-cost needs --usage"),
        (["--prices", "p.toml"], "--prices needs --usage"),
    ],
)
def test_the_usage_options_need_usage(args: list[str], message: str) -> None:
    path = FIXTURES / "copilot/agent-sessions/copilot_small_0.0.420.jsonl"
    proc = _cli("stats", *args, str(path))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == f"Error: {message}"


def test_an_unknown_model_is_unpriced_in_the_block_never_zero(tmp_path: Path) -> None:
    source = FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    text = source.read_text(encoding="utf-8").replace(
        '"model":"deepseek-v4-pro"', '"model":"glm-9-via-gateway"'
    )
    path = tmp_path / "gateway.jsonl"
    path.write_text(text, encoding="utf-8")
    proc = _cli("stats", "--usage", str(path))
    assert proc.returncode == 0, proc.stderr
    block = json.loads(proc.stdout)["usage"]
    assert block["requests"] > 0
    assert block["cost_usd"] is None
    assert block["cost_status"] == "unpriced"
    assert block["unpriced_models"] == ["glm-9-via-gateway"]
    assert (
        block["unpriced_tokens"] == block["otel"]["input_tokens"] + block["otel"]["output_tokens"]
    )
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."glm-9*"]\ninput_mtok = 1\noutput_mtok = 2\n', encoding="utf-8")
    priced = json.loads(_cli("stats", "--usage", "--prices", str(prices), str(path)).stdout)
    assert priced["usage"]["cost_status"] == "priced"
    assert priced["usage"]["cost_usd"] > 0
