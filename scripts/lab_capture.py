"""``agentminutes run`` around a real harness CLI, against the lab's scripted model server.

For each scenario: the lab's driver prepares a temporary HOME and working folder and
starts the server; ``agentminutes run --harness H --to file:EVENTS --archive DIR --
<the CLI's headless command>`` runs the real CLI (installed by the lab at its pinned
version) in that HOME. Then it checks that

* the events written are, per transcript, what ``agentminutes convert --format jsonl``
  prints for the transcript the CLI left in HOME;
* the archive holds every transcript of the session (subagents too), byte for byte,
  each with its normalized JSON;
* the exit status is the CLI's own: the same command run again, directly, in a fresh
  HOME against a fresh server, exits with the same status.

    .venv/bin/python scripts/lab_capture.py [--harness claude-code] [--scenario tools ...]

Prints one line per scenario and ``ok`` or the problems; exit status 1 on a problem.
Needs the lab (``lab/``) and the harness CLI (installed into the lab's cache if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lab.drivers import Run, base_env, driver  # noqa: E402
from lab.scenario import load_scenario  # noqa: E402
from lab.server import LabServer, ScriptedModel  # noqa: E402

AGENTMINUTES = [sys.executable, "-m", "agentminutes"]


def _session(name: str, harness: str, scenario_name: str, *, wrap: bool, out: Path) -> dict:
    """Run the scenario's first prompt, through ``agentminutes run`` (*wrap*) or directly."""
    drv = driver(harness)
    executable = drv.install(drv.pinned)
    scenario = load_scenario(scenario_name)
    root = Path(tempfile.mkdtemp(prefix=f"agentminutes-capture-{name}-"))
    home, work = root / "home", root / "work"
    home.mkdir()
    work.mkdir()
    for file, content in scenario.files.items():
        (work / file).write_text(content)
    model = ScriptedModel(scenario)
    with LabServer(model) as server:
        run = Run(home=home, work=work, url=server.url, version=drv.pinned, executable=executable)
        model.namer = lambda call, offered: drv.name_tool(run, call, offered)
        model.is_side = drv.is_side
        env = {**base_env(run), **drv.env(run)}
        drv.prepare(run)
        command = drv.command(run, scenario.prompts[0], 0)
        if wrap:
            events = out / "events.jsonl"
            command = [
                *AGENTMINUTES,
                "run",
                "--harness",
                harness,
                "--to",
                f"file:{events}",
                "--archive",
                str(out / "archive"),
                "--",
                *command,
            ]
            # agentminutes itself runs with this interpreter's packages
            env = {**env, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            command,
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=drv.timeout + 60,
            check=False,
        )
    return {"home": home, "code": done.returncode, "stderr": done.stderr.decode(errors="replace")}


def check(harness: str, scenario: str) -> list[str]:
    problems: list[str] = []
    drv = driver(harness)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        wrapped = _session("run", harness, scenario, wrap=True, out=out)
        direct = _session("direct", harness, scenario, wrap=False, out=out)
        home: Path = wrapped["home"]
        if wrapped["code"] != direct["code"]:
            problems.append(f"exit status {wrapped['code']}, the CLI's own {direct['code']}")
        transcripts = sorted(
            p for pattern in drv.transcripts for p in home.glob(pattern) if p.is_file()
        )
        if not transcripts:
            problems.append("the CLI wrote no transcript")
        got: dict[str, list[dict]] = {}
        events_file = out / "events.jsonl"
        lines = events_file.read_text().splitlines() if events_file.exists() else []
        for line in lines:
            env = json.loads(line)
            got.setdefault(env["transcript"], []).append(env["event"])
        for path in transcripts:
            converted = subprocess.run(
                [*AGENTMINUTES, "convert", "--format", "jsonl", str(path)],
                capture_output=True,
                check=False,
            )
            want = [json.loads(x) for x in converted.stdout.splitlines()]
            if got.get(str(path)) != want:
                problems.append(
                    f"{path.name}: {len(got.get(str(path), []))} events captured, "
                    f"convert prints {len(want)}"
                )
            copies = list((out / "archive").rglob(path.name))
            if len(copies) != 1 or copies[0].read_bytes() != path.read_bytes():
                problems.append(f"{path.name}: not archived whole")
            elif not Path(f"{copies[0]}.agentminutes.json").exists():
                problems.append(f"{path.name}: archived without its normalized JSON")
        extra = set(got) - {str(p) for p in transcripts}
        if extra:
            problems.append(f"events of transcripts not the CLI's: {sorted(extra)}")
        print(
            f"{harness} {scenario}: exit {wrapped['code']} (CLI alone {direct['code']}), "
            f"{len(transcripts)} transcript(s), {len(lines)} events captured, "
            f"{len(list((out / 'archive').rglob('*.jsonl')))} archived: "
            + ("ok" if not problems else "; ".join(problems)),
            flush=True,
        )
        if problems and wrapped["stderr"]:
            print(wrapped["stderr"][-2000:], file=sys.stderr)
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", default="claude-code")
    parser.add_argument("--scenario", nargs="+", default=["text", "tools"])
    args = parser.parse_args()
    problems = [p for s in args.scenario for p in check(args.harness, s)]
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
