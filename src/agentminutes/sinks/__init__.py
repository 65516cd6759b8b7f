"""Sinks: where event batches end up.

Every sink has the same two coroutines, ``send(batch)`` and ``aclose()``.
``send`` returns once the batch's events are taken: written and flushed for a
stream or file, so a caller that checkpoints after ``send`` never records
progress that was not delivered.

- :mod:`~agentminutes.sinks.encoding` — events to JSON lines;
- :mod:`~agentminutes.sinks.protocol` — the :class:`Sink` protocol;
- :mod:`~agentminutes.sinks.streams` — stdout and files for ``follow``, and ``--to`` specs;
- :mod:`~agentminutes.sinks.sockets` — TCP and Unix-socket collectors;
- :mod:`~agentminutes.sinks.output` — where a command's output goes (``-o``, stdout).

The names below are loaded on first use, so that a command importing one
module (the command line's stdout guard) does not pay for all of them.
:class:`JsonlSink`, :class:`SessionJsonSink` and :class:`StatsSink` are the output
formats' writers as sinks; they live with their formats (:mod:`agentminutes.formats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentminutes._lazy import lazy_exports

if TYPE_CHECKING:
    from agentminutes.formats.json import SessionJsonSink
    from agentminutes.formats.jsonl import JsonlSink
    from agentminutes.formats.stats import StatsSink
    from agentminutes.sinks.encoding import append_jsonl, encode_event, jsonl_encoder, one_line
    from agentminutes.sinks.protocol import Sink
    from agentminutes.sinks.sockets import SocketSink
    from agentminutes.sinks.streams import FileSink, StreamSink, parse_sink_spec

__all__ = (
    "FileSink",
    "JsonlSink",
    "SessionJsonSink",
    "Sink",
    "SocketSink",
    "StatsSink",
    "StreamSink",
    "append_jsonl",
    "encode_event",
    "jsonl_encoder",
    "one_line",
    "parse_sink_spec",
)


__getattr__ = lazy_exports(globals())
