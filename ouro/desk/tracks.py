"""Tracks: ``desk/<track>/track.md`` (front matter ``name``, ``title``, ``created``).

A folder directly under ``desk/`` is a track when it holds ``track.md`` and its
name does not start with ``_``. Adding a track that exists returns it
unchanged (``created: false``), so ``track add`` is safe to repeat.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import read_doc, write_doc
from ouro.desk.names import validate_track_name
from ouro.errors import NotFound
from ouro.models.clock import utc_now_iso
from ouro.store.lock import FileLock

TRACK_KEYS = ("name", "title", "created")


@dataclass(frozen=True)
class TrackAdd:
    name: str
    path: Path
    meta: dict[str, Any]
    created: bool


def track_dir(bundle: Bundle, name: str) -> Path:
    return bundle.desk / validate_track_name(name)


def add_track(bundle: Bundle, title: str, *, description: str = "") -> TrackAdd:
    name = validate_track_name(title)
    folder = bundle.desk / name
    path = folder / "track.md"
    if path.exists():  # checked before locking so a repeat add touches nothing
        meta, _ = read_doc(path, source=bundle.locator(path))
        return TrackAdd(name, path, meta, created=False)
    with FileLock(bundle.lock_path("desk"), purpose="track add"):
        if path.exists():
            meta, _ = read_doc(path, source=bundle.locator(path))
            return TrackAdd(name, path, meta, created=False)
        meta = {"name": name, "title": title.strip(), "created": utc_now_iso()}
        write_doc(path, meta, description)
    return TrackAdd(name, path, meta, created=True)


def require_track(bundle: Bundle, name: str) -> Path:
    """The track folder for ``name``; ``NotFound`` naming the next command if absent."""
    folder = track_dir(bundle, name)
    if not (folder / "track.md").is_file():
        raise NotFound(
            f"no track named {folder.name!r} (no desk/{folder.name}/track.md)",
            hint=f"create it with 'ouro desk track add {folder.name}'",
        )
    return folder


def list_tracks(bundle: Bundle) -> list[str]:
    """Track names, sorted. Pure read."""
    try:
        entries = sorted(p.name for p in bundle.desk.iterdir())
    except FileNotFoundError:
        return []
    return [
        n for n in entries if not n.startswith("_") and (bundle.desk / n / "track.md").is_file()
    ]
