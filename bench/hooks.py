"""Bench: wall time of ``ouro hook claude <Event>`` on a 100k-event bundle,
beside bare ``python -c pass`` measured in the same run (hosts kill slow hooks,
so this is the number to watch; SessionStart is the headline).

    python bench/hooks.py [--events 100000] [--repeat 9]

The corpus is the one ``bench/orient.py`` builds (100k events over 50 day
files, 1k claims, 500 obligations, a real checkpoint). Each hook runs as the
host runs it: a fresh process, the fixture JSON on stdin, ``cwd`` pointing
into the bundle. Each event is timed through ``python -m ouro.cli`` (what hosts
run: the one CLI path, ``ouro.cli.run``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "hooks" / "claude"
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")


def _orient_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_orient", HERE / "orient.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _once(argv: list[str], stdin: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv`` with ``stdin``.

    CPU time (user + system of the child) is printed beside wall time because
    it moves less when other work loads the machine; wall time is what a host
    waits for.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or "nothing injected" in proc.stderr:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr}")
    return elapsed, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def wall(argvs: list[list[str]], stdin: str, repeat: int) -> list[tuple[float, float]]:
    """Median (wall, CPU) milliseconds of each of ``argvs``, run interleaved.

    One untimed warm-up run each first (the first hook on a fresh corpus pays
    for one-off cache work), then the commands alternate so that a change in
    machine load hits them alike.
    """
    for argv in argvs:
        _once(argv, stdin)
    samples: list[list[tuple[float, float]]] = [[] for _ in argvs]
    for _ in range(repeat):
        for index, argv in enumerate(argvs):
            samples[index].append(_once(argv, stdin))
    return [
        (
            statistics.median(w for w, _ in runs) * 1000,
            statistics.median(c for _, c in runs) * 1000,
        )
        for runs in samples
    ]


def _cell(ms: tuple[float, float], base: tuple[float, float]) -> str:
    return f"{ms[0]:>7.0f} ms {ms[0] / base[0]:>5.1f}x {ms[1]:>6.0f} ms {ms[1] / base[1]:>5.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="ouro-bench-hooks-") as tmp:
        started = time.perf_counter()
        bundle = _orient_bench().populate(Path(tmp), args.events)
        print(f"corpus: {args.events} events, built in {time.perf_counter() - started:.1f}s")
        baseline, cli = wall(
            [[python, "-c", "pass"], [python, "-m", "ouro.cli", "--version"]], "", args.repeat
        )
        print(f"{'':<34} {'wall':>16} {'CPU':>16}")
        print(f"{'python -c pass':<34} {_cell(baseline, baseline)}")
        print(f"{'ouro --version (CLI start)':<34} {_cell(cli, baseline)}")
        results = {}
        for event in EVENTS:
            data = json.loads((FIXTURES / f"{event}.json").read_text())
            data["cwd"] = str(bundle.root / "desk")
            argv = ["hook", "claude", event]
            (results[event],) = wall(
                [[python, "-m", "ouro.cli", *argv]], json.dumps(data), args.repeat
            )
            print(f"{'ouro hook claude ' + event:<34} {_cell(results[event], baseline)}")
    head = results["SessionStart"][0]
    print(
        f"SessionStart on {args.events} events: {head:.0f} ms = {head / baseline[0]:.1f}x "
        "bare python (hosts' default hook timeouts: Claude Code 60 s, Codex 600 s; "
        "ouro installs 30 s)"
    )


if __name__ == "__main__":
    main()
