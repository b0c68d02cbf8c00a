"""Warm MCP tool-call round trip vs the same call in-process, in one run.

    python bench/mcp.py [--calls N] [--seed-facts N | --bundle CORPUS] [--query WORDS]

Starts ``ouro mcp`` on a scratch bundle with the SDK's own stdio client, warms
it up, then times ``diary_write`` and ``desk_search`` through the client
(JSON-RPC over a pipe + validation + the domain function) and through
``ouro.api.call`` in this process (the library alone), in
alternating rounds so both see the same bundle. Every timed search follows a
(untimed) ``diary_write`` on the same path, as an agent's write -> search ->
write loop does: the search must find the new fact (index write-through, and
in hybrid mode its vector). ``desk_search`` runs in the tools' default mode
(hybrid when ``ouro-bundle[semantic]`` is installed) and in lexical mode. The query
is a word of the corpus found in more than 20 documents (``bench/search.py``
``pick_queries``, as ``bench/year.py``), unless ``--query`` names one (the
corpus's "deploy" is in ~17k documents: BM25 ranks every match). A ``ping``
gives the protocol's floor. Prints p50/p95 per path, the overhead (MCP p50
minus in-process p50) and the ratio. Target: MCP p50 round trip <= 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from itertools import count
from pathlib import Path
from typing import Any

# Run as a script, this file's folder is sys.path[0], and its name would shadow
# the mcp SDK: drop the folder before importing it.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

import anyio  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from ouro.api import call as invoke  # noqa: E402
from ouro.bundle import Bundle  # noqa: E402

TARGET_MS = 5.0
ROUND = 10
_serial = count()
RUN = f"r{time.time_ns() % 10**9}"  # a rerun on the same bundle writes new facts


class BenchFailed(Exception):
    """A timed call returned a tool error: the numbers would mean nothing."""


QUERY = ["deploy"]  # replaced in main() by --query or a word of the corpus


def write_args() -> dict[str, Any]:
    n = next(_serial)
    return {"text": f"bench observation {n}: deploy step {n} finished (token b{n} {RUN})"}


#: case -> (tool, its arguments, whether a diary_write comes first, untimed)
CASES: dict[str, tuple[str, Callable[[], dict[str, Any]], bool]] = {
    "diary_write": ("diary_write", write_args, False),
    "search": ("desk_search", lambda: {"query": QUERY[0]}, True),
    "search lex": ("desk_search", lambda: {"query": QUERY[0], "mode": "lexical"}, True),
}


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return (time.perf_counter() - start) * 1000


async def measure(bundle: Bundle, calls: int) -> dict[str, dict[str, list[float]]]:
    import ouro

    # the server runs this ouro (the SDK passes the client's environment on only in part)
    code = str(Path(ouro.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (code, os.environ.get("PYTHONPATH", "")) if p)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ouro.cli", "mcp", "--bundle", str(bundle.root)],
        cwd=bundle.root.parent,  # not bench/, whose mcp.py would shadow the SDK in the server
        env={**os.environ, "PYTHONPATH": path},
    )
    results: dict[str, dict[str, list[float]]] = {name: {"mcp": [], "inproc": []} for name in CASES}
    results["ping"] = {"mcp": [], "inproc": []}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await client.list_tools()

        async def call(name: str, args: dict[str, Any]) -> None:
            result = await client.call_tool(name, args)
            if result.is_error:
                raise BenchFailed(f"{name} failed over MCP: {result.content}")

        for tool, make, _write_first in CASES.values():  # warm both paths
            for _ in range(5):
                await call(tool, make())
                invoke(tool, bundle, make())
        for _ in range(5):
            await client.send_ping()

        for _ in range(max(1, calls // ROUND)):
            for name, (tool, make, write_first) in CASES.items():
                for _ in range(ROUND):
                    if write_first:
                        await call("diary_write", write_args())
                    args = make()
                    start = time.perf_counter()
                    await call(tool, args)
                    results[name]["mcp"].append((time.perf_counter() - start) * 1000)
                for _ in range(ROUND):
                    if write_first:
                        invoke("diary_write", bundle, write_args())
                    args = make()
                    start = time.perf_counter()
                    invoke(tool, bundle, args)
                    results[name]["inproc"].append((time.perf_counter() - start) * 1000)
        for _ in range(calls):
            results["ping"]["mcp"].append(await timed(client.send_ping))
    return results


def corpus_word(bundle: Bundle) -> str:
    """A word of the corpus found in more than 20 documents (as bench/year.py picks)."""
    sys.path.insert(0, str(_HERE))
    try:
        from search import pick_queries
    finally:
        sys.path.remove(str(_HERE))
    from ouro.index.search import desk_search

    desk_search(bundle.root, "x")  # the index exists before its words are read
    return pick_queries(bundle, 1, 7)[0]


def default_mode() -> str:
    from ouro.index.search import resolve_mode

    return resolve_mode(None)


def seed(bundle: Bundle, facts: int) -> None:
    for n in range(facts):
        invoke(
            "diary_write",
            bundle,
            {"text": f"seed {n}: the deploy of service{n % 7} needs check {n}"},
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="timed calls per tool and path")
    parser.add_argument("--seed-facts", type=int, default=40, help="facts written before timing")
    parser.add_argument(
        "--bundle", type=Path, help="a corpus bundle (bench/corpus.py) to run on; it grows"
    )
    parser.add_argument("--query", help="the search's words (default: a word of the corpus)")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if opts.bundle is not None:
            bundle = Bundle.open(opts.bundle.resolve())
        else:
            bundle = Bundle.init(Path(tmp) / "bench.ouro", agent="bench")
            seed(bundle, opts.seed_facts)
        if opts.query:
            QUERY[0] = opts.query
        elif opts.bundle is not None:
            QUERY[0] = corpus_word(bundle)
        try:
            results = anyio.run(measure, bundle, opts.calls)
        except* BenchFailed as failed:
            sys.exit(f"bench/mcp.py: {failed.exceptions[0]}")

    print(
        f"ouro mcp: warm tool-call round trip, {opts.calls} calls per case and path; "
        f"search {QUERY[0]!r} (default mode: {default_mode()}), each after a diary_write"
    )
    print(
        f"{'call':<13}{'mcp p50':>10}{'mcp p95':>10}{'in-proc p50':>13}{'overhead':>10}{'ratio':>8}"
    )
    for name, paths in results.items():
        mcp_p50, mcp_p95 = pct(paths["mcp"], 0.5), pct(paths["mcp"], 0.95)
        if paths["inproc"]:
            base = statistics.median(paths["inproc"])
            extra = f"{base:>11.2f}ms{mcp_p50 - base:>8.2f}ms{mcp_p50 / base:>7.1f}x"
        else:
            extra = f"{'-':>13}{'-':>10}{'-':>8}"
        print(f"{name:<13}{mcp_p50:>8.2f}ms{mcp_p95:>8.2f}ms{extra}")
    for name in CASES:
        p50 = pct(results[name]["mcp"], 0.5)
        extra = p50 - statistics.median(results[name]["inproc"])
        verdict = "meets" if p50 <= TARGET_MS else "misses"
        print(
            f"{name}: MCP p50 {p50:.2f} ms {verdict} the {TARGET_MS:.0f} ms target "
            f"(MCP overhead {extra:.2f} ms over in-process)"
        )


if __name__ == "__main__":
    main()
