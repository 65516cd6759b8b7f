"""Pricing: the catalog's grouped prices equal its per-request prices; unknown models are unpriced, never $0."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

import agentminutes
from agentminutes.errors import UsageError
from agentminutes.schema.usage import requests
from agentminutes.usage.prices import PriceFile, Pricer, Tokens, _usage
from agentminutes.usage.summary import compact

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
genai_prices = pytest.importorskip("genai_prices")  # the cost extra, in the test extra too


def _tokens(rel: str) -> tuple[str, list[Tokens]]:
    reqs = [compact(r) for r in requests(agentminutes.iter_events(FIXTURES / rel))]
    model = reqs[0].model
    out = []
    for r in reqs:
        o = r.otel()
        assert o is not None
        out.append(
            Tokens(
                r.ns,
                o.input_tokens,
                o.output_tokens,
                o.cache_read_input_tokens,
                o.cache_creation_input_tokens,
                o.cache_creation_1h_input_tokens,
            )
        )
    return model, out


@pytest.mark.parametrize(
    ("rel", "harness"),
    [
        ("claude-code/ohcconfig/b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl", "claude-code"),
        ("claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl", "claude-code"),
        (
            "codex/ogekuri-g/rollout-2025-12-15T15-11-17-019b2259-ee39-7c11-b613-5d32c161f9c9.jsonl",
            "codex",
        ),
        ("gemini-cli/vibe-comparison/session-2026-04-25T08-23-e435870b.jsonl", "gemini-cli"),
    ],
)
def test_grouped_prices_equal_the_catalogs_price_of_each_request(rel: str, harness: str) -> None:
    model, tokens = _tokens(rel)
    priced = Pricer().price(model, harness, tokens)
    assert priced.cost is not None
    assert priced.sources == [f"genai-prices {genai_prices.__version__}"]
    one_by_one = sum(
        genai_prices.calc_price(
            _usage(genai_prices.Usage, [t]),
            model,
            genai_request_timestamp=datetime.fromtimestamp(t.ns / 1e9, tz=UTC),
        ).total_price
        for t in tokens
    )
    assert abs(priced.cost - one_by_one) < Decimal("1e-12")
    assert priced.cost > 0


def test_long_context_requests_pay_the_tier_the_provider_bills() -> None:
    day = int(datetime(2025, 10, 1, tzinfo=UTC).timestamp()) * 10**9
    small = Tokens(day, 100_000, 1000, 0, 0, None)
    large = Tokens(day, 300_000, 1000, 0, 0, None)
    pricer = Pricer()
    model = "claude-sonnet-4-5-20250929"
    both = pricer.price(model, "claude-code", [small, large]).cost
    apart = pricer.price(model, "claude-code", [small]).cost
    apart_large = pricer.price(model, "claude-code", [large]).cost
    assert both is not None
    assert apart is not None
    assert apart_large is not None
    assert both == apart + apart_large
    # Over 200k input the whole request is billed at the long-context rate.
    assert apart_large > 3 * apart


def test_a_time_of_day_price_is_each_requests_own_through_the_day() -> None:
    """DeepSeek's peak hours (01-04 and 06-10 UTC in genai-prices 0.2.3) cost more than
    the rest of the day: requests at peak between two off-peak ones pay the peak rate."""
    model = "deepseek-v4-pro"
    day = datetime(2026, 5, 1, tzinfo=UTC)
    hours = (0.5, 2, 3.5, 7, 9.5, 12, 23)
    tokens = [
        Tokens(int((day.timestamp() + h * 3600) * 1e9), 20_000 + i, 500 + i, 10_000, 0, None)
        for i, h in enumerate(hours)
    ]
    priced = Pricer().price(model, "claude-code", tokens).cost
    assert priced is not None
    one_by_one = sum(
        genai_prices.calc_price(
            _usage(genai_prices.Usage, [t]),
            model,
            genai_request_timestamp=datetime.fromtimestamp(t.ns / 1e9, tz=UTC),
        ).total_price
        for t in tokens
    )
    assert abs(priced - one_by_one) < Decimal("1e-12")
    # The first and last requests are off-peak: pricing all by them would cost less.
    off_peak = Pricer().price(model, "claude-code", [tokens[0]]).cost
    assert off_peak is not None
    assert priced > off_peak * len(tokens)


def test_a_model_no_catalog_knows_is_unpriced_not_zero() -> None:
    priced = Pricer().price("glm-4.6-gateway-x", "claude-code", [Tokens(1, 1000, 10, 0, 0, None)])
    assert priced.cost is None
    assert "does not know" in priced.reason


def test_a_price_file_adds_and_overrides_models(tmp_path: Path) -> None:
    toml = tmp_path / "prices.toml"
    toml.write_text(
        '[models."glm-4.6*"]\ninput_mtok = 0.6\noutput_mtok = 2.2\ncache_read_mtok = 0.11\n'
        '[models."claude-sonnet-4-5-20250929"]\ninput_mtok = 1\noutput_mtok = 2\n'
        "cache_read_mtok = 0.5\ncache_write_mtok = 1.5\ncache_write_1h_mtok = 3\n",
        encoding="utf-8",
    )
    pricer = Pricer(PriceFile(toml))
    glm = pricer.price(
        "glm-4.6-air", "claude-code", [Tokens(1, 1_500_000, 1_000_000, 500_000, 0, None)]
    )
    assert glm.cost == Decimal("0.6") + Decimal("2.2") + Decimal("0.055")
    assert glm.sources[0].startswith("prices.toml sha256:")
    sonnet = pricer.price(
        "claude-sonnet-4-5-20250929",
        "claude-code",
        [Tokens(1, 4_000_000, 0, 1_000_000, 2_000_000, 500_000)],
    )
    # fresh 1M at 1, read 1M at 0.5, 5-minute writes 1.5M at 1.5, 1-hour writes 0.5M at 3
    assert sonnet.cost == Decimal(1) + Decimal("0.5") + Decimal("2.25") + Decimal("1.5")
    json_file = tmp_path / "prices.json"
    json_file.write_text(
        '{"models": {"my-model": {"input_mtok": 1, "output_mtok": 4}}}', encoding="utf-8"
    )
    mine = Pricer(PriceFile(json_file)).price(
        "my-model", "pi", [Tokens(1, 1_000_000, 1_000_000, 0, 0, None)]
    )
    assert mine.cost == Decimal(5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x]\noutput_mtok = 1\n", "has no input_mtok"),
        ('[models.x]\ninput_mtok = "a"\noutput_mtok = 1\n', "not a number"),
        ("[models.x]\ninput_mtok = 1\noutput_mtok = 1\nextra = 2\n", "unknown keys extra"),
        ("[other]\n", 'no "models" table'),
        ("models = [", "not valid TOML"),
    ],
)
def test_a_bad_price_file_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        PriceFile(path)


def test_a_base_install_reads_unpriced_never_zero_and_says_why_once() -> None:
    """Without the cost extra: every cost unpriced, the totals too, the reason said once."""
    import io

    from agentminutes.usage.render import render_table
    from agentminutes.usage.report import build_report, collect_paths

    found = collect_paths(
        [
            FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl",
            FIXTURES / "claude-code/ohcconfig/b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl",
            FIXTURES / "codex",
        ]
    )
    report = build_report(found.transcripts, ["model"], pricer=Pricer(catalog=False), tz="UTC")
    models = {r.keys["model"] for r in report.rows if r.otel.input_tokens}
    assert len(models) >= 3
    assert report.totals.cost is None
    assert all(r.cost is None for r in report.rows if r.otel.input_tokens)
    out = io.StringIO()
    render_table(report, out, width=200)
    text = out.getvalue()
    assert "$0" not in text
    assert text.count("unpriced") >= len(models)
    assert text.count("pip install 'agentminutes-py[cost]'") == 1
    # Rows of no tokens at all (Claude Code's <synthetic> notices) are not shown.
    assert all(line.split()[0] != "<synthetic>" for line in text.splitlines() if line.strip())


_MEMO_RUN = """
import sys
from agentminutes.usage.prices import PriceMemo, Pricer
from agentminutes.usage.report import build_report, collect_paths

found = collect_paths(sys.argv[2:])
memo = PriceMemo(sys.argv[1])
report = build_report(found.transcripts, ["day", "model"], pricer=Pricer(memo=memo), tz="UTC")
memo.save()
print(repr([(r.keys, r.cost, r.cost_sources, sorted(r.unpriced)) for r in report.rows]))
print(repr(report.totals.cost))
print("genai_prices" in sys.modules)
"""


def test_a_report_priced_from_the_memo_is_the_catalogs_and_imports_no_catalog(
    tmp_path: Path,
) -> None:
    """The memo keeps each day's priced groups: a second report of the same requests costs the
    same to the last digit without importing genai-prices."""
    import subprocess
    import sys

    paths = [
        str(FIXTURES / "claude-code/cabgov/d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"),
        str(FIXTURES / "claude-code/ohcconfig/b21f5989-26ca-432d-9d08-9c11aebeb752.jsonl"),
        str(FIXTURES / "codex"),
    ]

    def run(*given: str) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", _MEMO_RUN, str(tmp_path), *given],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.splitlines()

    first = run(*paths)
    assert first[-1] == "True"  # priced by the catalog
    assert "Decimal(" in first[1]
    again = run(*paths)
    assert again == [*first[:-1], "False"]
    # A memo of another catalog (or release) is not used: priced anew, the same.
    memo = tmp_path / "usage-prices.msgpack"
    memo.write_bytes(memo.read_bytes().replace(b"agentminutes", b"agentminutez", 1))
    assert run(*paths) == first
