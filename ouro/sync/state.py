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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, OuroError
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json

DEFAULT_INTERVAL = "30m"
CONFLICTS_DIR = "arc/sync/conflicts"
#: How long a sync waits for another sync of the same bundle to finish.
SYNC_LOCK_TIMEOUT = 120.0


def sync_dir(bundle: Bundle) -> Path:
    return bundle.state / "sync"


def config_path(bundle: Bundle) -> Path:
    return sync_dir(bundle) / "config.json"


def status_path(bundle: Bundle) -> Path:
    return sync_dir(bundle) / "status.json"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = jsonio.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, jsonio.JSONDecodeError) as exc:
        raise CorruptFile(
            f"{path}: unreadable ({exc})",
            hint="run 'ouro sync init' again to rewrite the sync settings",
        ) from None
    if not isinstance(data, dict):
        raise CorruptFile(f"{path}: must be a JSON object", hint="run 'ouro sync init' again")
    return data


def read_config(bundle: Bundle) -> dict[str, Any] | None:
    return _read(config_path(bundle))


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
    return _read(status_path(bundle))


def write_status(bundle: Bundle, status: dict[str, Any]) -> None:
    atomic_write_json(status_path(bundle), status)


def conflicts_dir(bundle: Bundle) -> Path:
    return bundle.root / CONFLICTS_DIR


def open_conflicts(bundle: Bundle) -> tuple[list[dict[str, Any]], list[str]]:
    """Unresolved conflict records (oldest first) and unreadable record files. Pure."""
    folder = conflicts_dir(bundle)
    found: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        names = sorted(n for n in folder.iterdir() if n.suffix == ".json")
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{CONFLICTS_DIR}: unreadable ({exc.strerror})"]
    for path in names:
        try:
            record = jsonio.loads(path.read_bytes())
        except (OSError, jsonio.JSONDecodeError) as exc:
            problems.append(f"{CONFLICTS_DIR}/{path.name}: unreadable ({exc})")
            continue
        if isinstance(record, dict) and not record.get("resolved"):
            found.append(record)
    found.sort(key=lambda r: (str(r.get("detectedAt")), str(r.get("id"))))
    return found, problems
