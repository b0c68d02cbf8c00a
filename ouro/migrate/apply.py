"""Carrying out a persisted plan: backup, then each item, idempotently.

Contract:

- ``backup`` copies every legacy file and symlink to the backup folder
  (mtimes kept, links not followed), writes ``MANIFEST.json`` and verifies each
  copy against the plan's hash; a mismatch stops the run before any change.
- ``apply_items`` reads legacy content from the *verified backup*, never from
  the live roots, and every step checks what is already at its destination
  first, so running it twice (or after a kill at any instruction) gives the
  same files: a copy or write whose destination already has the planned bytes
  is skipped; a daily append is skipped when the text is already there; facts
  are appended only for ids not yet in the file (a torn line our own killed
  append left is cut off first); entities are rebuilt from the facts. A temp
  file that a killed atomic replace left beside a destination is removed
  before that destination is written again (``ouro.migrate.tidy``), so the
  re-run leaves no stray file the uninterrupted run would not have.
- A destination that holds *other* bytes than planned is never overwritten:
  the run stops with ``Conflict`` naming it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ouro.errors import Conflict, CorruptFile
from ouro.migrate import documents
from ouro.migrate.plan import Item, Plan
from ouro.migrate.tidy import clear_temps, write_atomic
from ouro.models.hashing import content_hash, hash_file
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_bytes, dump_json
from ouro.store.bounded import file_bytes, open_regular
from ouro.store.jsonl import append_jsonl, encode_line, read_jsonl
from ouro.store.lock import FileLock

Progress = Callable[[str, int, int], None]


def _noop(phase: str, done: int, total: int) -> None:
    return None


def backup(root: Path, plan: Plan, progress: Progress = _noop) -> None:
    folder = root / plan.backup
    folder.mkdir(parents=True, exist_ok=True)
    total = len(plan.sources)
    for n, src in enumerate(plan.sources, start=1):
        target = folder / src["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        live = root / src["path"]
        if src["kind"] == "file":
            shutil.copy2(live, target, follow_symlinks=False)
        elif src["kind"] == "symlink":
            if os.path.lexists(target):
                target.unlink()
            os.symlink(os.readlink(live), target)
        progress("backup", n, total)
    # Files outside the legacy roots that the run changes (merge targets, derived
    # files, bundle.json, the report), as they were before it: same relative path.
    targets = []
    for rel in plan.meta.get("targets", []):
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target, follow_symlinks=False)
        targets.append({"path": rel, "bytes": target.stat().st_size, "hash": hash_file(target)})
    write_atomic(
        folder / "MANIFEST.json",
        dump_json({"runId": plan.run_id, "sources": plan.sources, "targets": targets}),
    )
    for src in plan.sources:
        problem = backup_problem(root, plan, src)
        if problem:
            raise CorruptFile(
                f"backup of {src['path']} does not match it: {problem}",
                hint="the file changed while ouro was copying it; stop the other writer and "
                "run 'ouro migrate' again (nothing in the bundle was changed)",
            )


def backup_problem(root: Path, plan: Plan, src: dict[str, Any]) -> str | None:
    copy = root / plan.backup / src["path"]
    if src["kind"] == "file":
        if not copy.is_file() or copy.is_symlink():
            return f"{copy.relative_to(root)} is missing"
        digest = hash_file(copy)
        return None if digest == src["hash"] else f"hash {digest} != {src['hash']}"
    if src["kind"] == "symlink" and (
        not copy.is_symlink() or os.readlink(copy) != src.get("target")
    ):
        return f"{copy.relative_to(root)} is not the same link"
    return None


def _write_new(root: Path, item: Item, data: bytes) -> None:
    """Write a planned-new destination; skip if it already holds exactly ``data``."""
    dest = root / str(item.destination)
    if dest.is_file() and not dest.is_symlink():
        if content_hash(file_bytes(dest)) == content_hash(data):
            return
        raise Conflict(
            f"{item.destination} already exists with other content; the migration will not "
            f"overwrite it (planned for {item.source})",
            hint="move that file aside, then run 'ouro migrate' again",
        )
    # One os.sync() before the old roots are removed makes all of these durable
    # at once; a per-file fsync would dominate the run on large bundles.
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.migrate.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dest)


def _backup_bytes(root: Path, plan: Plan, item: Item) -> bytes:
    """The legacy bytes of an item from the backup (its entry's byte range, if it has one)."""
    data = file_bytes(root / plan.backup / str(item.source))
    span = item.detail.get("range")
    return data[span[0] : span[1]] if span else data


def apply_item(root: Path, plan: Plan, item: Item) -> None:
    op = item.op
    if op in ("none", "facts", "entities"):
        return
    if op == "template":
        from ouro.resources import templates_dir

        rel = str(item.source).removeprefix("templates/bundle/")
        if not os.path.lexists(root / str(item.destination)):
            _write_new(root, item, (templates_dir() / "bundle" / rel).read_bytes())
    elif op == "copy":
        _write_new(root, item, _backup_bytes(root, plan, item))
    elif op == "write":
        text = _backup_bytes(root, plan, item).decode("utf-8")
        content = documents.render_with(item.detail["meta"], text, source=str(item.source))
        _write_new(root, item, content.encode())
    elif op == "task":
        from ouro.migrate.triage import task_body
        from ouro.store.frontmatter import render

        data = file_bytes(root / plan.backup / str(item.source))
        body = task_body(data, item.detail["range"], item.detail["context"])
        _write_new(root, item, render(item.detail["meta"], body).encode())
    elif op == "doc":
        from ouro.store.frontmatter import render

        _write_new(root, item, render(item.detail["meta"], item.detail["body"]).encode())
    elif op == "concat":
        _concat(root, plan, item)
    elif op == "malformed":
        data = b"".join(encode_line({"source": item.source, **m}) for m in item.detail["lines"])
        _write_new(root, item, data)
    elif op == "json":
        write_atomic(root / str(item.destination), dump_json(item.detail["document"]))
    elif op == "link":
        _link(root, item)
    elif op == "rename":
        _rename(root, item)
    else:
        raise CorruptFile(f"plan item with unknown op {op!r}", hint="this is a bug in ouro")


def _concat(root: Path, plan: Plan, item: Item) -> None:
    legacy = _backup_bytes(root, plan, item).decode("utf-8")
    dest = root / str(item.destination)
    with FileLock(_lock(root, "diary"), purpose="migrate daily"):
        clear_temps(dest)  # a write of ours killed before its rename
        current = file_bytes(dest).decode("utf-8", "replace") if dest.is_file() else ""
        if documents.daily_contains(current, legacy, str(item.source)):
            return
        joined = documents.daily_join(current, legacy, str(item.source))
        atomic_write_bytes(dest, joined.encode())


def _link(root: Path, item: Item) -> None:
    dest = root / str(item.destination)
    target = str(item.detail["target"])
    if os.path.lexists(dest):
        if dest.is_symlink() and os.readlink(dest) == target:
            return
        raise Conflict(f"{item.destination} exists; not replacing it", hint="move it aside")
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, dest)


def _rename(root: Path, item: Item) -> None:
    dest = root / str(item.destination)
    live = root / str(item.source)
    if os.path.lexists(dest) and not os.path.lexists(live):
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.rename(live, dest)


def _lock(root: Path, name: str) -> Path:
    return root / "state" / "locks" / f"{name}.lock"


def append_facts(root: Path, plan: Plan, staged: Path) -> int:
    """Append the staged records whose ids are not in the facts file yet."""
    if not plan.facts and not (plan.triage or {}).get("facts"):
        return 0
    from ouro.bundle import Bundle
    from ouro.desk.record import entities_path
    from ouro.migrate.record import rebuild_entities

    bundle = Bundle(root)
    dest = root / str((plan.facts or {}).get("destination") or "desk/_record/diary/facts.jsonl")
    lines = [line for line in file_bytes(staged).split(b"\n") if line]
    with (
        FileLock(_lock(root, "entities"), purpose="migrate facts"),
        FileLock(_lock(root, "diary"), purpose="migrate facts"),
    ):
        _cut_own_torn_tail(dest, lines)
        present = {r.get("id") for r in read_jsonl(dest).records}
        staged_records = [jsonio.loads(line) for line in lines]
        todo = [r for r in staged_records if r["id"] not in present]
        if todo:
            append_jsonl(dest, todo)
        # The rebuild below may have been killed mid-replace on an earlier try;
        # every entities.json writer holds the entities lock, so no live temp matches.
        clear_temps(entities_path(bundle))
    # entities.json is derived from facts.jsonl; the Desk rebuilds it (taking
    # the diary lock itself, so ours must be released first).
    rebuild_entities(bundle)
    return len(todo)


def _cut_own_torn_tail(dest: Path, lines: list[bytes]) -> None:
    """If a killed append of ours left half a line at the end, remove exactly that half."""
    try:
        fd = open_regular(dest)  # a FIFO: NotRegularFile, never a hang
    except FileNotFoundError:
        return
    try:
        size = os.fstat(fd).st_size
        # half of one of our lines is shorter than the longest: only that much
        # of the log's end is read, however long the log
        window = min(size, max(map(len, lines), default=0) + 1)
        data = os.pread(fd, window, size - window)
    finally:
        os.close(fd)
    if not data or data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    if not cut and window < size:
        return  # an unterminated end longer than any of our lines: not ours
    start = size - window + cut
    tail = data[cut:]
    if any(line.startswith(tail) for line in lines):
        with dest.open("r+b") as handle:
            handle.truncate(start)
            os.fsync(handle.fileno())


def apply_items(root: Path, plan: Plan, staged: Path, progress: Progress = _noop) -> None:
    total = len(plan.items)
    for n, item in enumerate(plan.items, start=1):
        apply_item(root, plan, item)
        progress("apply", n, total)
    append_facts(root, plan, staged)


def remove_roots(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
