"""``agentminutes export``: many transcripts into a dataset folder.

The Parquet dataset, one module per concern:
  :mod:`~agentminutes.export.schemas` (the versioned Arrow schemas),
  :mod:`~agentminutes.export.tables` (one transcript's rows: :func:`to_arrow`),
  :mod:`~agentminutes.export.dataset` (part files) and
  :mod:`~agentminutes.export.command` (targets, planning, worker processes:
  :func:`export_dataset`), with what it shares with ``export --format atif``
  (:mod:`~agentminutes.export.trajectories`, no pyarrow):
  :mod:`~agentminutes.export.transcripts` (a transcript's sessions as events) and
  :mod:`~agentminutes.export.manifest`.

The dataset names are imported on first use (they need pyarrow, the ``parquet`` extra).
The output formats of one session (ACP, OTel spans, ATIF and the rest) are
:mod:`agentminutes.formats`'s; ``agentminutes.export.acp``, ``.otel``, ``.atif`` and
``.losses`` are deprecated names for its modules.
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


if TYPE_CHECKING:
    from agentminutes.export.command import ExportResult, export_dataset
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


__getattr__ = lazy_exports(globals())


def __dir__() -> list[str]:
    modules = ("command", "dataset", "manifest", "schemas", "tables", "trajectories", "transcripts")
    return sorted([*__all__, *modules])
