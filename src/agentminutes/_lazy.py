"""Lazy re-exports: a package's public names imported from their modules on first use.

A package ``__init__`` says where each re-export lives once, as the import a
type checker reads::

    if TYPE_CHECKING:
        from agentminutes.harness.codex.adapter import CodexAdapter

    __all__ = ("DESCRIPTION", "CodexAdapter")

    __getattr__ = lazy_exports(globals())

and gets a module ``__getattr__`` (PEP 562) that, for a name in ``__all__``,
imports the module that block names and keeps the value in the package's
namespace (later lookups find it there). The ``TYPE_CHECKING`` block is the one
source: mypy types the re-exports from it, exactly as written, and this module
reads the same lines (from the package's source, on the first name asked for,
so importing the package stays cheap and a command loads only the modules it
uses). ``__all__`` is the package's public list, as in any module; a name there
that is neither defined nor imported in the block fails ``ruff`` (F822) and
``tests/test_lazy_exports.py``.

Why not the other forms: a table of names to modules beside the block (what
this replaced) writes every name three times, and nothing checked that the
three agreed; a stub ``__init__.pyi`` would be a second file to keep in step
with the runtime table. Reading the block costs one read of a small file
(through the module's loader, so a zipped install works too; an install of
compiled files alone cannot, and says so) and a regular expression (``ast`` would cost 28 ms of imports at the first lookup).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

__all__ = ("lazy_exports", "moved", "type_checking_imports")

#: The ``if TYPE_CHECKING:`` block of a module: that line and the indented lines after it.
_BLOCK = re.compile(r"^if TYPE_CHECKING:\n((?:[ \t]+.*\n|[ \t]*\n)*)", re.MULTILINE)
#: One ``from module import names`` in it (names in parentheses may span lines).
_FROM = re.compile(r"^[ \t]+from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|.*)$", re.MULTILINE)


def type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    """The names *source*'s ``if TYPE_CHECKING:`` blocks bind: each with its module and
    the name it has there (``from m import a as b`` binds ``b`` to ``(m, a)``)."""
    found: dict[str, tuple[str, str]] = {}
    for block in _BLOCK.finditer(source):
        for module, names in _FROM.findall(block.group(1)):
            for part in re.sub(r"#.*", "", names).strip().strip("()").split(","):
                original, _, bound = part.strip().partition(" as ")
                if original:
                    found[bound.strip() or original] = (module, original)
    return found


def lazy_exports(namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the package whose ``globals()`` is *namespace*.

    Each name of its ``__all__`` not defined at import is taken from the module
    its ``if TYPE_CHECKING:`` block imports it from (read on the first lookup),
    and kept in *namespace*. Any other name raises ``AttributeError``, as a module does.
    """
    package = namespace["__name__"]
    homes: dict[str, tuple[str, str]] = {}

    def __getattr__(name: str) -> Any:
        if not homes and not name.startswith("__"):
            imported = type_checking_imports(_source(namespace))
            homes.update((n, imported[n]) for n in namespace.get("__all__", ()) if n in imported)
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0]), home[1])
        namespace[name] = value
        return value

    return __getattr__


def _source(namespace: dict[str, Any]) -> str:
    """The source text of the package whose ``globals()`` is *namespace*, as its loader
    gives it: a file on disk, or a member of a zip archive (``zipimport``)."""
    package = namespace["__name__"]
    loader = getattr(namespace.get("__spec__"), "loader", None)
    get_source = getattr(loader, "get_source", None)
    source = get_source(package) if get_source is not None else None
    if source is None:
        # An install of compiled files only: the block that names each module is gone.
        raise ImportError(
            f"{package}: its lazy exports are named in its source, which this install "
            "does not have (install agentminutes with its .py files)"
        )
    return str(source)


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
