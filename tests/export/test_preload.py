"""The export's own processes convert to Arrow without importing pandas, and can still use it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import FIXTURES

pytest.importorskip("pyarrow")
pytest.importorskip("pandas")

SCRIPT = """
import sys
import agentminutes.export._preload
from agentminutes.export.tables import to_arrow
table = to_arrow(sys.argv[1], "events")
assert table.num_rows > 0
print("pandas" in sys.modules)
frame = table.select(["seq"]).to_pandas()
print(type(frame).__name__, len(frame) == table.num_rows)
"""


def test_worker_preload_leaves_pandas_out_and_to_pandas_still_works() -> None:
    path = FIXTURES / "claude-code" / "cabgov" / "d82cf66b-4323-4430-a7b0-1cdbc3a784f6.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "DataFrame", "True"]


def test_a_process_that_has_pandas_keeps_it() -> None:
    script = (
        "import pandas, sys\n"
        "import agentminutes.export._preload\n"
        "import pyarrow as pa\n"
        "print(pa.array(pandas.Series([1, 2])).type)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "int64"
