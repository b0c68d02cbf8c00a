"""Desk heads: a small derived summary of every task, so orient reads O(changed) files.

File: ``state/cache/desk-heads.json`` (machine-local, ignored by git; inode
numbers mean nothing elsewhere)::

    {"schema": 1, "recordedAt": <time_ns>, "tasks": {
        "<track>/<task-folder>": [<size>, <mtime_ns>, <inode>,
                                  {"id", "title", "status", "priority", "created",
                                   "updated", "heldBy", "leaseUntil", "unverified",
                                   "blockedBy", "parent"}], ...}}

Contract:
- Files are the truth; this is a cache and is never trusted blindly. A reader
  (``read_heads``) lists the task folders and ``stat``s each ``task.md``; an
  entry is used only when its size, mtime_ns and inode all match and its mtime
  is older than ``recordedAt`` minus the racy window (an edit in the same
  clock tick as the refresh could otherwise pass unseen). Every other task is
  read from its file (front matter via ``ouro.store.frontmatter``: no YAML for
  the shape ouro writes). A missing, unreadable or foreign cache file means
  "read every task". Reading changes no file: a stale cache stays stale.
- Writers refresh it: every Desk write that names a task path (``after_write``
  in ``ouro.desk.hooks``) calls ``refresh_heads(bundle, paths)``, which
  re-validates every entry the same way (one ``stat`` per task; only changed
  tasks are read, so edits made outside ouro are absorbed too) and replaces
  the file atomically under ``state/locks/heads.lock``. ``ouro index sync`` and
  ``rebuild`` refresh it as well. A refresh that fails leaves the old cache in place, which
  readers validate anyway, so the write it follows stands.
- An unreadable task becomes a problem string (``<locator>: reason``), never a
  head with made-up fields.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, OuroError

SCHEMA = 2  # 2: blockedBy and parent (task dependencies, ouro.desk.deps)
#: an mtime this close to the refresh may hide a same-tick edit: re-read it
RACY_NS = 50_000_000
FIELDS = (
    "id",
    "title",
    "status",
    "priority",
    "created",
    "updated",
    "heldBy",
    "leaseUntil",
    "unverified",
    "blockedBy",
    "parent",
)


def heads_path(bundle: Bundle) -> Path:
    return bundle.state / "cache" / "desk-heads.json"


@dataclass(frozen=True, slots=True)
class Head:
    """What orientation shows of a task, from its front matter."""

    file: str  # the task.md path (a string: Path objects cost ~50 µs each)
    locator: str
    id: str
    status: str
    priority: int
    title: str
    created: str
    updated: str
    held_by: str | None
    lease_until: str | None
    #: completed without a passing check: the reason (``unverified`` in the file)
    unverified: str | None
    #: the task ids this task waits for (``blockedBy``) and its ``parent``
    blocked_by: tuple[str, ...] = ()
    parent: str | None = None

    @property
    def path(self) -> Path:
        return Path(self.file)

    @property
    def track(self) -> str:
        return self.locator.split("/", 2)[1]


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _fields_of(meta: dict[str, Any]) -> dict[str, Any]:
    from ouro.desk.tasks import holder_of

    priority = meta.get("priority")
    return {
        "id": _str(meta.get("id")),
        "title": _str(meta.get("title")),
        "status": _str(meta.get("status")),
        "priority": priority if isinstance(priority, int) and not isinstance(priority, bool) else 9,
        "created": _str(meta.get("created")),
        "updated": _str(meta.get("updated")),
        "heldBy": holder_of(meta),
        "leaseUntil": _opt(meta.get("leaseUntil")),
        "unverified": _opt(meta.get("unverified") or None),
        "blockedBy": _ids(meta.get("blockedBy")),
        "parent": _opt(meta.get("parent") or None),
    }


def _ids(value: Any) -> list[str]:
    """``blockedBy`` as a list of ids; a hand-written single id counts as one."""
    if isinstance(value, list):
        return [str(v) for v in value if v]
    return [str(value)] if value else []


def _head(key: str, path: str, fields: dict[str, Any]) -> Head:
    return Head(
        path,
        f"desk/{key}/task.md",
        fields["id"],
        fields["status"],
        fields["priority"],
        fields["title"],
        fields["created"],
        fields["updated"],
        fields["heldBy"],
        fields["leaseUntil"],
        fields["unverified"],
        tuple(fields["blockedBy"]),
        fields["parent"],
    )


#: the front-matter keys a head is made of (``heldBy`` was ``claimedBy`` before)
WANTED = frozenset(FIELDS) | {"claimedBy"}


def _fast_meta(text: str) -> dict[str, Any] | None:
    """The head keys read without YAML when the front matter is in ouro's shape."""
    from ouro.store.frontmatter import fast_fields

    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        return None
    return fast_fields(text[4 : end + 1], WANTED)


def _read_task(key: str, path: str) -> dict[str, Any]:
    """The head fields of one task.md; raises CorruptFile when unreadable."""
    from ouro.store.frontmatter import parse

    locator = f"desk/{key}/task.md"
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFile(
            f"{locator}: unreadable ({exc})", hint="fix the file by hand; ouro left it untouched"
        ) from None
    meta = _fast_meta(text)
    if meta is None:
        meta, _body = parse(text, source=locator)
    fields = _fields_of(meta)
    if not fields["id"]:
        raise CorruptFile(f"{locator}: the front matter has no id", hint="add 'id: t-…'")
    return fields


def _task_files(bundle: Bundle) -> list[tuple[str, str, os.stat_result]]:
    """(key, path, stat) of every ``<track>/<task>/task.md``, sorted by track then folder."""
    out: list[tuple[str, str, os.stat_result]] = []
    desk = str(bundle.desk)
    try:
        with os.scandir(desk) as entries:
            tracks = sorted(
                e.name for e in entries if e.is_dir() and not e.name.startswith(("_", "."))
            )
    except FileNotFoundError:
        return out
    stat = os.stat
    for track in tracks:
        base = f"{desk}{os.sep}{track}{os.sep}"  # plain strings: os.path.join costs ~3 µs a call
        try:
            with os.scandir(base) as entries:
                folders = sorted(e.name for e in entries if e.is_dir())
        except (FileNotFoundError, NotADirectoryError):
            continue
        for folder in folders:
            path = f"{base}{folder}{os.sep}task.md"
            try:
                st = stat(path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            out.append((f"{track}/{folder}", path, st))
    return out


def _load_cache(bundle: Bundle) -> tuple[int, dict[str, Any]]:
    """(recordedAt, entries) of the cache file; (0, {}) when missing or not ours."""
    try:
        data = orjson.loads(heads_path(bundle).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return 0, {}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        return 0, {}
    tasks, recorded = data.get("tasks"), data.get("recordedAt")
    if not isinstance(tasks, dict) or not isinstance(recorded, int):
        return 0, {}
    return recorded, tasks


def _cached(entry: Any, st: os.stat_result, recorded: int) -> dict[str, Any] | None:
    if not isinstance(entry, list) or len(entry) != 4 or not isinstance(entry[3], dict):
        return None
    size, mtime_ns, ino = entry[:3]
    fields: dict[str, Any] = entry[3]
    if (size, mtime_ns, ino) != (st.st_size, st.st_mtime_ns, st.st_ino):
        return None
    if st.st_mtime_ns > recorded - RACY_NS or not _well_typed(fields):
        return None
    return fields


_KEYS = frozenset(FIELDS)


def _well_typed(fields: dict[str, Any]) -> bool:
    """The entry has every field, with the types orient sorts and prints by."""
    if fields.keys() != _KEYS or type(fields["priority"]) is not int:
        return False
    return (
        type(fields["id"]) is str
        and type(fields["status"]) is str
        and (type(fields["created"]) is str and type(fields["title"]) is str)
        and type(fields["blockedBy"]) is list
    )


def read_heads(bundle: Bundle) -> tuple[list[Head], list[str]]:
    """Every task's head (sorted by track, then folder) and the unreadable ones. Pure."""
    recorded, cache = _load_cache(bundle)
    heads: list[Head] = []
    problems: list[str] = []
    for key, path, st in _task_files(bundle):
        fields = _cached(cache.get(key), st, recorded)
        if fields is None:
            try:
                fields = _read_task(key, path)
            except CorruptFile as exc:
                problems.append(exc.message)
                continue
        heads.append(_head(key, path, fields))
    return heads, problems


def _keys_for(bundle: Bundle, paths: Iterable[Path]) -> set[str] | None:
    """Cache keys the paths touch; None when a whole track (or more) changed."""
    desk = os.path.abspath(bundle.desk)
    keys: set[str] = set()
    for raw in paths:
        full = os.path.abspath(raw if Path(raw).is_absolute() else bundle.root / raw)
        if not full.startswith(desk + os.sep):
            continue
        parts = full[len(desk) + 1 :].split(os.sep)
        if parts[0].startswith(("_", ".")):
            continue
        if len(parts) < 2:
            return None
        keys.add(f"{parts[0]}/{parts[1]}")
    return keys


def touches_tasks(bundle: Bundle, paths: Iterable[Path]) -> bool:
    keys = _keys_for(bundle, paths)
    return keys is None or bool(keys)


def refresh_heads(bundle: Bundle, paths: Iterable[Path] | None = None) -> None:
    """Bring the cache up to date for ``paths`` (None: every task). Writers call this."""
    from ouro.store.atomic import atomic_write_bytes
    from ouro.store.lock import FileLock

    if paths is not None and not touches_tasks(bundle, paths):
        return
    with FileLock(bundle.lock_path("heads"), purpose="desk heads refresh"):
        # Every entry is re-validated (one stat per task; only changed tasks are
        # read), so edits made outside ouro are absorbed by the next write too.
        recorded, cache = _load_cache(bundle)
        now = time.time_ns()
        entries: dict[str, Any] = {}
        changed = False
        for key, path, st in _task_files(bundle):
            fields = _cached(cache.get(key), st, recorded)
            if fields is None:
                changed = True
                try:
                    fields = _read_task(key, path)
                except CorruptFile:
                    continue  # readers report it from the file itself
            entries[key] = [st.st_size, st.st_mtime_ns, st.st_ino, fields]
        if not changed and entries.keys() == cache.keys():
            return  # every entry still holds: nothing to write
        data = {"schema": SCHEMA, "recordedAt": now, "tasks": entries}
        target = heads_path(bundle)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, orjson.dumps(data))


def refresh_quietly(bundle: Bundle, paths: Iterable[Path] | None = None) -> None:
    """``refresh_heads`` after a write: a failure leaves the old cache, which readers
    validate per file anyway, so the write it follows still stands."""
    with contextlib.suppress(OSError, OuroError):
        refresh_heads(bundle, paths)
