"""Find every entry under the legacy roots, without following links or writing.

Contract: ``scan(root, names)`` returns one ``SourceFile`` per file, symlink or
special entry (FIFO, socket, device, unreadable file) below each legacy root,
sorted by path. Regular files are read once: size, content hash and whether
they are text (UTF-8 without NUL); one larger than ``DOC_LIMIT`` is never read
and is a special entry (quarantined as it is, by rename). Nothing is opened
that could block (FIFOs are only ``lstat``-ed, and a file is opened without
blocking) and nothing is written, not even an access time we can avoid.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ouro.models.hashing import content_hash
from ouro.store.bounded import NotRegularFile, TooLarge, file_bytes


@dataclass(frozen=True)
class SourceFile:
    path: str  # bundle-relative POSIX path
    kind: str  # file | symlink | special
    size: int
    hash: str | None  # content hash of the bytes (file) or of the link target (symlink)
    is_text: bool
    mtime_ns: int
    target: str | None = None  # symlink target, as stored
    why: str | None = None  # for special entries: what it is
    ino: int = 0
    dev: int = 0

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "kind": self.kind,
            "bytes": self.size,
            "hash": self.hash,
        }
        if self.target is not None:
            out["target"] = self.target
        if self.why:
            out["why"] = self.why
        return out


def is_text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _entry(root: Path, full: Path) -> SourceFile | None:
    rel = full.relative_to(root).as_posix()
    st = os.lstat(full)
    if stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(full)
        return SourceFile(
            rel,
            "symlink",
            len(target.encode()),
            content_hash(target),
            False,
            st.st_mtime_ns,
            target,
        )
    if not stat.S_ISREG(st.st_mode):
        return SourceFile(
            rel,
            "special",
            0,
            None,
            False,
            st.st_mtime_ns,
            why=_describe(st.st_mode),
            ino=st.st_ino,
            dev=st.st_dev,
        )
    try:
        # a file past DOC_LIMIT is never read (TooLarge, from its fstat); one
        # swapped for a FIFO since the lstat is never opened blocking
        data = file_bytes(full)
    except (PermissionError, NotRegularFile, TooLarge) as exc:
        why = "unreadable (permission denied)" if isinstance(exc, PermissionError) else exc.strerror
        return SourceFile(
            rel,
            "special",
            st.st_size,
            None,
            False,
            st.st_mtime_ns,
            why=why,
            ino=st.st_ino,
            dev=st.st_dev,
        )
    return SourceFile(rel, "file", len(data), content_hash(data), is_text(data), st.st_mtime_ns)


def _describe(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def _walk(root: Path, folder: Path, out: list[SourceFile]) -> None:
    with os.scandir(folder) as entries:
        children = sorted(entries, key=lambda e: e.name)
    for child in children:
        full = Path(child.path)
        if child.is_dir(follow_symlinks=False):
            _walk(root, full, out)
            continue
        entry = _entry(root, full)
        if entry is not None:
            out.append(entry)


def scan(root: Path, names: tuple[str, ...]) -> list[SourceFile]:
    """Every entry below the legacy roots that exist, sorted by path."""
    out: list[SourceFile] = []
    for name in names:
        top = root / name
        if not os.path.lexists(top):
            continue
        if top.is_dir() and not top.is_symlink():
            _walk(root, top, out)
        else:
            entry = _entry(root, top)
            if entry is not None:
                out.append(entry)
    return sorted(out, key=lambda s: s.path)


def legacy_roots_present(root: Path, names: tuple[str, ...]) -> list[str]:
    return [name for name in names if os.path.lexists(root / name)]
