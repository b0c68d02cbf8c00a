"""Crash drills: a writer SIGKILLed at the worst moment loses nothing.

``crash-after-append``: a child process appends a flight-recorder event under
the Arc lock and is SIGKILLed before it rewrites the checkpoint. The
checkpoint on disk must be behind (proving the kill landed in the gap), yet
the resume read and the orientation packet must reflect the event, and the
next real write must persist it.

``crash-before-index``: the index is brought up to date, then a child writes
a diary fact with the real Desk writer and is SIGKILLed before the index
write-through. Orientation must not depend on the index (the same packet with
``state/index`` gone), the fact must be in the file, and after ``index sync``
a search must find it exactly once.
"""

from __future__ import annotations

import shutil

from ouro.arc import paths
from ouro.bundle import Bundle
from ouro.drills.harness import Probe, kill_child_at
from ouro.models.ids import new_id

ROUNDS = 2


def crash_after_append(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient
    from ouro.arc import recorder, resume

    with paths.arc_lock(bundle, "drill: settle checkpoint"):
        recorder.write_checkpoint(bundle)
    for round_no in range(1, ROUNDS + 1):
        token = new_id("drill")
        ask, nxt = f"drill ask {token}", f"drill next {token}"
        kill_child_at(["append-event", str(bundle.root), ask, nxt], "appended")
        on_disk = paths.checkpoint_path(bundle).read_bytes()
        probe.expect(
            token.encode() not in on_disk,
            f"round {round_no}: the writer died before the checkpoint rewrite",
            look_at=paths.CHECKPOINT,
        )
        state = resume.read_resume(bundle)
        probe.expect(
            state["currentAsk"]["value"] == ask and state["nextSafeAction"]["value"] == nxt,
            f"round {round_no}: the resume reflects the event appended before the kill",
            f"ask {state['currentAsk']['value']!r}, next {state['nextSafeAction']['value']!r}",
            look_at=f"ouro arc resume  # vs {paths.EVENTS_DIR}/",
        )
        probe.expect(
            token in orient.build_packet(bundle).text,
            f"round {round_no}: the orientation packet names the appended ask",
            look_at="ouro orient",
        )
    recorder.record_event(bundle, "agent_note", "drill: the next writer after a crash")
    persisted = paths.checkpoint_path(bundle).read_bytes()
    probe.expect(
        token.encode() in persisted,
        "the next write persisted the event the killed writer left behind",
        look_at=paths.CHECKPOINT,
    )


def crash_before_index(bundle: Bundle, probe: Probe) -> None:
    from ouro import orient
    from ouro.desk.record import facts_path
    from ouro.index import sync as index_sync

    index_sync.sync(bundle)
    token = new_id("drill")
    text = f"sentinel drill fact {token} survives a crash before indexing"
    kill_child_at(["write-fact", str(bundle.root), text], "written")
    probe.expect(
        token in facts_path(bundle).read_text(encoding="utf-8"),
        "the fact is in facts.jsonl after the kill",
        look_at="desk/_record/diary/facts.jsonl",
    )
    with_index = orient.build_packet(bundle).text
    moved = bundle.root / "state" / "index.drill-moved"
    shutil.move(bundle.index_dir, moved)
    try:
        without_index = orient.build_packet(bundle).text
    finally:
        shutil.rmtree(bundle.index_dir, ignore_errors=True)
        shutil.move(moved, bundle.index_dir)
    probe.expect(
        with_index == without_index,
        "orientation is the same with and without the index",
        look_at="ouro orient",
    )
    state = index_sync.status(bundle).get("state")
    probe.expect(
        state != "fresh",
        "the index status does not claim to be fresh after the missed write-through",
        str(state),
        look_at="ouro index status",
    )
    index_sync.sync(bundle)
    hits = _search(bundle, token)
    probe.expect(
        hits == 1,
        "after 'ouro index sync' a search finds the fact exactly once",
        f"{hits} hit(s)",
        look_at="ouro index status; ouro index sync",
    )


def _search(bundle: Bundle, token: str) -> int:
    from ouro.index.search import desk_search

    result = desk_search(bundle.root, token, kinds=["fact"], mode="lexical")
    return int(result["total"])
