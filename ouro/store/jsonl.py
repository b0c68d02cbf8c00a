"""Append-only JSONL files.

Appends (``ouro.store.append``): the file is confined to its bundle, opened
``O_APPEND``, locked with ``flock``, and each batch of records goes down in
exactly one ``write()`` followed by ``fsync``, so lines
from concurrent processes never interleave or tear. With ``sync=False`` the
caller takes over the fsync (``fsync_path``) and must not report success before
it: that lets a writer fsync after releasing its own domain lock, so the fsyncs
of concurrent writers share journal commits. If an earlier writer died
mid-line (the file does not end in a newline) the new batch starts on a fresh
line instead of gluing itself to the torn one. A failed append (disk full, short
write, I/O error) is truncated away: the file is left byte-identical.

Reads are tolerant and pure: good records are returned, each bad line is
reported with its file and 1-based line number, and nothing is rewritten. A
line longer than ``ouro.store.bounded.LINE_LIMIT`` is a bad line, never held.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ouro.store import jsonio
from ouro.store.append import append_bytes, fsync_path
from ouro.store.bounded import line_pieces, open_regular, overlong

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ouro.tuples import NamedTuple

__all__ = [
    "BadLine",
    "JsonlRead",
    "append_jsonl",
    "fsync_path",
    "parse_lines",
    "read_jsonl",
]


class BadLine(NamedTuple):
    """A line a reader could not use: reported, never dropped from the file."""

    path: Path
    line_no: int
    reason: str
    raw: bytes

    def describe(self) -> str:
        return f"{self.path}:{self.line_no}: {self.reason}"


class JsonlRead:
    """The good records (with their 1-based line numbers) and the bad lines."""

    __slots__ = ("bad", "line_numbers", "missing", "records")

    def __init__(self, *, missing: bool = False) -> None:
        self.records: list[dict[str, Any]] = []
        self.bad: list[BadLine] = []
        self.missing = missing
        self.line_numbers: list[int] = []


def encode_line(record: Mapping[str, Any]) -> bytes:
    return jsonio.dumps(record) + b"\n"  # orjson's bytes (imported only when needed)


def append_jsonl(
    path: Path, records: Iterable[Mapping[str, Any]], *, timeout: float = 10.0, sync: bool = True
) -> int:
    """Append records as JSON lines in one locked write. Returns bytes written.

    ``sync=False`` skips the fsync; the caller must ``fsync_path(path)`` before
    it treats the records as written. Any failure leaves the file as it was
    (``ouro.store.append``).
    """
    payload = b"".join(encode_line(r) for r in records)
    if not payload:
        return 0

    def build(size: int, ends_nl: bool) -> bytes:
        return payload if ends_nl else b"\n" + payload

    return append_bytes(path, build, timeout=timeout, sync=sync)


def parse_lines(
    path: Path, data: bytes, *, first: int = 1, into: JsonlRead | None = None
) -> JsonlRead:
    """The records of ``data`` (whole lines; ``first``: the first one's number)."""
    loads = jsonio.loads_for(len(data))
    result = JsonlRead() if into is None else into
    for line_no, raw in enumerate(data.split(b"\n"), start=first):
        if not raw.strip():
            continue
        try:
            value = loads(raw)
        except jsonio.JSONDecodeError as exc:
            result.bad.append(BadLine(path, line_no, f"not valid JSON ({exc})", raw))
            continue
        if not isinstance(value, dict):
            result.bad.append(BadLine(path, line_no, "not a JSON object", raw))
            continue
        result.records.append(value)
        result.line_numbers.append(line_no)
    return result


def read_jsonl(path: Path) -> JsonlRead:
    """Read every good record; report bad lines. A missing file is flagged, not raised.

    Whole lines a piece at a time (``ouro.store.bounded.line_pieces``): a line
    longer than ``LINE_LIMIT`` is a bad line, skipped unread. A path that is not
    a regular file raises ``NotRegularFile`` (an ``OSError``) without blocking.
    """
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return JsonlRead(missing=True)
    result = JsonlRead()
    line = 1
    try:
        for _, data in line_pieces(fd, 0, os.fstat(fd).st_size, tail=True):
            if isinstance(data, int):
                result.bad.append(BadLine(path, line, overlong(data), b""))
                line += 1
                continue
            parse_lines(path, data.removesuffix(b"\n"), first=line, into=result)
            line += data.count(b"\n") + (not data.endswith(b"\n"))
    finally:
        os.close(fd)
    return result
