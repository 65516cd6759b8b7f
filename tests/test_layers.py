"""The packages form layers that import one way only, and no modules import each other in a circle.

Every ``import``/``from … import`` of an agentminutes module is counted, wherever it
stands (top level, inside a function, under ``TYPE_CHECKING``): a lazy import is
still a dependency. A module may import its own layer or a lower one; a cycle
is an error even inside one package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "agentminutes"

#: Lowest first. A package may import its own layer or any below it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("_lazy", "_version", "errors", "timestamps", "versions"),
    ("schema",),
    ("harness",),
    ("pipeline",),
    ("stages", "sinks", "formats"),
    ("discovery", "export", "drift"),
    ("live",),
    ("api", "capture", "__init__"),
    ("usage",),
    ("view",),
    ("cli", "__main__"),
)
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The agentminutes modules *path* imports (``from pkg import sub`` counts as ``pkg.sub``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "agentminutes")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "agentminutes":
                continue
            subs = {f"{target}.{a.name}" for a in node.names} & known
            found.update(subs or {target})
    found.discard(name)
    return found


def _layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(path, name, known) for name, path in modules.items()}


def test_every_package_has_a_layer() -> None:
    unplaced = sorted({_layer_of(m) for m in _modules()} - set(RANK))
    assert not unplaced, f"give these a place in LAYERS: {unplaced}"


def test_no_package_imports_a_higher_layer() -> None:
    upward = [
        f"{mod} imports {dep}"
        for mod, deps in sorted(_graph().items())
        for dep in sorted(deps)
        if RANK[_layer_of(dep)] > RANK[_layer_of(mod)]
    ]
    assert not upward, "\n".join(upward)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of *graph*, or ``None``. Edges into a package's own ``__init__``
    from its submodules are Python's import order, not a dependency, and are ignored."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if node.startswith(dep + "."):
                continue
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state and (found := visit(dep)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycles() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize(
    ("graph", "cyclic"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, False),
        ({"a": {"b"}, "b": {"a"}}, True),
        ({"p": {"p.x"}, "p.x": {"p"}}, False),  # a package re-exporting its submodule
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, True),
    ],
)
def test_the_cycle_finder_finds_cycles(graph: dict[str, set[str]], cyclic: bool) -> None:
    assert (_cycle(graph) is not None) is cyclic


def test_imports_are_read_wherever_they_stand(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from agentminutes.cli import main\n"
        "def f():\n    from agentminutes.live import runner\n",
        encoding="utf-8",
    )
    known = {"agentminutes.cli", "agentminutes.live", "agentminutes.live.runner"}
    assert _imports(mod, "agentminutes.m", known) == {
        "agentminutes.cli",
        "agentminutes.live.runner",
    }
