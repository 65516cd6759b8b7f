"""Every harness with a layout, by name: a view of the harness registry.

Each harness names its locator class in its folder's description
(``layout=``, a ``"module:Class"`` in the folder, imported when the harness is
first asked for: ``sessions --harness claude-code`` loads one layout module);
discovery makes one locator per harness on first use, with
:data:`~agentminutes.discovery.layouts.base.READER` to read identities through
the pipeline, and the harness's name and file-name patterns for a layout any
harness may use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from agentminutes.discovery.layouts.base import READER
from agentminutes.harness.description import resolve
from agentminutes.harness.layout import Locator
from agentminutes.harness.registry import described, harnesses

__all__ = (
    "LOCATORS",
    "locator",
)

_made: dict[str, Locator] = {}


def _layout(harness: str) -> Locator | None:
    """The one locator of a harness with a folder layout (made on first use)."""
    found = _made.get(harness)
    if found is None:
        entry = described(harness)
        if entry is None or entry.layout is None:
            return None
        found = resolve(entry.layout)(reader=READER)
        if not found.harness:  # a layout any harness may use (FilesLocator)
            found.harness = harness
        found.patterns = entry.patterns
        _made[harness] = found
    return found


def _with_layout() -> list[str]:
    return [h.name for h in harnesses() if h.layout is not None]


class _Locators(Mapping[str, Locator]):
    """:data:`LOCATORS`: a read-only mapping whose values are made as they are read."""

    def __getitem__(self, harness: str) -> Locator:
        found = _layout(harness)
        if found is None:
            raise KeyError(harness)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_with_layout())

    def __len__(self) -> int:
        return len(_with_layout())

    def __contains__(self, harness: object) -> bool:
        entry = described(harness) if isinstance(harness, str) else None
        return entry is not None and entry.layout is not None


#: Every harness with a layout, by name.
LOCATORS: Final[Mapping[str, Locator]] = _Locators()


def locator(harness: str) -> Locator | None:
    """The locator of *harness*, or ``None`` for a harness discovery does not know.

    Whole-document harnesses without a layout of their own (data exports,
    ``turns.db``) get a :class:`~agentminutes.harness.documents_layout.DocumentLocator`,
    which needs an explicit root.
    """
    found = _layout(harness)
    if found is not None:
        return found
    entry = described(harness)
    if entry is None or entry.reads != "documents":
        return None
    from agentminutes.harness.documents_layout import DocumentLocator

    return DocumentLocator(harness, reader=READER)
