"""Transform stages: opt-in reshaping of the event stream between adapter and sink.

Adapters translate; stages reshape, and only when asked. A stage takes an
async iterator of :class:`~agentminutes.Batch` and yields batches; a plain
per-event function becomes one with :func:`~agentminutes.per_event`. Stages
keep each source event's provenance, so line accounting still holds after
them, and mark what they synthesize (``promoted_from``).

Stages available by name (``--promote``) are listed in :data:`PROMOTIONS`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from agentminutes.errors import OptionError
from agentminutes.pipeline.batch import Stage, per_event
from agentminutes.schema import NO_RAW, ContentBlock, Event, Raw

__all__ = ("PROMOTIONS", "build_stages", "promotion", "promotions", "truncate_payloads")


def _codex_patch_apply() -> Stage:
    from agentminutes.stages.codex_promotions import patch_apply

    return patch_apply()


def _codex_web_search() -> Stage:
    from agentminutes.stages.codex_promotions import web_search

    return web_search()


#: Opt-in telemetry promotions by name; each value builds the stage.
PROMOTIONS: dict[str, Callable[[], Stage]] = {
    "codex:patch-apply": _codex_patch_apply,
    "codex:web-search": _codex_web_search,
}


def build_stages(
    *,
    promote: Sequence[str] = (),
    max_payload_bytes: int = 0,
    stages: Sequence[Stage] = (),
    redaction: Stage | None = None,
) -> list[Stage]:
    """The stage chain for the common options: promotions, *stages*, *redaction*, truncation.

    Redaction comes after everything that makes or reshapes events and before
    truncation, so a truncated payload's digest is of the redacted text.
    """
    if max_payload_bytes < 0:
        raise OptionError("--max-payload-bytes must be 0 (keep whole) or positive")
    chain = promotions(promote)
    chain.extend(stages)
    if redaction is not None:
        chain.append(redaction)
    if max_payload_bytes:
        chain.append(truncate_payloads(max_payload_bytes))
    return chain


def promotion(name: str) -> Stage:
    """Build the promotion stage registered as *name* (e.g. ``"codex:web-search"``)."""
    try:
        factory = PROMOTIONS[name]
    except KeyError:
        known = ", ".join(f'"{n}"' for n in sorted(PROMOTIONS)) or "none"
        raise OptionError(f'--promote: unknown promotion "{name}" (known: {known})') from None
    return factory()


def promotions(names: Sequence[str]) -> list[Stage]:
    """Build the promotion stages for *names* (each may list several, comma-separated), in order."""
    return [promotion(n.strip()) for names_ in names for n in names_.split(",") if n.strip()]


def _digest(data: bytes) -> str:
    import hashlib  # here: OpenSSL loads with it, and only truncation digests

    return hashlib.sha256(data).hexdigest()


def truncate_payloads(max_bytes: int) -> Stage:
    """Replace tool-result payloads larger than *max_bytes* by their size and sha256.

    Text blocks are measured in UTF-8 bytes, other blocks by their verbatim
    native JSON; the enrichment sidecar becomes
    ``{"truncated": true, "size": N, "sha256": "..."}``.

    Results that are no tool's output are left whole: promoted ones, and those
    recorded by the same record as their call right before them (a Codex
    ``web_search_call``), whose enrichment is that record.
    """
    last_call: list[tuple[str, int]] = [("", 0)]

    def truncate(ev: Event) -> Event:
        call = ev.tool_call
        if call is not None:
            last_call[0] = (call.tool_call_id, ev.provenance.line if ev.provenance else 0)
            return ev
        result = ev.tool_result
        if result is None or result.promoted_from:
            return ev
        line = ev.provenance.line if ev.provenance else 0
        if line and last_call[0] == (result.tool_call_id, line):
            return ev
        if result.content:
            blocks: list[ContentBlock] = []
            for b in result.content:
                text = b.text.encode()
                if len(text) > max_bytes:
                    b = msgspec.structs.replace(
                        b, text="", truncated=True, size=len(text), digest=_digest(text)
                    )
                if len(b.raw) > max_bytes:
                    data = bytes(b.raw)
                    b = msgspec.structs.replace(
                        b, raw=NO_RAW, truncated=True, size=len(data), digest=_digest(data)
                    )
                blocks.append(b)
            result.content = blocks
        if result.enrichment is not None and len(result.enrichment) > max_bytes:
            data = bytes(result.enrichment)
            placeholder = {"truncated": True, "size": len(data), "sha256": _digest(data)}
            result.enrichment = Raw(msgspec.json.encode(placeholder))
        return ev

    stage = per_event(truncate)
    stage.__name__ = f"truncate_payloads({max_bytes})"
    return stage
