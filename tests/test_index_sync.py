"""Sync: incremental ≡ rebuild, append-only facts, bad input, write-through,
many processes, and losing state/index/ loses nothing."""

from __future__ import annotations

import multiprocessing
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.index import db
from ouro.index.search import consult_diary, desk_search, search_facts
from ouro.index.sync import rebuild, status, sync, touch_paths
from tests.conftest import ouro_json, run_ouro
from tests.index_support import append_fact, dump_index, write_note, write_task

FACTS = "desk/_record/diary/facts.jsonl"


def test_facts_only_the_appended_tail_is_parsed(bundle: Bundle) -> None:
    for i in range(50):
        append_fact(bundle, f"f-{i:03d}", f"fact number {i} about tea", ["bo"])
    first = sync(bundle)
    assert first.facts_added == 50
    append_fact(bundle, "f-100", "a new fact about coffee", ["ari"], supersedes="f-000")
    second = sync(bundle)
    assert second.facts_added == 1  # the 50 old lines were not parsed again
    hit = search_facts(bundle.root, "coffee")["results"]
    assert [r["locator"] for r in hit] == [f"{FACTS}#f-100"]
    assert search_facts(bundle.root, "number 0")["total"] == 0  # f-000 is superseded now
    assert consult_diary(bundle.root, "number 0", history=True)["total"] == 1
    # rewriting the middle (not an append) re-indexes the whole file
    path = bundle.root / FACTS
    path.write_bytes(path.read_bytes().replace(b"fact number 7 about", b"fact numbre 7 about"))
    third = sync(bundle)
    assert third.facts_added == 51
    assert search_facts(bundle.root, "numbre")["total"] == 1
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]


def test_facts_rewrites_that_look_like_appends_are_caught(bundle: Bundle) -> None:
    """The append check is O(1) (inode, growth, last indexed bytes), not a hash
    of the whole prefix; these rewrites must still re-index the whole file."""
    for i in range(20):
        append_fact(bundle, f"f-{i:03d}", f"fact number {i} about tea", ["bo"])
    sync(bundle)
    path = bundle.root / FACTS
    # same size, edited in place (same inode): not an append
    with path.open("r+b") as handle:
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"number 3 about", b"numbre 3 about"))
    assert sync(bundle).facts_added == 20
    assert search_facts(bundle.root, "numbre")["total"] == 1
    # the last indexed line changed and the file grew: not an append
    with path.open("r+b") as handle:
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"number 19 about tea", b"number 19 about teapots") + b"\n")
    assert sync(bundle).facts_added == 20
    assert search_facts(bundle.root, "teapots")["total"] == 1
    # a new file (new inode) with the same prefix and more lines
    append_fact(bundle, "f-100", "coffee", ["ari"])
    sync(bundle)
    data = path.read_bytes()
    other = path.with_name("facts.new")
    other.write_bytes(data + data.splitlines(keepends=True)[0].replace(b"f-000", b"f-101"))
    other.replace(path)  # a rename-save: another inode
    assert sync(bundle).facts_added == 22
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]


def test_an_append_in_flight_is_not_taken_for_a_rewrite(bundle: Bundle) -> None:
    """A write() moves mtime before size, so a sync can stat facts.jsonl in the
    middle of an append: new mtime, old size. That is an append in flight (the
    appender holds the file's flock), not a same-size rewrite: the sync waits
    for the lock and indexes the appended line alone. It re-indexed all 100k
    facts under 8 concurrent writers."""
    import fcntl
    import os
    import threading

    for i in range(20):
        append_fact(bundle, f"f-{i:03d}", f"fact number {i} about tea", ["bo"])
    sync(bundle)
    path = bundle.root / FACTS
    line = path.read_bytes().splitlines(keepends=True)[0]
    line = line.replace(b"f-000", b"f-020").replace(b"number 0 about", b"number 20 about")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as ouro.store.append holds it for its write
    st = os.fstat(fd)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # mtime first, size not yet

    def finish() -> None:
        os.write(fd, line)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    timer = threading.Timer(0.2, finish)
    timer.start()
    try:
        report = sync(bundle)
    finally:
        timer.join()
    assert report.facts_added == 1  # not 21: the 20 indexed lines were not parsed again
    assert search_facts(bundle.root, "number 20")["total"] == 1
    # a same-size rewrite with no append in flight is still caught
    with path.open("r+b") as handle:
        data = handle.read()
        handle.seek(0)
        handle.write(data.replace(b"number 3 about", b"numbre 3 about"))
    assert sync(bundle).facts_added == 21
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]


def test_entities_are_derived_once_not_by_the_index(bundle: Bundle) -> None:
    import sqlite3

    from ouro.desk.record import FactDraft, entities_path, read_entities, write_fact

    sync(bundle)
    for i in range(6):
        write_fact(
            bundle, FactDraft(f"entity fact {i} zz{i * 37}", about=["ari", f"e{i % 3}"]), force=True
        )
        touch_paths(bundle, [bundle.root / FACTS, entities_path(bundle)])
    conn = sqlite3.connect(db.db_path(bundle.root))
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        labels = {r[0] for r in conn.execute("SELECT DISTINCT entity FROM fact_entities")}
    finally:
        conn.close()
    assert "entities" not in tables  # entities.json is the one derivation
    assert labels == set(read_entities(bundle))  # the labels a search by entity filters on
    assert search_facts(bundle.root, about="e1")["total"] == 2
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]


def test_malformed_lines_and_files_are_reported_and_skipped(bundle: Bundle) -> None:
    append_fact(bundle, "f-1", "good fact")
    path = bundle.root / FACTS
    with path.open("ab") as handle:
        handle.write(b'{"id": "f-2", "text": "torn\n[1, 2]\n{"id": "f-3"}\n')
    append_fact(bundle, "f-4", "another good fact")
    note = write_note(bundle, "broken", "Broken", "x")
    note.write_text("---\ntitle: [unclosed\n---\nbody\n")
    report = sync(bundle)
    found = {(p.file, p.line) for p in report.problems}
    assert found == {(FACTS, 2), (FACTS, 3), (FACTS, 4), ("desk/_record/notes/broken.md", 2)}
    assert search_facts(bundle.root, "good")["total"] == 2
    assert status(bundle)["problems"] == 4
    with path.open("ab") as handle:  # an unfinished last line waits for its newline
        handle.write(b'{"id": "f-5", "text": "half written')
    assert sync(bundle).facts_added == 0
    with path.open("ab") as handle:
        handle.write(b'"}\n')
    assert sync(bundle).facts_added == 1
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]


def test_write_through_indexes_and_never_raises(bundle: Bundle) -> None:
    sync(bundle)
    tools.call("diary_write", bundle, {"text": "Ari likes green tea", "about": ["ari"]})
    tools.call("notes_write", bundle, {"title": "Tea guide", "body": "Steep for three minutes"})
    conn = db.open_db(bundle.root)
    kinds = dict(conn.execute("SELECT kind, count(*) FROM docs GROUP BY kind").fetchall())
    conn.close()
    assert kinds == {"fact": 1, "note": 1}  # indexed by write-through, no sync ran
    # a broken index: the write-through marks it stale instead of raising
    db.db_path(bundle.root).write_bytes(b"garbage")
    touch_paths(bundle, [bundle.record / "notes" / "tea-guide.md"])
    assert status(bundle)["state"] == "unavailable"
    assert "write-through" in db.stale_marker(bundle.root).read_text()


def test_deleting_state_index_loses_nothing(bundle: Bundle) -> None:
    for i in range(20):
        append_fact(bundle, f"f-{i:02d}", f"fact {i} mentions release plans", ["team"])
        write_note(bundle, f"n{i}", f"Note {i}", f"release notes body {i}", ["ops"])
        write_task(bundle, "rel", f"task{i}", f"Task {i} release", f"body {i}")
    queries = ["release", "release plan*", '"release notes"', "task 7"]
    before = [desk_search(bundle.root, q, limit=50) for q in queries]
    rows = dump_index(bundle)
    shutil.rmtree(bundle.index_dir)
    after = [desk_search(bundle.root, q, limit=50) for q in queries]
    assert after == before
    assert dump_index(bundle) == rows


# --- incremental ≡ rebuild (property) ------------------------------------------

WORDS = ["alpha", "beta", "gamma", "delta", "tea", "release", "parser", "Ari", "café"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
ops = st.lists(
    st.one_of(
        st.tuples(st.just("fact"), text, st.sampled_from(["ari", "bo", "x y"])),
        st.tuples(st.just("note"), st.integers(0, 4), text),
        st.tuples(st.just("task"), st.integers(0, 4), text),
        st.tuples(st.just("reflect"), text, st.just("")),
        st.tuples(st.just("edit"), st.integers(0, 4), text),
        st.tuples(st.just("rename"), st.integers(0, 4), st.integers(0, 4)),
        st.tuples(st.just("delete"), st.integers(0, 4), st.booleans()),
        st.tuples(st.just("bad_fact"), text, st.just("")),
        st.tuples(st.just("supersede"), text, st.just("")),
        st.tuples(st.just("sync"), st.just(""), st.just("")),
        st.tuples(st.just("search"), text, st.just("")),
    ),
    max_size=14,
)


def _apply(bundle: Bundle, op: tuple[Any, ...], facts: list[str]) -> None:
    kind, a, b = op
    notes = bundle.record / "notes"
    if kind == "fact":
        out = tools.call("diary_write", bundle, {"text": a, "about": [b], "force": True})
        if out["fact"]["id"] not in facts:
            facts.append(out["fact"]["id"])
    elif kind == "note":
        tools.call("notes_write", bundle, {"title": f"note {a}", "body": b, "tags": ["t"]})
    elif kind == "task":
        tools.call("desk_track_add", bundle, {"name": "work"})
        tools.call("desk_task_add", bundle, {"track": "work", "title": f"task {a}", "body": b})
    elif kind == "reflect":
        tools.call("diary_reflect", bundle, {"text": a})
    elif kind == "edit":  # an outside editor, in place
        target = notes / f"note-{a}.md"
        if target.exists():
            with target.open("a", encoding="utf-8") as handle:
                handle.write(f"\nedited {b}\n")
        else:
            write_note(bundle, f"hand-{a}", f"Hand {a}", b)
    elif kind == "rename":
        src = notes / f"note-{a}.md"
        if src.exists():
            src.rename(notes / f"moved-{b}.md")
    elif kind == "delete":
        if b:
            shutil.rmtree(bundle.desk / "work", ignore_errors=True)
        else:
            (notes / f"note-{a}.md").unlink(missing_ok=True)
    elif kind == "bad_fact":
        with (bundle.root / FACTS).open("ab") as handle:
            handle.write(b"{not json " + a.encode() + b"\n")
    elif kind == "supersede" and facts:
        old = facts[-1]
        out = tools.call(
            "diary_write", bundle, {"text": a + " corrected", "supersedes": old, "force": True}
        )
        facts[:] = [f for f in facts if f != old]
        if not out["duplicate"]:
            facts.append(out["fact"]["id"])
    elif kind == "sync":
        sync(bundle)
    elif kind == "search":
        desk_search(bundle.root, a)


QUERIES = ["alpha", "tea", "release parser", '"alpha beta"', "gam*", "cafe", "edited", "ari"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(ops)
def test_incremental_sync_equals_rebuild(sequence: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Bundle.init(Path(tmp) / "p.ouro", agent="prop")
        sync(bundle)
        facts: list[str] = []
        for op in sequence:
            _apply(bundle, op, facts)
        sync(bundle)
        incremental = dump_index(bundle)
        answers = [desk_search(bundle.root, q, limit=100) for q in QUERIES]
        diary = consult_diary(bundle.root, None, history=True, limit=100)
        rebuild(bundle)
        assert dump_index(bundle) == incremental
        assert [desk_search(bundle.root, q, limit=100) for q in QUERIES] == answers
        assert consult_diary(bundle.root, None, history=True, limit=100) == diary


# --- many processes -----------------------------------------------------------


def _writer(root: str, worker: int, count: int) -> None:
    bundle = Bundle.open(root)
    for i in range(count):
        tools.call(
            "diary_write",
            bundle,
            {
                "text": f"worker {worker} wrote fact {i} zq{worker}x{i}",
                "about": [f"w{worker}"],
                "force": True,
            },
        )


@pytest.mark.slow
def test_eight_processes_writing_facts_keep_the_index_exact(bundle: Bundle) -> None:
    sync(bundle)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(bundle.root), w, 200)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = (bundle.root / FACTS).read_bytes().count(b"\n")
    assert lines == 1600
    conn = db.open_db(bundle.root)
    indexed = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
    conn.close()
    assert indexed == 1600  # by write-through alone, before any sync
    assert not db.stale_marker(bundle.root).exists()
    # every line, by whichever writer held the index lock (group commit), exactly
    # as a rebuild indexes them
    import orjson

    ids = {orjson.loads(line)["id"] for line in (bundle.root / FACTS).read_bytes().splitlines()}
    conn = db.open_db(bundle.root)
    try:
        row = conn.execute("SELECT size FROM files WHERE locator = ?", (FACTS,)).fetchone()
        assert row[0] == (bundle.root / FACTS).stat().st_size
        indexed_ids = {
            loc.partition("#")[2]
            for (loc,) in conn.execute("SELECT locator FROM docs WHERE kind = 'fact'")
        }
    finally:
        conn.close()
    assert indexed_ids == ids
    before = dump_index(bundle)
    rebuild(bundle)
    assert dump_index(bundle) == before
    assert status(bundle)["counts"]["fact"] == 1600
    assert search_facts(bundle.root, "zq3x199")["total"] == 1


def _indexed_facts(bundle: Bundle) -> int:
    conn = db.open_db(bundle.root)
    try:
        return int(conn.execute("SELECT count(*) FROM facts").fetchone()[0])
    finally:
        conn.close()


def test_a_write_that_finds_the_index_lock_held_leaves_its_line_to_the_holder(
    bundle: Bundle,
) -> None:
    from ouro.store.lock import FileLock

    sync(bundle)  # the index exists
    tools.call("diary_write", bundle, {"text": "the first fact, indexed by its writer"})
    assert _indexed_facts(bundle) == 1
    holder = FileLock(bundle.lock_path("index-write"))
    holder.acquire()  # another writer holds the index lock
    try:
        out = tools.call("diary_write", bundle, {"text": "a second fact about teapots"})
        assert out["fact"]["id"]
        assert _indexed_facts(bundle) == 1  # handed over: this writer did not wait
        assert not db.stale_marker(bundle.root).exists()
    finally:
        holder.release()
    # the next holder indexes every line appended so far, whatever it wrote itself
    note = write_note(bundle, "kettle", "Kettle", "boil water")
    touch_paths(bundle, [note])
    assert _indexed_facts(bundle) == 2
    # and a search never misses a line meanwhile: its freshness check sees the log grew
    holder.acquire()
    try:
        tools.call("diary_write", bundle, {"text": "a third fact about saucers"})
        assert _indexed_facts(bundle) == 2
        assert search_facts(bundle.root, "saucers")["total"] == 1
    finally:
        holder.release()


def test_facts_indexed_in_small_pieces_equal_one_piece(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines that straddle the pieces facts.jsonl is read in are indexed once, whole."""
    from ouro.store import bounded

    for i in range(40):
        append_fact(bundle, f"f-{i:03d}", f"fact number {i} " + "x" * (i * 7), [f"e{i % 3}"])
    rebuild(bundle)
    whole = dump_index(bundle)
    monkeypatch.setattr(bounded, "PIECE", 97)  # ouro.store.bounded.line_pieces
    rebuild(bundle)
    assert dump_index(bundle) == whole
    append_fact(bundle, "f-100", "appended after", ["e1"], supersedes="f-004")
    sync(bundle)
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]


@pytest.mark.parametrize("swap", ["outside", "inside", "fifo"])
def test_a_facts_log_the_index_cannot_read_is_a_problem_of_every_answer_about_facts(
    bundle: Bundle, tmp_path: Path, swap: str
) -> None:
    # a facts.jsonl behind a symlink, or a FIFO, is never read by the scan: the
    # answers said "0 results" with a fresh index, as if the diary were empty
    import os

    append_fact(bundle, "f-1", "alpha fact one")
    path = bundle.root / FACTS
    real = path.read_bytes()
    path.unlink()
    if swap == "fifo":
        os.mkfifo(path)
        reason = "a FIFO (named pipe), not a regular file; it was not read"
    else:
        target = (tmp_path if swap == "outside" else bundle.root / "desk") / "facts.copy"
        target.write_bytes(real)
        path.symlink_to(target)
        reason = (
            "resolves outside the bundle through a symlink; it was not read"
            if swap == "outside"
            else "a symlink, not a regular file; it was not read"
        )
    for answer in (consult_diary(bundle.root, "alpha"), search_facts(bundle.root, "alpha")):
        assert answer["total"] == 0
        assert answer["index"]["problems"] == [f"{FACTS}: {reason}"]
    path.unlink()
    path.write_bytes(real)
    answer = consult_diary(bundle.root, "alpha")
    assert answer["total"] == 1 and "problems" not in answer["index"]


def test_a_note_grown_past_the_limit_leaves_the_index_as_a_rebuild_would(bundle: Bundle) -> None:
    # its old text stayed searchable after a sync (a rebuild never reads it):
    # the incremental index answered differently from a rebuilt one
    from ouro.store.bounded import DOC_LIMIT

    path = write_note(bundle, "steps", "Release steps", "zebra crossing procedure")
    sync(bundle)
    assert desk_search(bundle.root, "zebra")["total"] == 1
    with open(path, "ab") as handle:
        handle.truncate(DOC_LIMIT + 1)  # sparse: no disk
    report = sync(bundle)
    assert report.removed == 1
    note = "desk/_record/notes/steps.md"
    problem = f"{note}: cannot read (67,108,865 bytes, more than the limit of 67,108,864"
    incremental = (dump_index(bundle), desk_search(bundle.root, "zebra"))
    assert incremental[1]["total"] == 0
    assert [p.startswith(problem) for p in incremental[1]["index"]["problems"]] == [True]
    assert status(bundle)["problems"] == 1
    rebuild(bundle)
    assert (dump_index(bundle), desk_search(bundle.root, "zebra")) == incremental
    path.write_text("---\ntitle: Release steps\n---\nzebra again\n")
    answer = desk_search(bundle.root, "zebra")
    assert answer["total"] == 1 and "problems" not in answer["index"]
    assert status(bundle)["problems"] == 0


def test_a_torn_last_fact_is_reported_by_every_read_until_it_ends(bundle: Bundle) -> None:
    # the last line of facts.jsonl cut short (no newline, not JSON) was passed
    # over in silence: consult answered without it, status said 0 problems and a
    # rebuild skipped nothing. It is reported like the event log's torn tail.
    append_fact(bundle, "f-1", "alpha fact one")
    path = bundle.root / FACTS
    whole = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"id": "f-2", "text": "beta fa')
    torn = f"{FACTS}:2: ends in an incomplete line at byte {len(whole)} (a writer is"
    assert [p.describe() for p in sync(bundle).problems] == [f"{torn} mid-append or died mid-line)"]
    answer = consult_diary(bundle.root)
    assert answer["total"] == 1
    assert [p.startswith(torn) for p in answer["index"]["problems"]] == [True]
    assert search_facts(bundle.root, "alpha")["index"]["problems"] == answer["index"]["problems"]
    assert status(bundle)["problems"] == 1
    assert [p.describe().startswith(torn) for p in rebuild(bundle).problems] == [True]
    cli = ouro_json("index", "rebuild", bundle=bundle)
    assert [(p["locator"], p["line"]) for p in cli["problems"]] == [(FACTS, 2)]
    text = run_ouro("diary", "consult", bundle=bundle).stdout
    assert f"problem: {torn}" in text
    with path.open("ab") as handle:  # the writer finishes its line: nothing left to report
        handle.write(b'ct two"}\n')
    assert sync(bundle).facts_added == 1
    assert status(bundle)["problems"] == 0
    assert "problems" not in consult_diary(bundle.root)["index"]
    assert dump_index(bundle) == (rebuild(bundle), dump_index(bundle))[1]
