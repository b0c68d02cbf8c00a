"""A fresh process restores the writers' saved diary state instead of replaying
the whole log (``factstate`` "snapshot"), and never trusts it blindly."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.desk import diary_snapshot, factstate, record
from ouro.desk.factstate import DiaryState
from ouro.desk.record import FactDraft
from tests.index_support import append_fact


def _view(state: DiaryState) -> tuple[object, ...]:
    state.sync()
    facts = {k: (state.text(k), r) for k, r in state.facts.items()}
    return (
        state.offset,
        state.lines,
        facts,
        state.by_norm.as_dict(),
        state.superseded,
        {entity: state.entity_ids(entity) for entity in state.entity_keys},
        state.last_seen,
        state.entities_bytes(),
    )


def _restored(bundle: Bundle) -> DiaryState:
    state = DiaryState(record.facts_path(bundle))
    state.snapshot = record.state_snapshot_path(bundle)
    return state


def _fresh(bundle: Bundle) -> DiaryState:
    return DiaryState(record.facts_path(bundle))


@pytest.fixture(autouse=True)
def _save_often(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(diary_snapshot, "SNAPSHOT_EVERY", 1)


def _write(bundle: Bundle, n: int, *about: str, **kw: object) -> record.FactWrite:
    return record.write_fact(bundle, FactDraft(f"fact {n} about {about}", about=about, **kw))[0]  # type: ignore[arg-type]


def test_a_restored_state_equals_one_read_from_the_log(bundle: Bundle) -> None:
    first = _write(bundle, 1, "ari", "bo")
    _write(bundle, 2, "bo")
    _write(bundle, 3, "ari", supersedes=first.fact["id"])
    snap = record.state_snapshot_path(bundle)
    assert snap.is_file()
    append_fact(bundle, "f-900", "an outside line after the save", ["zed"])
    restored = _restored(bundle)
    restored.sync()
    assert restored.snapshot_offset > 0  # it did start from the snapshot
    assert _view(restored) == _view(_fresh(bundle))
    # a write in a new process sees the saved facts: exact duplicate found, not re-added
    dup = record.write_fact(bundle, FactDraft("fact 2 about ('bo',)", about=["bo"]))[0]
    assert dup.duplicate


def test_an_outside_rewrite_after_the_save_is_not_trusted(bundle: Bundle) -> None:
    for n in range(6):
        _write(bundle, n, "ari")
    path = record.facts_path(bundle)
    lines = path.read_bytes().splitlines(keepends=True)
    # same size and inode, one fact's text changed in place
    edited = lines[2].replace(b"fact 2", b"fect 2")
    with path.open("r+b") as handle:
        handle.write(b"".join([*lines[:2], edited, *lines[3:]]))
    assert _view(_restored(bundle)) == _view(_fresh(bundle))
    # shrunk (a line removed), then grown past the old size
    path.write_bytes(
        b"".join(lines[:3] + lines[4:]) + lines[3] + lines[0].replace(b'"id":"f-', b'"id":"f-x')
    )
    assert _view(_restored(bundle)) == _view(_fresh(bundle))


def test_a_damaged_or_foreign_snapshot_is_ignored(bundle: Bundle) -> None:
    _write(bundle, 1, "ari")
    snap = record.state_snapshot_path(bundle)
    for junk in (b"", b"\x00garbage", orjson.dumps({"a": 1}), snap.read_bytes()[:100]):
        snap.write_bytes(junk)
        restored = _restored(bundle)
        assert _view(restored) == _view(_fresh(bundle))
        assert restored.snapshot_offset == 0
        # the next save replaces it (an unusable file is not another process's save)
        assert restored.save_snapshot()
        again = _restored(bundle)
        again.sync()
        assert again.snapshot_offset == restored.offset
        assert _view(again) == _view(_fresh(bundle))


def test_bad_lines_are_read_from_the_log_not_saved(bundle: Bundle) -> None:
    _write(bundle, 1, "ari")
    with record.facts_path(bundle).open("ab") as handle:
        handle.write(b"{not json\n")
    _write(bundle, 2, "bo")
    restored = _restored(bundle)
    restored.sync()
    assert [b.line_no for b in restored.bad] == [2]
    assert _view(restored) == _view(_fresh(bundle))


def test_reading_never_writes_the_snapshot(bundle: Bundle, tmp_path: Path) -> None:
    _write(bundle, 1, "ari")
    snap = record.state_snapshot_path(bundle)
    before = snap.stat().st_mtime_ns
    record.iter_facts(bundle)
    record.active_facts(bundle)
    _restored(bundle).sync()
    assert snap.stat().st_mtime_ns == before


def test_the_saved_state_keeps_no_fact_text(bundle: Bundle) -> None:
    """Texts are read back from the log when a check needs them, so the save stays small."""
    first = _write(bundle, 1, "ari")
    _write(bundle, 2, "ari", "bo")
    saved = record.state_snapshot_path(bundle).read_bytes()
    assert b"fact 1 about" not in saved and b"fact 2 about" not in saved
    restored = _restored(bundle)
    restored.sync()
    assert first.fact["id"] not in restored.texts  # not read until needed
    assert first.fact["id"] in restored.facts  # (confirmed against its line)
    again = record.write_fact(bundle, FactDraft("Fact 1 about ('ari',)", about=["ari"]))[0]
    assert again.duplicate and again.fact["id"] == first.fact["id"]


def test_a_digest_hit_is_confirmed_against_the_text(bundle: Bundle) -> None:
    fact = _write(bundle, 1, "ari")
    state = _restored(bundle)
    state.sync()
    key = factstate.norm_key("some other text")
    state.by_norm.new[key] = [fact.fact["id"]]  # a forged collision
    assert state.exact("some other text", None) is None


def test_with_every_id_digest_colliding_lookups_are_confirmed_by_the_line(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The saved fact table is searched by a digest of the id; a hit is checked
    against the log line, so even all-colliding digests give the same answers."""
    monkeypatch.setattr(factstate, "id_key", lambda fid: b"\x00" * 8)
    first = _write(bundle, 1, "ari")
    second = _write(bundle, 2, "bo")
    restored = _restored(bundle)
    restored.sync()
    assert restored.snapshot_offset > 0
    assert first.fact["id"] in restored.facts and second.fact["id"] in restored.facts
    assert "f-01nothere000000000" not in restored.facts
    assert restored.facts[second.fact["id"]][factstate.LINE_NO] == 2
    assert _view(restored) == _view(_fresh(bundle))


def test_a_saved_fact_superseded_after_the_save_is_no_longer_a_duplicate(bundle: Bundle) -> None:
    first = _write(bundle, 1, "ari")
    _write(bundle, 2, "bo")
    restored = _restored(bundle)
    restored.sync()
    text = "fact 1 about ('ari',)"
    assert restored.exact(factstate.normalize_text(text), None) == first.fact["id"]
    # superseded by another process after the save (written without saving again)
    append_fact(bundle, "f-901", "a correction of fact one", ["ari"], supersedes=first.fact["id"])
    restored.sync()
    assert restored.exact(factstate.normalize_text(text), None) is None
    assert _view(restored) == _view(_fresh(bundle))
    # saved again by a state that was itself restored: the retired entry is left out
    restored.snapshot_offset = 0
    assert restored.save_snapshot()
    again = _restored(bundle)
    assert _view(again) == _view(_fresh(bundle))
    assert record.write_fact(bundle, FactDraft(text, about=["ari"]))[0].duplicate is False


def test_one_process_saves_when_many_cross_the_threshold(bundle: Bundle) -> None:
    """Processes that restored the same snapshot all cross the save threshold at
    once: the first saves it, the others see a newer file (or the save lock held)
    and skip, and the saved state is still exact."""
    from ouro.store.lock import FileLock

    _write(bundle, 1, "ari")
    snap = record.state_snapshot_path(bundle)
    a, b = _restored(bundle), _restored(bundle)
    a.sync()
    b.sync()
    append_fact(bundle, "f-901", "a line both processes read", ["zed"])
    a.sync()
    b.sync()
    assert a.save_snapshot()  # the first to get there saves
    saved = snap.stat().st_mtime_ns, snap.stat().st_ino
    assert not b.save_snapshot()  # another process saved since b restored: skipped
    assert (snap.stat().st_mtime_ns, snap.stat().st_ino) == saved
    assert _view(_restored(bundle)) == _view(_fresh(bundle))
    # b saves again once the log grew past the threshold after the skip
    append_fact(bundle, "f-902", "a later line", ["zed"])
    b.sync()
    lock = FileLock(snap.parent.parent / "locks" / "diary-state.lock")
    assert lock.try_acquire()  # a save in progress elsewhere: skipped, nothing written
    try:
        assert not b.save_snapshot()
    finally:
        lock.release()
    append_fact(bundle, "f-903", "one more line", ["zed"])
    b.sync()
    assert b.save_snapshot()
    assert (snap.stat().st_mtime_ns, snap.stat().st_ino) != saved
    assert _view(_restored(bundle)) == _view(_fresh(bundle))
