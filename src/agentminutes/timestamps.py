"""RFC 3339 timestamps: validation on the way in, nanosecond instants for arithmetic.

Event timestamps are written as the reference writes a parsed instant (Go's
``RFC3339Nano``): the harness's date and clock, the fraction cut to nanoseconds
with its trailing zeros trimmed (``.330Z`` → ``.33Z``, ``.000Z`` → none), and a
zero offset as ``Z``. A value that is not a valid RFC 3339 date-time is dropped
(timestamps are extension data and never fail a parse), exactly as the
reference implementation does.
"""

from __future__ import annotations

import functools
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Final

__all__ = (
    "format_local_ns",
    "format_ms",
    "format_ns",
    "local_midnight_ns",
    "normalize",
    "parse_when",
    "to_ns",
    "valid_timestamp",
)

#: RFC 3339 as Go's ``time.Parse(time.RFC3339, …)`` accepts it: ASCII digits,
#: upper-case ``T`` and ``Z``, a fraction of any length after ``.`` or ``,``.
#: Field ranges are in the pattern; only the day of the month is checked apart.
_RFC3339 = re.compile(
    r"([0-9]{4})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):([0-5][0-9]):([0-5][0-9])(?:[.,]([0-9]+))?"
    r"(?:Z|([+-])([01][0-9]|2[0-3]):([0-5][0-9]))"
)
#: A value :func:`valid_timestamp` gives back as it is, told by one match: UTC (``Z``),
#: a fraction after a point without trailing zeros (at most nine digits), and a day
#: of the month that every month has (29–31 take the full check). Nearly every
#: harness writes its times so.
_GO_FORM_UTC = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{0,8}[1-9])?Z"
).fullmatch
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def valid_timestamp(value: object) -> str:
    """Return *value* in the reference's form when it is a valid RFC 3339 date-time, else ``""``.

    A fraction may have any number of digits and may follow a comma; it is
    written after a point, cut to nanoseconds, without trailing zeros. A zero
    offset (``+00:00``, ``-00:00``) is written ``Z``.
    """
    global _last_valid
    if not isinstance(value, str) or not value:
        return ""
    last = _last_valid
    if value == last[0]:
        return last[1]
    if _GO_FORM_UTC(value) is not None:
        _last_valid = (value, value)
        return value
    m = _RFC3339.fullmatch(value)
    if m is None or (m[3] > "28" and not _day_exists(int(m[1]), int(m[2]), int(m[3]))):
        valid = ""
    else:
        valid = _go_form(value, m)
    _last_valid = (value, valid)
    return valid


#: The last value checked: consecutive records often share a timestamp.
_last_valid: tuple[str, str] = ("", "")


def _go_form(value: str, m: re.Match[str]) -> str:
    """*value* (matched by :data:`_RFC3339`) as Go's ``RFC3339Nano`` formats the instant."""
    frac, sign = m[7], m[8]
    zero_zone = sign is not None and m[9] == "00" and m[10] == "00"
    if (
        frac is None or (len(frac) <= 9 and frac[-1] != "0" and value[19] == ".")
    ) and not zero_zone:
        return value  # the common case: already in that form
    frac = (frac or "")[:9].rstrip("0")
    zone = "Z" if sign is None or zero_zone else value[-6:]
    return value[:19] + ("." + frac if frac else "") + zone


#: ``date(1970, 1, 1).toordinal()``.
_EPOCH_ORDINAL: Final = 719_163


def _day_exists(year: int, month: int, day: int) -> bool:
    if day > _DAYS[month - 1]:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return not (month == 2 and day == 29 and not leap)


@functools.lru_cache(maxsize=256)
def _day_start(date: str) -> int:
    """Seconds since the epoch at 00:00 UTC of ``YYYY-MM-DD``."""
    # calendar.timegm's arithmetic, without importing calendar (it loads locale): every
    # command that reads a transcript imports this module.
    first = datetime(int(date[:4]), int(date[5:7]), 1).toordinal()
    return (first - _EPOCH_ORDINAL + int(date[8:10]) - 1) * 86_400


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
    # Not strftime's %Y: it does not pad a year before 1000 to four digits.
    t = datetime.fromtimestamp(seconds, UTC)
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


def format_ms(ms: float | None) -> str:
    """Epoch milliseconds (OpenCode's, Cline's and turns.db's times) as an RFC 3339 UTC time,
    as :func:`format_ns` writes it; ``""`` for none, zero or less, or out of range."""
    if ms is None or not ms > 0:
        return ""
    try:
        return format_ns(int(ms) * 1_000_000)
    except (OverflowError, OSError, ValueError):
        return ""


def format_local_ns(ns: int) -> str:
    """Format integer nanoseconds since the epoch as RFC 3339 in the process's local time zone.

    As Go's ``RFC3339Nano`` writes a file time: trailing zeros of the fraction
    dropped, a zero offset written ``Z`` (``TZ`` is respected).
    """
    seconds, frac = divmod(ns, 1_000_000_000)
    local = time.localtime(seconds)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", local)
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + _offset(local.tm_gmtoff)


def _offset(seconds: int) -> str:
    if seconds == 0:
        return "Z"
    sign = "+" if seconds > 0 else "-"
    minutes = abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def normalize(value: str) -> str:
    """An RFC 3339 time as Go re-writes a parsed one: fraction without trailing zeros, ``Z`` for UTC.

    A non-zero offset is kept as written. A value that is not RFC 3339 is
    returned unchanged.
    """
    m = _RFC3339.fullmatch(value)
    if m is None:
        return value
    text = value[:19]
    frac = (m[7] or "").rstrip("0")
    if frac:
        text += "." + frac
    if m[8] is None or (m[9] == "00" and m[10] == "00"):
        return text + "Z"
    return f"{text}{m[8]}{m[9]}:{m[10]}"


_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def parse_when(value: str, *, end_of_day: bool = False) -> int:
    """A ``--since``/``--until`` value as nanoseconds since the epoch.

    RFC 3339 (a time zone is required), or ``YYYY-MM-DD``: local midnight at
    the start of that day, or with *end_of_day* that midnight plus 24 hours.

    Raises:
        ValueError: neither form.
    """
    if _RFC3339.fullmatch(value) and valid_timestamp(value):
        ns = _instant(value.replace(",", "."))
        if ns is not None:
            return ns
    m = _DATE.fullmatch(value)
    if m is not None:
        try:
            day = datetime(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            pass
        else:
            start = int(time.mktime(day.timetuple())) * 1_000_000_000
            return start + (86_400 * 1_000_000_000 if end_of_day else 0)
    raise ValueError(f'invalid time "{value}" (want RFC 3339 or YYYY-MM-DD)')


def local_midnight_ns(year: int, month: int, day: int) -> int | None:
    """Local midnight of a calendar day, as Go's ``time.Date`` normalizes out-of-range parts."""
    try:
        return int(time.mktime((year, month, day, 0, 0, 0, 0, 0, -1))) * 1_000_000_000
    except (OverflowError, ValueError):
        return None
