"""Folding the flight-recorder log into resume state, incrementally.

The fold state is a JSON-ready dict persisted inside the checkpoint. Its
``cursor`` names how far the log has been folded: the day file, the byte offset
just past the last folded line, that line's event id, and the day files before
it that were folded whole. Catching up reads only bytes after the cursor, so the
cost of a fold is flat in the size of the history.

A cursor is trusted only if it is consistent with the log: its file still has
at least ``offset`` bytes, the line ending at ``offset`` is the one folded
last, the set of earlier day files is the one it folded, and no folded byte
changed: ``cursor.marks`` keeps, per day file, the folded length, a digest of
those bytes and a (size, mtime, ctime, inode) fingerprint; a file whose
fingerprint differs (or was too fresh to trust one) has its folded bytes
re-digested. Otherwise the caller folds from scratch (``Inconsistent``), so a
line edited in place by hand is seen on the next read. A re-digest that
matches puts the file's current fingerprint into the mark (in the loaded state; a writer
persists it with the checkpoint), and a process remembers the digests it made,
keyed on the same fingerprint (``_DIGESTS``), so an unchanged day file costs
one ``stat`` per read even before a writer has refreshed the marks (after a
copy or restore of the bundle, every inode and ctime differs).

Rules (documented in docs/arc.md):

- the ask: ``unknown`` when no event ever carried one; ``stale_risky`` when an
  unreadable line follows it (a lost event could have changed it);
  ``needs_confirmation`` when a context boundary (``handoff``,
  ``session_started`` other than compact/resume, ``session_ended``, including
  the ask's own event being one) follows it; ``current`` otherwise. Any later
  event carrying ``currentAsk`` (``arc ask``, ``arc confirm``) makes it current.
- the next safe action serves the ask that was current when it was recorded
  (``meta.askEventId`` when the event names it; the ask carried by the same
  event comes first). After a new ask, the next recorded for an earlier ask is
  kept as ``previous`` only: it is not the current next safe action.
- the handoff stays until a newer handoff, or an event carrying a next safe
  action (other than ``ask_confirmed``) comes after it.
- ``lastUseful``: the newest event that is not ouro's own hook bookkeeping
  (``session_started``, ``session_ended``, ``context_built``,
  ``model_started``, a ``turn_accepted`` without an ask, a host
  ``post_turn_persisted``).
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Callable
from pathlib import Path

from ouro.arc.events import is_boundary
from ouro.arc.paths import DAY_FILE
from ouro.errors import CorruptFile
from ouro.lane import is_habit_session
from ouro.store import jsonio
from ouro.store import stamp as stamps
from ouro.store.bounded import NotRegularFile, line_pieces, open_regular, overlong
from ouro.store.guard import names_inside

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

    State = dict[str, Any]

try:  # hashlib's own blake2b, without hashlib's OpenSSL start-up (~2 ms on orient's path)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without _blake2
    from hashlib import blake2b

#: How far back to look for the line that ends at the cursor.
_LOOKBACK = 1 << 16
#: a line's ``lineDigest`` covers its last bytes up to this many (newline not
#: counted): all ``check_cursor`` reads back, so a longer line matches too
_TAIL = _LOOKBACK - 1


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
            "marks": {},
        },
        "eventCount": 0,
        "ask": None,
        "next": None,
        "handoff": None,
        "blockers": [],
        "lastEvent": None,
        "lastUseful": None,
        "lastSafe": None,
        "badLines": [],
        "pendingTail": None,
    }


def day_files(folder: Path, skipped: list[str] | None = None) -> list[str]:
    """Day files in order; none behind a symlink leading outside the bundle (never
    opened: their bundle-relative paths go to ``skipped``). Raises OSError when
    the folder cannot be listed."""
    return names_inside(folder, DAY_FILE.match, skipped)


def _fp(st: os.stat_result, now: int) -> list[int] | None:
    """The file's stamp as a JSON list, or None when it is racy (``ouro.store.stamp``):
    a racy day file's prefix digest is checked on every read instead."""
    trusted = stamps.trusted(st, now)
    return None if trusted is None else list(trusted)


#: (path, length) -> (fingerprint, digest) of prefixes digested by this process;
#: only trusted fingerprints (see ``_fp``) are kept, so an entry is exactly as
#: safe as a persisted mark.
_DIGESTS: dict[tuple[str, int], tuple[list[int], str]] = {}
_DIGESTS_MAX = 4096


#: how much of a day file a prefix digest reads at a time
_PIECE = 64 * 1024
#: path -> (length, the blake2b state after the file's first ``length`` bytes),
#: for the prefixes ``_digest_prefix`` read from disk since ``catch_up`` last
#: began: ``catch_up`` extends the one its cursor check just verified with the
#: bytes it folds, instead of reading and digesting the whole prefix again
_PREFIX_STATES: dict[str, tuple[int, Any]] = {}


def _digest_prefix(path: Path, length: int, fp: list[int] | None = None) -> str:
    """The digest of the first ``length`` bytes; ``fp``: the file's trusted fingerprint."""
    key = (os.fspath(path), length)
    if fp is not None:
        known = _DIGESTS.get(key)
        if known is not None and known[0] == fp:
            return known[1]
    fd = open_regular(path)  # a FIFO: NotRegularFile, never a hang
    try:
        # in pieces: a day file's prefix is never held whole (no fresh pages for it)
        data = os.pread(fd, min(length, _PIECE), 0)
        hasher, got = _hasher(data), len(data)
        while data and got < length:
            data = os.pread(fd, min(length - got, _PIECE), got)
            hasher.update(data)
            got += len(data)
    finally:
        os.close(fd)
    if got == length:
        _PREFIX_STATES[key[0]] = (length, hasher)
    return _keep_digest(key, fp, hasher.hexdigest())


def _keep_digest(key: tuple[str, int], fp: list[int] | None, digest: str) -> str:
    """Remember ``digest`` of the prefix ``key`` under the trusted ``fp`` (if any)."""
    if fp is not None:
        if len(_DIGESTS) >= _DIGESTS_MAX:
            _DIGESTS.clear()
        _DIGESTS[key] = (fp, digest)
    return digest


#: the machine-local cache of verified prefix digests (bundle-relative): what
#: ``_DIGESTS`` holds, kept across processes, so a copied or cloned bundle, whose
#: day files no mark's stamp matches until the next Arc write, digests each file
#: once instead of on every read (a read may rebuild a cache under ``state/``;
#: the checkpoint itself is the record's and only writers change it)
DIGESTS_CACHE = "state/cache/arc-digests.marshal"
_DIGESTS_MAGIC = "ouro-arc-digests-1"
#: digest caches already read into ``_DIGESTS`` by this process
_LOADED_CACHES: set[str] = set()


def _digests_cache(folder: Path) -> str | None:
    """The digest cache of the bundle whose event folder is ``folder`` (None when
    ``folder`` is not a bundle's ``arc/flight-recorder/events``)."""
    if folder.parts[-3:] != ("arc", "flight-recorder", "events"):
        return None
    return os.path.join(folder.parents[2], *DIGESTS_CACHE.split("/"))


def _load_digests(cache: str) -> None:
    """Take the saved entries into ``_DIGESTS`` (once per process; a missing or
    damaged cache is no entry). Each entry holds only under its trusted stamp."""
    if cache in _LOADED_CACHES:
        return
    _LOADED_CACHES.add(cache)
    try:
        with open(open_regular(cache), "rb") as handle:
            value = marshal.loads(handle.read(1 << 22))
    except (OSError, ValueError, EOFError, TypeError):
        return
    if type(value) is not tuple or len(value) != 2 or value[0] != _DIGESTS_MAGIC:
        return
    entries = value[1]
    if type(entries) is not list:
        return
    for entry in entries:
        if (
            type(entry) is tuple
            and len(entry) == 4
            and type(entry[0]) is str
            and type(entry[1]) is int
            and type(entry[2]) is list
            and len(entry[2]) == 4
            and type(entry[3]) is str
        ):
            _DIGESTS.setdefault((entry[0], entry[1]), (entry[2], entry[3]))


def _save_digests(cache: str, folder: Path) -> None:
    """Save this process's trusted digests of ``folder``'s day files (atomically;
    a failure, e.g. a read-only disk, only means the next read digests again)."""
    from ouro.store.atomic import atomic_write_bytes

    prefix = f"{folder}{os.sep}"
    entries = [(k[0], k[1], v[0], v[1]) for k, v in _DIGESTS.items() if k[0].startswith(prefix)]
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        atomic_write_bytes(Path(cache), marshal.dumps((_DIGESTS_MAGIC, entries), 4))
    except OSError:
        pass


def mark_files(
    state: State, folder: Path, digested: dict[str, tuple[int, str]] | None = None
) -> None:
    """Record what the folded bytes were: each done day file whole, the current one's prefix.

    ``check_cursor`` compares these on every read, so a day file edited in place
    (not only appended to) sends the fold back to scratch. ``digested``: day file
    -> (length, digest) of a prefix the caller digested from the bytes it read.
    """
    digested = digested or {}
    cur = state["cursor"]
    marks = cur.setdefault("marks", {})
    now = time.time_ns()
    for name in [*cur["done"], cur["file"]]:
        if name is None:
            continue
        path = folder / name
        st = os.stat(path)
        length = st.st_size if name != cur["file"] else int(cur["offset"])
        old = marks.get(name)
        fp = _fp(st, now)
        if old and old.get("fp") is not None and old["fp"] == fp and old.get("length") == length:
            continue
        known = digested.get(name)
        if known is not None and known[0] == length:
            digest = _keep_digest((os.fspath(path), length), fp, known[1])
        else:
            digest = _digest_prefix(path, length, fp)
        marks[name] = {"fp": fp, "length": length, "digest": digest}
    for name in list(marks):
        if name not in cur["done"] and name != cur["file"]:
            del marks[name]


def _check_marks(cur: dict[str, Any], folder: Path) -> None:
    """Every folded day file still holds the bytes folded from it.

    A file whose fingerprint moved is re-digested; when the bytes are the same,
    its mark takes the new fingerprint (if trusted), which a writer persists.
    """
    marks = cur.get("marks")
    if not isinstance(marks, dict):
        raise Inconsistent("the checkpoint has no day-file marks")
    now = time.time_ns()
    base = f"{folder}{os.sep}"  # string joins: a Path per day file costs more than its stat
    cache: str | None = None
    digested = False
    for name in [*cur["done"], cur["file"]]:
        mark = marks.get(name)
        if not isinstance(mark, dict):
            raise Inconsistent(f"the checkpoint has no mark for {name}")
        st = os.stat(base + name)
        fp = list(stamps.of(st))
        if mark.get("fp") is not None and mark["fp"] == fp:
            continue
        length = int(mark["length"])
        if st.st_size < length:
            raise Inconsistent(f"{name} is shorter than when it was folded")
        trusted = _fp(st, now)
        if cache is None and (cache := _digests_cache(folder) or ""):
            _load_digests(cache)
        known = _DIGESTS.get((base + name, length))
        digested = digested or (trusted is not None and (known is None or known[0] != trusted))
        try:
            digest = _digest_prefix(folder / name, length, trusted)
        except NotRegularFile as exc:  # a FIFO where a day file was: refold, which names it
            raise Inconsistent(f"{name}: {exc.strerror}") from None
        if digest != mark.get("digest"):
            raise Inconsistent(f"{name} was edited in place after it was folded")
        if trusted is not None:
            mark["fp"] = trusted
    if digested and cache:
        _save_digests(cache, folder)


def check_cursor(state: State, folder: Path, names: list[str]) -> None:
    cur = state["cursor"]
    if cur["file"] is None:
        return
    earlier = [n for n in names if n < cur["file"]]
    if earlier != list(cur["done"]):
        raise Inconsistent("the set of earlier day files changed since the checkpoint")
    if cur["file"] not in names:
        raise Inconsistent(f"day file {cur['file']} named by the checkpoint is gone")
    _check_marks(cur, folder)
    offset = int(cur["offset"])
    if offset == 0:
        return
    try:
        fd = open_regular(folder / cur["file"])
    except NotRegularFile as exc:  # a FIFO: never opened blocking; the refold names it
        raise Inconsistent(f"{cur['file']}: {exc.strerror}") from None
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            raise Inconsistent(f"{cur['file']} is shorter than the checkpoint's offset")
        start = max(0, offset - _LOOKBACK)
        chunk = os.pread(fd, offset - start, start)
    finally:
        os.close(fd)
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
    if any(n > cur["file"] for n in names) or cur["file"] not in names:
        return True  # the cursor's file gone, or skipped (outside, a loop): never stat'd
    try:
        return bool((folder / cur["file"]).stat().st_size > int(cur["offset"]))
    except FileNotFoundError:
        return True


def catch_up(state: State, folder: Path, names: list[str]) -> tuple[State, int]:
    """Fold every line past the cursor into a copy of ``state``.

    Returns (new state, number of events folded). Raises ``Inconsistent``.
    """
    _PREFIX_STATES.clear()
    check_cursor(state, folder, names)
    start_file = state["cursor"]["file"]
    # the prefix of the current day file the check just read and found as folded
    # (none when its mark's stamp vouched for it unread)
    verified = _PREFIX_STATES.pop(os.fspath(folder / start_file), None) if start_file else None
    _PREFIX_STATES.clear()
    digested: dict[str, tuple[int, str]] = {}
    # A deep copy: the state is plain JSON values, which marshal copies whole
    # (shared parts stay shared) at a fifth of copy.deepcopy's cost, without its import.
    state = marshal.loads(marshal.dumps(state))
    state["pendingTail"] = None
    cur = state["cursor"]
    folded = 0
    todo = [n for n in names if start_file is None or n >= start_file]
    for index, name in enumerate(todo):
        if name != cur["file"]:
            if cur["file"] is not None:
                cur["done"].append(cur["file"])
            cur.update(file=name, offset=0, line=0)
        begin = int(cur["offset"])
        is_last = index == len(todo) - 1
        # the verified prefix and the bytes folded after it: the new prefix's digest
        extend = name == start_file and verified is not None and verified[0] == begin
        hasher = verified[1].copy() if extend and verified is not None else None
        try:
            fd = open_regular(folder / name)
        except NotRegularFile as exc:  # a FIFO: refused, never a hang
            raise CorruptFile(
                f"{folder / name}: {exc.strerror}; the event log cannot be read",
                hint="move it aside and restore the day file from git or a backup",
            ) from None
        try:
            size = os.fstat(fd).st_size
            # whole lines a piece at a time; a line past LINE_LIMIT is never held
            for at, data in line_pieces(fd, begin, size, tail=True):
                if isinstance(data, int):
                    if not _skip_line(state, name, fd, at, data, size, is_last):
                        break
                    if hasher is not None:
                        _feed(hasher, fd, at, data)
                    continue
                folded += _fold_bytes(state, name, data, is_last)
                if hasher is not None:
                    hasher.update(data[: int(cur["offset"]) - at])
                if state["pendingTail"] is not None:
                    break
        finally:
            os.close(fd)
        if hasher is not None:
            digested[name] = (int(cur["offset"]), hasher.hexdigest())
    mark_files(state, folder, digested)
    return state, folded


def _skip_line(
    state: State, name: str, fd: int, at: int, size: int, end: int, is_last: bool
) -> bool:
    """Fold a line longer than LINE_LIMIT as a bad line, unread (False: it is the
    unfinished last line of the log, left pending like any other)."""
    cur = state["cursor"]
    if is_last and at + size == end and os.pread(fd, 1, end - 1) != b"\n":
        state["pendingTail"] = {"file": name, "offset": at}
        return False
    cur["line"] += 1
    cur["offset"] = at + size
    # what check_cursor digests: the line's last _TAIL bytes
    cur["lineDigest"] = _line_digest(os.pread(fd, _TAIL, at + size - 1 - _TAIL))
    _bad_line(state, name, cur["line"], overlong(size))
    return True


def _feed(hasher: Any, fd: int, at: int, size: int) -> None:
    """Digest ``size`` bytes from ``at`` a piece at a time (a skipped line's bytes)."""
    end = at + size
    while at < end:
        data = os.pread(fd, min(_PIECE, end - at), at)
        if not data:
            return
        hasher.update(data)
        at += len(data)


def _fold_bytes(state: State, name: str, data: bytes, is_last: bool) -> int:
    cur = state["cursor"]
    folded = 0
    pos = 0
    loads = jsonio.loads_for(len(data))  # the usual catch-up is a few lines
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
        cur["lineDigest"] = _line_digest(raw[-_TAIL:])
        if not raw.strip():
            continue
        event = _parse(raw, loads)
        if isinstance(event, str):
            _bad_line(state, name, cur["line"], event)
            continue
        apply_event(state, event, name)
        cur["eventId"] = event["id"]
        folded += 1
    return folded


def _hasher(data: bytes) -> Any:
    """The blake2b state after ``data``: a line's or a prefix's digest, once hexed."""
    return blake2b(data, digest_size=12)


def _line_digest(raw: bytes) -> str:
    digest: str = _hasher(raw).hexdigest()
    return digest


def _parse(raw: bytes, loads: Callable[[bytes], Any]) -> dict[str, Any] | str:
    """The event on one line, or why it is not one (``loads``: ``jsonio.loads_for``)."""
    try:
        value = loads(raw)
    except jsonio.JSONDecodeError as exc:
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


_BOOKKEEPING = frozenset({"session_started", "session_ended", "context_built", "model_started"})


def _meta(event: dict[str, Any]) -> dict[str, Any]:
    meta = event.get("meta")
    return meta if isinstance(meta, dict) else {}


def bookkeeping(kind: str, event: dict[str, Any]) -> bool:
    """Is this event ouro's own hook bookkeeping (never worth showing as 'last event')?"""
    if kind in _BOOKKEEPING:
        return True
    if kind == "turn_accepted":
        return _text(event, "currentAsk") is None
    return kind == "post_turn_persisted" and "hostEvent" in _meta(event)


def _refs(event: dict[str, Any]) -> list[str]:
    refs = _meta(event).get("deskRefs")
    return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


def apply_event(state: State, event: dict[str, Any], name: str) -> None:
    kind = event["kind"]
    meta = _meta(event)
    state["eventCount"] += 1
    summary = event.get("summary") if isinstance(event.get("summary"), str) else ""
    state["lastEvent"] = {"id": event["id"], "kind": kind, "summary": summary, **_ref(event, name)}
    session = event.get("sessionRef") if isinstance(event.get("sessionRef"), str) else None
    if not bookkeeping(kind, event) and not is_habit_session(session):
        state["lastUseful"] = state["lastEvent"]
    if is_habit_session(session):
        # a habit's private lane: counted, never the main line's ask, next, handoff or
        # blockers (its receipt summarises it, ouro.habits.lane)
        return
    ask = _text(event, "currentAsk")
    if ask is not None:
        state["ask"] = {
            "value": ask,
            "staleBecause": None,
            "confirmBecause": None,
            "sessionRef": session,
            "refs": _refs(event),
            **_ref(event, name),
        }
    nxt = _text(event, "nextSafeAction")
    if nxt is not None:
        stop = event.get("stopBefore")
        stop_list = [s for s in stop if isinstance(s, str)] if isinstance(stop, list) else []
        current = state["ask"]
        served = meta.get("askEventId") if ask is None else event["id"]
        if not isinstance(served, str):
            served = current["eventId"] if current is not None else None
        state["next"] = {
            "value": nxt,
            "stopBefore": stop_list,
            "askEventId": served,
            "sessionRef": session,
            "refs": _refs(event),
            **_ref(event, name),
        }
        if kind not in ("handoff", "ask_confirmed"):
            state["handoff"] = None
    if kind == "handoff":
        state["handoff"] = {
            "id": event["id"],
            "text": summary,
            "sessionRef": session,
            **_ref(event, name),
        }
    if state["ask"] is not None and is_boundary(kind, event.get("meta")):
        source = meta.get("source") if isinstance(meta.get("source"), str) else None
        state["ask"]["confirmBecause"] = {
            "eventId": event["id"],
            "kind": kind,
            "source": source,
            "sessionRef": session,
            "recordedAt": event["recordedAt"],
        }
    if kind == "blocker_detected":
        text = _text(event, "blockedBecause") or summary
        state["blockers"].append({"id": event["id"], "text": text, **_ref(event, name)})
    elif kind == "blocker_cleared":
        target = meta.get("blockerId")
        state["blockers"] = [b for b in state["blockers"] if b["id"] != target] if target else []
    if kind == "post_turn_persisted" and continuable(state):
        state["lastSafe"] = {**_ref(event, name), "offset": state["cursor"]["offset"]}


def next_is_current(state: State) -> bool:
    """Does the recorded next safe action serve the current ask?"""
    nxt, ask = state["next"], state["ask"]
    if nxt is None:
        return False
    if ask is None:
        return True
    return bool(nxt["askEventId"] == ask["eventId"])


def continuable(state: State) -> bool:
    ask = state["ask"]
    return bool(
        ask is not None
        and ask["staleBecause"] is None
        and ask["confirmBecause"] is None
        and next_is_current(state)
        and not state["blockers"]
    )
