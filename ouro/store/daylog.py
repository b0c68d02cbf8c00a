"""Reading a folder of day-named JSONL logs newest first, one page at a time.

The flight recorder (``events/YYYY-MM-DD.jsonl``) and the sentinel ledger
(``history/YYYY-MM-DD.jsonl``) are append-only day files. A viewer wants the
newest lines first and only a page of them, so this reads the newest day file,
walks its lines backwards, and opens an older file only when the page is not
full yet: the first page costs one file, however long the history.

Pure: it opens files for reading only. A line that is not a JSON object is
counted in ``bad`` (the writers' own readers name and quarantine it) and
skipped, and so is a line longer than ``ouro.store.bounded.LINE_LIMIT``,
never held; a missing folder reads as an empty log with ``missing`` set; a day
file, or the folder itself (or a folder above it: ``arc/`` a symlink), behind a
symlink leading outside the bundle is never opened or listed (``outside``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.store import jsonio
from ouro.store.bounded import line_pieces, open_regular
from ouro.store.guard import Inside, names_inside

DAY_FILE = re.compile(r"^\d{4}-\d{2}-\d{2}\.jsonl$")


@dataclass
class DayPage:
    #: (record, day file name), newest first
    rows: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    #: at least one more matching line exists beyond this page
    more: bool = False
    #: lines skipped because they are not JSON objects (in the files read)
    bad: int = 0
    missing: bool = False
    #: day files behind a symlink leading outside the bundle: never read
    outside: list[str] = field(default_factory=list)


def day_files(folder: Path, skipped: list[str] | None = None) -> list[str]:
    """Day file names, oldest first; none behind a symlink leading outside the
    bundle (never opened: their bundle-relative paths go to ``skipped``). Raises
    OSError when the folder cannot be listed."""
    return names_inside(folder, DAY_FILE.match, skipped)


def _lines(path: Path, page: DayPage) -> list[bytes]:
    """The complete lines of a day file: a tail without its newline is an append
    still being written (not a bad line); a line past ``LINE_LIMIT`` is counted
    bad, never held. Raises OSError (``NotRegularFile`` for a FIFO: no hang)."""
    fd = open_regular(path)
    lines: list[bytes] = []
    try:
        for _, data in line_pieces(fd, 0, os.fstat(fd).st_size):
            if isinstance(data, int):
                page.bad += 1
            else:
                lines += data[:-1].split(b"\n")
    finally:
        os.close(fd)
    return lines


def newest_first(
    folder: Path,
    root: Path,
    *,
    skip: int = 0,
    limit: int = 50,
    keep: Callable[[dict[str, Any]], bool] | None = None,
    needles: tuple[bytes, ...] = (),
) -> DayPage:
    """Matching records ``skip .. skip+limit`` counted from the newest line.

    ``needles``: a cheap prefilter for ``keep`` — a line that contains none of
    these bytes is skipped unparsed (so they must be implied by ``keep``).
    ``root``: the bundle, whose read rule (``Inside``) the folder is resolved by.
    Raises OSError when the folder exists but cannot be listed or read.
    """
    page = DayPage()
    inside = Inside(root)
    if inside.folder(folder) is None:  # once per read: none of it is listed
        page.outside.append(inside.rel(folder))
        return page
    if not folder.exists():
        page.missing = True
        return page
    seen = 0
    for name in reversed(day_files(folder, page.outside)):
        for raw in reversed(_lines(folder / name, page)):
            if not raw.strip():
                continue
            if needles and not any(n in raw for n in needles):
                continue
            try:
                record = jsonio.loads(raw)
            except jsonio.JSONDecodeError:
                page.bad += 1
                continue
            if not isinstance(record, dict):
                page.bad += 1
                continue
            if keep is not None and not keep(record):
                continue
            if seen >= skip + limit:
                page.more = True
                return page
            if seen >= skip:
                page.rows.append((record, name))
            seen += 1
    return page
