"""Clearing what a killed writer leaves behind, so a re-run ends byte-identical.

Contract: an atomic replace (``ouro.store.atomic``, the Desk's
``replace_derived``, the migration's own ``_write_new``) writes a temp file
beside its target and renames it over the target. SIGKILLed between the two,
the temp file stays -- and since ``mkstemp`` and pid-named temps get a new
name on every try, re-running the write does not reuse (and so never removes)
it. ``clear_temps(path)`` removes exactly those leftovers of ``path``:
``.<name>.<8 mkstemp chars | pid | migrate>.tmp`` in the same folder, nothing
else. Call it only while holding the lock every writer of ``path`` takes (the
migration lock for the migration's own files, the Desk's diary or notes lock
for Desk files), so no live writer's temp file can match.

``write_atomic(path, data)`` = ``clear_temps`` + ``atomic_write_bytes``, for
files only the migration writes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ouro.store.atomic import atomic_write_bytes

# mkstemp's random part (8 of [a-z0-9_]), the store's <pid>-<n>, _write_new's tag
_MIDDLE = re.compile(r"[a-z0-9_]{8}|\d+(?:-\d+)?|migrate")


def is_temp_of(name: str, target: str) -> bool:
    prefix = f".{target}."
    if not (name.startswith(prefix) and name.endswith(".tmp")):
        return False
    return _MIDDLE.fullmatch(name[len(prefix) : -len(".tmp")]) is not None


def clear_temps(path: Path) -> list[Path]:
    """Remove the temp files killed writers of ``path`` left; returns them."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(path.parent))
    except FileNotFoundError:
        return removed
    for entry in entries:
        if is_temp_of(entry.name, path.name) and entry.is_file(follow_symlinks=False):
            Path(entry.path).unlink(missing_ok=True)
            removed.append(Path(entry.path))
    return removed


def write_atomic(path: Path, data: bytes) -> None:
    clear_temps(path)
    atomic_write_bytes(path, data)
