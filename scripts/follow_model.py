#!/usr/bin/env python3
"""Run the model-based test of ``follow`` for many examples; print what ran and any counterexample.

Usage::

    python scripts/follow_model.py [--examples 500] [--steps 12] [--seed N] [--no-shrink]
                                   [--cmd "agentminutes"]

The state machine is ``tests/live/follow_model.py``: rules write real
transcripts on disk (lines, half lines, truncation, copytruncate, delete and
recreate, renames within and out of the followed folder, new transcripts and
subagents) and pause (SIGTERM with ``--state``), kill (SIGKILL) and restart the
real follower; the invariant is that every transcript's delivered events are
``convert --format jsonl`` of the contents it had. Each example starts real
processes: expect a few seconds per example. The last line is
``follow_model: N examples, M steps, no counterexample`` (exit 0) or the
counterexample Hypothesis found (exit 1).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "live"), str(ROOT / "tests")]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--examples", type=int, default=500)
    ap.add_argument("--steps", type=int, default=12, help="most rule applications per example")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-shrink", action="store_true", help="report the first failure as found")
    ap.add_argument("--cmd", default="", help="the agentminutes command (default: this checkout's)")
    args = ap.parse_args()

    from hypothesis import HealthCheck, Phase, seed, settings
    from hypothesis.stateful import run_state_machine_as_test

    from follow_model import FollowMachine

    if args.cmd:
        FollowMachine.command = shlex.split(args.cmd)
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
    if not args.no_shrink:
        phases.append(Phase.shrink)
    config = settings(
        max_examples=args.examples,
        stateful_step_count=args.steps,
        deadline=None,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    t0 = time.monotonic()
    machine: type = FollowMachine
    if args.seed is not None:
        machine = seed(args.seed)(FollowMachine)  # type: ignore[arg-type]
    try:
        run_state_machine_as_test(machine, settings=config)
    except BaseException as exc:  # a counterexample (Hypothesis printed its steps above)
        traceback.print_exception(exc)
        print(
            f"follow_model: {FollowMachine.examples} examples, {FollowMachine.steps} steps in "
            f"{time.monotonic() - t0:.0f} s: COUNTEREXAMPLE (above)"
        )
        return 1
    print(
        f"follow_model: {FollowMachine.examples} examples, {FollowMachine.steps} steps in "
        f"{time.monotonic() - t0:.0f} s, no counterexample"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
