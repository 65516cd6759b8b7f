"""Transform stages: async callables from a batch stream to a batch stream.

A stage takes an async iterator of :class:`~agentminutes.pipeline.batch.Batch`
and yields batches; :func:`per_event` lifts a plain per-event function into
one. The rules a stage keeps:

1. **Pass each batch's ``mark`` on with its events.** In a follow the mark names
   the transcript the events came from (envelopes are made from it) and the
   progress the follower records once the events are delivered. Change
   ``batch.events`` in place, or yield ``Batch(new_events, batch.mark)``
   (``dataclasses.replace(batch, events=...)``).
2. **A stage may drop events, drop whole batches, add events and merge
   batches**; a merged batch carries the mark of the *last* batch it completes.
   A batch of one follow holds one transcript's events: merge only batches
   whose marks name the same transcript, or yield them apart.
3. **Never yield a mark before the events it completes**: a stage that holds
   events back (to join or reorder them) yields the marks of the batches those
   events came from only with, or after, those events; otherwise a checkpoint
   would claim events still inside the stage, and a crash would lose them.
4. **Be deterministic.** Event ids digest each event as it leaves the stages, and
   a follower resumed from its state replays the batches after its checkpoint
   through the stages again: a stage that changes an event differently on
   each run gives it another id each time.

What the follow does when rule 1 is broken: a batch with events but no mark
gets the mark of the one batch of events the stage took since its previous
output (a stage that builds one new batch per batch it takes); any other batch
with events and no mark stops the follow with a
:class:`~agentminutes.errors.UsageError` naming the stage, rather than going on
without the progress and transcript the events belong to. ``convert`` and the
other whole-file functions record no progress and do not check marks.

- :mod:`~agentminutes.stages.transforms` — payload truncation and the promotion registry;
- :mod:`~agentminutes.stages.codex_promotions` — Codex telemetry promoted to tool events;
- :mod:`~agentminutes.stages.redact` — secrets replaced by markers (:func:`redact`);
- :mod:`~agentminutes.stages.detectors` — what ``redact`` looks for.
"""

from __future__ import annotations

from agentminutes.pipeline.batch import Stage, apply_stages, per_event
from agentminutes.stages.redact import KEY_ENV, Redaction, redact, redaction
from agentminutes.stages.transforms import (
    PROMOTIONS,
    build_stages,
    promotion,
    promotions,
    truncate_payloads,
)

__all__ = (
    "KEY_ENV",
    "PROMOTIONS",
    "Redaction",
    "Stage",
    "apply_stages",
    "build_stages",
    "per_event",
    "promotion",
    "promotions",
    "redact",
    "redaction",
    "truncate_payloads",
)
