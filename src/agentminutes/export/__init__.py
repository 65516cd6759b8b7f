"""Exports: the event stream as other formats and datasets.

- :mod:`~agentminutes.export.acp` — Agent Client Protocol ``session/update`` notifications;
  :mod:`~agentminutes.export.otel` — OpenTelemetry GenAI spans;
  :mod:`~agentminutes.export.atif` — ATIF trajectories; their loss reports' line:
  :mod:`~agentminutes.export.losses`.
- The Parquet dataset (``agentminutes export``), one module per concern:
  :mod:`~agentminutes.export.schemas` (the versioned Arrow schemas),
  :mod:`~agentminutes.export.tables` (one transcript's rows: :func:`to_arrow`),
  :mod:`~agentminutes.export.dataset` (part files) and
  :mod:`~agentminutes.export.runner` (targets, planning, worker processes:
  :func:`export_dataset`), with what it shares with ``export --format atif``
  (:mod:`~agentminutes.export.trajectories`, no pyarrow):
  :mod:`~agentminutes.export.transcripts` (a transcript's sessions as events) and
  :mod:`~agentminutes.export.manifest`.

The dataset names are imported on first use (they need pyarrow, the ``parquet`` extra),
so ``import agentminutes.export.acp`` stays as light as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentminutes._lazy import lazy_exports

__all__ = (
    "EVENTS",
    "FAILURES",
    "REQUESTS",
    "SCHEMAS",
    "SCHEMA_VERSION",
    "SESSIONS",
    "TABLES",
    "TOOL_CALLS",
    "ExportResult",
    "export_dataset",
    "iter_batches",
    "to_arrow",
)

_LAZY = {
    "EVENTS": "schemas",
    "FAILURES": "schemas",
    "REQUESTS": "schemas",
    "SCHEMAS": "schemas",
    "SCHEMA_VERSION": "schemas",
    "SESSIONS": "schemas",
    "TABLES": "schemas",
    "TOOL_CALLS": "schemas",
    "iter_batches": "tables",
    "to_arrow": "tables",
    "ExportResult": "runner",
    "export_dataset": "runner",
}

if TYPE_CHECKING:
    from agentminutes.export.runner import ExportResult, export_dataset
    from agentminutes.export.schemas import (
        EVENTS,
        FAILURES,
        REQUESTS,
        SCHEMA_VERSION,
        SCHEMAS,
        SESSIONS,
        TABLES,
        TOOL_CALLS,
    )
    from agentminutes.export.tables import iter_batches, to_arrow


__getattr__ = lazy_exports(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    modules = ("acp", "atif", "dataset", "losses", "manifest", "otel", "runner", "schemas")
    return sorted([*__all__, *modules, "tables", "trajectories", "transcripts"])
