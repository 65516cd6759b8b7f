"""Comparing the dotted version strings harnesses write (for format-drift hints)."""

from __future__ import annotations

__all__ = ("version_newer",)


def version_newer(a: str, b: str) -> bool:
    """True when dotted version *a* is strictly newer than *b*.

    Segments compare by their leading digits, missing segments count as zero,
    and a segment without leading digits ends the comparison as "not newer",
    so a malformed version never produces a false drift hint.
    """
    left, right = a.split("."), b.split(".")
    for i in range(max(len(left), len(right))):
        x, y = _segment(left, i), _segment(right, i)
        if x is None or y is None:
            return False
        if x != y:
            return x > y
    return False


def _segment(parts: list[str], i: int) -> int | None:
    if i >= len(parts):
        return 0
    digits = ""
    for ch in parts[i]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None
