"""Transform stages: async callables from a batch stream to a batch stream.

A stage takes an async iterator of :class:`~agentminutes.pipeline.batch.Batch`
and yields batches; :func:`per_event` lifts a plain per-event function into
one. Stages may change, drop or add events but must pass each batch's
``mark`` on (it is what a follower checkpoints).

- :mod:`~agentminutes.stages.transforms` — payload truncation and the promotion registry;
- :mod:`~agentminutes.stages.codex_promotions` — Codex telemetry promoted to tool events.
"""

from __future__ import annotations

from agentminutes.pipeline.batch import Stage, apply_stages, per_event
from agentminutes.stages.transforms import (
    PROMOTIONS,
    build_stages,
    promotion,
    promotions,
    truncate_payloads,
)

__all__ = (
    "PROMOTIONS",
    "Stage",
    "apply_stages",
    "build_stages",
    "per_event",
    "promotion",
    "promotions",
    "truncate_payloads",
)
