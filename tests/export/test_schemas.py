"""The dataset's schemas are fixed and versioned: a change without a version bump fails here."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from agentminutes.export import schemas
from export_data import fixtures_dataset

LOCK = Path(__file__).with_name("schema_lock.json")


def _current() -> dict[str, object]:
    return {
        "version": schemas.SCHEMA_VERSION,
        "tables": {
            name: [
                f"{f.name}: {f.type}{'' if f.nullable else ' not null'}"
                for f in schemas.SCHEMAS[name]
            ]
            for name in schemas.TABLES
        },
    }


def test_schemas_change_only_with_a_version_bump() -> None:
    """The lock holds the schemas of the version it names. A schema change that keeps the
    version fails; after a bump, regenerate the lock with AGENTMINUTES_SCHEMA_LOCK=write."""
    current = _current()
    if os.environ.get("AGENTMINUTES_SCHEMA_LOCK") == "write":
        LOCK.write_text(json.dumps(current, indent=1) + "\n", encoding="utf-8")
    locked = json.loads(LOCK.read_text(encoding="utf-8"))
    if current["tables"] != locked["tables"]:
        assert current["version"] != locked["version"], (
            f"the export schemas changed but SCHEMA_VERSION is still {locked['version']}: "
            "bump it (minor for added columns, major otherwise), then rewrite "
            "tests/export/schema_lock.json (AGENTMINUTES_SCHEMA_LOCK=write pytest -k schema)"
        )
        pytest.fail(
            f"SCHEMA_VERSION is {current['version']} but the lock is of {locked['version']}: "
            "rewrite it (AGENTMINUTES_SCHEMA_LOCK=write pytest -k schema)"
        )
    assert current["version"] == locked["version"], "version bumped without a schema change"


def test_every_file_and_the_schema_document_carry_the_version() -> None:
    folder = fixtures_dataset()
    doc = json.loads((folder / "_schema.json").read_text(encoding="utf-8"))
    assert doc["agentminutes_export_schema"] == schemas.SCHEMA_VERSION
    assert list(doc["tables"]) == list(schemas.TABLES)
    files = sorted(folder.glob("*/harness=*/date=*/part-*.parquet"))
    assert {f.relative_to(folder).parts[0] for f in files} >= {
        "events",
        "sessions",
        "tool_calls",
        "requests",
    }
    for f in files:
        meta = pq.read_schema(f).metadata
        table = f.relative_to(folder).parts[0]
        assert meta[b"agentminutes.schema_version"] == schemas.SCHEMA_VERSION.encode()
        assert meta[b"agentminutes.table"] == table.encode()
        # The file holds the table's columns but the partition ones, which are in its path.
        assert pq.read_schema(f).names == [
            n for n in schemas.SCHEMAS[table].names if n not in ("harness", "date")
        ]


def test_the_partition_columns_come_back_typed_in_duckdb() -> None:
    import duckdb

    folder = fixtures_dataset()
    rows = duckdb.sql(
        f"DESCRIBE SELECT * FROM read_parquet('{folder}/sessions/**/*.parquet', "
        "hive_partitioning=true)"
    ).fetchall()
    types = {r[0]: r[1] for r in rows}
    assert types["date"] == "DATE"
    assert types["harness"] == "VARCHAR"
    assert types["started_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["subagent_ids"] == "VARCHAR[]"
    payload = duckdb.sql(
        f"SELECT typeof(payload) FROM read_parquet('{folder}/events/**/*.parquet') LIMIT 1"
    ).fetchall()
    assert payload == [("JSON",)]
