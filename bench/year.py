"""Bench: a year's scale through the paths agents use, each figure beside a baseline
measured in the same run (interleaved where both are repeated), with the ratio.

    python bench/year.py [--bundle CORPUS] [--growth 1000,10000,100000] [--repeat 15]
                         [--out results.md]

Without ``--bundle`` a corpus is built with bench/corpus.py at the largest
growth size (facts N, notes N/10, tasks N/20, events N). Rows (the table of
issue 15):

- ``diary_write`` through the library (``ouro.api.call``, what CLI
  and MCP call: validation, the write, the index update) vs a bare
  ``append_jsonl`` + fsync of the same line;
- 8 processes writing through the tool registry vs 8 doing bare appends;
- first ``diary write`` in a fresh process (``ouro diary write`` as a
  process) vs ``python -c pass``, with peak RSS; and the same about the
  busiest entity (its near-duplicate check), after a warm-up write, p50;
- orient in-process (``build_packet``) vs one ``stat`` of every ``task.md``
  (the floor of its per-file check);
- cold ``ouro orient`` vs ``python`` reading latest.json;
- full rebuild as processes, in its two phases: the word index (``ouro index
  rebuild --no-vectors``) vs a raw FTS5 build of the same text (bench/search.py
  ``bare_build``), and with ``ouro-bundle[semantic]`` the vectors (``ouro index sync``
  right after, embedding every doc) vs the model's own inference (tokenizers + onnxruntime) over the same
  texts (``bare_embed``); time and peak RSS, best of 2 alternating runs each;
- cold ``ouro --version`` / ``ouro index status`` / a tool command
  (``ouro info``) vs ``python -c pass``;
- growth: p50 of write, search (``desk_search`` in its default mode: hybrid
  when ``ouro-bundle[semantic]`` is installed, on an index whose vectors are computed
  as ``ouro index sync`` leaves it), orient and a no-change ``index sync`` at
  each size of ``--growth``.

It writes to the corpus (facts); run it on a copy. ``--out`` also writes the
table as Markdown. ``--smoke`` runs every row at tiny scale (CI: a bench that
breaks fails; its figures mean nothing). ``--only-rebuild N`` runs the rebuild
rows alone, best of N alternations.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.corpus import build_corpus  # noqa: E402
from ouro.api import call  # noqa: E402
from ouro.bundle import Bundle  # noqa: E402
from ouro.desk.record import FactDraft, build_fact, facts_path  # noqa: E402
from ouro.store.jsonl import append_jsonl  # noqa: E402

RUN = f"r{time.time_ns() % 10**9}"
PROCS = 8
ROWS: list[tuple[str, str, str, str, str]] = []  # measure, ours, baseline, ratio, goal


def row(measure: str, ours: float, base: float, unit: str, goal: str) -> None:
    ratio = ours / base if base else float("nan")
    ROWS.append((measure, f"{ours:.2f} {unit}", f"{base:.2f} {unit}", f"{ratio:.2f}x", goal))
    print(f"{measure}: {ours:.2f} {unit}; baseline {base:.2f} {unit}; ratio {ratio:.2f}x ({goal})")


def p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("OURO_BUNDLE", None)
    return env


TIME = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)


def run_process(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one process.

    Peak RSS comes from GNU time (``%M``) when it is there: a child forked
    straight from this (large) process would report this process's RSS. The
    wall time is ours, so the wrapper's own start (~1 ms) is in it for every
    row and baseline alike.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        wrapped = [TIME, "-q", "-f", "%M", "-o", rss.name, *argv] if TIME else argv
        start = time.perf_counter()
        proc = subprocess.run(  # cwd: 'python -m' puts it first on sys.path
            wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), cwd=REPO
        )
        took = time.perf_counter() - start
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")
            raise SystemExit(f"bench/year.py: {' '.join(argv)} failed: {err[-800:]}")
        text = rss.read().strip()
    return took, int(text.splitlines()[-1]) if text else 0


def ouro(bundle: Bundle, *args: str) -> list[str]:
    return [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), *args]


def interleave(a: Callable[[], Any], b: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """p50 (ms) of ``a`` and ``b``, alternating calls so both see the same machine."""
    xs: list[float] = []
    ys: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a()
        xs.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b()
        ys.append(time.perf_counter() - t0)
    return p50(xs), p50(ys)


def interleave_processes(a: list[str], b: list[str], repeat: int) -> tuple[float, float]:
    xs: list[float] = []
    ys: list[float] = []
    for _ in range(repeat):
        xs.append(run_process(a)[0])
        ys.append(run_process(b)[0])
    return p50(xs), p50(ys)


# --- rows ------------------------------------------------------------------------
def write_rows(bundle: Bundle, repeat: int) -> None:
    counter = iter(range(10**9))
    scratch = facts_path(bundle).with_name("bench-bare.jsonl")

    def tool() -> None:
        n = next(counter)
        args = {"text": f"year bench {RUN} fact {n} q{n * 7919 % 100003}", "about": ["bench"]}
        call("diary_write", bundle, {**args, "force": True})

    def bare() -> None:
        append_jsonl(scratch, [build_fact(FactDraft(f"bare {RUN}", about=["bench"]))])

    tool()  # the process loads the log once
    ours, base = interleave(tool, bare, repeat * 4)
    scratch.unlink(missing_ok=True)
    row("diary_write via the tool registry p50", ours, base, "ms", "<= 5 ms")


def _writer(root: str, p: int, writes: int, barrier: Any, bare: bool) -> None:
    bundle = Bundle(Path(root))
    if bare:
        scratch = facts_path(bundle).with_name(f"bench-bare-{p}.jsonl")
        lines = [build_fact(FactDraft(f"bare {p} {n}", about=["bench"])) for n in range(writes)]
        barrier.wait()
        for line in lines:
            append_jsonl(scratch, [line])
        scratch.unlink()
        return
    warm = {"text": f"warm {RUN} {p}", "about": ["bench"], "force": True}
    call("diary_write", bundle, warm)
    barrier.wait()
    for n in range(writes):
        args = {"text": f"{RUN} p{p} n{n} z{n * 31}", "about": ["bench", f"p{p}"], "force": True}
        call("diary_write", bundle, args)


def _rate(bundle: Bundle, writes: int, bare: bool) -> float:
    ctx = mp.get_context("spawn")  # a fresh process each: it loads what it needs itself
    barrier = ctx.Barrier(PROCS + 1)
    procs = [
        ctx.Process(target=_writer, args=(str(bundle.root), p, writes, barrier, bare))
        for p in range(PROCS)
    ]
    for proc in procs:
        proc.start()
    barrier.wait()
    start = time.perf_counter()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"bench/year.py: a writer exited with {proc.exitcode}")
    return PROCS * writes / (time.perf_counter() - start)


def concurrency_row(bundle: Bundle, writes: int) -> None:
    base = _rate(bundle, writes, bare=True)
    ours = _rate(bundle, writes, bare=False)
    lines = sum(1 for _ in facts_path(bundle).open("rb"))
    print(f"  (log now {lines} lines; every tool write returned success)")
    row("8 processes via the tool registry, writes/s", ours, base, "/s", ">= 500/s, 0 lost")


#: fresh processes per row: each writes one new fact, interleaved with the baseline
FRESH_RUNS = 7


def fresh_write_row(bundle: Bundle) -> None:
    """Each run is a new process writing its first (and only) fact, after the
    process before it left the saved diary state as a writer leaves it."""
    took: list[float] = []
    base: list[float] = []
    rss = base_rss = 0
    for n in range(FRESH_RUNS):
        argv = ouro(bundle, "diary", "write", f"fresh {RUN} {n}", "--about", "bench")
        seconds, peak = run_process(argv)
        took.append(seconds)
        rss = max(rss, peak)
        seconds, peak = run_process([sys.executable, "-c", "pass"])
        base.append(seconds)
        base_rss = max(base_rss, peak)
    row("first diary write in a fresh process", p50(took), p50(base), "ms", "<= 150 ms")
    print(
        f"  ({FRESH_RUNS} processes: {min(took) * 1000:.0f}-{max(took) * 1000:.0f} ms; peak RSS "
        f"{rss / 1024:.0f} MiB, python -c pass: {base_rss / 1024:.0f} MiB)"
    )


def busy_write_row(bundle: Bundle, repeat: int) -> None:
    """A fresh ``ouro diary write`` about the busiest entity (its near-duplicate
    check needs that entity's token index), after one warm-up write so the saved
    diary state has it; interleaved with ``python -c pass``."""
    import orjson

    from ouro.desk.record import entities_path

    entities = orjson.loads(entities_path(bundle).read_bytes())
    busy = max(entities, key=lambda name: entities[name]["count"])
    counter = iter(range(10**9))

    def argv() -> list[str]:
        n = next(counter)
        text = f"busy {RUN}w{n} {RUN}q{n * 7919 % 100003} {RUN}z{n * 31}"
        return ouro(bundle, "diary", "write", text, "--about", busy)

    run_process(argv())
    xs: list[float] = []
    ys: list[float] = []
    for _ in range(max(7, repeat // 2)):
        xs.append(run_process(argv())[0])
        ys.append(run_process([sys.executable, "-c", "pass"])[0])
    count = entities[busy]["count"]
    row(f"first diary write in a fresh process about an entity with {count:,} facts",
        p50(xs), p50(ys), "ms", "<= 150 ms (baseline: python -c pass)")  # fmt: skip


def settle(bundle: Bundle) -> None:
    """Leave the derived files as writers leave them: the desk heads and the Arc
    checkpoint refreshed (what any Desk write, ``index sync`` or Arc event does).

    A corpus written straight into files has no desk heads yet, and a copied one
    has new inodes and ctimes, so no cached entry would validate: orient would
    read every task.md and digest every event-day file until the next write.
    """
    from ouro.arc import paths
    from ouro.arc.recorder import write_checkpoint
    from ouro.desk.heads import refresh_heads
    from ouro.store.stamp import RACY_NS

    time.sleep(RACY_NS / 1e9)  # files changed this recently get no trusted fingerprint
    refresh_heads(bundle)
    with paths.arc_lock(bundle, "bench settle"):
        write_checkpoint(bundle)
    time.sleep(RACY_NS / 1e9)
    print("  (desk heads and checkpoint refreshed first, as any writer leaves them)")


def orient_rows(bundle: Bundle, repeat: int) -> None:
    from ouro import orient
    from ouro.arc import paths

    settle(bundle)

    def with_tasks() -> None:
        orient.build_packet(bundle)

    # The floor of an exact per-file check: one stat of every task.md (relative to
    # the desk folder, as the heads read does), nothing else. (The old baseline, the
    # packet without the Desk provider, still read every head for the ready section.)
    files = [str(p.relative_to(bundle.desk)) for p in bundle.desk.glob("*/*/task.md")]

    def stat_floor() -> None:
        fd = os.open(bundle.desk, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for rel in files:
                os.stat(rel, dir_fd=fd)
        finally:
            os.close(fd)

    for _ in range(5):  # warm up: a long-lived process (the MCP server) is past this
        with_tasks()
        stat_floor()
    ours, base = interleave(with_tasks, stat_floor, repeat * 4)
    row(f"orient packet in-process ({len(files)} tasks)", ours, base, "ms",
        "<= 10 ms (baseline: one stat of every task.md)")  # fmt: skip
    latest = paths.latest_path(bundle) if hasattr(paths, "latest_path") else None
    target = str(latest) if latest else str(bundle.root / "arc/flight-recorder/latest.json")
    floor = [sys.executable, "-c", f"import json; json.load(open({target!r}))"]
    ours, base = interleave_processes(ouro(bundle, "orient"), floor, max(3, repeat // 3))
    row("cold ouro orient", ours, base, "ms", "<= 4x the floor")


def copy_rows(bundle: Bundle, repeat: int, tmp: Path) -> None:
    """``cp -a`` of the corpus to a new folder (new inodes and ctimes: no cached
    stamp validates), then ``ouro orient`` twice there: the first may rebuild the
    machine-local caches (a read heals them), the second must not. Baseline: a
    warm ``ouro orient`` on the original, interleaved with the copies."""
    argv = ouro(bundle, "orient")
    for _ in range(2):
        run_process(argv)  # the original's caches warm
    warm: list[float] = []
    firsts: list[float] = []
    seconds: list[float] = []
    for n in range(max(3, repeat // 5)):
        copy = tmp / f"copy-{n}.ouro"
        subprocess.run(["cp", "-a", str(bundle.root), str(copy)], check=True)
        moved = [*argv[:-2], str(copy), "orient"]
        firsts.append(run_process(moved)[0])
        seconds.append(run_process(moved)[0])
        warm.append(run_process(argv)[0])
        shutil.rmtree(copy)
    row("first ouro orient after cp -a (heals the caches)", p50(firsts), p50(warm), "ms",
        "informational (baseline: warm orient on the original)")  # fmt: skip
    row("second ouro orient after cp -a", p50(seconds), p50(warm), "ms",
        "<= 1.5x (baseline: warm orient on the original)")  # fmt: skip


def rebuild_row(bundle: Bundle, repeat: int = 2) -> None:
    """Full rebuild in its two phases, each beside its own baseline, alternating
    ours and the baseline ``repeat`` times (best of each: a shared machine).

    1. ``ouro index rebuild --no-vectors`` (the word index: FTS5 and tables) vs
       ``bare_build``, a raw FTS5 build of the same text; time and peak RSS.
    2. with ``ouro-bundle[semantic]``: ``ouro index sync`` right after it, which embeds
       every doc (and writes the vectors and the vector file) vs ``bare_embed``,
       the model's own inference (tokenizers + onnxruntime) over the same texts (writing nothing).
    A plain ``ouro index rebuild`` runs both phases in one process."""
    from ouro import embedding

    bare = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from bench.search import bare_build; from ouro.bundle import Bundle;"
        "bare_build(Bundle.open(Path(sys.argv[2])), Path(sys.argv[3]))"
    )
    embed = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from bench.search import bare_embed; bare_embed(Path(sys.argv[2]))"
    )
    index_file = bundle.root / "state" / "index" / "ouro.sqlite3"
    words: list[tuple[float, int]] = []
    words_base: list[tuple[float, int]] = []
    vectors: list[tuple[float, int]] = []
    vectors_base: list[tuple[float, int]] = []
    with_model = embedding.available()
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            words.append(run_process(ouro(bundle, "index", "rebuild", "--no-vectors")))
            words_base.append(
                run_process([sys.executable, "-c", bare, str(REPO), str(bundle.root),
                             str(Path(tmp) / "bare.db")])
            )  # fmt: skip
            if with_model:
                vectors.append(run_process(ouro(bundle, "index", "sync")))
                vectors_base.append(
                    run_process([sys.executable, "-c", embed, str(REPO), str(index_file)])
                )
    row("full rebuild, word index (--no-vectors)", min(t for t, _ in words),
        min(t for t, _ in words_base), "s", "<= 1.5x (baseline: raw FTS5 build)")  # fmt: skip
    row("full rebuild peak RSS", min(r for _, r in words) / 1024,
        min(r for _, r in words_base) / 1024, "MiB", "<= 1.5x")  # fmt: skip
    if with_model:
        row("rebuild's vectors (index sync after it)", min(t for t, _ in vectors),
            min(t for t, _ in vectors_base), "s", "<= 1.5x (baseline: the model's own onnxruntime embed)")  # fmt: skip
        row("vectors peak RSS", min(r for _, r in vectors) / 1024,
            min(r for _, r in vectors_base) / 1024, "MiB", "<= 1.5x")  # fmt: skip


def cold_rows(bundle: Bundle, repeat: int) -> None:
    floor = [sys.executable, "-c", "pass"]
    n = max(3, repeat // 3)
    for label, argv, goal in (
        ("cold ouro --version", ouro(bundle, "--version"), "<= 60 ms"),
        ("cold ouro index status", ouro(bundle, "index", "status"), "<= 100 ms"),
        ("cold tool command (ouro info)", ouro(bundle, "info"), "<= 150 ms"),
    ):
        ours, base = interleave_processes(argv, floor, n)
        row(label, ours, base, "ms", f"{goal} (baseline: python -c pass)")


def _growth_calls(bundle: Bundle) -> list[Callable[[], Any]]:
    from ouro import orient
    from ouro.index.sync import sync

    counter = iter(range(10**9))

    def write() -> None:
        n = next(counter)
        args = {"text": f"growth {RUN} {n} k{n * 13}", "about": ["bench"], "force": True}
        call("diary_write", bundle, args)

    from bench.search import pick_queries

    query = pick_queries(bundle, 1, 7)[0]  # a word of the corpus found in > 20 documents

    def search() -> None:
        call("desk_search", bundle, {"query": query})

    return [write, search, lambda: orient.build_packet(bundle), lambda: sync(bundle)]


def growth(
    sizes: list[int], repeat: int, keep: Path
) -> list[tuple[int, float, float, float, float]]:
    from ouro.index.sync import sync

    out = []
    for size in sizes:
        root = keep / f"growth-{size}.ouro"
        bundle = build_corpus(
            root, facts=size, notes=size // 10, tasks=size // 20, events=size, seed=7
        )
        sync(bundle)
        from ouro import embedding
        from ouro.index import semantic

        if embedding.available():  # as 'ouro index sync' leaves it: search measures hybrid
            semantic.embed_bundle(bundle.root)  # steady state, not the embedding catch-up
        settle(bundle)  # as the table's rows: heads and checkpoint as writers leave them
        samples = []
        for fn in _growth_calls(bundle):
            fn()
            ts = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            samples.append(p50(ts))
        out.append((size, *samples))
        print(f"growth {size}: write {samples[0]:.2f} ms, search {samples[1]:.2f} ms, "
              f"orient {samples[2]:.2f} ms, sync {samples[3]:.2f} ms")  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)
    return out


def markdown(curve: list[tuple[int, float, float, float, float]]) -> str:
    lines = ["| measure | ouro | baseline (same run) | ratio | goal |", "|---|---|---|---|---|"]
    lines += [f"| {' | '.join(r)} |" for r in ROWS]
    if curve:
        lines += ["", "| facts | write p50 | search p50 | orient p50 | sync p50 |", "|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| {s:,} | {w:.2f} ms | {q:.2f} ms | {o:.2f} ms | {y:.2f} ms |" for s, w, q, o, y in curve]  # fmt: skip
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, help="a corpus bundle (it grows; use a copy)")
    parser.add_argument("--growth", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--writes", type=int, default=100, help="per process, 8 processes")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--smoke", action="store_true", help="tiny scale: checks the bench runs")
    parser.add_argument(
        "--only-rebuild", type=int, metavar="N", help="only the rebuild rows, N alternations"
    )
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.growth.split(",") if s]
    if opts.smoke:
        sizes, opts.repeat, opts.writes = [200], 3, 5
    with tempfile.TemporaryDirectory(prefix="ouro-year-") as tmp:
        if opts.bundle:
            bundle = Bundle.open(opts.bundle.resolve())
        else:
            n = max(sizes)
            bundle = build_corpus(
                Path(tmp) / "year.ouro", facts=n, notes=n // 10, tasks=n // 20, events=n
            )
            run_process(ouro(bundle, "index", "rebuild"))
        if opts.only_rebuild:
            rebuild_row(bundle, opts.only_rebuild)
            return
        write_rows(bundle, opts.repeat)
        concurrency_row(bundle, opts.writes)
        fresh_write_row(bundle)
        busy_write_row(bundle, opts.repeat)
        orient_rows(bundle, opts.repeat)
        copy_rows(bundle, opts.repeat, Path(tmp))
        rebuild_row(bundle)
        cold_rows(bundle, opts.repeat)
        curve = growth(sizes, opts.repeat, Path(tmp))
    table = markdown(curve)
    print(table)
    if opts.out:
        opts.out.write_text(table, encoding="utf-8")


if __name__ == "__main__":
    main()
