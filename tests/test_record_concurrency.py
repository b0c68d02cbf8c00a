"""Many processes, one diary: 8 x 1,000 writes, nothing torn, entities exact.

The writers fsync after releasing the diary lock (group commit) and share
entities.json rewrites; at rest the file must still be exactly a full rebuild.
"""

from __future__ import annotations

import hashlib
import multiprocessing as mp
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.desk import record
from ouro.desk.record import FactDraft

PROCS, PER_PROC = 8, 1000


def _words(p: int, i: int) -> str:
    digest = hashlib.sha1(f"{p}-{i}".encode()).hexdigest()
    return " ".join(digest[k : k + 6] for k in range(0, 30, 6))


def _writer(root: str, p: int) -> None:
    bundle = Bundle(Path(root))
    for i in range(PER_PROC):
        about = [f"e{i % 5}", f"proc{p}"]
        record.write_fact(bundle, FactDraft(f"fact {_words(p, i)}", about=about))


@pytest.mark.slow
def test_eight_processes_thousand_writes_each(bundle: Bundle) -> None:
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(bundle.root), p)) for p in range(PROCS)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=300)
        assert proc.exitcode == 0
    raw = record.facts_path(bundle).read_bytes()
    assert raw.endswith(b"\n")
    parsed = [orjson.loads(line) for line in raw.split(b"\n") if line]  # none torn
    assert len(parsed) == PROCS * PER_PROC
    assert len({f["id"] for f in parsed}) == PROCS * PER_PROC
    facts, bad = record.iter_facts(bundle)
    assert len(facts) == PROCS * PER_PROC and bad == []
    # read through ouro: the file plus the verified lines it may lag by (LAG_LIMIT)
    entities = record.read_entities(bundle)
    expected = Counter(e for f in parsed for e in f["about"])
    assert {k: v["count"] for k, v in entities.items()} == dict(expected)
    assert entities["e0"]["count"] == PROCS * PER_PROC // 5
    assert all(len(v["factIds"]) == v["count"] for v in entities.values())
    order = {f["id"]: n for n, f in enumerate(parsed)}
    ids = entities["proc3"]["factIds"]
    assert ids == sorted(ids, key=order.__getitem__)  # file order
    rebuilt = orjson.loads(_rebuilt(bundle))
    assert entities == rebuilt and list(entities) == list(rebuilt)  # what a full rebuild says
    assert record.read_entities(bundle) == rebuilt


def _rebuilt(bundle: Bundle) -> bytes:
    record.rebuild_entities(bundle)
    return record.entities_path(bundle).read_bytes()


@pytest.mark.slow
def test_cli_processes_race(bundle: Bundle) -> None:
    """Real CLI subprocesses writing at once, including one exact duplicate pair."""
    texts = [f"cli fact {_words(9, i)}" for i in range(6)] + ["shared fact text"] * 2
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ouro.cli",
                "--bundle",
                str(bundle.root),
                "--json",
                "diary",
                "write",
                text,
                "--about",
                "cli",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for text in texts
    ]
    outs = [orjson.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert all("error" not in o for o in outs)
    assert sorted(o["duplicate"] for o in outs) == [False] * 7 + [True]
    facts, bad = record.iter_facts(bundle)
    assert len(facts) == 7 and bad == []
    entities = record.read_entities(bundle)
    assert entities["cli"]["count"] == 7
