"""Lazy re-exports: a package's public names imported from their modules on first use.

A package ``__init__`` names where each of its re-exports lives and gets a
module ``__getattr__`` (PEP 562) for them, so importing the package stays
cheap and a command loads only the modules it uses. A value is imported once:
it is put into the package's namespace, where later lookups find it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ("lazy_exports", "moved")


def lazy_exports(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for *package*: *homes* maps each name to its module's path below
    it (or, starting ``agentminutes.``, to a module elsewhere).

    *namespace* is the package's ``globals()``, where each value is kept once
    imported. Any other name raises ``AttributeError``, as a module does.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = home if home.startswith("agentminutes.") else f"{package}.{home}"
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__


def moved(old: str, new: str) -> Callable[[str], Any]:
    """The ``__getattr__`` of module *old*, whose names now live in module *new*.

    Each name is taken from *new* with a :class:`DeprecationWarning` naming where
    to import it from now; a name *new* does not have raises ``AttributeError``.
    """

    def __getattr__(name: str) -> Any:
        value = getattr(importlib.import_module(new), name, _MISSING)
        if value is _MISSING or name.startswith("__"):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        import warnings

        warnings.warn(
            f"{old} is deprecated: import {name} from {new}", DeprecationWarning, stacklevel=2
        )
        return value

    return __getattr__


_MISSING: Any = object()
