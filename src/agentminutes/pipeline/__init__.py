"""The one conversion path: sources of lines or documents → adapter → batches of events.

- :mod:`~agentminutes.pipeline.sources` — reading bytes and splitting them into whole lines;
- :mod:`~agentminutes.pipeline.batch` — :class:`Batch`, the :data:`Stage` type, :func:`per_event`;
- :mod:`~agentminutes.pipeline.conversion` — a line transcript through its adapter;
- :mod:`~agentminutes.pipeline.document_sources` — whole documents (exports, ZIPs, databases) by route;
- :mod:`~agentminutes.pipeline.detect` — which harness wrote a file.

It imports the schema, errors and the harness registry; nothing above it.
"""
