"""The Arrow schemas of the exported dataset: one fixed, versioned schema per table.

Every table carries the same identity columns (``transcript``, the absolute path of
the file the rows came from, and ``session_id``) and the two Hive partition
columns, ``harness`` and ``date`` (the UTC day of the session's first timestamp).
The partition columns are part of each schema here, so :func:`~agentminutes.export.to_arrow`
tables are whole; the dataset writer leaves them out of the Parquet files and puts
them in the path (``<table>/harness=<h>/date=<yyyy-mm-dd>/part-*.parquet``), where
DuckDB, Spark, Dask and pyarrow's dataset reader find them again.

:data:`SCHEMA_VERSION` changes whenever any schema here changes (a test holds the
schemas to the version): the minor number for added columns, the major number for
anything a reader could trip on. It is written into every file's metadata and into
the dataset's ``_schema.json``. 1.1 added ``requests.source`` and the normalized
(OpenTelemetry GenAI) ``otel_*`` columns.

Importing this module imports pyarrow; without it, :func:`require_pyarrow` says how
to install it in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from agentminutes.errors import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = (
    "EVENTS",
    "FAILURES",
    "INSTALL_HINT",
    "PARTITION_COLUMNS",
    "REQUESTS",
    "SCHEMAS",
    "SCHEMA_VERSION",
    "SESSIONS",
    "TABLES",
    "TOOL_CALLS",
    "file_schema",
    "require_pyarrow",
    "schema_document",
)

#: The dataset schema version (all five tables share it).
SCHEMA_VERSION: Final = "1.1"

#: What to run when pyarrow is missing.
INSTALL_HINT: Final = "pip install 'agentminutes-py[parquet]'"

#: The table names, in the order they are described and written.
TABLES: Final = ("events", "sessions", "tool_calls", "requests", "failures")

#: The Hive partition columns, in path order.
PARTITION_COLUMNS: Final = ("harness", "date")


def require_pyarrow() -> Any:
    """Import pyarrow, or fail with one line saying how to install it.

    Raises:
        UsageError: pyarrow is not installed.
    """
    try:
        import pyarrow
        import pyarrow.parquet  # the writer needs it: fail here, not midway
    except ImportError:
        raise UsageError(f"export writes Parquet, which needs pyarrow: {INSTALL_HINT}") from None
    return pyarrow


def _build() -> dict[str, pa.Schema]:
    pa = require_pyarrow()
    string = pa.string()
    i64 = pa.int64()
    ts = pa.timestamp("us", tz="UTC")
    json = pa.json_(pa.string())
    strings = pa.list_(pa.string())

    def f(name: str, typ: Any, nullable: bool = True) -> Any:
        return pa.field(name, typ, nullable=nullable)

    ident = [
        f("transcript", string, False),
        f("session_id", string, False),
        f("harness", string, False),
        f("date", pa.date32(), False),
    ]
    events = [
        *ident,
        f("harness_version", string),
        f("seq", i64, False),
        f("kind", string, False),
        f("timestamp", ts),
        f("event_id", string),
        f("parent_id", string),
        f("message_id", string),
        f("agent_id", string),
        f("model", string),
        f("tool_name", string),
        f("tool_kind", string),
        f("tool_call_id", string),
        f("is_error", pa.bool_()),
        f("subtype", string),
        f("line", i64),
        f("end_line", i64),
        f("payload", json),
    ]
    sessions = [
        *ident,
        f("subagent_id", string),
        f("is_subagent", pa.bool_(), False),
        f("parent_session_id", string),
        f("subagent_ids", strings),
        f("harness_version", string),
        f("cwd", string),
        f("git_branch", string),
        f("title", string),
        f("started_at", ts),
        f("ended_at", ts),
        f("wall_time_ms", i64),
        f("models", strings),
        f("events", i64, False),
        f("user_messages", i64, False),
        f("harness_messages", i64, False),
        f("assistant_messages", i64, False),
        f("thinking_blocks", i64, False),
        f("tool_calls", i64, False),
        f("tool_results", i64, False),
        f("tool_errors", i64, False),
        f("unanswered_calls", i64, False),
        f("orphan_results", i64, False),
        f("system_events", i64, False),
        f("unknown_events", i64, False),
        f("skipped_records", i64, False),
        f("result_bytes", i64, False),
        f("input_tokens", i64),
        f("output_tokens", i64),
        f("cache_read_input_tokens", i64),
        f("cache_creation_input_tokens", i64),
        f("total_prompt_tokens", i64),
        f("source_bytes", i64, False),
        f("source_mtime", ts, False),
    ]
    tool_calls = [
        *ident,
        f("agent_id", string),
        f("seq", i64, False),
        f("tool_call_id", string, False),
        f("message_id", string),
        f("model", string),
        f("tool_name", string, False),
        f("tool_kind", string, False),
        f("promoted_from", string),
        f("called_at", ts),
        f("result_at", ts),
        f("duration_ms", i64),
        f("input_bytes", i64, False),
        f("results", i64, False),
        f("result_bytes", i64, False),
        f("is_error", pa.bool_()),
        f("exit_code", i64),
        f("exit_code_source", string),
        f("subagent_id", string),
        f("line", i64),
    ]
    requests = [
        *ident,
        f("agent_id", string),
        f("seq", i64, False),
        f("message_id", string),
        f("dedup_key", string, False),
        f("timestamp", ts),
        f("model", string),
        f("stop_reason", string),
        f("has_usage", pa.bool_(), False),
        f("input_tokens", i64),
        f("output_tokens", i64),
        f("cache_read_input_tokens", i64),
        f("cache_creation_input_tokens", i64),
        f("usage_extra", json),
        f("line", i64),
        # Where the request was read: assistant_message, or the system record (Codex
        # token_count, Copilot assistant.usage / session.shutdown) of a request row that
        # is no message. The otel_* columns count each API request once as `usage` does.
        f("source", string, False),
        f("otel_input_tokens", i64),
        f("otel_output_tokens", i64),
        f("otel_cache_read_input_tokens", i64),
        f("otel_cache_creation_input_tokens", i64),
        f("otel_reasoning_output_tokens", i64),
        f("otel_cache_creation_5m_input_tokens", i64),
        f("otel_cache_creation_1h_input_tokens", i64),
    ]
    failures = [
        f("transcript", string, False),
        f("harness", string, False),
        f("date", pa.date32(), False),
        f("error_type", string, False),
        f("error", string, False),
        f("line", i64),
        f("source_bytes", i64),
        f("source_mtime", ts),
    ]
    out = {}
    for name, fields in (
        ("events", events),
        ("sessions", sessions),
        ("tool_calls", tool_calls),
        ("requests", requests),
        ("failures", failures),
    ):
        meta = {"agentminutes.table": name, "agentminutes.schema_version": SCHEMA_VERSION}
        out[name] = pa.schema(fields, metadata=meta)
    return out


def file_schema(schema: pa.Schema) -> pa.Schema:
    """*schema* without the partition columns: what a Parquet file of the dataset holds."""
    keep = [f for f in schema if f.name not in PARTITION_COLUMNS]
    import pyarrow as pa

    return pa.schema(keep, metadata=schema.metadata)


def schema_document() -> dict[str, object]:
    """The dataset's ``_schema.json``: the version and every table's columns and types."""
    return {
        "agentminutes_export_schema": SCHEMA_VERSION,
        "partitioning": {"style": "hive", "columns": list(PARTITION_COLUMNS)},
        "tables": {
            name: [
                {"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in SCHEMAS[name]
            ]
            for name in TABLES
        },
    }


SCHEMAS: Final[dict[str, pa.Schema]] = _build()
EVENTS: Final[pa.Schema] = SCHEMAS["events"]
SESSIONS: Final[pa.Schema] = SCHEMAS["sessions"]
TOOL_CALLS: Final[pa.Schema] = SCHEMAS["tool_calls"]
REQUESTS: Final[pa.Schema] = SCHEMAS["requests"]
FAILURES: Final[pa.Schema] = SCHEMAS["failures"]
