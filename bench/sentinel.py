"""Bench: ``ouro sentinel refresh`` at 100k events and 5k tasks, beside the bare
orient time (``build_packet``) on the same bundle in the same run.
Target: refresh ≤ 3× orient.

    python bench/sentinel.py [--repeat 20] [--events 100000] [--tasks 5000]

The bundle comes from ``bench/corpus.py`` (``build_corpus``: events, tasks,
some facts and notes), plus 1k claims and 500 obligations written here. It is
not a git repository, so the git signal costs a directory walk, not a process; the
cost of ``git status`` on a real repository is printed on its own line.
A refresh also writes and fsyncs its receipt, ledger line and links: that is
most of the difference, and it is measured, not excluded.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson

from bench.corpus import build_corpus
from ouro.arc import paths as arc_paths
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.models.hashing import hash_file
from ouro.orient import build_packet
from ouro.sentinel.gauntlet import evaluate
from ouro.sentinel.receipts import refresh
from ouro.sentinel.signals import git_signals

CLAIMS = 1_000
OBLIGATIONS = 500


def add_claims_and_obligations(bundle: Bundle) -> None:
    """1k claims (10% verified against a file) and 500 obligations (1 in 5 a return)."""
    source = bundle.desk / "_meta" / "bench-source.md"
    source.write_text("a source file claims are about\n")
    digest = hash_file(source)
    for n in range(CLAIMS):
        claim: dict[str, object] = {
            "schemaVersion": 1,
            "id": f"cl-{n:018d}",
            "text": f"claim {n}: the bench source behaves",
            "about": ["desk/_meta/bench-source.md"],
            "authority": "test",
            "check": "pytest -q",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "evidence": [],
        }
        if n % 10 == 0:
            claim["evidence"] = [
                {
                    "command": "pytest -q",
                    "exitCode": 0,
                    "recordedAt": "2025-01-01T00:00:00.000Z",
                    "authority": "test",
                    "sources": [{"ref": "desk/_meta/bench-source.md", "hash": digest}],
                }
            ]
        (arc_paths.claims_dir(bundle) / f"{claim['id']}.json").write_bytes(orjson.dumps(claim))
    for n in range(OBLIGATIONS):
        inner = n % 5 == 0
        ob: dict[str, object] = {
            "schemaVersion": 1,
            "id": f"ob-{n:018d}",
            "what": f"obligation {n}",
            "owedTo": "ari",
            "status": "open" if n % 2 else "done",
            "createdAt": "2025-01-01T00:00:00.000Z",
        }
        if inner:
            ob["route"] = {"recipient": "ari", "channel": "slack", "key": f"C{n}"}
        folder = arc_paths.inner_dir(bundle) if inner else arc_paths.obligations_dir(bundle)
        (folder / f"{ob['id']}.json").write_bytes(orjson.dumps(ob))
    # One real write folds the log and the stores into the checkpoint.
    record_event(bundle, "turn_accepted", "bench ask", current_ask="bench", next_safe_action="go")


def timed(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--tasks", type=int, default=5_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ouro-bench-sentinel-") as tmp:
        bundle = build_corpus(
            Path(tmp) / "bench.ouro", facts=1_000, notes=200, tasks=args.tasks, events=args.events
        )
        add_claims_and_obligations(bundle)
        refresh(bundle, orient=build_packet)  # warm: the first refresh creates folders
        orient = timed(lambda: build_packet(bundle), args.repeat)
        gauntlet = timed(lambda: evaluate(bundle, build_packet), args.repeat)
        full = timed(lambda: refresh(bundle, orient=build_packet, trigger="post_turn"), args.repeat)
        repo = Path(tmp) / "repo.ouro"
        Bundle.init(repo)
        subprocess.run(["git", "-C", str(repo), "init", "-q"], check=False, capture_output=True)
        git = timed(lambda: git_signals(Bundle(repo)), args.repeat)
    print(
        f"bundle (bench/corpus.py): {args.events} events, {args.tasks} tasks, 1000 facts, "
        f"200 notes, {CLAIMS} claims, {OBLIGATIONS} obligations"
    )
    print(f"orient (build_packet)        {orient:8.2f} ms   baseline")
    print(f"gauntlet (evaluate, pure)    {gauntlet:8.2f} ms   {gauntlet / orient:5.2f}x orient")
    print(f"sentinel refresh (writes)    {full:8.2f} ms   {full / orient:5.2f}x orient")
    print(f"sync signal (state/sync)     {git:8.2f} ms   (reads files, no git process)")
    verdict = "met" if full <= 3 * orient else "NOT met"
    print(f"target: refresh <= 3x orient: {verdict}")


if __name__ == "__main__":
    main()
