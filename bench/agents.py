"""Bench: ``desk_ready`` and the path-lock and message tools, through the tool registry,
on the year-scale corpus's 5,000 tasks (a fifth of the open ones blocked by another task),
beside interleaved baselines measured in the same run.

    python bench/agents.py [--tasks 5000] [--repeat 15]

Rows (median ms, ratio to the baseline of the same run):
- ``desk_ready`` vs ``desk_task_list --status open`` (both read every task);
- ``lock_take`` + ``lock_release`` of one path with 200 other live locks vs
  ``desk_task_take`` + ``desk_task_release`` of one task;
- ``message_send`` to a peer bundle on this machine vs ``arc_note``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import build_corpus
from ouro import locks, messages
from ouro.api import call
from ouro.bundle import Bundle
from ouro.desk import heads
from ouro.store import frontmatter


def _block_some(bundle: Bundle) -> int:
    """Every fifth open task waits for the next task (written as a YAML list)."""
    found = [h for h in heads.read_heads(bundle)[0] if h.status == "open"]
    n = 0
    for i in range(0, len(found) - 1, 5):
        path = found[i].path
        meta, body = frontmatter.parse(path.read_text())
        meta["blockedBy"] = [found[i + 1].id]
        path.write_text(frontmatter.render(meta, body))
        n += 1
    heads.refresh_heads(bundle)
    return n


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _pair(
    name: str, fn: Callable[[], object], base: str, bfn: Callable[[], object], n: int
) -> None:
    ours, theirs = [], []
    for _ in range(3):  # interleaved rounds
        ours.append(_median_ms(fn, n))
        theirs.append(_median_ms(bfn, n))
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"{name}: {a:.1f} ms vs baseline {base} {b:.1f} ms, ratio {a / b:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bundle = build_corpus(
            Path(tmp) / "a.ouro", facts=1000, notes=100, tasks=args.tasks, events=1000
        )
        peer = Bundle.init(Path(tmp) / "b.ouro", agent="peer")
        blocked = _block_some(bundle)
        ready = call("desk_ready", bundle, {})
        print(f"{args.tasks} tasks, {blocked} blocked by another; {ready['total']} ready\n")
        _pair(
            "desk_ready",
            lambda: call("desk_ready", bundle, {}),
            "desk_task_list status=open",
            lambda: call("desk_task_list", bundle, {"status": "open"}),
            args.repeat,
        )
        for i in range(200):
            locks.take(bundle, [f"pkg/{i}"], agent=f"a{i % 8}", reason="bench", ttl_seconds=3600)
        task_id = next(h.id for h in heads.read_heads(bundle)[0] if h.status == "open")

        def lock_cycle() -> None:
            call("lock_take", bundle, {"paths": ["src/x.py"], "agent": "me"})
            call("lock_release", bundle, {"paths": ["src/x.py"], "agent": "me"})

        def lease_cycle() -> None:
            call("desk_task_take", bundle, {"task": task_id, "agent": "me"})
            call("desk_task_release", bundle, {"task": task_id, "agent": "me"})

        _pair(
            "lock_take+release (200 locks)",
            lock_cycle,
            "desk_task_take+release",
            lease_cycle,
            args.repeat,
        )
        messages.set_peer(bundle, "peer", str(peer.root))
        _pair(
            "message_send (local peer)",
            lambda: call("message_send", bundle, {"agent": "peer", "text": "status: ok"}),
            "arc_note",
            lambda: call("arc_note", bundle, {"text": "status: ok"}),
            args.repeat,
        )


if __name__ == "__main__":
    main()
