"""Aider's drift vocabulary: the kinds of its report lines (read by :mod:`agentminutes.drift`).

The history is Markdown, not JSON: the whole file is split into runs, inputs
and report lines. A report line's kind is the label before its colon
(``Tokens``, ``Main model``), else its first word (``Applied``, ``Added``);
the free text after it is no vocabulary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Final

from msgspec import Raw

from agentminutes.harness.drift_vocabulary import Obj, Vocabulary, as_str

__all__ = ("VOCABULARY",)

_LABEL: Final = re.compile(r"^([A-Z][\w -]{0,24}?):\s")
_WORD: Final = re.compile(r"^([A-Z][a-z-]{1,14})\b")


def _records(doc: Raw) -> Iterator[tuple[str, Obj]]:
    """A chat history's runs, inputs and the kinds of Aider's report lines."""
    for line in (as_str(doc) or "").splitlines():
        bare = line.strip()
        if bare.startswith("# aider chat started at "):
            yield "run", {}
        elif bare.startswith("#### ") and line.endswith("  "):
            yield "input", {"command": Raw(b'"/"')} if bare[5:].startswith("/") else {}
        elif bare.startswith("> ") and line.endswith("  "):
            m = _LABEL.match(bare[2:]) or _WORD.match(bare[2:])
            if m:
                yield "report", {"kind": Raw(json.dumps(m.group(1)).encode())}


VOCABULARY: Final = Vocabulary(
    harness="aider",
    discriminators={"report": ("kind",)},
    document=_records,
    text=True,
)
