"""Deriving a run's outcome from what it changed — never from the body's say-so.

Before the body starts and after it ends, the runner takes a snapshot of every
file under ``arc/`` and ``desk/`` (size, mtime, inode: an atomic replace always
changes the inode). The difference, plus the session's tool refusals and
surface attempts, decides the outcome, by this precedence (first that holds):

1. ``error``        — the body could not start, exited non-zero, was killed or
   timed out (the receipt's ``errors`` says which);
2. ``surfaced``     — a surface attempt left the session (sent, delivered,
   delivered_now or queued);
3. ``blocked``      — a tool call was refused, a surface attempt was blocked,
   unavailable, deferred or failed, or the run recorded an Arc blocker
   (``blocker_detected``);
4. ``wrote_record`` — something under ``desk/_record/`` changed (diary facts,
   daily reflections, notes);
5. ``updated_desk`` — something else under ``desk/`` changed (tasks, tracks,
   friction, tips);
6. ``wrote_arc``    — something under ``arc/`` changed;
7. ``no_change``.

Why this order: what a person must act on comes first (a failure, a message,
a refusal), then the most specific durable write. Desk and record writers may
also leave an Arc event, so Arc ranks last among writes.

Excluded from the diff: ``arc/flight-recorder/habit-receipts/`` and
``habit_run`` events (written by runners, including concurrent runs of other
habits), ``arc/flight-recorder/latest.json`` (derived from the event log and
stores, which a real Arc write also changes), ``arc/outbox/`` (counted through
surface attempts) and in-flight temp files. Another process writing Arc or Desk
while the body runs is attributed to the run: the diff cannot tell writers
apart (documented in docs/habits.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ouro.bundle import Bundle
from ouro.habits.receipt import Outcome, ProducedRef, RefKind, SurfaceAttempt
from ouro.store import jsonio
from ouro.store.bounded import open_regular

Entry = tuple[int, int, int]  # size, mtime_ns, inode
Snapshot = dict[str, Entry]

_SKIP_PREFIXES = (
    "arc/flight-recorder/habit-receipts/",
    "arc/outbox/",
)
_SKIP_FILES = frozenset({"arc/flight-recorder/latest.json"})
_LEFT_SESSION = frozenset({"sent", "delivered", "delivered_now", "queued"})


def snapshot(bundle: Bundle) -> Snapshot:
    out: Snapshot = {}
    for top in ("arc", "desk"):
        base = bundle.root / top
        for dirpath, _dirs, files in os.walk(base):
            rel_dir = Path(dirpath).relative_to(bundle.root).as_posix()
            for name in files:
                if name.startswith(".") and name.endswith(".tmp"):
                    continue  # an atomic write in flight
                rel = f"{rel_dir}/{name}"
                if rel in _SKIP_FILES or rel.startswith(_SKIP_PREFIXES):
                    continue
                try:
                    st = os.stat(os.path.join(dirpath, name))
                except FileNotFoundError:
                    continue  # replaced or removed while walking
                out[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


@dataclass
class Changes:
    refs: list[ProducedRef]
    areas: set[str]  # "arc" | "desk" | "record"
    arc_blocker: bool


def _kind(rel: str) -> RefKind:
    if rel.startswith("desk/_record/"):
        return "desk_record"
    if rel.startswith("desk/"):
        return "desk_task"
    if rel.startswith("arc/claims/"):
        return "claim"
    return "arc"


def _appended(
    bundle: Bundle, rel: str, old: Entry | None, new: Entry
) -> list[dict[str, object]] | None:
    """The records appended to a JSONL file since ``old``; None if not a pure append."""
    if old is not None and (old[2] != new[2] or new[0] < old[0]):
        return None
    start = 0 if old is None else old[0]
    try:
        with open(open_regular(bundle.root / rel), "rb") as handle:
            handle.seek(start)
            data = handle.read(max(0, new[0] - start))
    except OSError:
        return None
    records: list[dict[str, object]] = []
    for line in data.splitlines():
        try:
            value = jsonio.loads(line)
        except jsonio.JSONDecodeError:
            continue  # a torn or malformed line is the JSONL reader's to report
        if isinstance(value, dict):
            records.append(value)
    return records


def diff(bundle: Bundle, before: Snapshot, after: Snapshot) -> Changes:
    refs: list[ProducedRef] = []
    areas: set[str] = set()
    blocker = False
    for rel in sorted(set(before) | set(after)):
        old, new = before.get(rel), after.get(rel)
        if old == new:
            continue
        kind = _kind(rel)
        locators = [rel]
        if new is not None and rel.endswith(".jsonl"):
            added = _appended(bundle, rel, old, new)
            if added is not None:
                if rel.startswith("arc/flight-recorder/events/"):
                    added = [r for r in added if r.get("kind") != "habit_run"]
                    blocker = blocker or any(r.get("kind") == "blocker_detected" for r in added)
                ids = [str(r["id"]) for r in added if isinstance(r.get("id"), str)]
                if not added:
                    continue  # only runners' own habit_run lines were appended
                locators = [f"{rel}#{i}" for i in ids] or [rel]
        areas.add({"desk_record": "record", "desk_task": "desk"}.get(kind, "arc"))
        refs.extend(ProducedRef(kind=kind, locator=loc) for loc in locators)
    return Changes(refs, areas, blocker)


def derive_outcome(
    *,
    failed: bool,
    changes: Changes | None,
    refused_calls: int,
    attempts: list[SurfaceAttempt],
) -> Outcome:
    if failed or changes is None:
        return "error"
    if any(a.result in _LEFT_SESSION for a in attempts):
        return "surfaced"
    if refused_calls or attempts or changes.arc_blocker:
        return "blocked"  # every attempt here was blocked/unavailable/deferred/failed
    if "record" in changes.areas:
        return "wrote_record"
    if "desk" in changes.areas:
        return "updated_desk"
    if "arc" in changes.areas:
        return "wrote_arc"
    return "no_change"
