"""Which harnesses drift scanning covers: those whose description names a vocabulary.

Each harness declares its :class:`~agentminutes.harness.drift_vocabulary.Vocabulary`
in its folder (``harness/<name>/drift.py``) and names it, with its baseline,
in its description; this module answers from the registry. Adding a harness's
coverage means writing that module and running
``scripts/build_drift_baselines.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from agentminutes.harness.description import resolve
from agentminutes.harness.drift_vocabulary import Vocabulary
from agentminutes.harness.registry import described, harnesses

__all__ = ("VOCABULARIES", "vocabulary")


def vocabulary(harness: str) -> Vocabulary | None:
    """The vocabulary rules of *harness*, or ``None`` if drift scanning does not cover it."""
    found = described(harness)
    if found is None or found.vocabulary is None:
        return None
    vocab: Vocabulary = resolve(found.vocabulary)
    return vocab


class _Vocabularies(Mapping[str, Vocabulary]):
    """:data:`VOCABULARIES`: every covered harness's vocabulary, by name (alphabetical)."""

    def _names(self) -> list[str]:
        return sorted(h.name for h in harnesses() if h.vocabulary is not None)

    def __getitem__(self, harness: str) -> Vocabulary:
        found = vocabulary(harness)
        if found is None:
            raise KeyError(harness)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


#: Every harness with a vocabulary, by name (a view of the registry).
VOCABULARIES: Final[Mapping[str, Vocabulary]] = _Vocabularies()
