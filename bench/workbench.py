"""Bench: the workbench's first page of Timeline (100k events) and Record
(100k facts) on the bench/corpus.py corpus. Target: ≤ 200 ms server time each.

    python bench/workbench.py [--repeat 15] [--corpus PATH]

Measured through the user's path: a real ``ouro workbench`` server (the same
``make_server`` the CLI runs) answering HTTP requests, with the server's time
for each page taken from its own handler (render included, transfer not).
The first request of each page (cold caches) is reported beside the median.
Interleaved with each page request, the baseline is the same server answering
``/static/live.js`` (routing + headers, no bundle read), so the ratio says
what reading and rendering the page costs on top of serving anything at all.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from ouro.bundle import Bundle
from ouro.workbench import server as wb_server

TARGET_MS = 200.0
PAGES = {"timeline": "/timeline", "record": "/record", "now": "/"}
BASELINE = "/static/live.js"


class TimedHandler(wb_server.Handler):
    """The server's handler, recording how long each route took to answer."""

    times: ClassVar[dict[str, list[float]]] = {}

    def _route(self, path: str, params: dict[str, list[str]]) -> tuple[int, str, bytes]:
        start = time.perf_counter()
        answer = super()._route(path, params)
        self.times.setdefault(path, []).append(time.perf_counter() - start)
        return answer


def _get(port: int, path: str) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    start = time.perf_counter()
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
    resp = conn.getresponse()
    resp.read()
    elapsed = time.perf_counter() - start
    conn.close()
    assert resp.status == 200, (path, resp.status)
    return elapsed


def measure(bundle: Bundle, repeat: int) -> dict[str, Any]:
    server = wb_server.make_server(bundle)
    handler = server.RequestHandlerClass
    server.RequestHandlerClass = lambda *a, **k: TimedHandler(  # type: ignore[assignment]
        *a, bench=handler.keywords["bench"], names=handler.keywords["names"], **k
    )
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for path in [*PAGES.values(), BASELINE]:  # the first request of each page: cold
            _get(port, path)
        cold = {p: v[0] * 1000 for p, v in TimedHandler.times.items()}
        TimedHandler.times.clear()
        wall: dict[str, list[float]] = {}
        for _ in range(repeat):
            for path in PAGES.values():
                wall.setdefault(path, []).append(_get(port, path))
                wall.setdefault(BASELINE, []).append(_get(port, BASELINE))
    finally:
        server.shutdown()
        server.server_close()
    ms = {p: statistics.median(v) * 1000 for p, v in TimedHandler.times.items()}
    wall_ms = {p: statistics.median(v) * 1000 for p, v in wall.items()}
    return {"server": ms, "wall": wall_ms, "cold": cold}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--corpus", type=Path, help="reuse a corpus built by bench/corpus.py")
    args = parser.parse_args()
    if args.corpus:
        bundle = Bundle.open(args.corpus)
    else:
        from bench.corpus import build_corpus

        folder = Path(tempfile.mkdtemp(prefix="ouro-bench-workbench-"))
        start = time.perf_counter()
        bundle = build_corpus(folder / "corpus.ouro", facts=100_000, events=100_000)
        print(f"corpus: 100k facts, 100k events, 10k notes, 5k tasks "
              f"built in {time.perf_counter() - start:.0f}s")  # fmt: skip
    result = measure(bundle, args.repeat)
    base = result["server"][BASELINE]
    print(
        f"baseline {BASELINE}: server {base:.2f} ms, round trip {result['wall'][BASELINE]:.2f} ms"
    )
    failed = False
    for name, path in PAGES.items():
        server_ms = result["server"][path]
        ok = server_ms <= TARGET_MS or name == "now"
        failed |= not ok
        print(
            f"{name:9} first page: server {server_ms:7.1f} ms (first request "
            f"{result['cold'][path]:.1f} ms)  round trip {result['wall'][path]:7.1f} ms  "
            f"({server_ms / base:,.0f}x baseline)"
            + (
                ""
                if name == "now"
                else f"  target ≤ {TARGET_MS:.0f} ms: {'ok' if ok else 'MISSED'}"
            )
        )
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
