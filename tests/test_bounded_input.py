"""Every input is bounded before it is read (issue 26, item 3).

``--*-file`` options, ``-`` (stdin), hook stdin, habit files and MCP request
lines are read through ``ouro.store.bounded``: at most the limit plus one
character, then refused naming the option and the limit; a device or FIFO is
refused for ``--*-file`` before a byte is read. The address-space tests run the CLI
as a real process under ``ulimit -v`` (the unbounded reads of old grew until
the kernel refused them); they assert the error and the exit code, not a time.
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.desk.tracks import add_track
from ouro.errors import CorruptFile, InvalidInput
from tests.conftest import capped, run_ouro, snapshot


@pytest.fixture
def ops(bundle: Bundle) -> Bundle:
    add_track(bundle, "ops")
    return bundle


def _sparse(path: Path, size: int) -> Path:
    """A file of ``size`` NUL bytes that takes no disk space."""
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


# --- the CLI, as a process under an address-space cap --------------------------------


def test_body_file_dev_zero_is_refused_under_ulimit_v(ops: Bundle) -> None:
    before = snapshot(ops.root)
    proc = capped(ops, "desk task add ops x --body-file /dev/zero")
    assert proc.returncode == 2, proc.stderr
    assert "--body-file /dev/zero: a character device, not a regular file" in proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    assert snapshot(ops.root) == before


def test_a_file_larger_than_the_address_space_is_refused_at_the_limit(
    ops: Bundle, tmp_path: Path
) -> None:
    big = _sparse(tmp_path / "big.txt", 2_000_000_000)  # more than the cap allows to hold
    before = snapshot(ops.root)
    proc = capped(ops, f"desk task add ops x --body-file {big}")
    assert proc.returncode == 2, proc.stderr
    assert f"--body-file {big}: more than the limit of 100,000 characters" in proc.stderr
    assert snapshot(ops.root) == before


def test_stdin_is_bounded_too(ops: Bundle) -> None:
    with open("/dev/zero", "rb") as zero:
        proc = capped(ops, "desk task add ops x --body-file -", stdin=zero)
    assert proc.returncode == 2, proc.stderr
    assert "--body-file - (stdin): more than the limit of 100,000 characters" in proc.stderr


def test_claim_evidence_output_file_is_bounded(bundle: Bundle) -> None:
    claim = run_ouro("claim", "add", "x", "--check", "true", "--json", bundle=bundle, check=True)
    claim_id = json.loads(claim.stdout)["id"]
    proc = capped(
        bundle, f"claim evidence {claim_id} --command true --exit-code 0 --output-file /dev/zero"
    )
    assert proc.returncode == 2, proc.stderr
    assert "--output-file /dev/zero: a character device, not a regular file" in proc.stderr


def test_a_hook_fails_open_on_endless_stdin(bundle: Bundle) -> None:
    with open("/dev/zero", "rb") as zero:
        proc = capped(bundle, "hook claude SessionStart", stdin=zero)
    assert proc.returncode == 0, proc.stderr  # a hook always fails open
    assert "hook stdin: more than the limit of 8,000,000 characters" in proc.stderr
    assert "MemoryError" not in proc.stderr


def test_a_huge_habit_file_is_reported_not_read_whole(bundle: Bundle) -> None:
    _sparse(bundle.habits / "huge.yaml", 2_000_000_000)
    proc = capped(bundle, "habits list --json")
    assert "MemoryError" not in proc.stderr
    problems = json.loads(proc.stdout)["problems"]
    assert any(
        p["file"] == "habits/huge.yaml" and "more than the limit of 100,000" in p["reason"]
        for p in problems
    ), problems


# --- devices, FIFOs, limits, encodings ---------------------------------------


def test_a_fifo_is_refused_without_waiting_for_a_writer(ops: Bundle, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    # a process: a read that waits for a writer would hang here (timeout: a guard)
    proc = capped(ops, f"desk task add ops x --body-file {fifo}")
    assert proc.returncode == 2
    assert f"--body-file {fifo}: a FIFO (named pipe), not a regular file" in proc.stderr


def test_a_folder_is_refused(ops: Bundle, tmp_path: Path) -> None:
    proc = run_ouro("desk", "task", "add", "ops", "x", "--body-file", str(tmp_path), bundle=ops)
    assert proc.returncode == 2 and "a folder, not a regular file" in proc.stderr


def test_the_limit_is_the_fields_limit(ops: Bundle, tmp_path: Path) -> None:
    fits = tmp_path / "fits.md"
    fits.write_text("é" * 100_000, encoding="utf-8")  # characters, not bytes
    ok = run_ouro("desk", "task", "add", "ops", "fits", "--body-file", str(fits), bundle=ops)
    assert ok.returncode == 0, ok.stderr
    over = tmp_path / "over.md"
    over.write_text("é" * 100_001, encoding="utf-8")
    before = snapshot(ops.root)
    proc = run_ouro("desk", "task", "add", "ops", "over", "--body-file", str(over), bundle=ops)
    assert proc.returncode == 2
    assert f"--body-file {over}: more than the limit of 100,000 characters" in proc.stderr
    assert snapshot(ops.root) == before
    # a note's body has its own, larger limit
    note = tmp_path / "note.md"
    note.write_text("n" * 1_000_001)
    proc = run_ouro("notes", "write", "big", "--body-file", str(note), bundle=ops)
    assert proc.returncode == 2 and "more than the limit of 1,000,000 characters" in proc.stderr


def test_bytes_that_are_not_utf8_are_refused(ops: Bundle, tmp_path: Path) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok\n\xff\xfe")
    proc = run_ouro("desk", "task", "add", "ops", "x", "--body-file", str(bad), bundle=ops)
    assert proc.returncode == 2 and f"--body-file {bad}: not UTF-8 text" in proc.stderr


# --- the reader itself ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "piece", "at"),
    [
        (b'{"prompt":"hello \xff"}', None, 18),  # a hook's stdin, one read
        (b"a" * 70_000 + b"\xff", None, 70_001),  # past the first chunk
        (
            b"a" * 65_535 + "\u00e9".encode() + b"\xff",
            None,
            65_538,
        ),  # a character split across chunks
        (b"a" * 65_535 + b"\xc3", None, 65_536),  # cut short at the end
        (b"ab\xe9\x80", 3, 3),  # the bad start pending from an earlier read
    ],
)
def test_a_bad_byte_is_reported_at_its_own_offset(data: bytes, piece: int | None, at: int) -> None:
    from ouro.store import bounded

    source = io.BytesIO(data)

    def read(n: int) -> bytes:
        return source.read(n if piece is None else min(n, piece))

    with pytest.raises(InvalidInput, match=rf"invalid byte near byte {at:,}\)"):
        bounded._decode(read, 1_000_000, "in", InvalidInput)


def test_a_habit_file_names_the_offset_of_its_bad_byte(bundle: Bundle) -> None:
    folder = bundle.root / "habits"
    folder.mkdir(exist_ok=True)
    (folder / "bad.yaml").write_bytes(b"name: bad\n# " + b"x" * 100 + b"\xff\n")
    proc = run_ouro("habits", "list", bundle=bundle)
    assert "near byte 113" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_read_text_takes_at_most_limit_plus_one_character(tmp_path: Path) -> None:
    from ouro.store import bounded

    path = tmp_path / "t"
    path.write_text("ab€d", encoding="utf-8")  # 4 characters, 6 bytes
    assert bounded.read_text(path, limit=4, what="t") == "ab€d"
    with pytest.raises(InvalidInput, match="t: more than the limit of 3 characters"):
        bounded.read_text(path, limit=3, what="t")
    calls: list[int] = []
    source = io.BytesIO(b"x" * 1_000_000)

    def read(n: int) -> bytes:
        calls.append(n)
        return source.read(n)

    with pytest.raises(InvalidInput):
        bounded._decode(read, 10, "z", InvalidInput)
    assert sum(calls) == 11  # never more than limit + 1 bytes taken


def test_read_bytes_and_the_error_type(tmp_path: Path) -> None:
    from ouro.store import bounded

    path = tmp_path / "b"
    path.write_bytes(b"12345")
    assert bounded.read_bytes(path, limit=5, what="b") == b"12345"
    with pytest.raises(CorruptFile, match="b: more than the limit of 4 bytes"):
        bounded.read_bytes(path, limit=4, what="b", error=CorruptFile)
    with pytest.raises(InvalidInput, match="missing: cannot read"):
        bounded.read_bytes(tmp_path / "nope", limit=4, what="missing")
    # a symlink is followed to what it names, which must be a regular file
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    with pytest.raises(InvalidInput, match="a character device"):
        bounded.read_bytes(link, limit=4, what="zero")


def test_read_stdin_from_a_text_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    from ouro.store import bounded

    monkeypatch.setattr(sys, "stdin", io.StringIO("hello"))
    assert bounded.read_stdin(limit=5, what="in") == "hello"
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello!"))
    with pytest.raises(InvalidInput, match="in: more than the limit of 5"):
        bounded.read_stdin(limit=5, what="in")


def test_bounded_lines_drop_a_long_line_and_go_on() -> None:
    from ouro.store import bounded

    raw = io.BufferedReader(io.BytesIO(b"short\n" + b"L" * 100 + b"\nafter\n"))  # type: ignore[arg-type]
    heads: list[bytes] = []
    lines = bounded.BoundedLines(raw, 10, lambda head: heads.append(head) or "{}\n")
    assert [lines.readline() for _ in range(4)] == ["short\n", "{}\n", "after\n", ""]
    assert heads == [b"L" * 11]


# --- MCP: one request line is bounded ----------------------------------------


def test_an_mcp_request_line_past_the_limit_gets_an_error_reply(bundle: Bundle) -> None:
    limit = 16_000_000  # ouro.mcp.REQUEST_LINE_LIMIT

    proc = subprocess.Popen(
        [sys.executable, "-m", "ouro.cli", "mcp", "--bundle", str(bundle.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(raw: bytes) -> None:
        assert proc.stdin is not None
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()

    def reply() -> dict[str, object]:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no reply"
        answer: dict[str, object] = json.loads(proc.stdout.readline())
        return answer

    try:
        init = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        }
        send(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode()
        )
        assert reply()["id"] == 1
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        before = snapshot(bundle.root)
        send(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"arc_ask",'
            b'"arguments":{"text":"' + b"a" * (limit + 10) + b'"}}}'
        )
        refused = reply()
        assert refused["id"] == 7 and "longer than 16,000,000 bytes" in str(refused["error"])
        assert snapshot(bundle.root) == before
        send(b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"info"}}')
        ok = reply()
        assert ok["id"] == 8 and "result" in ok  # and the server keeps serving
    finally:
        proc.stdin.close()
        proc.wait(30)
        assert proc.stderr is not None
        proc.stderr.close()
