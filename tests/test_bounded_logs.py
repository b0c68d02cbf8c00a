"""Record logs are read a line at a time, each line bounded; bundle files must be regular.

``facts.jsonl`` and the flight-recorder day files are read through
``ouro.store.bounded.line_pieces``: a line longer than ``LINE_LIMIT`` is a bad
line named by file and line, skipped without being held (a 2 GB sparse file
made of one such line read whole before). A FIFO where a bundle file belongs
is refused as "not a regular file", never opened blocking (it hung orient,
index sync and the hooks). The CLI runs as a process under ``ulimit -v``;
the tests assert the outcome and the memory held, never a time.
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.desk.tasks import add_task
from ouro.desk.tracks import add_track
from ouro.store import bounded
from ouro.store.bounded import LINE_LIMIT, NotRegularFile, line_pieces, open_regular
from ouro.store.jsonl import read_jsonl
from tests.conftest import capped, run_ouro

#: a sparse file this long is one line past LINE_LIMIT (takes no disk space)
HUGE = 1 << 30
#: what a bounded read may hold at most, whatever the file (bytes)
HELD = 3 * LINE_LIMIT


def _grow(path: Path, size: int, then: bytes = b"") -> None:
    """Extend ``path`` to ``size`` bytes with a hole (NUL bytes, no disk), then append."""
    with open(path, "ab") as handle:
        handle.truncate(size)
    if then:
        with open(path, "ab") as handle:
            handle.write(then)


def _day_file(bundle: Bundle) -> Path:
    (day,) = sorted((bundle.root / "arc/flight-recorder/events").glob("*.jsonl"))[-1:]
    return day


def _peak(fn: object) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = fn()  # type: ignore[operator]
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --- the reader ---------------------------------------------------------------


def test_line_pieces_skip_an_overlong_line_unheld(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n')
    _grow(path, HUGE, b'\n{"c":3}\n{"d"')
    fd = open_regular(path)
    try:
        size = os.fstat(fd).st_size
        pieces, peak = _peak(lambda: list(line_pieces(fd, 0, size, tail=True)))
        assert pieces == [
            (0, b'{"a":1}\n{"b":2}\n'),
            (16, HUGE - 16 + 1),  # the hole and its newline: a size, never bytes
            (HUGE + 1, b'{"c":3}\n'),
            (HUGE + 9, b'{"d"'),  # the unfinished tail: only with tail=True
        ]
        assert list(line_pieces(fd, 0, size))[-1] == (HUGE + 1, b'{"c":3}\n')
    finally:
        os.close(fd)
    assert peak < HELD


def test_line_pieces_join_lines_longer_than_a_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bounded, "PIECE", 5)
    path = tmp_path / "log"
    path.write_bytes(b"abcdefgh\nij\nklmnopqrstu\n")
    fd = open_regular(path)
    try:
        lines = b"".join(d for _, d in line_pieces(fd, 0, 24) if isinstance(d, bytes))
        assert lines == b"abcdefgh\nij\nklmnopqrstu\n"
        assert [(at, d) for at, d in line_pieces(fd, 0, 24, limit=10)][-1] == (12, 12)
    finally:
        os.close(fd)


def test_read_jsonl_names_the_overlong_line_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"a":1}\n')
    _grow(path, HUGE, b'\n{"c":3}\n')
    read, peak = _peak(lambda: read_jsonl(path))
    assert read.records == [{"a": 1}, {"c": 3}]  # type: ignore[attr-defined]
    assert read.line_numbers == [1, 3]  # type: ignore[attr-defined]
    (bad,) = read.bad  # type: ignore[attr-defined]
    assert bad.line_no == 2 and "longer than the limit of 16,777,216" in bad.reason
    assert peak < HELD


def test_a_fifo_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="a FIFO \\(named pipe\\), not a regular file"):
        open_regular(fifo)
    with pytest.raises(NotRegularFile):
        read_jsonl(fifo)


# --- facts.jsonl: a 1 GiB line under a 0.7 GB address-space cap -------------------


def test_a_huge_fact_line_is_reported_and_writes_go_on(bundle: Bundle) -> None:
    assert run_ouro("diary", "write", "before", bundle=bundle).returncode == 0
    facts = bundle.root / "desk/_record/diary/facts.jsonl"
    _grow(facts, HUGE)
    proc = capped(bundle, "diary write after")
    assert proc.returncode == 0, proc.stderr
    assert "facts.jsonl:2: a line of" in proc.stdout
    assert "longer than the limit of 16,777,216; skipped unread" in proc.stdout
    proc = capped(bundle, "index sync")
    assert proc.returncode == 0, proc.stderr
    for query in ("before", "after"):
        proc = capped(bundle, f"facts search {query}")
        assert proc.returncode == 0 and f"**{query}**" in proc.stdout, proc.stderr
    assert os.path.getsize(facts) > HUGE  # the line is left as it is


def test_the_record_view_never_copies_a_huge_line(bundle: Bundle) -> None:
    from ouro.desk import record_view

    run_ouro("diary", "write", "before", bundle=bundle)
    _grow(bundle.root / "desk/_record/diary/facts.jsonl", HUGE)
    run_ouro("diary", "write", "after", bundle=bundle)
    page, peak = _peak(lambda: record_view.fact_page(bundle))
    assert [f["text"] for f in page["facts"]] == ["after", "before"]  # type: ignore[index]
    assert peak < HELD


# --- the flight recorder -----------------------------------------------------------


@pytest.mark.slow  # an Arc write digests the 1 GiB day file's prefix (seconds)
def test_a_huge_event_line_degrades_orient_and_the_hook(bundle: Bundle) -> None:
    assert run_ouro("arc", "ask", "ship it", bundle=bundle).returncode == 0
    day = _day_file(bundle)
    _grow(day, HUGE)
    proc = capped(bundle, "orient")
    assert proc.returncode == 0, proc.stderr
    proc = capped(bundle, "arc note after")
    assert proc.returncode == 0, proc.stderr
    proc = capped(bundle, "orient")
    assert proc.returncode == 0, proc.stderr
    assert f"{day.name}:" in proc.stdout and "longer than the limit" in proc.stdout
    stdin = json.dumps({"session_id": "s", "prompt": "hi", "cwd": str(bundle.root)})
    proc = capped(bundle, "hook claude UserPromptSubmit", input=stdin)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "longer than the limit" in context and "after" in context


@pytest.mark.slow  # an Arc write digests the 1 GiB day file's prefix (seconds)
def test_the_timeline_skips_a_huge_event_line(bundle: Bundle) -> None:
    from ouro.store.daylog import newest_first

    run_ouro("arc", "ask", "ship it", bundle=bundle)
    day = _day_file(bundle)
    _grow(day, HUGE, b"\n")
    run_ouro("arc", "note", "after", bundle=bundle)
    page, peak = _peak(lambda: newest_first(day.parent, bundle.root))
    assert page.bad == 1  # type: ignore[attr-defined]
    assert page.rows[0][0]["kind"] == "agent_note"  # type: ignore[attr-defined]
    assert peak < HELD


# --- a FIFO where a bundle file belongs --------------------------------------------


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def test_a_fifo_task_is_reported_not_waited_for(bundle: Bundle) -> None:
    add_track(bundle, "ops")
    task = add_task(bundle, "ops", "T")
    _fifo(task.path)
    for args in ("orient", "index sync", "desk task list"):
        proc = capped(bundle, args, timeout=60)
        assert proc.returncode in (0, 3), (args, proc.stderr)
    proc = capped(bundle, "orient", timeout=60)
    assert "task.md: a FIFO (named pipe), not a regular file" in proc.stdout
    stdin = json.dumps({"session_id": "s", "prompt": "hi", "cwd": str(bundle.root)})
    proc = capped(bundle, "hook claude UserPromptSubmit", input=stdin, timeout=60)
    assert proc.returncode == 0 and "not a regular file" in proc.stdout, proc.stderr


def test_a_fifo_diary_log_is_refused_by_name(bundle: Bundle) -> None:
    run_ouro("diary", "write", "x", bundle=bundle)
    _fifo(bundle.root / "desk/_record/diary/facts.jsonl")
    for args in ("diary write y", "index sync"):
        proc = capped(bundle, args, timeout=60)
        assert proc.returncode == 3, (args, proc.stderr)
        assert "facts.jsonl: a FIFO (named pipe), not a regular file" in proc.stderr


def test_a_fifo_day_file_or_checkpoint_never_hangs(bundle: Bundle) -> None:
    run_ouro("arc", "ask", "ship it", bundle=bundle)
    checkpoint = bundle.root / "arc/flight-recorder/latest.json"
    _fifo(checkpoint)
    for args in ("orient", "arc note n"):
        proc = capped(bundle, args, timeout=60)
        assert proc.returncode == 0, (args, proc.stderr)
    day = _day_file(bundle)
    _fifo(day)
    proc = capped(bundle, "orient", timeout=60)
    assert proc.returncode == 3
    assert f"{day.name}: a FIFO (named pipe), not a regular file" in proc.stderr
