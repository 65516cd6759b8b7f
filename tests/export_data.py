"""The dataset the export tests read: every fixture transcript, exported once per test process."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from conftest import FIXTURES

#: The fixture folders of transcripts (``fixtures/golden`` holds outputs, not transcripts).
#: The lab's recordings are left to tests/lab: each scenario is a home of its own, and the
#: recordings made before the server gave each run ids of its own number their messages
#: from msg_lab000 in every one, so across them the same message ids stand for different
#: requests (a real API's never repeat).
HARNESS_FOLDERS = sorted(
    p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in ("golden", "sessions", "lab")
)


@functools.cache
def fixtures_dataset() -> Path:
    """``agentminutes export`` of every fixture transcript, with two worker processes."""
    from agentminutes.export import export_dataset

    top = Path(tempfile.mkdtemp(prefix="agentminutes-export-"))
    atexit.register(shutil.rmtree, top, True)
    folder = top / "ds"
    result = export_dataset(HARNESS_FOLDERS, to=folder, jobs=2)
    assert result.failed == 0, result.failures
    assert result.exported > 50, result.summary()
    return folder


def parquet(folder: Path, table: str) -> str:
    """The DuckDB source of one table of the dataset at *folder*."""
    return f"read_parquet('{folder}/{table}/**/*.parquet', hive_partitioning=true)"
