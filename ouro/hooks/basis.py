"""What a session's last packet was computed from: "did anything change?" in a few stats.

``UserPromptSubmit`` runs on every prompt and is silent when the packet is what
the session was last shown. Computing the packet to find that out reads the
desk heads (a ``stat`` per task), walks every task row and hashes every item:
most of the hook's work at a year's scale. So the session's state file also
keeps the packet's *basis*, taken just before the packet was computed:

- ``arc``: a digest of the resume view (``ouro.arc.resume.read_resume_full``:
  the checkpoint the hook's own event just wrote), leaving out what every event
  changes and the packet leaves out too (the event count, the last event, the
  fold cursor); the claim and obligation summaries, whose per-file stamps move
  when a claim, an obligation or a file a claim is about changes, count by their
  digest (``storesDigest``, taken when they were last saved: not walked again);
- ``files``: the stamp (``ouro.store.stamp``, with its racy rule) of every file
  and folder the other packet providers read, the derived files among them:
  the desk heads (which every Desk write refreshes), the desk and track
  folders, the featured list, friction, lessons, the sentinel's latest-ready
  receipt, messages, the habit outbox, habit state and sessions, sync state,
  ``bundle.json``, and -- when the ask or the next action points at the record
  -- the facts log and the notes folder.

When the basis now equals the saved one, the packet is the one last shown and
the hook is silent without computing it. Anything else -- a stamp that moved,
a stamp taken within the racy window (saved as ``-``, never equal), a basis
of another version -- computes the packet and compares item hashes as before.
``tests/test_hook_basis.py`` checks, with an audit hook, that every bundle file
the packet opens or lists is under this basis.

What it cannot see at once, as the desk heads and ``PostToolUse``'s declared
checks: a ``task.md`` edited in place outside ouro is seen once any ouro
command has read the desk (``ouro orient``, ``SessionStart``).
"""

from __future__ import annotations

import os

from ouro.store import stamp as stamps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ouro.bundle import Bundle

VERSION = 4  # 2: the arc digest is of marshal's bytes, not repr's; 3: the stores' JSON bytes;
# 4: the stores by their digest (``storesDigest``)
#: the resume view's keys that change with every event and that the packet
#: leaves out (the "last event" section, the event count on the status line)
VOLATILE = frozenset({"eventCount", "lastEvent", "lastUsefulEvent", "fold"})
#: files and folders the packet providers read (bundle-relative)
FILES = (
    "bundle.json",
    "state/cache/desk-heads.bin",
    "desk",
    "desk/_meta",
    "desk/_meta/featured.md",
    "desk/_meta/tips",
    "desk/_friction",
    "arc/flight-recorder/context-loss-sentinel/latest-ready.json",
    "arc/flight-recorder/habit-receipts",
    "arc/messages",
    "arc/messages/inbox.jsonl",
    "arc/messages/read.jsonl",
    "arc/outbox",
    "arc/outbox/pending.jsonl",
    "arc/outbox/acks.jsonl",
    "arc/sync/conflicts",
    "habits",
)
#: folders whose every entry is stamped too (each small)
FOLDERS = ("state/habits", "state/sessions", "state/sync", "desk/_friction", "desk/_meta/tips")
#: read when the ask or the next action points at the record
RECORD = ("desk/_record/diary/facts.jsonl", "desk/_record/notes")
#: a stamped file or folder that does not exist
ABSENT = "0"


def _stamp(path: str, now: int) -> str:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return ABSENT
    except OSError:
        return stamps.UNTRUSTED
    return stamps.text(stamps.trusted(st, now))


def _entries(root: str, folder: str) -> list[str]:
    """``folder``'s entries and, for a sub-folder, its entries (sessions keep
    ``<id>/session.json``), bundle-relative; none when it cannot be listed."""
    out: list[str] = []
    try:
        names = sorted(os.listdir(os.path.join(root, folder)))
    except OSError:
        return out
    for name in names:
        rel = f"{folder}/{name}"
        out.append(rel)
        if os.path.isdir(os.path.join(root, rel)):
            try:
                out.extend(f"{rel}/{n}" for n in sorted(os.listdir(os.path.join(root, rel))))
            except OSError:
                out.append(f"{rel}/?")
    return out


def _tracks(root: str) -> list[str]:
    try:
        with os.scandir(os.path.join(root, "desk")) as entries:
            return sorted(
                f"desk/{e.name}"
                for e in entries
                if e.is_dir() and not e.name.startswith(("_", "."))
            )
    except OSError:
        return []


def _arc_digest(resume: dict[str, Any]) -> str:
    try:  # hashlib's own blake2b without hashlib's OpenSSL start-up (as ``ouro.arc.fold``)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b

    import marshal

    # marshal's version 2 of plain JSON values (str, int, bool, None, list, dict
    # in a fixed order) is a faithful encoding of them: every value is tagged with
    # its type (True is not 1), strings are written whole, and below version 3
    # nothing is written as a back-reference, so the bytes depend on the values
    # and their order only, never on which objects are shared or interned. A
    # different view gives different bytes, at a quarter of ``repr``'s cost. The
    # store summaries (~90% of the view at a year's scale) count by their digest,
    # ``storesDigest``, which is in the view.
    view = {k: v for k, v in sorted(resume.items()) if k not in VOLATILE and k != "stores"}
    try:
        data = marshal.dumps(view, 2)
    except ValueError:  # a value marshal does not know (never in a checkpoint): its repr
        data = b"repr:" + repr(view).encode("utf-8", "surrogatepass")
    return "blake2b:" + blake2b(data, digest_size=16).hexdigest()


def _refs(resume: dict[str, Any]) -> bool:
    ask = resume.get("currentAsk") or {}
    nxt = resume.get("nextSafeAction") or {}
    return bool(ask.get("refs") or nxt.get("refs"))


def take(bundle: Bundle) -> dict[str, Any]:
    """The basis as of now (take it before computing the packet it goes with)."""
    import time

    from ouro.arc.resume import read_resume_full

    root = os.fspath(bundle.root)
    now = time.time_ns()
    resume = read_resume_full(bundle)
    names = [*FILES, *_tracks(root)]
    for folder in FOLDERS:
        names.extend(_entries(root, folder))
    if _refs(resume):
        names.extend(RECORD)
    files = {name: _stamp(os.path.join(root, name), now) for name in names}
    return {"version": VERSION, "arc": _arc_digest(resume), "files": files}


def trusted(basis: dict[str, Any]) -> bool:
    """True when no stamp in ``basis`` was taken within the racy window."""
    files = basis["files"]
    return all(value != stamps.UNTRUSTED for value in files.values())


def same(saved: object, now: dict[str, Any]) -> bool:
    """True when ``saved`` (from the state file) is provably ``now``'s basis:
    equal, and no stamp in it untrusted."""
    return isinstance(saved, dict) and saved == now and trusted(now)
