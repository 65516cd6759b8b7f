"""RFC 3339 timestamps: validation on the way in, nanosecond instants for arithmetic.

Event timestamps are carried as the harness wrote them. A value that is not a
valid RFC 3339 date-time is dropped (timestamps are extension data and never
fail a parse), exactly as the reference implementation does.
"""

from __future__ import annotations

import calendar
import functools
import re
from datetime import UTC, datetime, timedelta

__all__ = ("format_ns", "to_ns", "valid_timestamp")

#: RFC 3339 as Go's ``time.Parse(time.RFC3339, …)`` accepts it: ASCII digits,
#: upper-case ``T`` and ``Z``, a fraction of any length after ``.`` or ``,``.
#: Field ranges are in the pattern; only the day of the month is checked apart.
_RFC3339 = re.compile(
    r"([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:[.,]([0-9]+))?"
    r"(?:Z|([+-])([01][0-9]|2[0-3]):([0-5][0-9]))"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def valid_timestamp(value: object) -> str:
    """Return *value* when it is a valid RFC 3339 date-time string, else ``""``.

    A fraction may have any number of digits (instants keep nanoseconds) and
    may follow a comma, which is returned as a point.
    """
    global _last_valid
    if not isinstance(value, str) or not value:
        return ""
    last = _last_valid
    if value == last[0]:
        return last[1]
    m = _RFC3339.fullmatch(value)
    if m is None or (m[3] > "28" and not _day_exists(int(m[1]), int(m[2]), int(m[3]))):
        valid = ""
    else:
        valid = value.replace(",", ".") if m[7] is not None else value
    _last_valid = (value, valid)
    return valid


#: The last value checked: consecutive records often share a timestamp.
_last_valid: tuple[str, str] = ("", "")


def _day_exists(year: int, month: int, day: int) -> bool:
    if day > _DAYS[month - 1]:
        return False
    return not (month == 2 and day == 29 and not calendar.isleap(year))


@functools.lru_cache(maxsize=256)
def _day_start(date: str) -> int:
    """Seconds since the epoch at 00:00 UTC of ``YYYY-MM-DD``."""
    return calendar.timegm((int(date[:4]), int(date[5:7]), int(date[8:10]), 0, 0, 0, 0, 0, 0))


#: The last instant computed: the events of one record share their timestamp.
_last: tuple[str, int | None] = ("", None)


def to_ns(value: str) -> int | None:
    """Return the instant of an RFC 3339 string as integer nanoseconds since the epoch."""
    global _last
    last = _last
    if value == last[0]:
        return last[1]
    ns = _instant(value)
    _last = (value, ns)
    return ns


def _instant(value: str) -> int | None:
    # Fast path: the C ISO parser, for the common forms (at most microseconds).
    if value[19:20] in ("Z", "+", "-") or (
        value[19:20] == "." and len(value) - 20 - _zone_len(value) <= 6
    ):
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            return None
        if dt.tzinfo is None or value[10] != "T":
            return None
        return (dt - _EPOCH) // _MICROSECOND * 1000
    m = _RFC3339.fullmatch(value)
    if m is None:
        return None
    seconds = _day_start(value[:10]) + int(m[4]) * 3600 + int(m[5]) * 60 + int(m[6])
    if m[8] is not None:
        offset = int(m[9]) * 3600 + int(m[10]) * 60
        seconds -= offset if m[8] == "+" else -offset
    frac = m[7]
    if frac is None:
        return seconds * 1_000_000_000
    return seconds * 1_000_000_000 + int((frac + "000000000")[:9])


def _zone_len(value: str) -> int:
    return 1 if value.endswith("Z") else 6


def format_ns(ns: int) -> str:
    """Format integer nanoseconds since the epoch as an RFC 3339 UTC string."""
    seconds, frac = divmod(ns, 1_000_000_000)
    text = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"
