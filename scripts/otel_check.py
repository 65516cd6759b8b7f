#!/usr/bin/env python3
"""The figures of the OTel and ATIF lenses over every transcript fixture of every harness.

    python scripts/otel_check.py [--fixtures DIR]

For each harness, over every session of every fixture (``fixtures/<harness>/``,
goldens and sidecars excluded):

* **otlp-json**: the session's spans, encoded as ``convert --format otlp-json``
  encodes them (:func:`agentminutes.formats.otlp_json.encode_otlp_json`), parsed by
  ``opentelemetry-proto``'s JSON parser into ``ExportTraceServiceRequest``
  (ids handed over as base64, the one documented OTLP/JSON deviation); span
  counts compared with assistant messages + tool calls + 1 + subagents; token
  sums over the ``chat`` spans compared with the normalized usage totals
  (``total_prompt_tokens`` by the harness's rule, output, cache reads and writes)
  where the session records usage and the harness has a prompt rule. Copilot
  CLI records usage beside its messages: its normalized requests
  (:func:`agentminutes.schema.usage.requests`) are the totals, the chat spans
  must carry the per-request ones (``assistant.usage``) and all spans together
  every one (``session.shutdown`` sums sit on the root span).
* **ATIF**: the trajectory validated by the ``atif`` 1.8.0 models in strict mode,
  and what the lens loses, summed by reason.

Needs the test extra (``opentelemetry-proto``, ``atif``). Prints one block per
harness and a total line; exits 1 if any check failed.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_HEX_IDS = ("traceId", "spanId", "parentSpanId")


def transcripts(base: Path) -> list[Path]:
    """Every transcript fixture under *base* (what the tests take: sidecars and goldens out)."""
    return sorted(
        p
        for p in base.rglob("*")
        if p.is_file()
        and p.suffix in (".jsonl", ".json", ".log", ".zip", ".db")
        and not p.name.endswith(".meta.json")
        and p.name != "journal.jsonl"
        and "golden" not in p.parts
    )


def parse_otlp_json(line: bytes) -> Any:
    """One OTLP/JSON line through ``opentelemetry-proto``'s JSON parser."""
    from google.protobuf.json_format import Parse
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = json.loads(line)
    for rs in request["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in _HEX_IDS:
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return Parse(json.dumps(request), ExportTraceServiceRequest())


def _int_attr(span: Any, key: str) -> int:
    for kv in span.attributes:
        if kv.key == key:
            return int(kv.value.int_value)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixtures", type=Path, default=ROOT / "fixtures")
    args = parser.parse_args()

    import atif

    from agentminutes import iter_sessions
    from agentminutes.formats.atif import trajectory
    from agentminutes.formats.otlp_json import encode_otlp_json, project
    from agentminutes.harness import ADAPTERS, DOCUMENT_ADAPTERS
    from agentminutes.schema.stats import PROMPT_RULES, with_prompt_total
    from agentminutes.schema.usage import requests

    failed = 0
    grand: Counter[str] = Counter()
    for cls in (*ADAPTERS, *DOCUMENT_ADAPTERS):
        files = transcripts(args.fixtures / cls.name)
        if not files:
            continue
        c: Counter[str] = Counter()
        lost_events: Counter[str] = Counter()
        lost_fields: Counter[str] = Counter()
        problems: list[str] = []
        for path in files:
            c["files"] += 1
            for session in iter_sessions(path):
                c["sessions"] += 1
                name = f"{path.relative_to(args.fixtures)} {session.meta.session_id}"
                events = session.events
                spans, _ = project(session)
                request = parse_otlp_json(encode_otlp_json(spans, harness=session.meta.harness))
                decoded = [
                    s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans
                ]
                c["decoded"] += 1
                c["spans"] += len(decoded)
                own = session.meta.subagent_id
                want = (
                    sum(1 for ev in events if ev.assistant_message is not None)
                    + sum(1 for ev in events if ev.tool_call is not None)
                    + 1
                    + len({ev.agent_id for ev in events if ev.agent_id and ev.agent_id != own})
                )
                if len(decoded) == want:
                    c["span_count_equal"] += 1
                else:
                    problems.append(f"{name}: {len(decoded)} spans, expected {want}")
                total = session.totals
                if session.meta.harness == "copilot":
                    # Usage beside the messages: the normalized requests; per-request usage
                    # on the chat spans, shutdown sums on the root span.
                    reqs = [r for r in requests(events, "copilot") if r.otel is not None]
                    if reqs:
                        keys = (
                            "input_tokens",
                            "output_tokens",
                            "cache_read.input_tokens",
                            "cache_creation.input_tokens",
                        )
                        per_request = [r.otel for r in reqs if r.origin == "assistant.usage"]
                        chats = [s for s in decoded if s.name.startswith("chat")]
                        got_chat = tuple(
                            sum(_int_attr(s, f"gen_ai.usage.{k}") for s in chats) for k in keys
                        )
                        got_all = tuple(
                            sum(_int_attr(s, f"gen_ai.usage.{k}") for s in decoded) for k in keys
                        )

                        def _sum(rows: list[Any]) -> tuple[int, ...]:
                            return (
                                sum(o.input_tokens for o in rows),
                                sum(o.output_tokens for o in rows),
                                sum(o.cache_read_input_tokens for o in rows),
                                sum(o.cache_creation_input_tokens for o in rows),
                            )

                        c["token_sessions"] += 1
                        c["input_tokens"] += got_all[0]
                        if got_chat == _sum(per_request) and got_all == _sum(
                            [r.otel for r in reqs]
                        ):
                            c["tokens_equal"] += 1
                            c["copilot_root_usage"] += len(reqs) - len(per_request)
                        else:
                            problems.append(
                                f"{name}: chat tokens {got_chat} (per-request usage "
                                f"{_sum(per_request)}), all spans {got_all} "
                                f"(usage totals {_sum([r.otel for r in reqs])})"
                            )
                elif total is not None and session.meta.harness in PROMPT_RULES:
                    chats = [s for s in decoded if s.name.startswith("chat")]
                    got = tuple(
                        sum(_int_attr(s, f"gen_ai.usage.{k}") for s in chats)
                        for k in (
                            "input_tokens",
                            "output_tokens",
                            "cache_read.input_tokens",
                            "cache_creation.input_tokens",
                        )
                    )
                    norm = (
                        with_prompt_total(total, session.meta.harness).total_prompt_tokens,
                        total.output_tokens,
                        total.cache_read_input_tokens,
                        total.cache_creation_input_tokens,
                    )
                    c["token_sessions"] += 1
                    c["input_tokens"] += got[0]
                    if got == norm:
                        c["tokens_equal"] += 1
                    else:
                        problems.append(f"{name}: chat tokens {got}, usage totals {norm}")
                doc, loss = trajectory(session)
                try:
                    atif.Trajectory.model_validate(doc, strict=True)
                except Exception as exc:  # the figure is the count; the reason is printed
                    problems.append(f"{name}: ATIF invalid: {str(exc)[:200]}")
                else:
                    c["atif_valid"] += 1
                c["atif_steps"] += loss.steps
                lost_events.update(loss.dropped_events or {})
                lost_fields.update(loss.dropped_fields or {})
        grand.update(c)
        failed += len(problems)
        print(
            f"{cls.name}: {c['files']} files, {c['sessions']} sessions; otlp-json decoded "
            f"{c['decoded']}/{c['sessions']}, {c['spans']} spans, span counts equal "
            f"{c['span_count_equal']}/{c['sessions']}, chat token sums equal usage totals "
            f"{c['tokens_equal']}/{c['token_sessions']} (sessions with usage and a prompt rule; "
            f"{c['input_tokens']} input tokens"
            + (
                f"; {c['copilot_root_usage']} shutdown requests on the root span"
                if cls.name == "copilot"
                else ""
            )
            + f"); ATIF valid {c['atif_valid']}/{c['sessions']}, "
            f"{c['atif_steps']} steps"
        )
        print(
            "  ATIF lost events: "
            + (", ".join(f"{k} {v}" for k, v in sorted(lost_events.items())) or "none")
        )
        print(
            "  ATIF lost fields: "
            + (", ".join(f"{k} {v}" for k, v in sorted(lost_fields.items())) or "none")
        )
        for p in problems:
            print(f"  FAILED {p}")
    print(
        f"total: {grand['files']} files, {grand['sessions']} sessions; otlp-json decoded "
        f"{grand['decoded']}/{grand['sessions']}, span counts equal "
        f"{grand['span_count_equal']}/{grand['sessions']}, token sums equal "
        f"{grand['tokens_equal']}/{grand['token_sessions']}; ATIF valid "
        f"{grand['atif_valid']}/{grand['sessions']}; {failed} failed"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
