"""Legacy Codex rollouts (before 0.3x): a bare metadata line, then bare items and state markers."""

from __future__ import annotations

from msgspec import Raw

from agentminutes.harness.codex.content import _timestamp
from agentminutes.harness.codex.records import (
    _decode_item,
    _decode_legacy_line,
    _decode_legacy_meta,
    _decode_str,
    _DecodeErrors,
    _lead,
)
from agentminutes.harness.codex.rollout import RolloutMixin
from agentminutes.harness.codex.vocabulary import _QUOTE, HARNESS, RECORD_TYPES
from agentminutes.schema import Event, EventKind, Meta, Provenance, SystemEvent


class LegacyMixin(RolloutMixin):
    """Reads legacy rollout lines; their bare items are read as rollout items."""

    # -- legacy rollouts -----------------------------------------------------

    def _legacy_line(self, line: bytes, lineno: int) -> list[Event]:
        if not self.meta_sent:
            return self._legacy_meta(line, lineno)
        try:
            probe = _decode_legacy_line(line)
        except _DecodeErrors as exc:
            return [self._unknown("", line, lineno, f"invalid JSON: {exc}")]
        if probe.record_type is not None:
            if probe.record_type == "state" and probe.type is None:
                self.skip("record_type/state", lineno)
                return []
            rt = probe.record_type
            return [self._unknown(rt, line, lineno, f'unrecognized record_type "{rt}"')]
        if probe.payload and probe.type in RECORD_TYPES:
            # A modern envelope in a legacy file: the format changed mid-session.
            return self._rollout(line, lineno)
        out: list[Event] = []
        try:
            item = _decode_item(line)
        except _DecodeErrors as exc:
            if not self._tool_search_call(Raw(line), "", line, lineno, out):
                out.append(self._unknown("", line, lineno, f"malformed item: {exc}"))
            return out
        self._close(out)
        self._item(item, Raw(line), "", line, lineno, out)
        return out

    def _legacy_meta(self, line: bytes, lineno: int) -> list[Event]:
        self.meta_sent = True
        try:
            lm = _decode_legacy_meta(line)
        except _DecodeErrors as exc:
            sparse = self._sparse_meta("", line, lineno)
            return [sparse, self._unknown("", line, lineno, f"malformed session metadata: {exc}")]
        ts = _timestamp(lm.timestamp) if lm.timestamp else ""
        meta = Meta(
            harness=HARNESS,
            harness_version=self.options.harness_version,
            session_id=lm.id or "",
            git_branch=(lm.git.branch or "") if lm.git is not None else "",
        )
        out = [self._meta_event(ts, self.prov(line, lineno), meta)]
        instructions = lm.instructions
        if _lead(instructions) == _QUOTE:
            text = _decode_str(instructions)
            if text:
                out.append(
                    Event(
                        kind=EventKind.SYSTEM,
                        timestamp=ts,
                        provenance=Provenance(line=lineno, end_line=lineno),
                        system=SystemEvent(
                            subtype="session_meta/instructions", text=text, details=Raw(line)
                        ),
                    )
                )
        return out
