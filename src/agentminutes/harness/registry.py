"""The registry: every harness the project reads, one line each.

A harness is one folder, ``agentminutes/harness/<folder>/``, whose
``__init__`` declares ``DESCRIPTION``, a :class:`~agentminutes.harness.description.Harness`
(adapter and detection, default roots and the environment variables that move
them, file-name patterns, archive roots, layout, follow tail, drift vocabulary
and baseline, usage and prompt rules, display name). :data:`FOLDERS` lists the
folders; adding a harness is adding its folder and one line here. Every
command asks this module (:func:`harnesses`, :func:`described`) and keeps no
per-harness table of its own.

Cheap to import: a folder's ``__init__`` holds its description and
re-exports its adapter lazily, so reading the descriptions imports no
parser; the parts that are code (adapter, layout, drift vocabulary) are
``"module:attr"`` strings into the folder, imported by
:func:`~agentminutes.harness.description.resolve` when a command uses them.

Line adapters are detected before document adapters, each kind in this order
(alphabetical by harness name).
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Final

from agentminutes.schema.usage_rule import declared_by

if TYPE_CHECKING:
    from agentminutes.harness.description import Harness

__all__ = (
    "FOLDERS",
    "described",
    "extend",
    "forget",
    "harnesses",
    "names",
)

#: Every harness folder below ``agentminutes.harness``, alphabetical by harness name.
FOLDERS: Final[tuple[str, ...]] = (
    "agentminutes.harness.aider",
    "agentminutes.harness.amp",
    "agentminutes.harness.antigravity",
    "agentminutes.harness.chatgpt",
    "agentminutes.harness.claude_ai",
    "agentminutes.harness.claude_code",
    "agentminutes.harness.cline",
    "agentminutes.harness.codex",
    "agentminutes.harness.continue_cli",
    "agentminutes.harness.copilot",
    "agentminutes.harness.crush",
    "agentminutes.harness.cursor",
    "agentminutes.harness.droid",
    "agentminutes.harness.gemini_cli",
    "agentminutes.harness.goose",
    "agentminutes.harness.hermes",
    "agentminutes.harness.kimi",
    "agentminutes.harness.opencode",
    "agentminutes.harness.openhands",
    "agentminutes.harness.pi",
    "agentminutes.harness.qwen_code",
    "agentminutes.harness.turns_db",
)

#: Folders registered at run time (:func:`extend`; the test suite's toy harness).
_extra: list[str] = []
_loaded: tuple[Harness, ...] | None = None
_by_name: dict[str, Harness] = {}
#: Descriptions read one folder at a time before the table is loaded (:func:`described`).
_alone: dict[str, Harness] = {}
_lock = threading.Lock()


def harnesses() -> tuple[Harness, ...]:
    """Every registered harness's description: line formats first, then documents."""
    loaded = _loaded
    if loaded is None:
        loaded = _load()
    return loaded


def _load() -> tuple[Harness, ...]:
    # A follower loads the adapters from a worker thread while the main thread may be
    # detecting: the table is built whole, then published (the name index first).
    global _loaded, _by_name
    with _lock:
        if _loaded is not None:
            return _loaded
        found = [importlib.import_module(m).DESCRIPTION for m in (*FOLDERS, *_extra)]
        lines = [h for h in found if h.reads == "lines"]
        docs = [h for h in found if h.reads == "documents"]
        loaded = tuple(lines + docs)
        _by_name = {h.name: h for h in loaded}
        _loaded = loaded
        return loaded


def names() -> list[str]:
    """The names of every registered harness (line formats first)."""
    return [h.name for h in harnesses()]


def described(name: str) -> Harness | None:
    """The description of harness *name*, or ``None`` for a name not registered."""
    if _loaded is None:
        one = _alone.get(name) or _folder_named(name)
        if one is not None:
            return one
        _load()
    return _by_name.get(name)


def _folder_named(name: str) -> Harness | None:
    """*name*'s description from the folder its name gives, before the table is loaded.

    A command about one harness (``sessions --harness claude-code``) then imports
    one folder, not every one (3 ms of a start). Only while no folder is
    registered at run time, which could declare the same name again.
    """
    folder = "agentminutes.harness." + name.replace("-", "_")
    if _extra or folder not in FOLDERS:
        return None
    found: Harness = importlib.import_module(folder).DESCRIPTION
    if found.name != name:
        return None
    _alone[name] = found
    return found


def extend(folder: str) -> None:
    """Register the harness folder (module) *folder* at run time, after :data:`FOLDERS`.

    For harnesses that live outside this package (a test's toy harness, a
    plug-in); :func:`forget` undoes it.
    """
    global _loaded
    with _lock:
        if folder not in _extra:
            _extra.append(folder)
        _loaded = None
        _alone.clear()  # a folder registered now may declare a built-in name again
    _clear_views()


def forget(folder: str) -> None:
    """Undo :func:`extend` for *folder*."""
    global _loaded
    with _lock:
        if folder in _extra:
            _extra.remove(folder)
        _loaded = None
    _clear_views()


def _clear_views() -> None:
    # Tables derived from the registry are cached by their modules; drop them.
    import sys

    harness = sys.modules.get("agentminutes.harness")
    if harness is not None:
        for view in ("REGISTRY", "DOCUMENT_REGISTRY", "ADAPTERS", "DOCUMENT_ADAPTERS"):
            vars(harness).pop(view, None)


# The schema's usage and prompt arithmetic reads each harness's rules from here.
declared_by(described, harnesses)
