"""Bench: wall time of ``ouro hook claude|codex PostToolUse`` on a year-scale
bundle, beside bare ``python -c pass`` measured in the same run, interleaved.

    python bench/posttool.py [--tasks 5000] [--claims 1000] [--repeat 9]

Hosts run this hook after every shell command the agent runs, so the number to
watch is an *unrelated* command (``ls -la``): it must cost little more than
starting Python. A command that is a declared check (``pytest -q``, the check
of one claim and one task) writes receipts and is timed too. The corpus is
``bench/corpus.py`` (tasks with ``check: null``, 10k events) plus claims, every
tenth with a check. Each hook runs as the host runs it: a fresh
``python -m ouro.cli`` process with the payload fixture on stdin.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures" / "hooks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=5_000)
    parser.add_argument("--claims", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    hooks = _load("hooks")
    corpus = _load("corpus")
    python = sys.executable
    from ouro.arc.claims import add_claim
    from ouro.desk import tasks, tracks

    with tempfile.TemporaryDirectory(prefix="ouro-bench-posttool-") as tmp:
        started = time.perf_counter()
        bundle = corpus.build_corpus(
            Path(tmp) / "b.ouro", facts=1_000, notes=100, tasks=args.tasks, events=10_000
        )
        for n in range(args.claims):
            add_claim(bundle, f"claim {n}", check=f"make test-{n}" if n % 10 == 0 else None)
        add_claim(bundle, "the suite passes", check="pytest -q")
        tracks.add_track(bundle, "bench-checks")
        tasks.add_task(bundle, "bench-checks", "Suite green", check="pytest -q")
        print(
            f"corpus: {args.tasks} tasks, {args.claims + 1} claims, 10k events, "
            f"built in {time.perf_counter() - started:.1f}s"
        )
        repo = str(bundle.root.parent)
        print(f"{'':<44} {'wall':>16} {'CPU':>16}")
        for host in ("claude", "codex"):
            data = json.loads((FIXTURES / host / "PostToolUse.json").read_text())
            data["cwd"] = repo
            unrelated = dict(data, tool_input={"command": "ls -la"})
            argv = [python, "-m", "ouro.cli", "hook", host, "PostToolUse"]
            argv += ["--bundle", str(bundle.root)]
            base, other = hooks.wall(
                [[python, "-c", "pass"], argv], json.dumps(unrelated), args.repeat
            )
            base2, match = hooks.wall([[python, "-c", "pass"], argv], json.dumps(data), args.repeat)
            print(f"{'python -c pass':<44} {hooks._cell(base, base)}")
            print(f"{host + ' PostToolUse, unrelated command':<44} {hooks._cell(other, base)}")
            print(f"{'python -c pass':<44} {hooks._cell(base2, base2)}")
            print(f"{host + ' PostToolUse, a declared check':<44} {hooks._cell(match, base2)}")


if __name__ == "__main__":
    main()
