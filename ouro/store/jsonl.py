"""Append-only JSONL files.

Appends: the file is opened ``O_APPEND``, locked with ``flock``, and each batch
of records goes down in exactly one ``write()`` followed by ``fsync``, so lines
from concurrent processes never interleave or tear. With ``sync=False`` the
caller takes over the fsync (``fsync_path``) and must not report success before
it: that lets a writer fsync after releasing its own domain lock, so the fsyncs
of concurrent writers share journal commits. If an earlier writer died
mid-line (the file does not end in a newline) the new batch starts on a fresh
line instead of gluing itself to the torn one.

Reads are tolerant and pure: good records are returned, each bad line is
reported with its file and 1-based line number, and nothing is rewritten.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ouro.errors import OuroError
from ouro.store.lock import lock_fd


@dataclass(frozen=True)
class BadLine:
    path: Path
    line_no: int
    reason: str
    raw: bytes

    def describe(self) -> str:
        return f"{self.path}:{self.line_no}: {self.reason}"


@dataclass
class JsonlRead:
    records: list[dict[str, Any]] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    missing: bool = False
    line_numbers: list[int] = field(default_factory=list)


def encode_line(record: Mapping[str, Any]) -> bytes:
    return orjson.dumps(record) + b"\n"


def append_jsonl(
    path: Path, records: Iterable[Mapping[str, Any]], *, timeout: float = 10.0, sync: bool = True
) -> int:
    """Append records as JSON lines in one locked write. Returns bytes written.

    ``sync=False`` skips the fsync; the caller must ``fsync_path(path)`` before
    it treats the records as written.
    """
    payload = b"".join(encode_line(r) for r in records)
    if not payload:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        lock_fd(fd, path, timeout)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                payload = b"\n" + payload
            written = os.write(fd, payload)
            if written != len(payload):
                # A short write would leave a torn line; take it back.
                os.ftruncate(fd, size)
                raise OuroError(
                    f"short write to {path} ({written} of {len(payload)} bytes); nothing appended",
                    hint="check free disk space and retry",
                )
            if sync:
                os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return len(payload)


def fsync_path(path: Path) -> None:
    """Flush everything written to ``path`` so far (by any process) to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def parse_lines(path: Path, data: bytes) -> JsonlRead:
    result = JsonlRead()
    for line_no, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            result.bad.append(BadLine(path, line_no, f"not valid JSON ({exc})", raw))
            continue
        if not isinstance(value, dict):
            result.bad.append(BadLine(path, line_no, "not a JSON object", raw))
            continue
        result.records.append(value)
        result.line_numbers.append(line_no)
    return result


def read_jsonl(path: Path) -> JsonlRead:
    """Read every good record; report bad lines. A missing file is flagged, not raised."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JsonlRead(missing=True)
    return parse_lines(path, data)
