"""Record real harness CLIs against the lab's scripted model server (``lab/``).

    python scripts/lab.py --harness claude-code                    # every scenario, pinned version
    python scripts/lab.py --harness codex --version 0.171.0 --scenario tools
    python scripts/lab.py --latest                                  # each harness's newest release
    python scripts/lab.py --list

Recordings go to ``fixtures/lab/<harness>/<version>/<scenario>/`` (``--out`` elsewhere).
Each is checked at once: ``agentminutes convert`` strict and auto-detected, its tool calls
and token usage against the ground truth (``lab/check.py``). ``--latest`` asks the registry
for each harness's newest release, records it and reports what drifted: a version newer
than the pinned one, records the adapter does not know, checks that no longer pass.
The exit status is non-zero when any recording or check failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.check import check_recording  # noqa: E402
from lab.drivers import driver, drivers  # noqa: E402
from lab.record import record  # noqa: E402
from lab.scenario import all_scenarios, load_scenario  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, record, check, report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--harness", action="append", help="a harness (repeatable; default: all)")
    parser.add_argument(
        "--version", help="the release to record (default: the driver's pinned one)"
    )
    parser.add_argument("--scenario", action="append", help="a scenario (repeatable; default: all)")
    parser.add_argument(
        "--latest", action="store_true", help="record each harness's newest release"
    )
    parser.add_argument("--out", type=Path, default=ROOT / "fixtures" / "lab")
    parser.add_argument("--keep-requests", type=Path, help="also write each request body here")
    parser.add_argument("--list", action="store_true", help="list drivers and scenarios")
    args = parser.parse_args(argv)

    if args.list:
        for name, cls in sorted(drivers().items()):
            print(f"{name}\t{cls.registry}:{cls.package}\tpinned {cls.pinned}\t{cls.protocol}")
        for s in all_scenarios():
            print(f"scenario {s.name}\t{s.description}")
        return 0
    names = args.harness or sorted(drivers())
    scenarios = [load_scenario(s) for s in args.scenario] if args.scenario else all_scenarios()
    failed = 0
    report = []
    for name in names:
        d = driver(name)
        version = args.version or d.pinned
        drift = []
        if args.latest:
            version = d.newest()
            if version != d.pinned:
                drift.append(f"newest {version}, pinned {d.pinned}")
        for scenario in scenarios:
            missing = [n for n in scenario.needs if n not in d.features]
            if missing:
                print(f"{name} {version} {scenario.name}: skipped (needs {', '.join(missing)})")
                continue
            out = args.out / name / version / scenario.name
            keep = args.keep_requests / name / scenario.name if args.keep_requests else None
            rec = record(d, version, scenario, out, keep_requests=keep)
            problems = (
                []
                if rec.ok
                else [
                    f"run: exit codes {rec.exit_codes}, "
                    f"{len(rec.transcripts)} transcripts, "
                    f"steps {rec.ground_truth['steps_used']}/{rec.ground_truth['steps']}"
                ]
            )
            if rec.transcripts:
                problems += check_recording(out).problems
            failed += bool(problems)
            status = "ok" if not problems else "FAILED"
            print(f"{name} {version} {scenario.name}: {status}")
            for p in problems:
                print(f"  {p}")
            report.append(
                {
                    "harness": name,
                    "version": version,
                    "scenario": scenario.name,
                    "ok": not problems,
                    "problems": problems,
                    "drift": drift,
                }
            )
    if args.latest:
        print(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
