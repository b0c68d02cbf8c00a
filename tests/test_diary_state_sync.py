"""``ouro index sync`` saves the diary state a log written without ouro's writers
lacks, so the first write of the next fresh process does not replay the log."""

from __future__ import annotations

import os

import pytest

from ouro.bundle import Bundle
from ouro.derived import sync
from ouro.desk import diary_snapshot, factstate, record
from ouro.desk.factstate import DiaryState
from tests.index_support import append_fact


@pytest.fixture(autouse=True)
def _save_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diary_snapshot, "SNAPSHOT_EVERY", 1)


def test_sync_saves_the_state_a_hand_written_log_lacks(bundle: Bundle) -> None:
    for n in range(5):
        append_fact(bundle, f"f-{n:03d}", f"a line written by hand {n}", ["ops"])
    snapshot = record.state_snapshot_path(bundle)
    assert not snapshot.exists()
    sync(bundle)
    assert snapshot.is_file()
    restored = DiaryState(record.facts_path(bundle))
    restored.snapshot = snapshot
    restored.sync()
    assert restored.snapshot_offset == restored.offset > 0  # restored, nothing replayed
    assert restored.entity_ids("ops") == [f"f-{n:03d}" for n in range(5)]
    # a current saved state is left as it is
    before = snapshot.stat()
    factstate._STATES.clear()
    sync(bundle)
    assert snapshot.stat().st_mtime_ns == before.st_mtime_ns


def test_sync_replaces_a_state_saved_for_another_copy_of_the_log(bundle: Bundle) -> None:
    for n in range(5):
        append_fact(bundle, f"f-{n:03d}", f"a line written by hand {n}", ["ops"])
    sync(bundle)
    snapshot = record.state_snapshot_path(bundle)
    saved = snapshot.read_bytes()
    log = record.facts_path(bundle)
    copy = log.with_name("copy.jsonl")
    copy.write_bytes(log.read_bytes())
    inode = log.stat().st_ino
    os.replace(copy, log)  # a copy: another inode, so the saved state is not used
    assert log.stat().st_ino != inode
    factstate._STATES.clear()  # as a fresh process
    sync(bundle)
    assert snapshot.read_bytes() != saved


def test_sync_without_a_log_saves_nothing(bundle: Bundle) -> None:
    sync(bundle)
    assert not record.state_snapshot_path(bundle).exists()
