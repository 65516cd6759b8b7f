"""The synchronous twin of the pipeline: batches of a path without an event loop.

What :func:`agentminutes.iter_events`, :func:`~agentminutes.load` and worker-pool
maps run on: the same conversion as the async path, driven step by step.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator, Sequence
from typing import Any, cast

from agentminutes.errors import UsageError
from agentminutes.harness import ParseOptions
from agentminutes.pipeline.batch import Batch, Stage, apply_stages
from agentminutes.pipeline.conversion import Conversion, open_sync_chunks, source_name
from agentminutes.pipeline.document_sources import feeds, route, single_session
from agentminutes.pipeline.sources import CHUNK_BYTES

__all__ = ("drive", "from_sync", "staged", "sync_feeds")


def drive(batches: AsyncIterator[Batch]) -> Iterator[Batch]:
    """Run an async batch iterator to completion without an event loop.

    Valid for chains that never wait on I/O: the sync source below and the
    built-in stages. A stage that does wait gets a clear error.
    """
    while True:
        step = cast("Coroutine[Any, Any, Batch]", batches.__anext__())
        try:
            step.send(None)
        except StopIteration as done:
            yield done.value
            continue
        except StopAsyncIteration:
            return
        step.close()
        raise UsageError("a stage waited on I/O; use the async API (events/parse) for such stages")


async def from_sync(batches: Iterable[Batch]) -> AsyncIterator[Batch]:
    """Serve already-made batches as an async iterator (what stages take)."""
    for batch in batches:
        yield batch


def staged(batches: Iterator[Batch], chain: Sequence[Stage]) -> Iterator[Batch]:
    """Run *chain* over synchronous *batches*, without an event loop."""
    return drive(apply_stages(from_sync(batches), chain)) if chain else batches


def sync_feeds(
    path: str | os.PathLike[str],
    conversation: str | None,
    every: bool,
    harness: str,
    options: ParseOptions,
    *,
    limit: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[tuple[Iterator[Batch], Callable[[], dict[str, int]]]]:
    """Like :func:`~agentminutes.pipeline.document_sources.feeds`, with synchronous batches, for paths.

    *limit*: a line transcript is read up to that byte offset only (the complete
    lines a live follow takes over after, ``usage --follow``); a whole document
    is read whole. *chunk_bytes*: the size of each read of a line transcript.
    """
    if path == "-":
        raise UsageError("the sync API reads paths; use the async API for stdin")
    found = route(path, harness)
    if found.document is None:
        single_session(path, conversation)
        conv = Conversion(
            name=source_name(path), harness=harness, options=options, path=os.fspath(path)
        )
        chunks = open_sync_chunks(
            path, found.head, found.stream, limit=limit, chunk_bytes=chunk_bytes
        )
        yield conv.iter_batches(chunks), lambda: conv.skipped
        return
    for feed in feeds(path, harness, options, conversation, every=every):
        yield drive(feed.batches), feed.skipped
