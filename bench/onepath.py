"""Bench: issue 27's rows, through the users' paths, each beside a baseline
measured in the same run (interleaved where both are repeated), with the ratio.

    python bench/onepath.py [--bundle CORPUS] [--repeat 9] [--writes 100]
                            [--claims 1000] [--out rows.md] [--smoke]

``--bundle`` is the year corpus (``bench/corpus.py``, indexed by ``ouro index
sync``); it is only read: every row works on copies made with ``cp -a``.
Without it a corpus is built (at smoke scale with ``--smoke``). Rows:

- cold ``ouro orient`` and cold ``ouro desk search WORD`` run from the root of
  a project linked the README's way (``ouro init x.ouro --link``: a ``.ouro``
  pointer, no ``--bundle``, no ``OURO_BUNDLE``) vs the same command with
  ``--bundle x.ouro`` from the same folder (goal <= 1.1x);
- the second ``ouro orient`` on a fresh ``cp -a`` of the corpus (the first may
  rebuild machine-local caches; its time is printed) vs a warm ``ouro orient``
  on the original (goal <= 1.5x), one new copy per round;
- with ``ouro-bundle[semantic]`` installed: ``desk_search`` in hybrid mode through a
  warm ``ouro mcp`` server on a copy whose index has no vectors (``ouro index
  rebuild --no-vectors``), every search after the first, vs the same search
  through a server on the copy whose vectors are built (goal <= 2x);
- ``ouro hook claude PostToolUse`` for an unrelated Bash command (``ls -la``)
  and ``ouro hook claude UserPromptSubmit`` (after the session's SessionStart),
  run as the host runs them (a fresh process from the project root, the
  payload on stdin) vs ``python -c pass`` (goal <= 4x each). UserPromptSubmit
  is the payload Claude Code 2.1.328 sent (``/work/shared/hosts`` or
  ``tests/fixtures/hooks``); there is no captured PostToolUse, so that one is
  the fixture of Claude's shape in ``tests/fixtures/hooks/claude``. The linked
  copy first gets ``--claims`` claims (every tenth with a check), as
  ``bench/posttool.py`` does;
- 8 ``ouro mcp`` servers on one bundle, each driven by its own client thread
  (JSON-RPC over the server's stdin/stdout, one call in flight per server),
  all calling ``diary_write`` at once vs 8 processes doing bare locked appends
  + fsync of the same number of lines (goal >= 500 writes/s); afterwards the
  facts log's new lines are counted: every acknowledged write must be there.

Every child process runs with ``PYTHONDONTWRITEBYTECODE`` unset (cold start
depends on cached bytecode) and without ``OURO_BUNDLE``. ``--smoke`` runs every
row, with every expensive step, at a tiny scale (CI: a bench that breaks
fails; its figures mean nothing).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

HOSTS = Path("/work/shared/hosts")
FIXTURES = REPO / "tests" / "fixtures" / "hooks" / "claude"
RUN = f"r{time.time_ns() % 10**9}"
PROCS = 8
ROWS: list[tuple[str, str, str, str, str]] = []  # measure, ouro, baseline, ratio, goal


def row(measure: str, ours: float, base: float, unit: str, goal: str) -> None:
    ratio = ours / base if base else float("nan")
    ROWS.append((measure, f"{ours:.2f} {unit}", f"{base:.2f} {unit}", f"{ratio:.2f}x", goal))
    print(f"{measure}: {ours:.2f} {unit}; baseline {base:.2f} {unit}; ratio {ratio:.2f}x ({goal})")


def env() -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = str(REPO) + os.pathsep + out.get("PYTHONPATH", "")
    out.pop("OURO_BUNDLE", None)
    out.pop("PYTHONDONTWRITEBYTECODE", None)  # cold start reads cached bytecode
    return out


def ouro_cmd() -> list[str]:
    """The ``ouro`` console script users run (``python -m ouro.cli`` when absent)."""
    script = Path(sys.executable).with_name("ouro")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "ouro.cli"]


#: CPU seconds (user + system) of each process ``run`` ran, in order: printed
#: beside the wall times of the hook rows, since CPU moves less when other work
#: loads the machine (wall time is what a host waits for, and the goal)
CPU: list[float] = []


def run(argv: list[str], cwd: Path, stdin: bytes = b"") -> float:
    """Wall seconds of one process; a failure stops the bench (its numbers would lie)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env(), cwd=cwd
    )
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0 or "nothing injected" in err:
        raise SystemExit(f"bench/onepath.py: {' '.join(argv)} (in {cwd}) failed: {err[-800:]}")
    return took


def interleave(a: Callable[[], float], b: Callable[[], float], repeat: int) -> tuple[float, float]:
    """Median ms of ``a`` and ``b`` (each returns its own seconds), alternating,
    and which one goes first alternating too (the second of a pair finds what the
    first left in the caches)."""
    xs, ys = [], []
    for n in range(repeat):
        if n % 2:
            ys.append(b())
            xs.append(a())
        else:
            xs.append(a())
            ys.append(b())
    return statistics.median(xs) * 1000, statistics.median(ys) * 1000


def copy(src: Path, dst: Path) -> None:
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)


def settle(root: Path) -> None:
    """Leave the derived files as a writer leaves them (one Arc write: ``ouro arc
    note``, which rewrites the checkpoint; one Desk write refreshes the heads)."""
    ouro = ouro_cmd()
    run([*ouro, "--bundle", str(root), "arc", "note", "bench settle"], root.parent)
    run([*ouro, "--bundle", str(root), "index", "sync"], root.parent)
    time.sleep(0.2)  # past every racy window: fingerprints are trusted from here


# --- rows ------------------------------------------------------------------------
def link_rows(proj: Path, query: str, repeat: int) -> None:
    ouro = ouro_cmd()
    for label, args in (
        ("cold ouro orient", ["orient"]),
        ("cold ouro desk search", ["desk", "search", query]),
    ):
        linked = [*ouro, *args]
        named = [*ouro, "--bundle", "x.ouro", *args]
        run(linked, proj)
        run(named, proj)
        ours, base = interleave(lambda a=linked: run(a, proj), lambda b=named: run(b, proj), repeat)
        row(f"{label} from a project linked with --link", ours, base, "ms",
            "<= 1.1x (baseline: the same with --bundle)")  # fmt: skip


def copy_row(original: Path, tmp: Path, rounds: int) -> None:
    ouro = ouro_cmd()
    warm = [*ouro, "--bundle", str(original), "orient"]
    run(warm, tmp)
    firsts: list[float] = []
    seconds: list[float] = []
    bases: list[float] = []
    for n in range(rounds):
        target = tmp / f"copy-{n}.ouro"
        copy(original, target)
        cmd = [*ouro, "--bundle", str(target), "orient"]
        firsts.append(run(cmd, tmp))
        seconds.append(run(cmd, tmp))
        bases.append(run(warm, tmp))
        shutil.rmtree(target)
    print(f"  (first orient on each copy: {', '.join(f'{t * 1000:.0f}' for t in firsts)} ms)")
    row("second ouro orient after cp -a", statistics.median(seconds) * 1000,
        statistics.median(bases) * 1000, "ms", "<= 1.5x (baseline: warm orient, original)")  # fmt: skip


class Server:
    """One ``ouro mcp`` process and a minimal JSON-RPC client over its pipes."""

    def __init__(self, root: Path, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [*ouro_cmd(), "mcp", "--bundle", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env(),
            cwd=cwd,
        )
        self.next_id = 0
        self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench-onepath", "version": "0"},
        })  # fmt: skip
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        stdin: IO[bytes] = self.proc.stdin  # type: ignore[assignment]
        stdin.write(json.dumps(message).encode() + b"\n")
        stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        stdout: IO[bytes] = self.proc.stdout  # type: ignore[assignment]
        while True:
            line = stdout.readline()
            if not line:
                raise SystemExit(f"bench/onepath.py: ouro mcp exited during {method}")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit(f"bench/onepath.py: {method} failed: {reply['error']}")
                result: dict[str, Any] = reply["result"]
                return result

    def call(self, tool: str, args: dict[str, Any]) -> float:
        start = time.perf_counter()
        result = self.request("tools/call", {"name": tool, "arguments": args})
        took = time.perf_counter() - start
        if result.get("isError"):
            raise SystemExit(f"bench/onepath.py: {tool} failed: {result.get('content')}")
        return took

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def semantic_row(original: Path, tmp: Path, query: str, repeat: int) -> None:
    from ouro.index import semantic

    if not semantic.available():
        print("semantic row skipped: ouro-bundle[semantic] is not installed")
        return
    bare = tmp / "novectors.ouro"
    copy(original, bare)
    run([*ouro_cmd(), "--bundle", str(bare), "index", "rebuild", "--no-vectors"], tmp)
    args = {"query": query, "mode": "hybrid"}
    without, built = Server(bare, tmp), Server(original, tmp)
    try:
        first = without.call("desk_search", args)
        built.call("desk_search", args)
        ours, base = interleave(lambda: without.call("desk_search", args),
                                lambda: built.call("desk_search", args), repeat * 3)  # fmt: skip
    finally:
        without.close()
        built.close()
    shutil.rmtree(bare)
    print(f"  (the first hybrid search on the bundle without vectors: {first * 1000:.0f} ms)")
    row("MCP hybrid desk_search, no vectors yet (after the first)", ours, base, "ms",
        "<= 2x (baseline: the same on a bundle whose vectors are built)")  # fmt: skip


def _payload(name: str, fallback: Path) -> dict[str, Any]:
    captured = HOSTS / f"claude-{name}.json"
    if captured.is_file():
        data: dict[str, Any] = json.loads(captured.read_text())["stdin"]
        return data
    loaded: dict[str, Any] = json.loads(fallback.read_text())
    return loaded


def add_claims(root: Path, count: int) -> None:
    from ouro.arc.claims import add_claim
    from ouro.bundle import Bundle

    bundle = Bundle.open(root)
    for n in range(count):
        add_claim(bundle, f"bench claim {n}", check=f"make test-{n}" if n % 10 == 0 else None)


def hook_rows(proj: Path, repeat: int) -> None:
    python = [sys.executable, "-c", "pass"]
    ouro = ouro_cmd()
    session = f"bench-{RUN}"
    common = {"session_id": session, "cwd": str(proj),
              "transcript_path": str(proj / "no-transcript.jsonl")}  # fmt: skip
    start = dict(_payload("SessionStart-startup", FIXTURES / "SessionStart.json"), **common)
    run([*ouro, "hook", "claude", "SessionStart"], proj, json.dumps(start).encode())
    prompt = json.dumps(dict(_payload("UserPromptSubmit", FIXTURES / "UserPromptSubmit.json"),
                             **common)).encode()  # fmt: skip
    tool = json.loads((FIXTURES / "PostToolUse.json").read_text())
    tool.update(common, tool_input={"command": "ls -la", "description": "List files"})
    tool["tool_response"] = {"stdout": "total 0\n", "stderr": "", "interrupted": False,
                             "isImage": False, "noOutputExpected": False}  # fmt: skip
    unrelated = json.dumps(tool).encode()
    for label, event, stdin in (
        ("PostToolUse hook, unrelated Bash command", "PostToolUse", unrelated),
        ("UserPromptSubmit hook", "UserPromptSubmit", prompt),
    ):
        argv = [*ouro, "hook", "claude", event]
        run(argv, proj, stdin)
        CPU.clear()
        ours, base = interleave(
            lambda a=argv, i=stdin: run(a, proj, i),
            lambda: run(python, proj),
            repeat,
        )
        cpu_ours, cpu_base = statistics.median(CPU[0::2]), statistics.median(CPU[1::2])
        print(f"  (CPU: {cpu_ours * 1000:.1f} ms vs {cpu_base * 1000:.1f} ms, "
              f"{cpu_ours / cpu_base:.2f}x)")  # fmt: skip
        row(label, ours, base, "ms", "<= 4x (baseline: python -c pass)")


def _bare_writer(path: str, p: int, writes: int, barrier: Any) -> None:
    from ouro.desk.record import FactDraft, build_fact
    from ouro.store.jsonl import append_jsonl

    lines = [build_fact(FactDraft(f"bare {RUN} p{p} n{n}", about=["bench"])) for n in range(writes)]
    barrier.wait()
    for line in lines:
        append_jsonl(Path(path), [line])


def bare_rate(scratch: Path, writes: int) -> float:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(PROCS + 1)
    procs = [ctx.Process(target=_bare_writer, args=(str(scratch), p, writes, barrier))
             for p in range(PROCS)]  # fmt: skip
    for proc in procs:
        proc.start()
    barrier.wait()
    start = time.perf_counter()
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"bench/onepath.py: a bare writer exited with {proc.exitcode}")
    took = time.perf_counter() - start
    scratch.unlink()
    return PROCS * writes / took


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def mcp_rate(root: Path, tmp: Path, writes: int, tag: str) -> tuple[float, int]:
    """writes/s of 8 servers writing at once, and how many acknowledged writes the log lacks."""
    from ouro.bundle import Bundle
    from ouro.desk.record import facts_path

    log = facts_path(Bundle.open(root))
    servers = [Server(root, tmp) for _ in range(PROCS)]
    for server in servers:  # each server loads what it needs first
        text = f"warm {' '.join(os.urandom(4).hex() for _ in range(6))}"
        server.call("diary_write", {"text": text, "about": ["bench"]})
    before = _lines(log)
    barrier = threading.Barrier(PROCS + 1)
    failures: list[BaseException] = []

    def drive(p: int, server: Server) -> None:
        try:
            barrier.wait()
            for _ in range(writes):
                text = " ".join(os.urandom(4).hex() for _ in range(6))  # no near-duplicates
                server.call("diary_write", {"text": text, "about": ["bench", f"p{p}"]})
        except BaseException as exc:  # reported after the join
            failures.append(exc)

    threads = [threading.Thread(target=drive, args=(p, s)) for p, s in enumerate(servers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - start
    for server in servers:
        server.close()
    if failures:
        raise SystemExit(f"bench/onepath.py: an MCP writer failed: {failures[0]!r}")
    lost = PROCS * writes - (_lines(log) - before)
    return PROCS * writes / took, lost


def mcp_writers_row(root: Path, tmp: Path, writes: int, rounds: int = 2) -> None:
    ours: list[float] = []
    base: list[float] = []
    lost = 0
    for n in range(rounds):
        base.append(bare_rate(tmp / "bench-bare.jsonl", writes))
        rate, missing = mcp_rate(root, tmp, writes, f"round{n}")
        ours.append(rate)
        lost += missing
    print(f"  (rounds: {', '.join(f'{r:.0f}' for r in ours)} writes/s; "
          f"{lost} acknowledged writes missing from the log)")  # fmt: skip
    row(f"8 ouro mcp servers, diary_write ({lost} lost)", statistics.median(ours),
        statistics.median(base), "/s", ">= 500/s, 0 lost (baseline: bare appends)")  # fmt: skip
    if lost:
        raise SystemExit(f"bench/onepath.py: {lost} acknowledged diary writes are not in the log")


def pick_query(root: Path) -> str:
    from bench.search import pick_queries
    from ouro.bundle import Bundle

    return pick_queries(Bundle.open(root), 1, 7)[0]


def markdown() -> str:
    lines = ["| measure | ouro | baseline (same run) | ratio | goal |", "|---|---|---|---|---|"]
    lines += [f"| {' | '.join(r)} |" for r in ROWS]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path, help="the year corpus (read only: rows use copies)")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--writes", type=int, default=100, help="per server, 8 servers")
    parser.add_argument("--claims", type=int, default=1000)
    parser.add_argument("--only", help="comma-separated: link,copy,semantic,hooks,mcp")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--smoke", action="store_true", help="tiny scale: checks the bench runs")
    opts = parser.parse_args()
    if opts.smoke:
        opts.repeat, opts.writes, opts.claims = 2, 5, 5
    only = set(opts.only.split(",")) if opts.only else {"link", "copy", "semantic", "hooks", "mcp"}
    with tempfile.TemporaryDirectory(prefix="ouro-onepath-") as raw:
        tmp = Path(raw)
        if opts.bundle:
            corpus = opts.bundle.resolve()
        else:
            from bench.corpus import build_corpus

            size = 300 if opts.smoke else 100_000
            corpus = tmp / "corpus.ouro"
            build_corpus(corpus, facts=size, notes=size // 10, tasks=size // 20, events=size)
            run([*ouro_cmd(), "--bundle", str(corpus), "index", "sync"], tmp)
        proj = tmp / "proj"
        proj.mkdir()
        bundle = proj / "x.ouro"
        copy(corpus, bundle)
        run([*ouro_cmd(), "init", "x.ouro", "--link"], proj)  # an existing bundle: the pointer
        settle(bundle)
        query = pick_query(bundle)
        if "link" in only:
            link_rows(proj, query, opts.repeat)
        if "copy" in only:
            copy_row(bundle, tmp, max(2, opts.repeat // 3))
        if "semantic" in only:
            semantic_row(bundle, tmp, query, opts.repeat)
        if "hooks" in only:
            add_claims(bundle, opts.claims)
            settle(bundle)
            hook_rows(proj, opts.repeat)
        if "mcp" in only:
            mcp_writers_row(bundle, tmp, opts.writes)
    table = markdown()
    print(table)
    if opts.out:
        opts.out.write_text(table, encoding="utf-8")


if __name__ == "__main__":
    main()
