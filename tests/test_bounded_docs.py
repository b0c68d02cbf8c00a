"""Record documents are bounded before they are read; a FIFO in their place never hangs.

A file of the bundle read whole (a sentinel receipt, the notes manifest, a hook
receipts ledger, a legacy file being migrated, a note or task being indexed)
goes through ``ouro.store.bounded.file_bytes``: a FIFO, a device or a socket
is refused as "not a regular file" without blocking, and a file past
``DOC_LIMIT`` is refused from its size before a byte is read. Each test puts a
real FIFO (``os.mkfifo``) or a sparse file (``truncate``: no disk) where the
file belongs and runs the user's path -- the CLI as a process under ``ulimit
-v`` with a timeout, so a hang or an unbounded read fails the test rather than
the suite -- and checks that it finishes, names the file, and changes nothing
in the record. Before these reads were bounded, each one hung on the FIFO
(the timeout) or ran out of memory on the sparse file.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.store import bounded
from tests.conftest import REPO, capped, run_ouro
from tests.migrate_helpers import copy_example

#: a sparse file this long is far past DOC_LIMIT and past what ``capped`` may hold
HUGE = 1 << 30
SENTINEL = "arc/flight-recorder/context-loss-sentinel"
#: how a file past ``DOC_LIMIT`` (64 MiB) is refused
PAST = "more than the limit of 67,108,864 bytes"


def _huge(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(HUGE)


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _record(root: Path) -> dict[str, object]:
    """Every entry outside ``state/``: a small regular file by its bytes and
    mtime, anything else (a FIFO, a sparse giant) by its mode, size and mtime
    -- never opened, so taking it cannot hang."""
    out: dict[str, object] = {}
    for dirpath, dirs, files in os.walk(root):
        if Path(dirpath) == root:
            dirs[:] = [d for d in dirs if d != "state"]
        for name in files:
            path = Path(dirpath) / name
            st = path.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_size <= 1 << 20:
                out[str(path.relative_to(root))] = (path.read_bytes(), st.st_mtime_ns)
            else:
                out[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


# --- the reader ---------------------------------------------------------------


def test_file_bytes_refuses_a_fifo_and_a_file_past_the_limit_by_name(tmp_path: Path) -> None:
    from ouro.store.bounded import NotRegularFile, TooLarge, file_bytes, file_text

    assert bounded.DOC_LIMIT == 64 << 20
    fifo, huge, small = tmp_path / "pipe.json", tmp_path / "huge.json", tmp_path / "ok.json"
    os.mkfifo(fifo)
    _huge(huge)
    small.write_bytes(b"{}")
    with pytest.raises(NotRegularFile, match="a FIFO \\(named pipe\\)") as got:
        file_bytes(fifo)
    assert got.value.filename == str(fifo)
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge) as too:
            file_bytes(huge)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(too.value, OSError) and too.value.errno == 27  # EFBIG
    assert too.value.filename == str(huge)
    assert f"1,073,741,824 bytes, {PAST}" in str(too.value)
    assert peak < 1 << 20  # decided from the size: not a byte of it was read
    assert file_bytes(small) == b"{}" and file_text(small) == "{}"
    with pytest.raises(TooLarge, match="more than the limit of 1 bytes"):
        file_bytes(small, limit=1)


def test_file_bytes_never_reads_past_the_limit_of_a_growing_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is checked first; should the file grow after its ``fstat``
    (here: a ``fstat`` that reports it small), no more than limit + 1 bytes are
    read all the same."""
    from ouro.store.bounded import TooLarge, file_bytes

    path = tmp_path / "growing.json"
    path.write_bytes(b"x" * 10_000)
    real = os.fstat

    def small(fd: int) -> os.stat_result:
        st = real(fd)
        return os.stat_result((st.st_mode, *st[1:6], 10, *st[7:]))

    reads: list[int] = []
    real_read = os.read

    def counted(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        reads.append(len(data))
        return data

    monkeypatch.setattr(os, "fstat", small)
    monkeypatch.setattr(os, "read", counted)
    with pytest.raises(TooLarge, match="grown while read"):
        file_bytes(path, limit=100)
    assert sum(reads) <= 101


# --- through the CLI --------------------------------------------------------------


def test_a_fifo_or_huge_sentinel_receipt_is_reported_by_name(bundle: Bundle) -> None:
    run_ouro("sentinel", "refresh", bundle=bundle)  # blocked: no ask yet; a receipt all the same
    latest = bundle.root / SENTINEL / "latest.json"
    ready = bundle.root / SENTINEL / "latest-ready.json"
    _fifo(ready)
    before = _record(bundle.root)
    proc = capped(bundle, "--json sentinel status", timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr  # its exit status is the verdict's
    issues = {i["locator"]: i["problem"] for i in json.loads(proc.stdout)["issues"]}
    assert "a FIFO (named pipe), not a regular file" in issues[f"{SENTINEL}/latest-ready.json"]
    # the recovery anchor: unknown, and said so -- never waited for
    proc = capped(bundle, "orient", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"{SENTINEL}/latest-ready.json: cannot read (a FIFO (named pipe)" in proc.stdout
    assert _record(bundle.root) == before
    _huge(latest)
    before = _record(bundle.root)
    proc = capped(bundle, "--json sentinel status", timeout=60)
    assert "Traceback" not in proc.stderr, proc.stderr
    issues = {i["locator"]: i["problem"] for i in json.loads(proc.stdout)["issues"]}
    assert PAST in issues[f"{SENTINEL}/latest.json"]
    assert _record(bundle.root) == before


def test_a_fifo_or_huge_notes_manifest_reads_as_stale(bundle: Bundle) -> None:
    manifest = bundle.root / "desk/_record/notes/.index.json"
    for make, said in ((_fifo, "a FIFO (named pipe), not a regular file"), (_huge, "limit")):
        make(manifest)
        before = _record(bundle.root)
        proc = capped(bundle, "--json index status", timeout=60)
        assert proc.returncode in (0, 3), proc.stderr
        (check,) = [d for d in json.loads(proc.stdout)["derived"] if d["name"] == "notes-manifest"]
        assert check["state"] == "stale" and said in check["reason"], check
        assert str(manifest) in check["reason"]
        assert _record(bundle.root) == before
    # a note written over it: the manifest is rebuilt from the note files
    _fifo(manifest)
    proc = capped(bundle, "notes write T --body hello", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [n["slug"] for n in json.loads(manifest.read_bytes())["notes"]] == ["t"]


def test_a_fifo_hook_receipts_ledger_never_hangs_a_hook(bundle: Bundle) -> None:
    from ouro.hooks.receipts import ledger_path

    ledger = ledger_path(bundle, "claude", "s")
    _fifo(ledger)
    before = _record(bundle.root)
    stdin = json.dumps({"session_id": "s", "prompt": "hi", "cwd": str(bundle.root)})
    proc = capped(bundle, "hook claude UserPromptSubmit", input=stdin, timeout=60)
    assert proc.returncode == 0, proc.stderr
    after = _record(bundle.root)
    # the hook appends its own event to the flight recorder; nothing else moves
    assert {k: v for k, v in after.items() if "flight-recorder" not in k} == {
        k: v for k, v in before.items() if "flight-recorder" not in k
    }
    assert stat.S_ISFIFO(ledger.lstat().st_mode)


def test_migrate_plan_quarantines_a_fifo_and_a_huge_legacy_file_by_name(tmp_path: Path) -> None:
    root = copy_example(tmp_path / "legacy.ouro")
    _fifo(root / "notes/pipe.md")
    _huge(root / "journal/huge.md")
    before = _record(root)
    proc = capped(Bundle(root), "migrate --dry-run", timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    (huge,) = [line for line in lines if "journal/huge.md ->" in line]
    assert "quarantined" in huge and PAST in huge
    (pipe,) = [line for line in lines if "notes/pipe.md ->" in line]
    assert "quarantined" in pipe and "named pipe" in pipe
    assert _record(root) == before
    assert not (root / "state/migration").exists()


def test_the_index_scan_reports_a_fifo_note_and_a_huge_one(bundle: Bundle) -> None:
    notes = bundle.root / "desk/_record/notes"
    _fifo(notes / "pipe.md")
    _huge(notes / "huge.md")
    before = _record(bundle.root)
    proc = capped(bundle, "--json index sync", timeout=120)
    assert proc.returncode == 0, proc.stderr
    problems = {p["locator"]: p["reason"] for p in json.loads(proc.stdout)["problems"]}
    assert problems["desk/_record/notes/pipe.md"] == (
        "a FIFO (named pipe), not a regular file; it was not read"
    )
    assert PAST in problems["desk/_record/notes/huge.md"]
    # the derived notes manifest may be rebuilt by a sync; the rest stays as it was
    manifest = "desk/_record/notes/.index.json"
    # a note no reader reads is not hashed either (1 GiB read through for nothing)
    listed = json.loads((bundle.root / manifest).read_text())["notes"]
    assert [(e["slug"], e["hash"]) for e in listed] == [("huge", None)]
    after = _record(bundle.root)
    assert {k: v for k, v in after.items() if k != manifest} == {
        k: v for k, v in before.items() if k != manifest
    }


_CHECK_CURSOR = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from ouro.arc import fold
    from ouro.store import stamp

    folder = Path(sys.argv[1])
    name = "2026-01-01.jsonl"
    os.mkfifo(folder / name)
    fp = list(stamp.of(os.stat(folder / name)))
    for mark in ({"fp": fp, "length": 10, "digest": "x"}, {"fp": None, "length": 0, "digest": "x"}):
        state = fold.empty_state()
        state["cursor"].update(file=name, offset=10, done=[], marks={name: mark})
        try:
            fold.check_cursor(state, folder, [name])
        except fold.Inconsistent as exc:
            print("inconsistent:", exc)
    """
)


def test_check_cursor_refuses_a_fifo_day_file(tmp_path: Path) -> None:
    """A FIFO where the cursor's day file is: the mark check (its prefix digest)
    and the cursor check (the line before the offset) refuse it by name, and the
    refold names it to the user (``test_a_fifo_day_file_or_checkpoint_never_hangs``).
    Run as a process: on a hang the timeout fails the test."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _CHECK_CURSOR, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,  # a guard against a hang, not an assertion on speed
    )
    assert proc.returncode == 0, proc.stderr
    said = "inconsistent: 2026-01-01.jsonl: a FIFO (named pipe), not a regular file"
    assert proc.stdout.splitlines() == [said, said]
