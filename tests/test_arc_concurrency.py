"""Four real processes appending events at once: nothing lost or torn, and the
checkpoint agrees with the log afterwards."""

from __future__ import annotations

import multiprocessing
import os

import orjson
import pytest

from ouro.arc import paths
from ouro.arc.recorder import record_event
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle

PER_WRITER = 40


def _writer(root: str, writer: int) -> None:
    bundle = Bundle(__import__("pathlib").Path(root))
    for n in range(PER_WRITER):
        record_event(bundle, "agent_note", f"w{writer} n{n}", meta={"writer": writer, "n": n})


@pytest.mark.slow
def test_four_processes_append_concurrently(bundle: Bundle) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(bundle.root), w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = []
    for name in sorted(os.listdir(paths.events_dir(bundle))):
        if name.endswith(".jsonl"):
            data = (paths.events_dir(bundle) / name).read_bytes()
            assert data.endswith(b"\n")
            lines += [orjson.loads(raw) for raw in data.splitlines()]  # raises if torn
    assert len(lines) == 4 * PER_WRITER
    assert len({e["id"] for e in lines}) == 4 * PER_WRITER
    for w in range(4):
        mine = [e["meta"]["n"] for e in lines if e["meta"]["writer"] == w]
        assert mine == list(range(PER_WRITER))  # each writer's events in its order
    on_disk = orjson.loads(paths.checkpoint_path(bundle).read_bytes())
    assert on_disk["eventCount"] == 4 * PER_WRITER
    assert on_disk["lastEvent"]["id"] == lines[-1]["id"]
    resume = read_resume(bundle)
    assert resume["recorder"] == {"health": "ok", "issues": []}
    assert resume["eventCount"] == 4 * PER_WRITER
