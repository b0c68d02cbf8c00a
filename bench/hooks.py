"""Bench: wall time of ``ouro hook claude <Event>`` on a 100k-event bundle,
beside bare ``python -c pass`` measured in the same run (hosts kill slow hooks,
so this is the number to watch; SessionStart is the headline).

    python bench/hooks.py [--events 100000] [--repeat 9]

The corpus is the one ``bench/orient.py`` builds (100k events over 50 day
files, 1k claims, 500 obligations, a real checkpoint). Each hook runs as the
host runs it: a fresh process, the fixture JSON on stdin, ``cwd`` pointing
into the bundle.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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


def wall(argv: list[str], stdin: str, repeat: int) -> float:
    """Median wall milliseconds of running ``argv`` with ``stdin``."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, check=False)
        samples.append(time.perf_counter() - start)
        if proc.returncode != 0 or "nothing injected" in proc.stderr:
            raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr}")
    return statistics.median(samples) * 1000


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
        baseline = wall([python, "-c", "pass"], "", args.repeat)
        cli = wall([python, "-m", "ouro.cli", "--version"], "", args.repeat)
        print(f"{'python -c pass':<34} {baseline:>8.1f} ms   1.0x")
        print(f"{'ouro --version (CLI start)':<34} {cli:>8.1f} ms {cli / baseline:>5.1f}x")
        results = {}
        for event in EVENTS:
            data = json.loads((FIXTURES / f"{event}.json").read_text())
            data["cwd"] = str(bundle.root / "desk")
            ms = wall(
                [python, "-m", "ouro.cli", "hook", "claude", event], json.dumps(data), args.repeat
            )
            results[event] = ms
            print(f"{'ouro hook claude ' + event:<34} {ms:>8.1f} ms {ms / baseline:>5.1f}x")
    head = results["SessionStart"]
    print(
        f"SessionStart on {args.events} events: {head:.0f} ms = {head / baseline:.1f}x "
        "bare python (hosts' default hook timeouts: Claude Code 60 s, Codex 600 s; "
        "ouro installs 30 s)"
    )


if __name__ == "__main__":
    main()
