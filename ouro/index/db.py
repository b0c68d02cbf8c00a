"""The index database: ``state/index/ouro.sqlite3``.

Contract:
- The file carries ``PRAGMA application_id = APPLICATION_ID`` ("OURO") and
  ``PRAGMA user_version`` = the number of the newest schema migration applied.
- Opening checks both *before* writing anything: a database with another
  application id (or an unmarked one that already has tables) is foreign, a
  database with a higher user_version is newer than this ouro; both are refused
  with ``IndexUnavailable`` and left byte-for-byte untouched.
- Migrations are the SQL files ``migrations/index/NNNN_name.sql``, applied in
  order, each in ONE transaction together with its ``schema_migrations`` row
  and the new ``user_version``.
- Connections use WAL and a busy timeout, and run in autocommit mode: every
  write happens inside an explicit ``BEGIN IMMEDIATE`` ... ``COMMIT``.

This module imports only the standard library, and not even pathlib at load
time: the CLI fast path opens the index through it, and opening an up-to-date
index reads no migration file (``SCHEMA_VERSION`` says which one is newest).
"""

from __future__ import annotations

import _thread  # threading's own lock, without importing threading (~4M instructions)
import errno
import functools
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from ouro.errors import IndexUnavailable
from ouro.store.bounded import file_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    Root = str | os.PathLike[str]

APPLICATION_ID = 0x4F55524F  # "OURO"
#: the number of the newest file in migrations/index/; ``migrations()`` checks it
SCHEMA_VERSION = 6
DB_NAME = "ouro.sqlite3"
STALE_MARKER = "STALE"
BUSY_TIMEOUT_S = 30.0
REBUILD_HINT = (
    "run 'ouro index rebuild': it moves the damaged index aside (kept, as "
    "state/index.damaged-<time>/) and builds a new one from the files"
)


def db_file(root: Root) -> str:
    return os.path.join(root, "state", "index", DB_NAME)


def db_path(root: Root) -> Path:
    from pathlib import Path

    return Path(db_file(root))


@functools.cache
def migrations() -> tuple[tuple[int, str, str], ...]:
    """``(version, file name, sql)`` for every index migration, in order."""
    import re

    from ouro.resources import migrations_dir

    folder = migrations_dir() / "index"
    found = []
    for path in sorted(folder.iterdir()):
        match = re.match(r"^(\d{4})_[a-z0-9_]+\.sql$", path.name)
        if match:
            found.append((int(match.group(1)), path.name, path.read_text(encoding="utf-8")))
    versions = [v for v, _n, _s in found]
    if versions != list(range(1, len(found) + 1)):
        raise IndexUnavailable(
            f"index migrations in {folder} are not numbered 0001, 0002, ... without gaps",
            hint="reinstall ouro",
        )
    if len(found) != SCHEMA_VERSION:
        raise IndexUnavailable(
            f"index migrations in {folder} end at {len(found)}, but ouro.index.db says "
            f"SCHEMA_VERSION = {SCHEMA_VERSION}",
            hint="reinstall ouro",
        )
    return tuple(found)


def latest_version() -> int:
    return len(migrations())


def _check_identity(conn: sqlite3.Connection, path: Root, *, latest: int) -> int:
    """Refuse a foreign or newer database. Returns its user_version."""
    try:
        # One statement, so one read transaction: read one at a time, the three
        # could straddle another process's creation of the index (no id yet,
        # then its tables) and call ouro's own new index a foreign one.
        app_id, version, tables = conn.execute(
            "SELECT a.application_id, v.user_version, (SELECT count(*) FROM sqlite_master) "
            "FROM pragma_application_id() a, pragma_user_version() v"
        ).fetchone()
    except sqlite3.DatabaseError as exc:
        raise IndexUnavailable(
            f"{path} is not a readable SQLite database ({exc}); ouro left it untouched",
            hint=REBUILD_HINT,
        ) from None
    if app_id != APPLICATION_ID and (app_id != 0 or tables):
        raise IndexUnavailable(
            f"{path} belongs to another application (application_id {app_id:#x}); "
            "ouro will not use or overwrite it",
            hint=REBUILD_HINT,
        )
    if version > latest:
        raise IndexUnavailable(
            f"{path} has index schema {version}, newer than this ouro understands ({latest}); "
            "ouro will not use or overwrite it",
            hint="upgrade ouro, or " + REBUILD_HINT,
        )
    return int(version)


def _statements(sql: str) -> Iterator[str]:
    """Split a script into statements (``executescript`` would COMMIT first)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip() and not all(
        part.strip().startswith("--") or not part.strip() for part in buffer.splitlines()
    ):
        raise IndexUnavailable("an index migration ends with an unfinished statement")


class ReadOnlyIndex(sqlite3.Connection):
    """A connection to an index that cannot be written where it is (``open_read_only``).

    ``behind`` is None, or why the index may miss writes that are on disk (a
    write-ahead log that cannot be read without writing)."""

    behind: str | None = None


def writable(root: Root) -> bool:
    """Whether ``state/index/`` can be written: the index folder (or, before it exists,
    the nearest folder above it) and the database file, if there is one -- or, in a
    folder that takes no new entry, the database and its ``-wal`` and ``-shm`` files.
    False on a read-only disk (even for root) and in a bundle the reader may not
    write."""
    path = db_file(root)
    folder = os.path.dirname(path)
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    if os.access(folder, os.W_OK):
        return not os.path.lexists(path) or os.access(path, os.W_OK)
    # A folder that takes no new entry (chattr +i) still lets SQLite write when the
    # database and both of its side files are there, and writable.
    return all(os.access(path + end, os.W_OK) for end in ("", "-wal", "-shm"))


def read_only_reason(root: Root) -> str:
    """Why ``state/index/`` cannot be written, for a message: the disk, or permissions."""
    from ouro.store.readonly import on_read_only_disk

    where = os.path.dirname(db_file(root))
    if on_read_only_disk(where):
        return f"the bundle is on a read-only disk ({where} cannot be written)"
    return f"the bundle is not writable here ({where}: permission denied)"


def can_move_aside(root: Root) -> bool:
    """Whether ``state/`` can be written, so 'ouro index rebuild' can move an index
    folder that cannot be written aside and build a new one."""
    state = os.path.dirname(os.path.dirname(db_file(root)))
    return os.path.isdir(state) and os.access(state, os.W_OK)


def read_only(root: Root) -> IndexUnavailable:
    """The error for a write to an index that cannot be written where it is. Never
    "not a readable SQLite database": the index may be fine. When ``state/`` itself
    can be written, 'ouro index rebuild' can move the index folder aside; on a
    read-only disk it cannot, and the hint says what works there."""
    if can_move_aside(root):
        return IndexUnavailable(
            f"the index folder {os.path.dirname(db_file(root))} cannot be written; "
            "nothing was changed",
            hint=REBUILD_HINT,
        )
    return IndexUnavailable(
        f"{read_only_reason(root)}: the index cannot be updated; nothing was changed",
        hint="searches still answer here (from the files, through a scratch index that is "
        "never saved, when the index on disk is missing or behind); to update the index itself, remount the disk "
        "read-write or work on a writable copy of the bundle",
    )


def open_read_only(root: Root) -> ReadOnlyIndex:
    """The index of a bundle whose ``state/index/`` cannot be written, opened without
    writing a byte: ``mode=ro&immutable=1`` (no lock, ``-wal`` or ``-shm`` file). A
    non-empty write-ahead log is read when its ``-shm`` file is there to read it with
    (``mode=ro``); otherwise the connection says it may be ``behind``. Raises
    ``IndexUnavailable`` for a missing, empty, foreign, newer or unreadable index."""
    from pathlib import Path

    path = db_file(root)
    if not os.path.isfile(path):
        raise IndexUnavailable(
            f"the index {path} does not exist", hint="run 'ouro index rebuild' on a writable copy"
        )
    uri = Path(path).as_uri()
    wal = path + "-wal"
    behind = None
    conn: ReadOnlyIndex | None = None
    if os.path.isfile(wal) and os.path.getsize(wal) > 0:
        try:
            conn = _connect_ro(f"{uri}?mode=ro")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            if conn is not None:
                conn.close()
            conn = None
            behind = "its write-ahead log cannot be read on a disk ouro may not write"
    if conn is None:
        conn = _connect_ro(f"{uri}?mode=ro&immutable=1")
    conn.behind = behind
    try:
        version = _check_identity(conn, path, latest=SCHEMA_VERSION)
    except BaseException:
        conn.close()
        raise
    if version == 0:
        conn.close()
        raise IndexUnavailable(f"the index {path} is empty", hint="run 'ouro index rebuild'")
    return conn


def _connect_ro(target: str) -> ReadOnlyIndex:
    conn = sqlite3.connect(
        target, uri=True, isolation_level=None, check_same_thread=False, factory=ReadOnlyIndex
    )
    assert isinstance(conn, ReadOnlyIndex)
    return conn


def open_scratch(copy_of: sqlite3.Connection | None = None) -> sqlite3.Connection:
    """A scratch index, never saved (SQLite's private in-process database), at the
    current schema: a copy of ``copy_of`` (an index read from disk), else empty. A
    read-only bundle's searches sync it from the files."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    try:
        if copy_of is not None:
            copy_of.backup(conn)
        current = _check_identity(conn, ":memory:", latest=SCHEMA_VERSION)
        _migrate(conn, current)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: sqlite3.Connection, current: int) -> None:
    if current >= SCHEMA_VERSION:
        return
    steps = migrations()
    for version, name, sql in steps:
        if current >= version:
            continue
        with transaction(conn):
            # Re-read inside the write lock: another process may have just done it.
            if conn.execute("PRAGMA user_version").fetchone()[0] >= version:
                continue
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (version, name, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
            )
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {version}")


def _journal(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def _connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(
        target, timeout=BUSY_TIMEOUT_S, isolation_level=None, uri=uri, check_same_thread=False
    )
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return conn


def open_db(root: Root, *, create: bool = True) -> sqlite3.Connection:
    """Open (and if needed create and migrate) the index of the bundle at ``root``.

    With ``create=False`` a missing database raises ``IndexUnavailable`` and
    nothing is created; an existing one is opened read-only. Any damage (not a
    database, malformed, a folder in its place, unwritable) is an
    ``IndexUnavailable`` whose hint names ``ouro index rebuild``.
    """
    path = db_file(root)
    if create and not writable(root):
        raise read_only(root)
    try:
        return _open(root, path, create)
    except IndexUnavailable as exc:
        if transient(exc, path):  # e.g. a full disk, which SQLite calls an I/O error
            raise damaged(path, exc) from None
        raise
    except sqlite3.Error as exc:
        raise damaged(path, exc) from None
    except OSError as exc:
        raise damaged(path, exc) from None


def damaged(path: str, exc: BaseException) -> IndexUnavailable:
    """The error for an index that cannot be used as it is."""
    if transient(exc, path):
        if "locked" in str(exc) or "busy" in str(exc):
            return IndexUnavailable(
                f"the index {path} is busy ({exc})", hint="retry; another process is writing it"
            )
        from ouro.store.guard import mount_point

        mount = mount_point(path)
        return IndexUnavailable(
            f"the index {path} could not be written: disk full ({exc}); the files are unchanged",
            hint=f"free space on {mount}, then run 'ouro index sync'",
        )
    return IndexUnavailable(f"the index {path} cannot be used ({exc})", hint=REBUILD_HINT)


def transient(exc: BaseException, path: str | None = None) -> bool:
    """A failure of the moment (busy, disk full), not damage: never a reason to
    move the index aside. SQLite reports a full disk while opening as a "disk
    I/O error" (it cannot create the -shm file), so that counts as full when
    the file system at ``path`` has (almost) no space left."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    text = exc.message if isinstance(exc, IndexUnavailable) else str(exc)
    if not isinstance(exc, IndexUnavailable | sqlite3.OperationalError):
        return False
    if any(word in text for word in ("is busy", "disk full", "locked", "disk is full")):
        return True
    return "disk I/O error" in text and path is not None and _nearly_full(path)


def _nearly_full(path: str) -> bool:
    import shutil

    folder = os.path.dirname(path)
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    try:
        return shutil.disk_usage(folder or ".").free < (1 << 20)
    except OSError:
        return False


def inside(root: Root, path: str) -> bool:
    """Whether ``path`` resolves (symlinks followed) inside the bundle at ``root``:
    the index obeys the write rule of ``ouro.store`` too (docs/concepts.md)."""
    base = os.path.realpath(root)
    return os.path.realpath(path).startswith(base.rstrip(os.sep) + os.sep)


def _open(root: Root, path: str, create: bool) -> sqlite3.Connection:
    if create and not inside(root, path):
        raise IndexUnavailable(
            f"the index {path} resolves to {os.path.realpath(path)}, outside the bundle "
            "(through a symlink); ouro writes only inside its bundle",
            hint="replace the symlink under state/ with a real folder, then run "
            "'ouro index rebuild'",
        )
    if not create:
        if not os.path.isfile(path):
            raise IndexUnavailable(
                f"the index {path} does not exist yet", hint="run 'ouro index rebuild'"
            )
        conn = _connect(f"{db_path(root).as_uri()}?mode=ro", uri=True)
        try:
            version = _check_identity(conn, path, latest=SCHEMA_VERSION)
        except BaseException:
            conn.close()
            raise
        if version == 0:
            conn.close()
            raise IndexUnavailable(f"the index {path} is empty", hint="run 'ouro index rebuild'")
        return conn
    if not os.path.isfile(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = _connect(path)
    try:
        current = _check_identity(conn, path, latest=SCHEMA_VERSION)
        if current < SCHEMA_VERSION or _journal(conn) != "wal":
            # Creating or migrating: one process at a time (the switch to WAL
            # takes the whole file, and SQLite answers "locked" at once, without
            # waiting, to a second process doing the same), each checking again
            # once it holds the lock.
            from pathlib import Path

            from ouro.store.lock import FileLock

            locks = os.path.join(root, "state", "locks")
            os.makedirs(locks, exist_ok=True)
            with FileLock(Path(locks, "index-create.lock"), purpose="index creation"):
                current = _check_identity(conn, path, latest=SCHEMA_VERSION)
                if _journal(conn) != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                _migrate(conn, current)
        # The index is a cache rebuilt from files: durability across a power cut
        # is not worth an fsync per write-through (a damaged index is rebuilt).
        conn.execute("PRAGMA synchronous = OFF")
    except BaseException:
        conn.close()
        raise
    return conn


# --- the write-through's connection, kept per process --------------------------

#: bundle root -> (pid, identity of the files it was opened on, connection)
_WRITERS: dict[str, tuple[int, tuple[int, ...], sqlite3.Connection]] = {}
#: connections inherited across a fork: never used, and never closed in the
#: child (SQLite forbids carrying a connection over a fork)
_ORPHANS: list[sqlite3.Connection] = []
#: bundles whose write connection a process keeps (the least recently used goes)
WRITERS_KEPT = 4
_WRITERS_LOCK = _thread.allocate_lock()


def _identity(root: Root) -> tuple[int, ...] | None:
    """(dev, ino, mtime, size) of the database and (dev, ino) of its -wal and
    -shm files, None when the database is missing; raises ``ValueError`` when any of them, ``state/`` or
    ``state/index/`` is a symlink (the slow path refuses or follows it)."""
    import stat

    path = db_file(root)
    folder = os.path.dirname(path)
    for where in (os.path.dirname(folder), folder):
        if stat.S_ISLNK(os.lstat(where).st_mode):
            raise ValueError(where)
    out: list[int] = []
    for end in ("", "-wal", "-shm"):
        try:
            st = os.lstat(path + end)
        except (FileNotFoundError, NotADirectoryError):
            if not end:
                return None
            raise ValueError(path + end) from None
        if not stat.S_ISREG(st.st_mode):
            if not end and not stat.S_ISLNK(st.st_mode):
                return None
            raise ValueError(path + end)
        out += (st.st_dev, st.st_ino)
        if not end:  # a rewrite in place (the -wal holds this process's own writes)
            out += (st.st_mtime_ns, st.st_size)
    return tuple(out)


def _same_files(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether two ``_identity`` values name the same files (mtime and size aside)."""
    return len(a) == len(b) == 8 and a[:2] == b[:2] and a[4:] == b[4:]


def take_writer(root: Root) -> tuple[sqlite3.Connection, tuple[int, ...] | None] | None:
    """A write connection to the index of the bundle at ``root`` for one
    write-through, and what to hand to ``give_back`` with it; None when the
    database does not exist. Raises like ``open_db``.

    A long-lived process (``ouro mcp``) keeps one connection per bundle instead
    of opening the index on every write. It is used again only while the
    database, its -wal and its -shm files are the very files it was opened on
    (re-checked on every call: a rebuild that moved the index aside, a deleted
    or replaced file, or a symlink opens the index afresh, with every check of
    ``open_db``), while the bundle may be written, in the process that opened
    it, at the current schema, and outside any transaction. A connection in use
    is not in the cache: another thread opens its own."""
    key = os.fspath(root)
    with _WRITERS_LOCK:
        _drop_inherited()
        entry = _WRITERS.pop(key, None)
    try:
        seen = _identity(root)
    except ValueError:
        seen = ()
    except OSError:
        seen = ()
    if entry is not None:
        _owner, ident, conn = entry
        if seen and ident == seen and not conn.in_transaction and writable(root):
            try:
                if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
                    return conn, ident
            except sqlite3.Error:
                pass
        conn.close()
    if seen is None:
        return None
    if not os.path.isfile(db_file(root)):
        return None
    conn = open_db(root)
    try:
        after = _identity(root)
    except (OSError, ValueError):
        after = None
    return conn, after


def give_back(root: Root, conn: sqlite3.Connection, ident: tuple[int, ...] | None) -> None:
    """Return a ``take_writer`` connection after a write-through that ended well:
    kept for the next one (when it is outside a transaction and was opened on
    files it can be recognised by), else closed."""
    key = os.fspath(root)
    try:  # this process's own checkpoint may have changed the database file
        now = _identity(root)
    except (OSError, ValueError):
        now = None
    with _WRITERS_LOCK:
        _drop_inherited()
        if ident is None or now is None or not _same_files(ident, now):
            conn.close()
            return
        if conn.in_transaction or key in _WRITERS:
            conn.close()
            return
        ident = now
        _WRITERS[key] = (os.getpid(), ident, conn)
        while len(_WRITERS) > WRITERS_KEPT:
            _o, _i, oldest = _WRITERS.pop(next(iter(_WRITERS)))
            oldest.close()


def forget_writer(root: Root) -> None:
    """Close this process's kept write connection to the bundle at ``root``, if any
    (before its index folder is moved aside or dropped)."""
    with _WRITERS_LOCK:
        _drop_inherited()
        entry = _WRITERS.pop(os.fspath(root), None)
    if entry is not None:
        entry[2].close()


def _drop_inherited() -> None:
    """In a forked child, set the parent's connections aside (under the lock)."""
    pid = os.getpid()
    if any(owner != pid for owner, _i, _c in _WRITERS.values()):
        _ORPHANS.extend(conn for _o, _i, conn in _WRITERS.values())
        _WRITERS.clear()


def move_aside(root: Root) -> str | None:
    """Rename ``state/index/`` to ``state/index.damaged-<UTC time>/`` (kept, never
    deleted) so a new index can be built; returns its bundle-relative path.

    The whole folder moves: that works even when the folder is read-only or
    the database file immutable, where nothing inside could be renamed.
    """
    folder = os.path.dirname(db_file(root))
    forget_writer(root)
    if not os.path.lexists(folder):
        return None
    if not inside(root, os.path.join(os.path.dirname(folder), "x")):
        raise IndexUnavailable(
            f"{os.path.dirname(folder)} resolves outside the bundle (through a symlink); "
            "ouro will not move or write anything there",
            hint="replace the symlink with a real folder inside the bundle",
        )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name, n = f"index.damaged-{stamp}", 1
    while os.path.lexists(os.path.join(os.path.dirname(folder), name)):
        n += 1
        name = f"index.damaged-{stamp}-{n}"
    target = os.path.join(os.path.dirname(folder), name)
    try:
        os.rename(folder, target)
    except OSError as exc:
        from ouro.store.guard import storage_error

        raise storage_error(
            exc, folder, action="moving the damaged index aside", outcome="nothing was changed"
        ) from None
    return f"state/{name}"


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolls back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def stale_file(root: Root) -> str:
    return os.path.join(root, "state", "index", STALE_MARKER)


def stale_marker(root: Root) -> Path:
    from pathlib import Path

    return Path(stale_file(root))


def stale_reason(root: Root) -> str | None:
    """The last reason written to the STALE marker, or None when there is none.

    A marker that cannot be read (a folder in its place) counts as stale.
    """
    try:
        text = file_bytes(stale_file(root)).decode("utf-8", "replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"the STALE marker cannot be read ({exc.strerror}); run 'ouro index rebuild'"
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "marked stale"


def mark_stale(root: Root, reason: str) -> None:
    """Leave a marker that ``status`` and the next search see. Never raises."""
    marker = stale_file(root)
    if not inside(root, marker):
        return  # never write outside the bundle; status reads the outside index as unusable
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "a", encoding="utf-8") as handle:
            handle.write(reason.replace("\n", " ")[:500] + "\n")
    except OSError:
        pass  # nothing more we can do; the next full sync repairs everything anyway


def clear_stale(root: Root) -> None:
    """Remove the STALE marker; one that cannot be removed (a folder) stays, and
    the index keeps reading as stale until 'ouro index rebuild' moves it aside."""
    with suppress(OSError):
        os.unlink(stale_file(root))
