"""Record one scenario with one harness: server up, CLI run, transcripts and ground truth kept.

A recording is a folder (``fixtures/lab/<harness>/<version>/<scenario>/``) holding

- ``home/…``: the transcript files exactly as the harness wrote them, at their paths under
  the temporary HOME (so ``sessions``/``usage`` find them with ``--root``);
- ``ground_truth.json``: the server's record (:meth:`lab.server.ScriptedModel.ground_truth`);
- ``recording.json``: how it was made: harness, version, scenario, command lines (the
  temporary root written as ``$LAB``), the environment's names, exit codes, seconds, the
  CLI's last output lines.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lab.drivers import Driver, Run, base_env
from lab.scenario import Scenario
from lab.server import LabServer, ScriptedModel


@dataclass
class Recording:
    """What one recording produced."""

    folder: Path
    transcripts: list[Path]
    ground_truth: dict[str, Any]
    exit_codes: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every prompt exited 0, a transcript was written and every step was used."""
        return (
            all(c == 0 for c in self.exit_codes)
            and bool(self.transcripts)
            and self.ground_truth["steps_used"] == self.ground_truth["steps"]
        )


def _tail(text: str, lines: int = 12) -> list[str]:
    return text.strip().splitlines()[-lines:]


def _run_prompts(
    driver: Driver,
    run: Run,
    scenario: Scenario,
    env: dict[str, str],
    root: Path,
    runs: list[dict[str, Any]],
    exit_codes: list[int],
) -> None:
    """Type each prompt: one run of the CLI each, its exit code and output tails kept."""
    for index, prompt in enumerate(scenario.prompts):
        cmd = driver.command(run, prompt, index)
        started = time.monotonic()
        try:
            done = subprocess.run(
                cmd,
                cwd=run.work,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=driver.timeout,
            )
            code, stdout, stderr = done.returncode, done.stdout, done.stderr
        except subprocess.TimeoutExpired as exc:
            code = -9
            stdout = _text(exc.stdout)
            stderr = _text(exc.stderr)
        exit_codes.append(code)
        runs.append(
            {
                "command": [c.replace(str(root), "$LAB") for c in cmd],
                "exit_code": code,
                "seconds": round(time.monotonic() - started, 2),
                "stdout_tail": [s.replace(str(root), "$LAB") for s in _tail(stdout)],
                "stderr_tail": [s.replace(str(root), "$LAB") for s in _tail(stderr)],
            }
        )


def _text(value: bytes | str | None) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value or ""


def record(
    driver: Driver,
    version: str,
    scenario: Scenario,
    out: Path,
    *,
    keep_requests: Path | None = None,
    around: Callable[[Run], AbstractContextManager[object]] | None = None,
) -> Recording:
    """Run ``scenario`` with ``driver``'s CLI at ``version`` and write the recording to ``out``.

    ``around``, if given, is entered after the harness's config is written and before its
    first prompt, and left after its last (``scripts/lab_follow_latency.py`` follows the
    temporary HOME with it).
    """
    executable = driver.install(version)
    root = Path(tempfile.mkdtemp(prefix="agentminutes-lab-"))
    try:
        home, work = root / "home", root / "work"
        home.mkdir()
        work.mkdir()
        for name, content in scenario.files.items():
            (work / name).write_text(content)
        model = ScriptedModel(scenario, requests_dir=keep_requests)
        runs: list[dict[str, Any]] = []
        exit_codes: list[int] = []
        with LabServer(model) as server:
            run = Run(home=home, work=work, url=server.url, version=version, executable=executable)
            model.namer = lambda call, offered: driver.name_tool(run, call, offered)
            model.is_side = driver.is_side
            env = {**base_env(run), **driver.env(run)}
            driver.prepare(run)
            with around(run) if around is not None else nullcontext():
                _run_prompts(driver, run, scenario, env, root, runs, exit_codes)
        truth = model.ground_truth()
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        transcripts = []
        for pattern in driver.transcripts:
            for src in sorted(home.glob(pattern)):
                if not src.is_file():
                    continue
                dest = out / "home" / src.relative_to(home)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest)
                transcripts.append(dest)
        patterns = driver.sources or driver.transcripts
        sources = sorted(
            {p for pattern in patterns for p in (out / "home").glob(pattern) if p.is_file()}
        )
        (out / "ground_truth.json").write_text(json.dumps(truth, indent=1) + "\n")
        note = {
            "harness": driver.harness,
            "package": f"{driver.registry}:{driver.package}",
            "version": version,
            "scenario": scenario.name,
            "protocol": driver.protocol,
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "made_by": f"scripts/lab.py --harness {driver.harness} --version {version} --scenario {scenario.name}",
            "temporary_root": "$LAB (home: $LAB/home, working folder: $LAB/work)",
            "environment": sorted({**base_env(run), **driver.env(run)}),
            "runs": runs,
            "transcripts": [str(p.relative_to(out)) for p in transcripts],
            "sources": [str(p.relative_to(out)) for p in sources],
        }
        (out / "recording.json").write_text(json.dumps(note, indent=1) + "\n")
        return Recording(
            folder=out, transcripts=transcripts, ground_truth=truth, exit_codes=exit_codes
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
