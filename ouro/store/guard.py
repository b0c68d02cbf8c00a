"""The write discipline's checks: confinement, folder creation, OS errors, stale temps.

Every write primitive in ``ouro.store`` (atomic replace, JSONL and text
appends, lock files) calls these before it writes a byte:

- ``confine(path)``: the path is resolved (every symlink followed) and must
  stay inside its bundle, else ``OutsideBundle`` and nothing is written. The
  bundle of a path is the nearest folder above it (by name, as the caller
  spelt it) that holds ``bundle.json`` -- the rule bundle discovery uses -- or
  the ``root`` the caller passes (``Bundle.init`` before ``bundle.json``
  exists). A path in no bundle is not confined. The write then goes to the
  resolved path, so a symlink that stays inside the bundle still works.
- ``Inside(root)``: the same rule for reads. A reader that lists or opens
  record files never opens one whose path resolves outside the bundle (a
  hostile bundle, a cloned repository, can hold symlinks): not its bytes, so
  not even a field name of it reaches an output, the index, a cache or a log.
  The path is skipped and reported (``outside(rel)``) and the read goes on; a
  symlink that stays inside is read as before. The common path pays no
  syscall: ``folder(path)`` resolves the folder a read lists, once per read;
  ``entry(entry, folder)`` looks at a listed entry only when the listing
  (``d_type``) says it is a symlink; ``path(path)`` resolves one file a read
  opens by name.
- ``make_dirs(folder)``: creates missing folders one at a time and fsyncs each
  new folder's parent, so a new file's folder survives a power cut too; a
  write that then fails removes the folders it created (``remove_dirs``).
- ``storage_error(exc, path)``: turns an ``OSError`` into a ``StorageError``
  naming the path, what happened (``disk full: free space on /mnt``) and
  whether anything was written.
- ``sweep_temps(folder)``: removes the temp files (``.<name>.<pid>-<n>.tmp``)
  that writers killed mid-replace left in ``folder``; only those whose pid is
  gone (or a zombie), never a live writer's. A long-lived process skips the
  listing while the folder's mtime is the one its own last write left
  (``note_written``): nobody has created a file there since.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ouro.errors import OutsideBundle, StorageError

TYPE_CHECKING = False  # no typing at run time: hooks import this module
if TYPE_CHECKING:
    from collections.abc import Callable

MARKER = "bundle.json"
#: temp names written by ouro's atomic replaces: ``.<target>.<pid>[-<n>|.link].tmp``
#: compiled on first use (``re``'s own cache): a cold start that never sweeps pays nothing
TEMP_NAME = r"^\.(?P<target>.+)\.(?P<pid>\d+)(?:-\d+|\.link)?\.tmp$"

_roots: dict[str, str] = {}  # folder -> its bundle root (positive answers only)
_real_roots: dict[str, str] = {}  # bundle root -> its resolved name, as last seen


def bundle_root_of(path: str | Path) -> str | None:
    """The nearest folder above ``path`` (lexically) that holds ``bundle.json``."""
    folder = os.path.dirname(os.path.abspath(path))
    cached = _roots.get(folder)
    if cached is not None:
        return cached
    here = folder
    while True:
        if os.path.isfile(os.path.join(here, MARKER)):
            _roots[folder] = here
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def confine(path: Path, root: Path | str | None = None) -> Path:
    """The resolved ``path``; ``OutsideBundle`` if it leaves its bundle."""
    text = os.path.abspath(path)
    base = os.fspath(root) if root is not None else bundle_root_of(text)
    if base is None:
        return Path(text)
    real = realpath(text)
    # The root's resolved name is kept from the last look; a path outside it is
    # looked at again with the root resolved afresh before it is refused.
    real_base = _real_roots.get(base)
    if real_base is None or not _inside(real, real_base):
        real_base = _real_roots[base] = realpath(os.path.abspath(base))
    if not _inside(real, real_base):
        link = _first_symlink(os.path.abspath(base), text)
        via = f" through the symlink {link}" if link else ""
        raise OutsideBundle(
            f"refusing to write {text}: it resolves to {real}, outside the bundle "
            f"{base}{via}; nothing was written",
            hint="replace the symlink with a real folder or file inside the bundle "
            "(ouro writes only inside its bundle)",
        )
    return Path(real)


def outside(rel: str) -> str:
    """The problem a skipped path is reported with (``rel``: bundle-relative)."""
    return f"{rel} resolves outside the bundle through a symlink; it was not read"


def names_inside(
    folder: str | os.PathLike[str],
    want: Callable[[str], object],
    skipped: list[str] | None,
    *,
    missing_ok: bool = True,
) -> list[str]:
    """The names in ``folder`` that ``want`` keeps, sorted, none behind a symlink
    leading outside the bundle (those go to ``skipped``, bundle-relative).

    Raises as ``os.scandir`` does, except for a missing folder with
    ``missing_ok`` (no names). Only a symlink pays for the check: the listing
    says which entries are; the bundle is the nearest folder above holding
    ``bundle.json``. The folder's own resolution is the caller's to check, once
    per read (``Inside.folder``)."""
    base = os.fspath(folder)
    try:
        with os.scandir(base) as listing:
            entries = [e for e in listing if want(e.name)]
    except FileNotFoundError:
        if not missing_ok:
            raise
        return []
    names = []
    for entry in entries:
        if entry.is_symlink():
            inside = Inside(bundle_root_of(entry.path) or base)
            if not inside.entry(entry, base):
                if skipped is not None:
                    skipped.append(inside.rel(entry.path))
                continue
        names.append(entry.name)
    return sorted(names)


def is_dir(entry: os.DirEntry[str]) -> bool:
    """``entry.is_dir()``, a symlink followed; a loop (``ELOOP``) or a link that
    cannot be followed is no folder (its readers skip and report it)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


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
        """Whether the file ``path`` resolves inside the bundle (a missing one does;
        a symlink loop, ``ELOOP``, resolves nowhere: not inside)."""
        real = _realpath(os.path.abspath(path))
        if real is None:  # the last step is a symlink: ask again, as ``link`` does
            return self.link(os.path.abspath(path))
        return self.holds(real)

    def entry(self, entry: os.DirEntry[str], folder: str) -> bool:
        """Whether ``entry``, listed in ``folder`` (inside the bundle), stays inside.

        No syscall unless the entry is a symlink (``d_type`` from the listing).
        """
        if not entry.is_symlink():
            return True
        return self.link(os.path.join(folder, entry.name))

    def link(self, path: str) -> bool:
        """Whether the symlink ``path`` resolves inside the bundle. A loop (``ELOOP``)
        resolves nowhere, so not inside: it is skipped and reported like a link
        leading outside (a dangling link inside stays inside: a missing file)."""
        real = os.path.realpath(path)
        if not self.holds(real):
            return False
        try:  # a resolved name that is still a symlink: realpath met a loop
            return not stat.S_ISLNK(os.lstat(real).st_mode)
        except OSError:
            return True

    def entries(
        self,
        folder: str | os.PathLike[str],
        problems: list[str],
        want: Callable[[str], bool] | None = None,
    ) -> list[os.DirEntry[str]]:
        """The entries of ``folder`` whose names ``want`` keeps, none outside the bundle.

        Raises as ``os.scandir`` does. ``folder`` itself outside gives no entry;
        it, and each kept symlink leading outside, is reported in ``problems``.
        """
        if self.folder(folder) is None:
            problems.append(outside(self.rel(folder)))
            return []
        base = os.fspath(folder)
        with os.scandir(base) as listing:
            found = [e for e in listing if want is None or want(e.name)]
        kept = []
        for entry in found:
            if entry.is_symlink() and not self.entry(entry, base):
                problems.append(outside(self.rel(entry.path)))
            else:
                kept.append(entry)
        return kept

    def files(
        self,
        folder: str | os.PathLike[str],
        suffix: str,
        problems: list[str],
        *,
        deep: bool = True,
    ) -> list[Path]:
        """The files named ``*suffix`` under ``folder``, sorted, none outside the bundle.

        Dot-named files and folders are skipped; a symlinked folder is not
        descended (as ``Path.rglob``); without ``deep`` no folder is. A path resolving outside (``folder``
        itself, or a symlink in it) is reported in ``problems``, never opened.
        """
        if self.folder(folder) is None:
            problems.append(outside(self.rel(folder)))
            return []
        found: list[Path] = []
        stack = [os.fspath(folder)]
        while stack:
            try:
                with os.scandir(stack.pop()) as listing:
                    entries = list(listing)
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_symlink():
                    if not self.link(entry.path):
                        problems.append(outside(self.rel(entry.path)))
                        continue
                elif entry.is_dir(follow_symlinks=False):
                    if deep:
                        stack.append(entry.path)
                    continue
                if entry.name.endswith(suffix) and entry.is_file():
                    found.append(Path(entry.path))
        return sorted(found)

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to the bundle root, as a reader reports it."""
        return os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")


#: Linux names an open descriptor's resolved path in /proc/self/fd
_PROC = hasattr(os, "O_PATH") and os.path.isdir("/proc/self/fd")


def realpath(text: str) -> str:
    """``os.path.realpath`` of an absolute, normalised path, asked of the kernel
    (see ``_realpath``)."""
    real = _realpath(text)
    return os.path.realpath(text) if real is None else real


def _realpath(text: str) -> str | None:
    """``os.path.realpath`` of an absolute, normalised path, asked of the kernel.

    On Linux the folder is opened ``O_PATH`` (the kernel follows every symlink
    in it at once) and its resolved name read back from ``/proc/self/fd``; the
    last component is looked at with one ``lstat``. Anything else -- a final
    symlink, a missing or deleted folder, no ``/proc`` -- takes
    ``os.path.realpath``'s own walk (an ``lstat`` per component, in Python):
    the same answer, the kernel's way being ~10x cheaper on a write's path.
    None when the last component is a symlink: the caller walks it (``realpath``)
    or also asks whether it loops (``Inside.path``).
    """
    if not _PROC:
        return os.path.realpath(text)
    folder, name = os.path.split(text)
    try:
        fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return os.path.realpath(text)
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
        if not real.startswith("/") or real.endswith(" (deleted)"):
            return os.path.realpath(text)
        if not name:
            return real
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            pass  # not there yet: the write creates it, as realpath would name it
        except OSError:
            return os.path.realpath(text)
        else:
            if stat.S_ISLNK(st.st_mode):
                return None  # the last step is a symlink: ``os.path.realpath``'s walk
        return os.path.join(real, name)
    except OSError:
        return os.path.realpath(text)
    finally:
        os.close(fd)


def _inside(real: str, real_base: str) -> bool:
    return real == real_base or real.startswith(real_base.rstrip(os.sep) + os.sep)


def _first_symlink(base: str, text: str) -> str | None:
    rel = os.path.relpath(text, base)
    here = base
    for part in rel.split(os.sep):
        here = os.path.join(here, part)
        if os.path.islink(here):
            return here
    return None


def fsync_dir(folder: Path | str) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(folder: Path) -> list[Path]:
    """Create ``folder`` and missing parents, fsyncing each new folder's parent.

    Returns the folders it created, outermost first, so a write that then
    fails can take them back (``remove_dirs``).
    """
    if os.path.isdir(folder):
        return []
    created: list[Path] = []
    missing: list[Path] = []
    here = folder
    while not os.path.isdir(here):
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for new in reversed(missing):
        try:
            os.mkdir(new)
        except FileExistsError:
            if not os.path.isdir(new):
                remove_dirs(created)
                raise StorageError(
                    f"{new} is a file where a folder is expected; nothing was written",
                    hint=f"move {new} aside, then retry",
                ) from None
            continue
        except OSError as exc:
            remove_dirs(created)
            raise storage_error(exc, new, action="creating the folder") from None
        created.append(new)
        fsync_dir(new.parent)
    return created


def remove_dirs(created: list[Path]) -> None:
    """Remove folders ``make_dirs`` created, innermost first, if still empty."""
    for folder in reversed(created):
        try:
            os.rmdir(folder)
        except OSError:
            return  # no longer empty (another writer uses it), or gone: leave the rest


def mount_point(path: Path | str) -> str:
    """The mount point of the file system holding ``path`` (or its nearest existing parent)."""
    here = os.path.abspath(path)
    while not os.path.exists(here) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    try:
        dev = os.stat(here).st_dev
        while True:
            parent = os.path.dirname(here)
            if parent == here or os.stat(parent).st_dev != dev:
                return here
            here = parent
    except OSError:
        return here


def storage_error(
    exc: OSError, path: Path | str, *, action: str = "writing", outcome: str = "nothing was written"
) -> StorageError:
    """An ``OSError`` as a ``StorageError`` that names the path and the next step."""
    code = exc.errno
    where = os.fspath(path)
    if code in (errno.ENOSPC, errno.EDQUOT):
        mount = mount_point(where)
        return StorageError(
            f"disk full: no space left on {mount} while {action} {where}; {outcome}",
            hint=f"free space on {mount}, then retry",
        )
    if code == errno.EFBIG:
        return StorageError(
            f"file too large: {where} hit the file size limit while {action}; {outcome}",
            hint="raise the file size limit (ulimit -f) or free space, then retry",
        )
    if code in (errno.EROFS, errno.EACCES, errno.EPERM):  # ouro.store.readonly
        from ouro.store.readonly import not_writable

        return not_writable(code, where, action=action, outcome=outcome)
    if code == errno.EISDIR:
        return StorageError(
            f"{where} is a folder where a file is expected; {outcome}",
            hint=f"move the folder {where} aside, then retry",
        )
    if code == errno.ENOTDIR:
        return StorageError(
            f"a file is in the way of the folder for {where}; {outcome}",
            hint="move that file aside, then retry",
        )
    if code == errno.ELOOP:
        return StorageError(
            f"{where} is a symlink; ouro does not write through it; {outcome}",
            hint="replace the symlink with a real file",
        )
    if code == errno.EIO:
        return StorageError(
            f"I/O error while {action} {where}; {outcome}",
            hint="check the disk (dmesg) and retry",
        )
    return StorageError(
        f"{exc.strerror or exc} while {action} {where}; {outcome}",
        hint="fix the cause named above, then retry",
    )


def _pid_gone(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:  # a killed child not yet reaped is a zombie: its writes are over
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] == b"Z"
    except (OSError, ValueError):
        return False


#: folder -> its mtime after this process's last write there: while it still has
#: that mtime nobody else has created a file in it since, so there is nothing to sweep
_swept: dict[str, int] = {}
_busy: set[str] = set()  # folders where the last sweep saw a live writer's temp file


def sweep_temps(folder: Path | str) -> list[str]:
    """Remove temp files in ``folder`` whose writer process is gone; returns their names.

    Lists the folder (about 0.4 us per entry) unless this process has seen it
    unchanged since its own last write there (``note_written``).
    """
    key = os.fspath(folder)
    removed: list[str] = []
    try:
        if _swept.get(key) == os.stat(key).st_mtime_ns:
            return removed
        names = os.listdir(key)
    except OSError:
        return removed
    _busy.discard(key)
    for name in [n for n in names if n[:1] == "." and n.endswith(".tmp")]:
        match = re.match(TEMP_NAME, name)
        if match is None or not _pid_gone(int(match["pid"])):
            if match is not None and int(match["pid"]) != os.getpid():
                _busy.add(key)  # a live writer's temp: look again next time
            continue
        path = os.path.join(key, name)
        try:
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                removed.append(name)
        except OSError:
            continue  # swept by a later write; never fail the write for it
    return removed


def note_written(folder: Path | str) -> None:
    """Remember ``folder``'s mtime right after this process wrote (and swept) it."""
    key = os.fspath(folder)
    if key in _busy:  # another writer was mid-write: its temp may outlive it
        _swept.pop(key, None)
        return
    try:
        _swept[key] = os.stat(key).st_mtime_ns
    except OSError:
        _swept.pop(key, None)
