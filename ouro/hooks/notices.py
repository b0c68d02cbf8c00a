"""Which host sessions were already told that ouro's hooks cannot work.

A failing hook shows its one-line notice once per host session, not at every
prompt. Whether a session was told is a marker file::

    $XDG_STATE_HOME/ouro/hook-notices/<host>-<session>   (default ~/.local/state/…)

It lives outside any bundle because the usual failure is that there is no
bundle. The marker is created with ``O_CREAT | O_EXCL``, so of two hooks
racing in one session exactly one shows the notice. Markers older than
``KEEP_DAYS`` are removed when a new one is made. When the folder cannot be
written the notice is shown anyway: repeating it is better than hiding it.
A session whose id is unknown (unreadable stdin) is always told.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

from ouro.hooks.state import session_slug

KEEP_DAYS = 7


def notice_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_STATE_HOME") or os.path.join(
        env.get("HOME") or os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "ouro" / "hook-notices"


def first_time(host: str, session_id: str | None, env: Mapping[str, str]) -> bool:
    """True (and the session marked) if this session was not told yet."""
    if not session_id:
        return True
    folder = notice_dir(env)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / f"{host}-{session_slug(session_id)}", os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    except OSError:
        return True
    os.close(fd)
    _prune(folder)
    return True


def _prune(folder: Path) -> None:
    cutoff = time.time() - KEEP_DAYS * 86400
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        try:
            if entry.stat().st_mtime < cutoff:
                entry.unlink()
        except OSError:
            continue  # another hook pruned it, or it is not ours to remove
