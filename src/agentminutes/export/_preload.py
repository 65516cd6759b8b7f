"""The first module the export's worker processes import (the forkserver preload's first).

pyarrow imports pandas, when it is installed, on its first conversion of a Python
list: about 50 MB of resident memory and a second of start-up in every worker, for a
library the export never uses. The export's own processes (the CLI and its workers)
tell pyarrow that pandas is absent; a library caller's process is left as it is.
"""

from __future__ import annotations

import importlib.abc
import sys

__all__ = ("arrow_without_pandas",)


def arrow_without_pandas() -> None:
    """Make pyarrow's first list conversion in this process without importing pandas.

    Only where pandas is not imported already and pyarrow has not converted a list yet;
    a later ``to_pandas()`` still imports it (pyarrow retries then).
    """
    if "pandas" in sys.modules or "agentminutes.export.tables" in sys.modules:
        return
    from agentminutes.export import schemas

    pa = schemas.require_pyarrow()
    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)
    try:
        pa.array([], pa.string())
    finally:
        sys.meta_path.remove(blocker)


class _NoPandas(importlib.abc.MetaPathFinder):
    """A finder for which pandas is not installed (for pyarrow's one attempt)."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


arrow_without_pandas()
