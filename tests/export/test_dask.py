"""The README's Dask recipe, on a real two-worker ``distributed.LocalCluster``: its rows equal
the single-process export's."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.dataset as pads

from agentminutes.export import schemas
from export_data import HARNESS_FOLDERS, fixtures_dataset


def _sorted(table: pa.Table, columns: list[str]) -> pa.Table:
    return table.select(columns).sort_by([(c, "ascending") for c in ("transcript", "seq")])


def test_dask_from_map_over_a_local_cluster_equals_the_export() -> None:
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    from agentminutes.export import TOOL_CALLS, to_arrow

    def tool_calls(path: str) -> pd.DataFrame:
        return to_arrow(path, "tool_calls").to_pandas(types_mapper=pd.ArrowDtype)

    # A few transcripts of three harnesses: the cluster's start is most of the cost.
    paths = [
        str(p.resolve())
        for folder in HARNESS_FOLDERS
        if folder.name in ("claude-code", "codex", "pi")
        for p in sorted(folder.rglob("*.jsonl"))[:4]
    ]
    # What the README recipe runs (two worker processes, one thread each).
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster),
    ):
        meta = TOOL_CALLS.empty_table().to_pandas(types_mapper=pd.ArrowDtype)
        frame = dd.from_map(tool_calls, paths, meta=meta)
        computed = frame.compute()
    got = pa.Table.from_pandas(computed, preserve_index=False)

    written = pads.dataset(
        fixtures_dataset() / "tool_calls", format="parquet", partitioning="hive"
    ).to_table(filter=pads.field("transcript").isin(paths))
    columns = [n for n in schemas.TOOL_CALLS.names if n not in ("harness", "date")]
    assert got.num_rows == written.num_rows > 20
    want = _sorted(written, columns).to_pylist()
    have = _sorted(got, columns).to_pylist()
    assert have == want
