"""Pinocchio / Geppetto ``turns.db`` (SQLite snapshots of conversations, turn by turn).

The adapter and its rules are in :mod:`.adapter`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from agentminutes._lazy import lazy_exports
from agentminutes.harness.description import EXPORT_ONLY, Harness

if TYPE_CHECKING:
    from agentminutes.harness.turns_db.adapter import TurnsDBAdapter

__all__ = ("DESCRIPTION", "TurnsDBAdapter")


#: Everything the project knows about Pinocchio turns.db.
DESCRIPTION: Final = Harness(
    name="turns-db",
    display_name="Pinocchio turns.db",
    provider="",
    reads="documents",
    adapter="agentminutes.harness.turns_db.adapter:TurnsDBAdapter",
    **EXPORT_ONLY,
)


__getattr__ = lazy_exports(globals())
