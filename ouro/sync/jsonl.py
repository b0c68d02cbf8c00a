"""Merging append-only JSONL files (events, facts, ledgers): union, canonical order.

The merged file is a pure function of the *set* of lines on both sides, so
merging A into B and B into A give the same bytes:

1. every non-blank line of either side, exactly-equal lines kept once;
2. good records first, ordered by their id (``id``, else ``receiptId``,
   else ``runId``: ouro ids are time-sortable, so this is write order),
   then by the raw bytes; records without an id after them, by raw bytes;
3. malformed lines (not JSON, or not an object) last, by raw bytes — kept,
   never dropped, and reported with their line number in the merged file.

A line is the raw bytes a writer wrote: nothing is re-serialized, so two
lines that differ only in key order are both kept (they are not *exact*
duplicates) and a reader's "first line per id wins" rule sees them in id order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ouro.store import jsonio

ID_KEYS = ("id", "receiptId", "runId")


@dataclass(frozen=True)
class Malformed:
    path: str
    line: int
    reason: str

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.reason} (kept)"


def _key(raw: bytes) -> tuple[int, str, bytes, str | None]:
    try:
        value = jsonio.loads(raw)
    except jsonio.JSONDecodeError as exc:
        return (2, "", raw, f"not valid JSON ({exc})")
    if not isinstance(value, dict):
        return (2, "", raw, "not a JSON object")
    for name in ID_KEYS:
        ident = value.get(name)
        if isinstance(ident, str) and ident:
            return (0, ident, raw, None)
    return (1, "", raw, None)


def split_lines(data: bytes) -> list[bytes]:
    return [line.rstrip(b"\r") for line in data.split(b"\n") if line.strip()]


def merge_lines(sides: Iterable[bytes], path: str) -> tuple[bytes, list[Malformed]]:
    """The canonical union of the given file contents, and its malformed lines."""
    unique: set[bytes] = set()
    for data in sides:
        unique.update(split_lines(data))
    keyed = sorted(_key(raw) for raw in unique)
    problems = [
        Malformed(path, number, reason)
        for number, (_, _, _, reason) in enumerate(keyed, start=1)
        if reason is not None
    ]
    body = b"".join(raw + b"\n" for _, _, raw, _ in keyed)
    return body, problems
