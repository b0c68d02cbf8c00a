"""Reads stay inside the bundle, after symlinks: the read side of ``guard.confine``.

A bundle can come from anywhere (a cloned repository) and hold symlinks. A
reader that lists or opens record files never opens one whose path resolves
outside the bundle: not its bytes, so not even a field name of it can reach an
output, the index, a cache or a log. The file is skipped and reported
(``outside(rel)``), and the rest of the read goes on. A symlink that stays
inside the bundle is read as before.

Cost: readers here are hot (a host hook scans ~2,000 claim files per prompt),
so the common path pays no syscall:

- ``Inside(root).folder(path)``: the folder a read lists, resolved once per
  read (``guard.realpath``: a few syscalls), None when it lies outside.
- ``Inside.entry(entry, folder)``: an ``os.DirEntry`` of a listed folder
  that is inside. ``entry.is_symlink()`` comes from the listing (``d_type``),
  so a plain file costs nothing; only a symlink pays a ``realpath``.
- ``Inside.path(path)``: one file a read opens by name (a day log, the facts
  file): one ``realpath``.

The root's resolved name is kept per process (``guard``'s rule for writes).
"""

from __future__ import annotations

import os

from ouro.store.guard import realpath

_real_roots: dict[str, str] = {}


def outside(rel: str) -> str:
    """The problem a skipped path is reported with (``rel``: bundle-relative)."""
    return f"{rel} resolves outside the bundle through a symlink; it was not read"


class Inside:
    """The read-side confinement of one bundle root."""

    __slots__ = ("real", "root")

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = os.path.abspath(root)
        real = _real_roots.get(self.root)
        if real is None:
            real = _real_roots[self.root] = realpath(self.root)
        self.real = real

    def holds(self, real: str) -> bool:
        """Whether the resolved name ``real`` lies inside the bundle."""
        base = self.real
        return real == base or real.startswith(base.rstrip(os.sep) + os.sep)

    def folder(self, path: str | os.PathLike[str]) -> str | None:
        """``path`` resolved, or None when it (through a symlink) lies outside."""
        real = realpath(os.path.abspath(path))
        return real if self.holds(real) else None

    def path(self, path: str | os.PathLike[str]) -> bool:
        """Whether the file ``path`` resolves inside the bundle (a missing one does)."""
        return self.holds(os.path.realpath(os.path.abspath(path)))

    def entry(self, entry: os.DirEntry[str], folder: str) -> bool:
        """Whether ``entry``, listed in ``folder`` (inside the bundle), stays inside.

        No syscall unless the entry is a symlink (``d_type`` from the listing).
        """
        if not entry.is_symlink():
            return True
        return self.holds(os.path.realpath(os.path.join(folder, entry.name)))

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the bundle root, as a reader reports it."""
        return os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
