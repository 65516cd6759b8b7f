"""Every registered harness declares everything, and every declaration holds.

A harness is one folder whose ``DESCRIPTION`` is listed in the registry; these
tests read each description and check it against the code it names, so a
harness that leaves a declaration out (or declares one that does not hold)
fails here, by name.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import agentminutes.harness as harness_pkg
from agentminutes.discovery.layouts import Locator, locator
from agentminutes.harness import is_document_adapter
from agentminutes.harness.base import Tailing
from agentminutes.harness.description import Harness, resolve
from agentminutes.harness.registry import FOLDERS, described, harnesses, names

DESCRIBED = [pytest.param(h, id=h.name) for h in harnesses()]


def test_a_description_that_leaves_a_declaration_out_is_refused() -> None:
    fields = {f.name: None for f in dataclasses.fields(Harness)}
    complete = {**fields, "name": "x", "display_name": "X", "reads": "lines", "adapter": "m:A"}
    Harness(**complete)  # every field given: accepted
    for left_out in fields:
        partial = {k: v for k, v in complete.items() if k != left_out}
        with pytest.raises(TypeError, match=left_out):
            Harness(**partial)


def test_every_harness_folder_is_registered() -> None:
    # A folder with a DESCRIPTION the registry does not list would be read by nothing.
    folders = {
        f"agentminutes.harness.{m.name}"
        for m in pkgutil.iter_modules(harness_pkg.__path__)
        if m.ispkg
    }
    assert folders == set(FOLDERS)
    assert list(FOLDERS) == sorted(
        FOLDERS, key=lambda m: importlib.import_module(m).DESCRIPTION.name
    )


def test_names_are_unique_and_found() -> None:
    assert len(set(names())) == len(names())
    for name in names():
        found = described(name)
        assert found is not None
        assert found.name == name
    assert described("no-such-harness") is None


@pytest.mark.parametrize("h", DESCRIBED)
def test_the_adapter_is_the_harness_s(h: Harness) -> None:
    cls = resolve(h.adapter)
    assert cls.name == h.name
    assert is_document_adapter(cls) == (h.reads == "documents")
    assert h.display_name.strip()


@pytest.mark.parametrize("h", DESCRIBED)
def test_where_it_writes(h: Harness, tmp_path: Path) -> None:
    if h.roots is None:
        # No home folder (a data export; Aider's history in each repository): no
        # archives or env to move them; a transcript harness is still found under a root.
        assert (h.env, h.archives) == ((), None)
        assert h.reads == "documents" or h.layout is not None
        return
    assert h.patterns, "a harness with roots says which files in them are transcripts"
    env = {"HOME": str(tmp_path)}
    default = h.roots(env)
    assert default
    assert all(str(p).startswith(str(tmp_path)) for p in default)
    for var in h.env:
        moved = h.roots({**env, var: str(tmp_path / "moved")})
        assert moved != default, f"{var} does not move {h.name}'s roots"
    if h.archives is not None:
        assert h.archives(env)
    found = locator(h.name)
    assert isinstance(found, Locator)
    assert found.harness == h.name


@pytest.mark.parametrize("h", DESCRIBED)
def test_the_layout_is_the_harness_s(h: Harness) -> None:
    if h.layout is None:
        assert h.reads == "documents", "a line harness needs a layout to be found"
        return
    cls = resolve(h.layout)
    assert issubclass(cls, Locator)
    assert cls.harness in ("", h.name)


@pytest.mark.parametrize("h", DESCRIBED)
def test_follow_reads_it_through_a_declared_tail(h: Harness) -> None:
    cls = resolve(h.adapter)
    if h.tail:
        assert h.reads == "documents"
        assert isinstance(cls.__new__(cls), Tailing)
    else:
        assert not hasattr(cls, "tail"), "an adapter with a tail says so: tail=True"


@pytest.mark.parametrize("h", DESCRIBED)
def test_drift_vocabulary_and_baseline_come_together(h: Harness) -> None:
    assert (h.vocabulary is None) == (h.baseline is None)
    if h.vocabulary is None or h.baseline is None:
        return
    assert resolve(h.vocabulary).harness == h.name
    package, _, rel = h.baseline.partition(":")
    assert importlib.resources.files(package).joinpath(rel).is_file()


@pytest.mark.parametrize("h", DESCRIBED)
def test_usage_and_prompt_rules_agree(h: Harness) -> None:
    assert h.prompt in ("all", "input", "")
    if h.prompt:
        # A harness whose usage is summed must say what its fields mean.
        assert h.usage is not None
        assert h.usage.input_includes_cache == (h.prompt == "input")


@pytest.mark.parametrize("h", DESCRIBED)
def test_the_provider_is_a_gen_ai_provider_name(h: Harness) -> None:
    # OpenTelemetry's gen_ai.provider.name values, or "" where users choose the provider.
    assert h.provider == h.provider.strip().lower()
    assert " " not in h.provider


def test_reading_the_registry_imports_no_adapter() -> None:
    probe = (
        "import sys\n"
        "from agentminutes.harness.registry import harnesses\n"
        "names = [h.name for h in harnesses()]\n"
        "print(sorted(m for m in sys.modules if m.endswith(('.adapter', '.drift'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"


def test_one_harness_is_described_from_its_folder_as_the_table_describes_it() -> None:
    # Before the table is loaded, a name is looked up in the one folder it names; the
    # description is the object the whole table then holds.
    probe = (
        "import sys\n"
        "from agentminutes.harness import registry\n"
        "one = registry.described('claude-code')\n"
        "folders = [m for m in sys.modules if m.startswith('agentminutes.harness.')]\n"
        "before = sorted(m for m in folders if m.count('.') == 2)\n"
        "assert registry.described('no-such-harness') is None\n"
        "assert one is registry.described('claude-code') is registry._by_name['claude-code']\n"
        "print(before)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "agentminutes.harness.claude_code" in out
    assert "agentminutes.harness.aider" not in out
