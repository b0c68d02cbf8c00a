"""Incremental index maintenance ≡ rebuild at a year's scale (soak: 10k+ facts).

The fast paths (the O(1) append fingerprint of facts.jsonl, entity rows
changed only for the entities an append names, the fast front-matter reader,
the desk heads cache) must give exactly the answers a rebuild from the files
gives, on a corpus the size where they matter.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.desk import heads
from ouro.desk.orientation import desk_items
from ouro.index.sync import rebuild, sync
from tests.conftest import REPO
from tests.index_support import append_fact, dump_index

sys.path.insert(0, str(REPO))


@pytest.mark.soak
def test_incremental_equals_rebuild_at_ten_thousand_facts(tmp_path: Path) -> None:
    from bench.corpus import build_corpus

    bundle: Bundle = build_corpus(
        tmp_path / "scale.ouro", facts=12_000, notes=600, tasks=400, events=200, seed=3
    )
    rebuild(bundle)
    rng = random.Random(5)
    facts = [f"f-{n:05d}" for n in range(40)]
    for n, fid in enumerate(facts):  # written through the tool path: write-through
        about = [f"ent{rng.randrange(30)}", "scale"]
        tools.call(
            "diary_write",
            bundle,
            {"text": f"scale fact {n} {rng.random()}", "about": about, "force": True},
        )
        if n % 7 == 0:  # an outside append (another machine's lines after a pull)
            append_fact(bundle, fid, f"outside line {n}", ["scale", f"ent{n % 5}"])
        if n % 11 == 0:
            append_fact(bundle, f"f-9{n:04d}", f"corrects {fid}", ["scale"], supersedes=fid)
    tasks = tools.call("desk_task_list", bundle, {})["tasks"][:30]
    for n, task in enumerate(tasks):
        status = ("active", "blocked", "done", "open")[n % 4]
        tools.call("desk_task_update", bundle, {"task": task["id"], "status": status})
    note = next((bundle.record / "notes").glob("*.md"))
    note.write_text(note.read_text() + "\nan outside edit of a note\n")
    sync(bundle)
    incremental = dump_index(bundle)
    oriented = desk_items(bundle)
    rebuild(bundle)
    assert dump_index(bundle) == incremental
    heads.heads_path(bundle).unlink()  # orient from the files alone gives the same packet
    assert desk_items(bundle) == oriented
