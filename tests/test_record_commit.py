"""How a diary write commits: group-commit fsync, the entities.json stamp and
incremental rewrite, the cheap derived-file swap, catching up outside the
lock, and waiting for a busy lock."""

from __future__ import annotations

import fcntl
import os
import string
import tempfile
import threading
import time
import unicodedata
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouro.bundle import Bundle
from ouro.desk import derived, entities, factnorm, record
from ouro.desk.factstate import DiaryState, state_for
from ouro.desk.record import FactDraft
from ouro.errors import Conflict, StorageError
from ouro.store.jsonl import append_jsonl, fsync_path
from ouro.store.lock import FileLock


def write(
    bundle: Bundle, text: str, *about: str, force: bool = False, **kw: Any
) -> record.FactWrite:
    return record.write_fact(bundle, FactDraft(text, about=about, **kw), force=force)[0]


def expected_entities(bundle: Bundle) -> bytes:
    """entities.json computed the plain way from the readers, not from DiaryState."""
    facts, _bad = record.iter_facts(bundle)
    ids: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    for fact in facts:
        for entity in dict.fromkeys(e for e in fact.get("about") or [] if isinstance(e, str)):
            ids.setdefault(entity, []).append(fact["id"])
            created = fact.get("createdAt")
            if isinstance(created, str) and created > last.get(entity, ""):
                last[entity] = created
    if not ids:
        return b"{}\n"
    lines = [
        orjson.dumps(k)
        + b": "
        + orjson.dumps({"count": len(v), "factIds": v, "lastSeenAt": last.get(k)})
        for k, v in sorted(ids.items())
    ]
    return b"{\n" + b",\n".join(lines) + b"\n}\n"


# --- entities.json: incremental == rebuild -----------------------------------------
ENTITIES = st.sampled_from(["m", "a", "zed", "b c", "k", "é", "q"])
STEP: st.SearchStrategy[tuple[str, list[str]]] = st.one_of(
    st.tuples(st.just("write"), st.lists(ENTITIES, max_size=3)),
    st.tuples(st.just("supersede"), st.lists(ENTITIES, max_size=2)),
    st.tuples(st.just("outside"), st.lists(ENTITIES, max_size=3)),
    st.tuples(st.just("bad"), st.just([])),
)


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP, min_size=1, max_size=10))
def test_incremental_entities_bytes_equal_a_full_rebuild(
    steps: list[tuple[str, list[str]]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Bundle.init(Path(tmp) / "b.ouro")
        path = record.facts_path(bundle)
        written: list[str] = []
        for n, (kind, about) in enumerate(steps):
            text = f"fact {n} {kind} " + " ".join(about)
            if kind == "write":
                written.append(write(bundle, text, *about, force=True).fact["id"])
            elif kind == "supersede" and written:
                target = written.pop(0)
                written.append(
                    write(bundle, text, *about, force=True, supersedes=target).fact["id"]
                )
            elif kind == "outside":  # another tool appends; it may name an entity twice
                line = record.build_fact(FactDraft(text, created_at="2020-01-01T00:00:00.000Z"))
                line["about"] = about + about[:1]
                append_jsonl(path, [line])
            elif kind == "bad":
                append_jsonl(path, [{"no": "id"}])
        write(bundle, f"closing fact {len(steps)}", "m", force=True)
        expected = expected_entities(bundle)
        # through ouro: the file plus the verified lines it lags by
        current = record.read_entities(bundle)
        assert current == orjson.loads(expected) and list(current) == list(orjson.loads(expected))
        state = state_for(path)
        with state.mutex:
            state.sync()
            assert state.entities_bytes() == expected  # the incremental rewrite's bytes
        record.rebuild_entities(bundle)
        assert record.entities_path(bundle).read_bytes() == expected


# --- the stamp: who still has to rewrite entities.json --------------------------------
def _paths(bundle: Bundle) -> tuple[DiaryState, Path, Path]:
    state = state_for(record.facts_path(bundle))
    return state, record.entities_path(bundle), record.entities_stamp_path(bundle)


def test_a_write_is_covered_by_another_writers_rewrite(bundle: Bundle) -> None:
    write(bundle, "first fact", "x")
    # process B appends its line (phase 1) but has not updated entities.json yet
    other = DiaryState(record.facts_path(bundle))
    line = record.build_fact(FactDraft("fact from b", about=["y"]))
    append_jsonl(record.facts_path(bundle), [line])
    other.sync()
    b_upto = other.offset
    # process A writes next: its rewrite covers B's line as well
    write(bundle, "second fact", "x")
    assert "y" in record.read_entities(bundle)
    _state, ent, stamp = _paths(bundle)
    before = ent.stat()
    assert entities.ensure_entities(other, ent, stamp, b_upto) is False  # nothing to do
    assert ent.stat().st_mtime_ns == before.st_mtime_ns


def test_stamp_mismatch_means_rewrite(bundle: Bundle) -> None:
    write(bundle, "a fact about x", "x")
    state, ent, stamp = _paths(bundle)
    upto = state.offset
    assert entities.ensure_entities(state, ent, stamp, upto) is False
    assert entities.ensure_entities(state, ent, stamp, upto + 1) is True  # not covered yet
    ent.write_bytes(b"{}\n")  # edited by hand: healed
    assert entities.ensure_entities(state, ent, stamp, upto) is True
    assert ent.read_bytes() == expected_entities(bundle)
    stamp.write_text("garbage\n")
    assert entities.ensure_entities(state, ent, stamp, upto) is True
    stamp.unlink()
    assert entities.ensure_entities(state, ent, stamp, upto) is True
    assert entities.ensure_entities(state, ent, stamp, upto) is False


def test_stamp_of_a_log_rewritten_in_place_is_not_trusted(bundle: Bundle) -> None:
    for n in range(3):
        write(bundle, f"fact number {n} here", "x")
    path = record.facts_path(bundle)
    state, ent, stamp = _paths(bundle)
    covered = state.offset
    # an outside tool rewrites the log in place (same inode): only the first
    # line stays, then a longer line, so the old stamp offset lies mid-line
    first, *_rest = path.read_bytes().splitlines(keepends=True)
    other = record.build_fact(FactDraft("replacement " + "w " * 200, about=["z"]))
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(first + orjson.dumps(other) + b"\n")
    assert path.stat().st_size > covered
    fresh = DiaryState(path)
    assert entities.ensure_entities(fresh, ent, stamp, len(first)) is True
    assert orjson.loads(ent.read_bytes())["z"]["count"] == 1


# --- group commit ---------------------------------------------------------------------
def test_fsync_runs_after_the_lock_and_before_returning(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock_path = bundle.lock_path("diary")
    seen: list[tuple[bool, int]] = []

    def fake_fsync(path: Path) -> None:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the lock were held
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        seen.append((path == record.facts_path(bundle), path.read_bytes().count(b"\n")))
        fsync_path(path)

    monkeypatch.setattr(record, "fsync_path", fake_fsync)
    write(bundle, "one durable fact", "x")
    assert seen == [(True, 1)]  # fsynced once, unlocked, with the line already there
    again = write(bundle, "One durable fact!", "y")
    assert again.duplicate is True
    assert seen[-1] == (True, 1)  # a duplicate answer is made durable too
    with pytest.raises(Conflict):
        write(bundle, "one durable fact too", "x")
    assert len(seen) == 2


def test_append_without_sync_then_fsync_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    target = tmp_path / "x.jsonl"
    append_jsonl(target, [{"n": 1}])
    assert len(calls) == 1
    append_jsonl(target, [{"n": 2}], sync=False)
    assert len(calls) == 1 and target.read_bytes() == b'{"n":1}\n{"n":2}\n'
    fsync_path(target)
    assert len(calls) == 2
    with pytest.raises(StorageError):  # an OS error is an OuroError naming the path
        fsync_path(tmp_path / "missing.jsonl")


# --- replacing a derived file -----------------------------------------------------------
def test_replace_derived_swaps_in_whole_fsynced_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "diary"
    folder.mkdir()
    target = folder / "entities.json"
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    derived.replace_derived(target, [b"{", b"}", b"\n"])
    assert target.read_bytes() == b"{}\n"
    old_ino = target.stat().st_ino
    derived.replace_derived(target, [b"x" * 70_000, b"", b"y"])
    assert target.read_bytes() == b"x" * 70_000 + b"y" and target.stat().st_ino != old_ino
    assert len(synced) == 4  # each time: the new file before the rename, then its folder
    assert sorted(p.name for p in folder.iterdir()) == ["entities.json"]  # no temp left


# --- the process state -------------------------------------------------------------------
def test_catch_up_outside_the_lock_only_consumes_appends(bundle: Bundle) -> None:
    first = write(bundle, "alpha fact text", "x").fact
    path = record.facts_path(bundle)
    state = DiaryState(path)
    state.sync(locked=False)
    assert list(state.facts) == [first["id"]]
    appended = record.build_fact(FactDraft("beta fact text", about=["x"]))
    append_jsonl(path, [appended])
    state.sync(locked=False)
    assert list(state.facts) == [first["id"], appended["id"]]
    path.write_bytes(path.read_bytes().replace(b"alpha fact text", b"omega fact text"))
    state.sync(locked=False)  # looks rewritten: left for the locked sync
    assert state.text(first["id"]) == "alpha fact text"
    state.sync()
    assert state.text(first["id"]) == "omega fact text"


def test_near_duplicate_of_a_line_appended_after_the_token_index_was_built(
    bundle: Bundle,
) -> None:
    write(bundle, "Ari prefers tea in the morning", "ari")  # builds ari's token index
    outside = record.build_fact(FactDraft("Bo deploys on fridays after lunch", about=["ari"]))
    append_jsonl(record.facts_path(bundle), [outside])  # another process wrote it
    with pytest.raises(Conflict) as err:
        write(bundle, "Bo deploys on fridays after the lunch", "ari")
    assert outside["id"] in err.value.message


def _reference_normalize(text: str) -> str:
    folded = " ".join(text.casefold().split())
    edge = set(string.punctuation + string.whitespace)

    def is_edge(ch: str) -> bool:
        return ch in edge or unicodedata.category(ch)[0] in "PSZ"

    start, end = 0, len(folded)
    while start < end and is_edge(folded[start]):
        start += 1
    while end > start and is_edge(folded[end - 1]):
        end -= 1
    return folded[start:end]


@given(st.text(max_size=30))
def test_normalize_fast_path_matches_the_definition(text: str) -> None:
    assert factnorm.normalize_text(text) == _reference_normalize(text)


# --- waiting for a busy lock ---------------------------------------------------------------
def test_a_waiter_gets_the_lock_when_it_is_released(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    order: list[str] = []
    held = threading.Event()

    def holder() -> None:
        with FileLock(path, purpose="holder"):
            held.set()
            time.sleep(0.3)
            order.append("holder done")

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    with FileLock(path, timeout=30, purpose="waiter"):
        order.append("waiter in")
        assert path.read_bytes().startswith(f"pid={os.getpid()} purpose=waiter".encode())
    thread.join()
    assert order == ["holder done", "waiter in"]


# --- entities.json lags by verified lines, reads replay them ------------------------------
def test_plain_writes_move_the_stamp_not_the_file(bundle: Bundle) -> None:
    write(bundle, "the first fact about x", "x")
    ent = record.entities_path(bundle)
    before = ent.stat()
    for n in range(5):
        write(bundle, f"another fact number {n} zq{n * 31}", "x", "y")
    assert (ent.stat().st_ino, ent.stat().st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert set(orjson.loads(ent.read_bytes())) == {"x"}  # the file as last rewritten
    current = record.read_entities(bundle)  # through ouro: exact
    assert current == orjson.loads(expected_entities(bundle))
    assert current["x"]["count"] == 6 and current["y"]["count"] == 5


def test_the_file_is_rewritten_once_the_lag_passes_the_limit(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entities, "LAG_LIMIT", 400)
    write(bundle, "the first fact about x", "x")
    ent = record.entities_path(bundle)
    rewrites = 0
    for n in range(8):
        before = ent.stat().st_mtime_ns
        write(bundle, f"another fact number {n} zq{n * 31}", "x")
        rewrites += ent.stat().st_mtime_ns != before
    assert 1 <= rewrites < 8
    assert record.read_entities(bundle) == orjson.loads(expected_entities(bundle))


def test_an_irregular_line_means_the_next_write_rewrites(bundle: Bundle) -> None:
    first = write(bundle, "the first fact about x", "x").fact
    write(bundle, "a second fact about y", "y")
    path, ent = record.facts_path(bundle), record.entities_path(bundle)
    repeat = dict(first, about=["z"])  # an outside tool repeats an id: the first line wins
    append_jsonl(path, [repeat, {"no": "id"}])
    before = ent.stat().st_mtime_ns
    write(bundle, "bananas ripen slowly in winter", "y")
    assert ent.stat().st_mtime_ns != before  # rewritten whole, not replayed
    assert ent.read_bytes() == expected_entities(bundle)
    assert "z" not in record.read_entities(bundle)


def test_a_hand_edited_file_is_read_as_written_without_replay(bundle: Bundle) -> None:
    write(bundle, "the first fact about x", "x")
    write(bundle, "a second fact about y", "y")
    ent = record.entities_path(bundle)
    ent.write_bytes(b'{"mine": {"count": 1, "factIds": ["f-1"], "lastSeenAt": null}}\n')
    assert list(record.read_entities(bundle)) == ["mine"]  # the stamp no longer matches it
    write(bundle, "bananas ripen slowly in winter", "y")  # heals it
    assert record.read_entities(bundle) == orjson.loads(expected_entities(bundle))
