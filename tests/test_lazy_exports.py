"""Every package that re-exports lazily says each name once, in its ``TYPE_CHECKING`` block."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agentminutes._lazy import type_checking_imports

SRC = Path(__file__).resolve().parent.parent / "src"
LAZY = sorted(
    ".".join(p.relative_to(SRC).parent.parts)
    for p in SRC.rglob("__init__.py")
    if "lazy_exports(globals())" in p.read_text(encoding="utf-8")
)


def test_the_packages_are_found() -> None:
    assert {"agentminutes", "agentminutes.sinks", "agentminutes.harness.codex"} <= set(LAZY)


@pytest.mark.parametrize("package", LAZY)
def test_every_public_name_resolves_to_what_the_block_imports(package: str) -> None:
    module = importlib.import_module(package)
    block = type_checking_imports(Path(module.__file__ or "").read_text(encoding="utf-8"))
    lazy = [name for name in module.__all__ if name in block]
    assert lazy, "a package with lazy exports re-exports something"
    for name in module.__all__:
        value = getattr(module, name)
        if isinstance(value, ModuleType) and value.__name__ == f"{package}.{name}":
            continue  # once imported, a submodule of that name is bound over it (capture)
        if name in block:
            home, original = block[name]
            assert value is getattr(importlib.import_module(home), original)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


def test_the_block_is_read_as_written() -> None:
    source = (
        "if TYPE_CHECKING:\n"
        "    from pathlib import Path\n"
        "\n"
        "    from a.b import (  # why\n"
        "        C,\n"
        "        d as e,\n"
        "    )\n"
        "x = 1\n"
        "    from not_in_a_block import f\n"
    )
    assert type_checking_imports(source) == {
        "Path": ("pathlib", "Path"),
        "C": ("a.b", "C"),
        "e": ("a.b", "d"),
    }


def test_importing_a_package_imports_none_of_its_lazy_modules() -> None:
    probe = (
        "import sys, agentminutes.sinks as s\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentminutes.sinks.')))\n"
        "s.encode_event\n"
        "print('agentminutes.sinks.encoding' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.splitlines()
    assert out == ["[]", "True"]


def test_lazy_exports_resolve_from_a_zip_archive(tmp_path: Path) -> None:
    """A zipapp or zipped install has no files on disk: the block is read through the loader."""
    import zipfile

    archive = tmp_path / "agentminutes.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted((SRC / "agentminutes").rglob("*.py")):
            z.write(path, path.relative_to(SRC).as_posix())
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import agentminutes, agentminutes.sinks; "
        "assert agentminutes.__file__.startswith(sys.argv[1]), agentminutes.__file__; "
        "print(agentminutes.parse.__module__, agentminutes.sinks.__all__[0] in dir(agentminutes.sinks) "
        "or getattr(agentminutes.sinks, agentminutes.sinks.__all__[0]) is not None)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(archive)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["agentminutes.api", "True"]
