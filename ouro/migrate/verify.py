"""Accounting: prove every legacy byte survives before anything is removed.

Contract: ``account(root, plan)`` returns a list of problems, each naming the
legacy file it concerns; empty means every legacy entry is

1. in the backup, byte for byte (content hash; a symlink by its target), and
2. at its planned place: a moved or quarantined file by hash; a note or
   journal entry by its unchanged body under new front matter; a daily file
   appended to by containment; each fact line by id and content hash in
   ``facts.jsonl`` (or, malformed, by line number and raw bytes in the
   quarantine file); each legacy entity by the rebuilt index or the
   conflicts file; a special file by its inode in the quarantine.

``live_problems(root, plan)`` checks the other direction just before removal:
every entry still under the legacy roots is one the plan accounted for,
unchanged -- so a file added after planning is never deleted unseen.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile
from ouro.migrate import documents
from ouro.migrate.apply import _backup_bytes, backup_problem
from ouro.migrate.plan import Item, Plan
from ouro.migrate.scan import scan
from ouro.models.hashing import hash_file
from ouro.store import jsonio
from ouro.store.bounded import file_bytes, file_text
from ouro.store.jsonl import read_jsonl


def _dest_problem(root: Path, plan: Plan, item: Item) -> str | None:
    dest = root / str(item.destination) if item.destination else None
    if dest is None or item.op in ("facts", "entities", "template", "json", "malformed", "doc"):
        return None
    if item.detail.get("route") in ("facts", "drop"):
        return None  # facts: checked line by line; drop: the backup check is the accounting
    if item.op == "link":
        ok = dest.is_symlink() and os.readlink(dest) == item.detail["target"]
        return None if ok else f"{item.destination} is not the quarantined link"
    if item.op == "rename":
        try:
            st = os.lstat(dest)
        except FileNotFoundError:
            return f"{item.destination} is missing"
        same = (st.st_ino, st.st_dev) == (item.detail["ino"], item.detail["dev"])
        return None if same else f"{item.destination} is not the moved entry"
    if not dest.is_file():
        return f"{item.destination} is missing"
    if item.op == "task":  # one journal item: its lines and the entry's context
        from ouro.migrate.triage import task_body

        data = file_bytes(root / plan.backup / str(item.source))
        expected = task_body(data, item.detail["range"], item.detail["context"])
        try:
            body = documents.body_of(file_text(dest), source=str(item.destination))
        except (CorruptFile, UnicodeDecodeError) as exc:
            return f"{item.destination} is unreadable ({exc})"
        return None if body == expected else f"{item.destination} lost the journal item"
    if item.op == "copy":
        digest = hash_file(dest)
        return None if digest == item.source_hash else f"{item.destination} differs ({digest})"
    legacy = _backup_bytes(root, plan, item).decode("utf-8")
    current = file_bytes(dest).decode("utf-8", "replace")
    if item.op == "concat" or (item.op == "none" and "daily" in str(item.destination)):
        ok = documents.daily_contains(current, legacy, str(item.source))
        return None if ok else f"{item.destination} does not contain the legacy text"
    try:
        same = documents.body_of(current, source=str(item.destination)) == documents.body_of(
            legacy, source=str(item.source)
        )
    except CorruptFile as exc:
        return exc.message
    return None if same or legacy == current else f"{item.destination} lost the legacy body"


def _facts_problems(root: Path, plan: Plan) -> list[str]:
    info = plan.facts
    if not info:
        return []
    src = info["source"]
    by_id = {r["id"]: r for r in read_jsonl(root / info["destination"]).records if "id" in r}
    quarantined: dict[int, bytes] = {}
    for item in plan.items:
        if item.op == "malformed" and item.destination:
            for rec in read_jsonl(root / item.destination).records:
                if rec.get("source") == src:
                    raw = rec.get("raw")
                    data = (
                        raw.encode()
                        if isinstance(raw, str)
                        else base64.b64decode(rec.get("rawBase64", ""))
                    )
                    quarantined[int(rec["line"])] = data
    legacy_lines = file_bytes(root / plan.backup / src).split(b"\n")
    problems = []
    for line, action, fid, digest, _reason in info["decisions"]:
        where = f"{src}:{line}"
        if action == "quarantined":
            if quarantined.get(line) != legacy_lines[line - 1]:
                problems.append(f"{where}: malformed line is not in the quarantine file")
        elif fid not in by_id:
            problems.append(f"{where}: fact {fid} is not in {info['destination']}")
        elif action == "merged" and by_id[fid].get("hash") != digest:
            problems.append(f"{where}: fact {fid} has another content hash")
    return problems


def _journal_fact_problems(root: Path, plan: Plan) -> list[str]:
    decisions = (plan.triage or {}).get("facts", [])
    if not decisions:
        return []
    dest = "desk/_record/diary/facts.jsonl"
    by_id = {r["id"]: r for r in read_jsonl(root / dest).records if "id" in r}
    problems = []
    for loc, _entry, action, fid, digest, _why in decisions:
        if fid not in by_id:
            problems.append(f"{loc}: fact {fid} is not in {dest}")
        elif action == "merged" and by_id[fid].get("hash") != digest:
            problems.append(f"{loc}: fact {fid} has another content hash")
    return problems


def _target_problems(root: Path, plan: Plan) -> list[str]:
    """Every file the run changes outside the legacy roots is in the backup as it was."""
    try:
        manifest = jsonio.loads(file_bytes(root / plan.backup / "MANIFEST.json"))
    except (FileNotFoundError, jsonio.JSONDecodeError) as exc:
        return [f"{plan.backup}/MANIFEST.json: unreadable ({exc})"]
    listed = {t["path"]: t for t in manifest.get("targets", [])}
    problems = []
    for rel in plan.meta.get("targets", []):
        copy = root / plan.backup / rel
        known = listed.get(rel)
        if known is None or not copy.is_file() or hash_file(copy) != known["hash"]:
            problems.append(f"{rel}: the backup copy from before the run is missing or changed")
    return problems


def _entities_problems(root: Path, plan: Plan) -> list[str]:
    info = plan.entities
    if not info:
        return []
    legacy = jsonio.loads(file_bytes(root / plan.backup / info["source"]))
    if not isinstance(legacy, dict):
        legacy = {}
    conflicts: dict[str, Any] = {}
    if info.get("conflictsTo"):
        conflicts = jsonio.loads(file_bytes(root / info["conflictsTo"]))
    kept = {rec.get("key") for recs in conflicts.values() for rec in recs if isinstance(rec, dict)}
    current = jsonio.loads(file_bytes(root / "desk/_record/diary/entities.json"))
    missing = [
        k
        for k in legacy
        if k not in kept and not (k in info["covered"] and documents_key(k) in current)
    ]
    return [f"{info['source']}: entity {k!r} is neither indexed nor kept aside" for k in missing]


def documents_key(name: str) -> str:
    from ouro.migrate.facts import normalize_about

    keys = normalize_about([name])
    return keys[0] if keys else name


def account(root: Path, plan: Plan) -> list[str]:
    problems: list[str] = []
    for src in plan.sources:
        problem = backup_problem(root, plan, src)
        if problem:
            problems.append(f"{src['path']}: backup: {problem}")
    for item in plan.items:
        problem = _dest_problem(root, plan, item)
        if problem:
            problems.append(f"{item.source}: {problem}")
    problems.extend(_facts_problems(root, plan))
    problems.extend(_journal_fact_problems(root, plan))
    problems.extend(_target_problems(root, plan))
    problems.extend(_entities_problems(root, plan))
    return problems


def live_problems(root: Path, plan: Plan, roots: tuple[str, ...]) -> list[str]:
    planned = {s["path"]: s for s in plan.sources}
    problems = []
    for entry in scan(root, roots):
        known = planned.get(entry.path)
        if known is None:
            problems.append(f"{entry.path}: appeared after the plan was made; not removing it")
        elif entry.kind != known["kind"] or (
            entry.kind != "special" and entry.hash != known["hash"]
        ):
            problems.append(f"{entry.path}: changed after it was backed up; not removing it")
    return problems
