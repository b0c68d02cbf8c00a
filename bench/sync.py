"""Bench: ``ouro sync`` (a CLI process, as a habit runs it) beside plain git, same run.

    python bench/sync.py [--facts 100000] [--notes 10000] [--tasks 5000]
                         [--events 10000] [--rounds 5]

Two machines (clones A and B of one bare path remote) hold the year-scale
corpus of ``bench/corpus.py``; a twin pair (C and D, of a second remote) holds
the same files and is driven by bare git. Rounds are interleaved:

- **in step**: ``ouro sync`` on A when nothing changed, beside ``git fetch`` +
  ``git status`` (the least any sync must do) on C;
- **merge**: 10 facts and an event written on each side (not timed); A syncs
  (push), then B syncs (commit, fetch, merge with facts.jsonl changed on both
  sides, canonical union, derived files regenerated, push) — beside the same
  writes on C/D and ``git add -A && git commit && git pull --no-edit && git
  push`` (git's own union merge, no regeneration) on D.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def _corpus() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_corpus", HERE / "corpus.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sh(*argv: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr or proc.stdout}")


def ouro(root: Path, *args: str) -> None:
    sh(sys.executable, "-m", "ouro.cli", "--bundle", str(root), *args)


def timed(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def write_side(root: Path, tag: str, n: int) -> None:
    from ouro.arc.recorder import record_event
    from ouro.bundle import Bundle
    from ouro.desk.record import FactDraft, append_facts_batch

    bundle = Bundle.open(root)
    drafts = [FactDraft(text=f"{tag} round fact {time.time_ns()} {i}") for i in range(n)]
    append_facts_batch(bundle, drafts, force=True)
    record_event(bundle, "agent_note", f"{tag} note {time.time_ns()}")


def fetch_and_status(root: Path) -> None:
    sh("git", "fetch", "-q", cwd=root)
    sh("git", "status", "--porcelain", cwd=root)


def git_round(root: Path) -> None:
    sh("git", "add", "-A", cwd=root)
    sh("git", "commit", "-qm", "round", cwd=root)
    sh("git", "pull", "-q", "--no-edit", "--no-rebase", cwd=root)
    sh("git", "push", "-q", cwd=root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=5_000)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    env_id = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
              "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    os.environ.update(env_id)
    with tempfile.TemporaryDirectory(prefix="ouro-bench-sync-") as tmp_name:
        tmp = Path(tmp_name)
        start = time.perf_counter()
        _corpus().build_corpus(
            tmp / "a", facts=args.facts, notes=args.notes, tasks=args.tasks, events=args.events
        )
        built = time.perf_counter() - start
        for remote in ("r1.git", "r2.git"):
            sh("git", "init", "-q", "--bare", "-b", "main", str(tmp / remote))
        shutil.copytree(tmp / "a", tmp / "c")
        ouro(tmp / "a", "sync", "init", "--remote", str(tmp / "r1.git"))
        first = timed(lambda: ouro(tmp / "a", "sync"))
        sh("git", "clone", "-q", str(tmp / "r1.git"), str(tmp / "b"))
        ouro(tmp / "b", "sync", "init")
        ouro(tmp / "b", "sync")
        ouro(tmp / "c", "sync", "init", "--remote", str(tmp / "r2.git"))  # same policy files
        sh("git", "push", "-q", "-u", "origin", "main", cwd=tmp / "c")
        sh("git", "clone", "-q", str(tmp / "r2.git"), str(tmp / "d"))
        ouro(tmp / "d", "diary", "rebuild-entities")  # derived files exist on both twins
        in_step: list[float] = []
        in_step_git: list[float] = []
        merge: list[float] = []
        merge_git: list[float] = []
        for _ in range(args.rounds):
            in_step.append(timed(lambda: ouro(tmp / "a", "sync")))
            in_step_git.append(timed(lambda: fetch_and_status(tmp / "c")))
            for one, two in (("a", "b"), ("c", "d")):
                write_side(tmp / one, one, 10)
                write_side(tmp / two, two, 10)
            ouro(tmp / "a", "sync")
            merge.append(timed(lambda: ouro(tmp / "b", "sync")))
            ouro(tmp / "a", "sync")
            git_round(tmp / "c")
            merge_git.append(timed(lambda: git_round(tmp / "d")))
            sh("git", "pull", "-q", "--no-edit", "--no-rebase", cwd=tmp / "c")
    med = statistics.median
    print(
        f"corpus (bench/corpus.py): {args.facts} facts, {args.notes} notes, {args.tasks} "
        f"tasks, {args.events} events; built in {built:.0f}s; first push {first:.0f} ms"
    )
    for name, ours, base, what in (
        ("in step (nothing to do)", in_step, in_step_git, "git fetch + git status"),
        ("merge (10 facts each side)", merge, merge_git, "git add/commit/pull/push"),
    ):
        print(
            f"{name:<28} ouro sync {med(ours):8.0f} ms   baseline {med(base):8.0f} ms "
            f"({what})   ratio {med(ours) / med(base):5.2f}x"
        )


if __name__ == "__main__":
    main()
