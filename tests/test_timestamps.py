"""RFC 3339 timestamps as the reference (Go's ``time.Parse(time.RFC3339, …)``) accepts them."""

from __future__ import annotations

import pytest

from agentminutes.timestamps import format_ns, to_ns, valid_timestamp


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("2025-12-18T21:32:05Z", "2025-12-18T21:32:05Z"),
        ("2025-12-18T21:32:05.000Z", "2025-12-18T21:32:05Z"),
        ("2025-12-18T21:32:05.330Z", "2025-12-18T21:32:05.33Z"),
        ("2025-12-18T21:32:05.123Z", "2025-12-18T21:32:05.123Z"),
        ("2025-12-18T21:32:05,5Z", "2025-12-18T21:32:05.5Z"),
        ("2025-12-18T21:32:05.1234567891+00:00", "2025-12-18T21:32:05.123456789Z"),
        ("2025-12-18T21:32:05.120-00:00", "2025-12-18T21:32:05.12Z"),
        ("2024-02-29T00:00:00-05:30", "2024-02-29T00:00:00-05:30"),
        ("2024-02-29T00:00:00.500000+05:30", "2024-02-29T00:00:00.5+05:30"),
        # Already in that form (kept as it is) or one step from it: nine digits, a tenth,
        # one trailing zero, a day past the 28th.
        ("2025-12-28T23:59:59.123456789Z", "2025-12-28T23:59:59.123456789Z"),
        ("2025-12-28T23:59:59.1234567890Z", "2025-12-28T23:59:59.123456789Z"),
        ("2025-12-28T23:59:59.10Z", "2025-12-28T23:59:59.1Z"),
        ("2025-01-31T00:00:00.5Z", "2025-01-31T00:00:00.5Z"),
    ],
)
def test_accepted_in_the_references_form(value: str, written: str) -> None:
    assert valid_timestamp(value) == written


@pytest.mark.parametrize(
    "value",
    [
        "2025-12-18t21:32:05Z",
        "2025-12-18T21:32:05z",
        "2025-12-18 21:32:05Z",
        "2025-12-18T21:32:05",
        "2025-12-18T21:32:05+0200",
        "2025-12-18T21:32:60Z",
        "2025-12-18T24:00:00Z",
        "2023-02-29T00:00:00Z",
        "2025-04-31T00:00:00Z",
        "2025-1-18T21:32:05Z",
        "2025-12-18T21:32:28.Z",
        " 2025-12-18T21:32:05Z",
        "２０２５-12-18T21:32:05Z",
    ],
)
def test_rejected(value: str) -> None:
    assert valid_timestamp(value) == ""


def test_instants_compare_across_offsets_and_truncate_to_nanoseconds() -> None:
    assert to_ns("2025-12-18T21:32:05Z") == to_ns("2025-12-18T23:32:05+02:00")
    assert to_ns("1970-01-01T00:00:01.1234567891Z") == 1_123_456_789
    assert to_ns("1970-01-01T00:00:00,5Z") == 500_000_000
    assert to_ns("not a time") is None


@pytest.mark.parametrize(
    ("ns", "written"),
    [
        (-62_135_596_800 * 10**9, "0001-01-01T00:00:00Z"),  # strftime writes "1-01-01"
        (-30_610_310_400 * 10**9 + 5 * 10**8, "0999-12-31T00:00:00.5Z"),
        (1_766_981_267_366_916_700, "2025-12-29T04:07:47.3669167Z"),
    ],
)
def test_format_ns_writes_four_digit_years(ns: int, written: str) -> None:
    assert format_ns(ns) == written
