"""The toy harness's drift vocabulary: records are typed by ``t``; tool names are vocabulary."""

from __future__ import annotations

from typing import Final

from agentminutes.harness.drift_vocabulary import Obj, Vocabulary, string_at


def _record_type(record: Obj) -> str:
    return string_at(record, "t") or "(untyped)"


VOCABULARY: Final = Vocabulary(
    harness="toy",
    record_type=_record_type,
    discriminators={"tool": ("name",)},
)
