"""What a projection could not carry, as one line: the loss reports' shared wording.

Each lens (ACP updates, OTel GenAI spans, ATIF trajectories) counts what it
produced and what it dropped, by reason, in a report of its own (a
:class:`LossReport`); :func:`loss_summary` words each the same way, and
:func:`add_counts` and :func:`added` sum the reports of many sessions
(``export --format atif``, ``convert --to-dir``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

__all__ = ("LossReport", "add_counts", "added", "loss_summary")


class LossReport(Protocol):
    """A format's loss report: a msgspec Struct of counts and counts by reason."""

    def summary(self) -> str:
        """One line: the counts, then each loss by reason (sorted)."""
        ...


_R = TypeVar("_R", bound=LossReport)


def loss_summary(
    head: str,
    dropped_events: Mapping[str, int] | None,
    dropped_fields: Mapping[str, int] | None,
    *,
    most: int | None = None,
) -> str:
    """*head* (the lens's own counts), then each loss by reason, sorted:
    ``12 events, 3 steps; dropped events: system/x 2; dropped fields: thinking.signature 1``.

    With *most*, each list names only its *most* commonest reasons and counts the
    rest (``… and 9 kinds more (40)``): a whole home's export drops dozens of
    kinds, and one line of them all is unreadable on a terminal.
    """
    text = head
    for label, counts in (("dropped events", dropped_events), ("dropped fields", dropped_fields)):
        if counts:
            text += f"; {label}: " + _listed(counts, most)
    return text


def _listed(counts: Mapping[str, int], most: int | None) -> str:
    if most is None or len(counts) <= most:
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown, rest = ranked[:most], ranked[most:]
    text = ", ".join(f"{k} {v}" for k, v in shown)
    return f"{text} … and {len(rest)} kinds more ({sum(n for _, n in rest)})"


def add_counts(
    total: dict[str, int] | None, more: Mapping[str, int] | None
) -> dict[str, int] | None:
    """*total* with *more* added reason by reason (``None`` while both are empty)."""
    if not more:
        return total
    out = dict(total or {})
    for key, n in more.items():
        out[key] = out.get(key, 0) + n
    return out


def added(total: _R | None, more: _R | None) -> _R | None:
    """*total* and *more*, two reports of one lens, summed field by field (counts added,
    counts by reason merged); either may be ``None``."""
    if total is None or more is None:
        return more if total is None else total
    values: dict[str, Any] = {}
    for name in total.__struct_fields__:  # type: ignore[attr-defined]
        mine, theirs = getattr(total, name), getattr(more, name)
        if isinstance(mine, int) or isinstance(theirs, int):
            values[name] = (mine or 0) + (theirs or 0)
        else:
            values[name] = add_counts(mine, theirs)
    return type(total)(**values)
