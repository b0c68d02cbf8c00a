"""Bench: ``diary_write`` at scale, each number beside a baseline from the same run.

    python bench/diary_write.py [--bundle PATH | --facts 100000] [--writes 300]

- p50 of one ``diary_write`` in-process (the registry tool, warm process) vs a
  bare ``append_jsonl`` of the same line (open, flock, write, fsync) -> ratio.
  Target: p50 <= 5 ms at 100k facts.
- the first write in a fresh process (it reads the whole log once) vs a bare
  ``read_jsonl`` of the log.
- total writes/s from 8 processes writing at once (timed from a barrier all
  of them reach after loading the log) vs 8 processes doing bare
  ``append_jsonl`` of the same lines. Target: >= 500/s.

Texts carry a per-run tag, so running it again on the same bundle writes new
facts instead of returning duplicates.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ouro.api import call
from ouro.bundle import Bundle
from ouro.desk.record import FactDraft, build_fact, facts_path
from ouro.store.jsonl import append_jsonl, read_jsonl

PROCS = 8
RUN = f"r{time.time_ns() % 10**9}"


def _text(tag: str, n: int) -> str:
    return f"bench {tag} fact number {n} zq{n * 7919 % 100003} about load {RUN}"


def _p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def in_process(bundle: Bundle, writes: int) -> dict[str, float]:
    start = time.perf_counter()
    read_jsonl(facts_path(bundle))
    parse = time.perf_counter() - start
    start = time.perf_counter()
    call("diary_write", bundle, {"text": _text("warm", 0), "about": ["bench"], "force": True})
    cold = time.perf_counter() - start
    tool, bare = [], []
    scratch = facts_path(bundle).with_name("bench-bare.jsonl")
    for n in range(writes):
        args = {"text": _text("tool", n), "about": ["bench", f"b{n % 10}"], "force": True}
        t0 = time.perf_counter()
        call("diary_write", bundle, args)
        tool.append(time.perf_counter() - t0)
        line = build_fact(FactDraft(_text("bare", n), about=["bench"]))
        t0 = time.perf_counter()
        append_jsonl(scratch, [line])
        bare.append(time.perf_counter() - t0)
    scratch.unlink()
    return {
        "parse_ms": parse * 1000,
        "cold_first_ms": cold * 1000,
        "tool_p50_ms": _p50_ms(tool),
        "bare_p50_ms": _p50_ms(bare),
    }


def _writer(root: str, p: int, writes: int, start: Any, bare: bool) -> None:
    bundle = Bundle(Path(root))
    if bare:
        scratch = facts_path(bundle).with_name("bench-bare.jsonl")
        lines = [build_fact(FactDraft(_text(f"b{p}", n), about=["bench"])) for n in range(writes)]
        start.wait()
        for line in lines:
            append_jsonl(scratch, [line])
        return
    # the tool path (what CLI and MCP call): validation, the write, the index update
    call("diary_write", bundle, {"text": _text(f"warm{p}", 0), "about": ["bench"], "force": True})
    start.wait()
    for n in range(writes):
        args = {"text": _text(f"p{p}", n), "about": ["bench", f"p{p}"], "force": True}
        call("diary_write", bundle, args)


def multi_process(bundle: Bundle, writes: int, *, bare: bool = False) -> float:
    """Writes/s from PROCS processes, timed from the moment all are ready."""
    ctx = mp.get_context("fork")
    start = ctx.Barrier(PROCS + 1)
    procs = [
        ctx.Process(target=_writer, args=(str(bundle.root), p, writes, start, bare))
        for p in range(PROCS)
    ]
    for proc in procs:
        proc.start()
    start.wait()
    t0 = time.perf_counter()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"writer exited with {proc.exitcode}")
    rate = PROCS * writes / (time.perf_counter() - t0)
    facts_path(bundle).with_name("bench-bare.jsonl").unlink(missing_ok=True)
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description="diary_write benchmark")
    parser.add_argument("--bundle", type=Path, help="an existing corpus bundle (it grows)")
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--writes", type=int, default=300)
    args = parser.parse_args()
    if args.bundle:
        bundle = Bundle.open(args.bundle)
    else:
        from bench.corpus import build_corpus

        root = Path(tempfile.mkdtemp(prefix="ouro-bench-")) / "bench.ouro"
        bundle = build_corpus(root, facts=args.facts, notes=0, tasks=0, events=0)
    lines = sum(1 for _ in facts_path(bundle).open("rb"))
    one = in_process(bundle, args.writes)
    bare_rate = multi_process(bundle, args.writes, bare=True)
    rate = multi_process(bundle, args.writes)
    print(f"facts in log: {lines}")
    print(
        f"first write in a fresh process: {one['cold_first_ms']:.0f} ms; bare read_jsonl of the "
        f"log: {one['parse_ms']:.0f} ms; ratio {one['cold_first_ms'] / one['parse_ms']:.2f}x"
    )
    print(
        f"diary_write p50: {one['tool_p50_ms']:.2f} ms; bare append_jsonl p50: "
        f"{one['bare_p50_ms']:.2f} ms; ratio {one['tool_p50_ms'] / one['bare_p50_ms']:.2f}x "
        f"(target <= 5 ms)"
    )
    print(
        f"{PROCS} processes: {rate:.0f} writes/s total; bare append_jsonl: {bare_rate:.0f}/s; "
        f"ratio {rate / bare_rate:.2f}x (target >= 500/s)"
    )


if __name__ == "__main__":
    main()
