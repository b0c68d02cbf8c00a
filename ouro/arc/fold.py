"""Folding the flight-recorder log into resume state, incrementally.

The fold state is a JSON-ready dict persisted inside the checkpoint. Its
``cursor`` names how far the log has been folded: the day file, the byte offset
just past the last folded line, that line's event id, and the day files before
it that were folded whole. Catching up reads only bytes after the cursor, so the
cost of a fold is flat in the size of the history.

A cursor is trusted only if it is consistent with the log: its file still has
at least ``offset`` bytes, the line ending at ``offset`` carries ``eventId``,
and the set of earlier day files is the one it folded. Otherwise the caller
folds from scratch (``Inconsistent``).

Current-ask confidence rule (documented in docs/arc.md):

- ``unknown``: no event ever carried an ask, or the ask's source event is not
  in the folded log;
- ``stale_risky``: after the ask's source event came a context boundary
  (``handoff``, ``session_started``, ``session_ended``, including the source
  event itself being one) or an unreadable line (a lost event could have
  changed the ask); re-confirm with ``ouro arc ask``;
- ``current``: otherwise.
"""

from __future__ import annotations

import copy
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from ouro.arc.kinds import is_boundary
from ouro.arc.paths import DAY_FILE

State = dict[str, Any]
#: How far back to look for the line that ends at the cursor.
_LOOKBACK = 1 << 16


class Inconsistent(Exception):
    """The persisted cursor does not match the log; fold from scratch."""


def empty_state() -> State:
    return {
        "cursor": {
            "file": None,
            "offset": 0,
            "line": 0,
            "eventId": None,
            "lineDigest": None,
            "done": [],
        },
        "eventCount": 0,
        "ask": None,
        "next": None,
        "blockers": [],
        "lastEvent": None,
        "lastSafe": None,
        "badLines": [],
        "pendingTail": None,
    }


def day_files(folder: Path) -> list[str]:
    """Day files in order. Raises OSError when the folder cannot be listed."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    return sorted(name for name in names if DAY_FILE.match(name))


def check_cursor(state: State, folder: Path, names: list[str]) -> None:
    cur = state["cursor"]
    if cur["file"] is None:
        return
    earlier = [n for n in names if n < cur["file"]]
    if earlier != list(cur["done"]):
        raise Inconsistent("the set of earlier day files changed since the checkpoint")
    if cur["file"] not in names:
        raise Inconsistent(f"day file {cur['file']} named by the checkpoint is gone")
    offset = int(cur["offset"])
    if offset == 0:
        return
    path = folder / cur["file"]
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < offset:
            raise Inconsistent(f"{cur['file']} is shorter than the checkpoint's offset")
        start = max(0, offset - _LOOKBACK)
        handle.seek(start)
        chunk = handle.read(offset - start)
    if not chunk.endswith(b"\n"):
        raise Inconsistent(f"{cur['file']} offset {offset} is not at a line end")
    last = chunk[:-1].rsplit(b"\n", 1)[-1]
    if _line_digest(last) != cur.get("lineDigest"):
        raise Inconsistent(f"{cur['file']} line before offset {offset} is not the one folded last")


def behind(state: State, folder: Path, names: list[str]) -> bool:
    """True when the log holds bytes past the cursor (cheap: one stat)."""
    cur = state["cursor"]
    if cur["file"] is None:
        return bool(names)
    if any(n > cur["file"] for n in names):
        return True
    try:
        return bool((folder / cur["file"]).stat().st_size > int(cur["offset"]))
    except FileNotFoundError:
        return True


def catch_up(state: State, folder: Path, names: list[str]) -> tuple[State, int]:
    """Fold every line past the cursor into a copy of ``state``.

    Returns (new state, number of events folded). Raises ``Inconsistent``.
    """
    check_cursor(state, folder, names)
    state = copy.deepcopy(state)
    state["pendingTail"] = None
    cur = state["cursor"]
    folded = 0
    start_file = cur["file"]
    todo = [n for n in names if start_file is None or n >= start_file]
    for index, name in enumerate(todo):
        if name != cur["file"]:
            if cur["file"] is not None:
                cur["done"].append(cur["file"])
            cur.update(file=name, offset=0, line=0)
        with (folder / name).open("rb") as handle:
            handle.seek(int(cur["offset"]))
            data = handle.read()
        is_last = index == len(todo) - 1
        folded += _fold_bytes(state, name, data, is_last)
    return state, folded


def _fold_bytes(state: State, name: str, data: bytes, is_last: bool) -> int:
    cur = state["cursor"]
    folded = 0
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end == -1:
            if is_last:
                # A writer may be mid-append, or died mid-line: do not fold it yet.
                state["pendingTail"] = {"file": name, "offset": int(cur["offset"]) + pos}
                return folded
            end = len(data)
        raw = data[pos:end]
        pos = end + 1
        cur["line"] += 1
        cur["offset"] = int(cur["offset"]) + len(raw) + (1 if end < len(data) else 0)
        cur["lineDigest"] = _line_digest(raw)
        if not raw.strip():
            continue
        event = _parse(raw)
        if isinstance(event, str):
            _bad_line(state, name, cur["line"], event)
            continue
        apply_event(state, event, name)
        cur["eventId"] = event["id"]
        folded += 1
    return folded


def _line_digest(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=12).hexdigest()


def _parse(raw: bytes) -> dict[str, Any] | str:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return f"not valid JSON ({exc})"
    if not isinstance(value, dict):
        return "not a JSON object"
    for key in ("id", "kind", "recordedAt"):
        if not isinstance(value.get(key), str):
            return f"not an event: {key!r} missing or not a string"
    return value


def _bad_line(state: State, name: str, line: int, reason: str) -> None:
    state["badLines"].append({"file": name, "line": line, "reason": reason})
    if state["ask"] is not None:
        state["ask"]["staleBecause"] = (
            f"an unreadable event line ({name}:{line}) came after the ask; it may have changed it"
        )


def _ref(event: dict[str, Any], name: str) -> dict[str, Any]:
    return {"eventId": event["id"], "file": name, "recordedAt": event["recordedAt"]}


def _text(event: dict[str, Any], key: str) -> str | None:
    value = event.get(key)
    return value if isinstance(value, str) and value else None


def apply_event(state: State, event: dict[str, Any], name: str) -> None:
    kind = event["kind"]
    state["eventCount"] += 1
    summary = event.get("summary") if isinstance(event.get("summary"), str) else ""
    state["lastEvent"] = {"id": event["id"], "kind": kind, "summary": summary, **_ref(event, name)}
    ask = _text(event, "currentAsk")
    if ask is not None:
        state["ask"] = {"value": ask, "staleBecause": None, **_ref(event, name)}
    nxt = _text(event, "nextSafeAction")
    if nxt is not None:
        stop = event.get("stopBefore")
        stop_list = [s for s in stop if isinstance(s, str)] if isinstance(stop, list) else []
        state["next"] = {"value": nxt, "stopBefore": stop_list, **_ref(event, name)}
    if state["ask"] is not None and is_boundary(kind, event.get("meta")):
        state["ask"]["staleBecause"] = (
            f"{kind} {event['id']} came after the ask was recorded; re-confirm with 'ouro arc ask'"
        )
    if kind == "blocker_detected":
        text = _text(event, "blockedBecause") or summary
        state["blockers"].append({"id": event["id"], "text": text, **_ref(event, name)})
    elif kind == "blocker_cleared":
        meta = event.get("meta") if isinstance(event.get("meta"), dict) else {}
        target = meta.get("blockerId") if meta else None
        state["blockers"] = [b for b in state["blockers"] if b["id"] != target] if target else []
    if kind == "post_turn_persisted" and continuable(state):
        state["lastSafe"] = {**_ref(event, name), "offset": state["cursor"]["offset"]}


def continuable(state: State) -> bool:
    ask = state["ask"]
    return bool(
        ask is not None
        and ask["staleBecause"] is None
        and state["next"] is not None
        and not state["blockers"]
    )
