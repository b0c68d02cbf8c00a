"""Advisory path locks: an agent announces the files or folders it is changing.

Files: ``arc/path-locks/<key>.json``, one file per locked path, where ``key``
is ``sha256:`` of the path (first 24 hex digits); each holds::

    {"id": "pl-…", "path": "src/app", "agent": "ari", "reason": "…",
     "takenAt": "<time>", "expiresAt": "<time>"}

Contract:
- Paths are stored repo-relative with ``/`` (``./src/app/`` → ``src/app``);
  an absolute path inside the repository (``ouro.proof.refs.repo_root``) is
  made relative, one outside it stays absolute. ``..`` is refused.
- Two paths overlap when they are equal or one is a folder holding the other
  (``src`` overlaps ``src/app.py``; ``src/a`` does not overlap ``src/ab``).
- ``take`` runs under ``state/locks/path-locks.lock``: it sweeps expired lock
  files, then refuses — all or nothing — when any requested path overlaps a
  live lock held by another agent: ``Conflict`` naming each holder, reason
  and expiry. Otherwise each lock file is written atomically (temp + fsync +
  rename); a path the agent already holds is renewed. Among racing processes
  exactly one agent holds overlapping paths.
- ``release`` removes the agent's own locks (named paths, or all of them);
  another agent's live lock is refused (``Conflict``); expired ones are swept.
- Reads (``list_locks``, ``holders_of``) are pure: an expired lock is ignored
  there, not removed; a lock file that cannot be parsed is reported as a
  problem and left in place (it is never treated as free or as held).
- Advisory: nothing stops an edit. The host ``PreToolUse`` hook warns.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import Conflict, InvalidInput
from ouro.models.clock import format_time, parse_time, utc_now
from ouro.models.ids import new_id
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import file_bytes
from ouro.store.lock import FileLock

FOLDER = "arc/path-locks"
DEFAULT_TTL = "30m"
MAX_PATHS = 100
MAX_REASON = 500


@dataclass(frozen=True)
class PathLock:
    id: str
    path: str
    agent: str
    reason: str
    taken_at: str
    expires_at: str
    file: str

    def live(self, now: datetime) -> bool:
        try:
            return parse_time(self.expires_at) > now
        except ValueError:
            return True  # an unreadable expiry is not "expired": unknown stays held

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "agent": self.agent,
            "reason": self.reason,
            "takenAt": self.taken_at,
            "expiresAt": self.expires_at,
            "locator": f"{FOLDER}/{os.path.basename(self.file)}",
        }


@dataclass
class LockScan:
    locks: list[PathLock] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def folder(bundle: Bundle) -> Path:
    return bundle.root / FOLDER


def _guard(bundle: Bundle) -> FileLock:
    return FileLock(bundle.lock_path("path-locks"), purpose="path locks")


def lock_file(bundle: Bundle, path: str) -> Path:
    digest = hashlib.sha256(path.encode("utf-8")).hexdigest()[:24]
    return folder(bundle) / f"sha256-{digest}.json"


def normalize(bundle: Bundle, raw: str, *, root: str | None = None) -> str:
    """The stored form of a path (see the module contract)."""
    text = raw.strip()
    if not text or "\x00" in text or "\n" in text or len(text) > 1000:
        raise InvalidInput(
            f"path: {raw!r} is not a path", hint="name a file or folder, e.g. src/app.py"
        )
    if os.path.isabs(text):
        if root is None:
            from ouro.proof.refs import repo_root

            root = repo_root(bundle)
        norm = os.path.normpath(text)
        rel = os.path.relpath(norm, root)
        if rel == "." or not rel.startswith(".."):
            text = rel
        else:
            return norm
    parts = [p for p in PurePosixPath(text.replace(os.sep, "/")).parts if p not in (".", "")]
    if ".." in parts:
        raise InvalidInput(
            f"path: {raw!r} climbs out with '..'", hint="name the path from the repository root"
        )
    return "/".join(parts) or "."


def overlaps(a: str, b: str) -> bool:
    if a == b or a == "." or b == ".":
        return True
    return b.startswith(a.rstrip("/") + "/") or a.startswith(b.rstrip("/") + "/")


def _read(path: Path) -> PathLock:
    data = jsonio.loads(file_bytes(path))
    return PathLock(
        str(data["id"]),
        str(data["path"]),
        str(data["agent"]),
        str(data.get("reason") or ""),
        str(data["takenAt"]),
        str(data["expiresAt"]),
        str(path),
    )


def scan(bundle: Bundle) -> LockScan:
    """Every lock file, expired or not (pure)."""
    out = LockScan()
    try:
        names = sorted(os.listdir(folder(bundle)))
    except FileNotFoundError:
        return out
    for name in names:
        if not name.endswith(".json"):
            continue
        path = folder(bundle) / name
        try:
            out.locks.append(_read(path))
        except FileNotFoundError:
            continue  # released while we listed
        except (OSError, ValueError, KeyError, TypeError) as exc:
            out.problems.append(
                f"{FOLDER}/{name}: unreadable lock ({exc}); left in place — "
                "fix or remove it by hand"
            )
    return out


def list_locks(bundle: Bundle, *, now: datetime, path: str | None = None) -> LockScan:
    """Live locks (optionally those overlapping ``path``), oldest first. Pure."""
    found = scan(bundle)
    want = normalize(bundle, path) if path is not None else None
    found.locks = sorted(
        (lk for lk in found.locks if lk.live(now) and (want is None or overlaps(want, lk.path))),
        key=lambda lk: (lk.taken_at, lk.path),
    )
    return found


def holders_of(bundle: Bundle, path: str, *, agent: str | None, now: datetime) -> list[PathLock]:
    """Live locks by agents other than ``agent`` that overlap ``path``. Pure."""
    return [lk for lk in list_locks(bundle, now=now, path=path).locks if lk.agent != agent]


def _conflict_text(lk: PathLock) -> str:
    reason = f" ({lk.reason})" if lk.reason else ""
    return f"{lk.path} is locked by {lk.agent}{reason} until {lk.expires_at}"


def _sweep(found: LockScan, now: datetime) -> list[PathLock]:
    """Remove expired lock files (caller holds the guard); returns the live ones."""
    live = []
    for lk in found.locks:
        if lk.live(now):
            live.append(lk)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lk.file)
    return live


def take(
    bundle: Bundle, paths: list[str], *, agent: str, reason: str, ttl_seconds: int
) -> tuple[list[PathLock], list[str]]:
    """Lock every path for ``agent`` or none (see module contract).

    Returns the written locks and the problems seen (unreadable lock files)."""
    if not paths:
        raise InvalidInput("paths: give at least one path", hint="ouro lock take src/app.py")
    if len(paths) > MAX_PATHS:
        raise InvalidInput(f"paths: at most {MAX_PATHS} per take", hint="lock a folder instead")
    if len(reason) > MAX_REASON or "\n" in reason:
        raise InvalidInput(
            f"reason: one line of at most {MAX_REASON} characters", hint="say it briefly"
        )
    from ouro.proof.refs import repo_root

    root = repo_root(bundle)
    wanted = list(dict.fromkeys(normalize(bundle, p, root=root) for p in paths))
    with _guard(bundle):
        now = utc_now()
        found = scan(bundle)
        live = _sweep(found, now)
        clashes = [
            lk for lk in live if lk.agent != agent and any(overlaps(w, lk.path) for w in wanted)
        ]
        if clashes:
            raise Conflict(
                "; ".join(_conflict_text(lk) for lk in clashes),
                hint="pick other paths, wait until the lock expires, or ask the holder "
                "(ouro message send AGENT ...); 'ouro lock list' shows every lock",
            )
        mine = {lk.path: lk for lk in live if lk.agent == agent}
        until = format_time(now + timedelta(seconds=ttl_seconds))
        written = []
        for path in wanted:
            old = mine.get(path)
            target = lock_file(bundle, path)
            record = {
                "id": old.id if old else new_id("pl"),
                "path": path,
                "agent": agent,
                "reason": reason,
                "takenAt": old.taken_at if old else format_time(now),
                "expiresAt": until,
            }
            atomic_write_json(target, record)
            written.append(_read(target))
    return written, found.problems


def release(
    bundle: Bundle, paths: list[str] | None, *, agent: str
) -> tuple[list[PathLock], list[str]]:
    """Remove the agent's locks on ``paths`` (None: all of its locks)."""
    from ouro.proof.refs import repo_root

    root = repo_root(bundle)
    wanted = None if not paths else {normalize(bundle, p, root=root) for p in paths}
    with _guard(bundle):
        now = utc_now()
        found = scan(bundle)
        live = _sweep(found, now)
        by_path = {lk.path: lk for lk in live}
        if wanted is not None:
            for path in sorted(wanted):
                lk = by_path.get(path)
                if lk is None:
                    raise Conflict(
                        f"{path} is not locked", hint="'ouro lock list' shows every live lock"
                    )
                if lk.agent != agent:
                    raise Conflict(
                        f"{_conflict_text(lk)}; {agent} cannot release it",
                        hint="only the holder releases a lock; it ends by itself at expiry",
                    )
        gone = [lk for lk in live if lk.agent == agent and (wanted is None or lk.path in wanted)]
        for lk in gone:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lk.file)
    return gone, found.problems
