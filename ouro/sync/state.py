"""Machine-local sync settings and outcome: ``state/sync/`` (never committed).

- ``state/sync/config.json``: ``{remote, branch, interval, configuredAt}``,
  written by ``ouro sync init``. Its presence is what "sync is configured"
  means: the sentinel stops treating uncommitted files as a reason to watch
  and watches the sync instead.
- ``state/sync/status.json``: the last attempt ``{lastAttemptAt, lastResult
  ok|failed, lastSuccessAt, lastError, head, pushed, pulled, conflicts}``,
  replaced atomically at the end of every ``ouro sync``.

``arc/sync/conflicts/<cf-id>.json`` (written by ``ouro.sync.conflicts``,
committed, so every machine sees them) are listed by ``open_conflicts``.

The two state files live under ``state/``, which the bundle's ``.gitignore`` keeps out of
git: each machine has its own remote settings and its own sync history.
Reads are pure; a missing file reads as None, an unreadable one raises
``CorruptFile`` naming it.

Every file sync reads from the bundle is read by ``read_inside``: a regular
file inside the bundle, opened without blocking (a FIFO, a device, a socket or
a folder is refused before a byte is read, so it can never hang a sync or a
status), not through a symlink leading outside the bundle (refused: not a byte
of what it names is read), and at most ``limit`` bytes. Each refusal is an
``OSError`` whose ``strerror`` says why, so a caller reports it like any
unreadable file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, OuroError
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import open_regular
from ouro.store.guard import Inside

DEFAULT_INTERVAL = "30m"
CONFLICTS_DIR = "arc/sync/conflicts"
#: How long a sync waits for another sync of the same bundle to finish.
SYNC_LOCK_TIMEOUT = 120.0


#: the most a sync setting or status file, or a policy file, may hold
STATE_LIMIT = 1 << 20
#: the most a conflict record may hold (three versions of one file)
RECORD_LIMIT = 64 << 20


class OutsideRead(OSError):
    """A path leads outside the bundle through a symlink: never read."""


class TooLarge(OSError):
    """A file holds more than its reader's limit: not read."""


def read_inside(root: Path, path: Path, limit: int | None) -> bytes:
    """The bytes of the regular file ``path`` in the bundle at ``root`` (see the
    module docstring); ``limit`` None: a log, read whole (its lines are merged).

    Raises ``FileNotFoundError`` when missing, ``NotRegularFile`` (a FIFO …),
    ``OutsideRead`` or ``TooLarge``, each an ``OSError`` naming why."""
    if not Inside(root).path(path):
        # 18: EXDEV (the link crosses out of the bundle)
        raise OutsideRead(
            18, "leads outside the bundle through a symlink; it was not read", str(path)
        )
    fd = open_regular(path)
    try:
        if limit is None:
            with open(fd, "rb", closefd=False) as handle:
                return handle.read()
        parts: list[bytes] = []
        taken = 0
        while taken <= limit:
            chunk = os.read(fd, min(1 << 16, limit + 1 - taken))
            if not chunk:
                return b"".join(parts)
            parts.append(chunk)
            taken += len(chunk)
        # 27: EFBIG
        raise TooLarge(27, f"more than the limit of {limit:,} bytes; not read", str(path))
    finally:
        os.close(fd)


def why(exc: OSError) -> str:
    """What an ``OSError`` of ``read_inside`` says (its ``strerror``, else itself)."""
    return str(exc.strerror or exc)


def sync_dir(bundle: Bundle) -> Path:
    return bundle.state / "sync"


def config_path(bundle: Bundle) -> Path:
    return sync_dir(bundle) / "config.json"


def status_path(bundle: Bundle) -> Path:
    return sync_dir(bundle) / "status.json"


def _read(bundle: Bundle, path: Path) -> dict[str, Any] | None:
    try:
        data = jsonio.loads(read_inside(bundle.root, path, STATE_LIMIT))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptFile(
            f"{path}: unreadable ({why(exc)})",
            hint="run 'ouro sync init' again to rewrite the sync settings",
        ) from None
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(
            f"{path}: unreadable ({exc})",
            hint="run 'ouro sync init' again to rewrite the sync settings",
        ) from None
    if not isinstance(data, dict):
        raise CorruptFile(f"{path}: must be a JSON object", hint="run 'ouro sync init' again")
    return data


def read_config(bundle: Bundle) -> dict[str, Any] | None:
    return _read(bundle, config_path(bundle))


def require_config(bundle: Bundle) -> dict[str, Any]:
    config = read_config(bundle)
    if config is None:
        raise OuroError(
            f"sync is not configured for {bundle.root}",
            hint="run 'ouro sync init --remote URL' first",
        )
    return config


def write_config(bundle: Bundle, config: dict[str, Any]) -> None:
    atomic_write_json(config_path(bundle), config)


def read_status(bundle: Bundle) -> dict[str, Any] | None:
    return _read(bundle, status_path(bundle))


def write_status(bundle: Bundle, status: dict[str, Any]) -> None:
    atomic_write_json(status_path(bundle), status)


def conflicts_dir(bundle: Bundle) -> Path:
    return bundle.root / CONFLICTS_DIR


def open_conflicts(bundle: Bundle) -> tuple[list[dict[str, Any]], list[str]]:
    """Unresolved conflict records (oldest first) and unreadable record files. Pure.

    A record that is a FIFO, a device or a folder, or a symlink leading outside
    the bundle (the folder itself too), is reported, never opened."""
    folder = conflicts_dir(bundle)
    found: list[dict[str, Any]] = []
    problems: list[str] = []
    inside = Inside(bundle.root)
    try:
        entries = inside.entries(folder, problems, lambda name: name.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    except OSError as exc:
        return [], [f"{CONFLICTS_DIR}: unreadable ({exc.strerror})"]
    for entry in sorted(entries, key=lambda e: e.name):
        try:
            record = jsonio.loads(read_inside(bundle.root, Path(entry.path), RECORD_LIMIT))
        except OSError as exc:
            problems.append(f"{CONFLICTS_DIR}/{entry.name}: unreadable ({why(exc)})")
            continue
        except jsonio.JSONDecodeError as exc:
            problems.append(f"{CONFLICTS_DIR}/{entry.name}: unreadable ({exc})")
            continue
        if isinstance(record, dict) and not record.get("resolved"):
            found.append(record)
    found.sort(key=lambda r: (str(r.get("detectedAt")), str(r.get("id"))))
    return found, problems
