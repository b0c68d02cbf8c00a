"""Per-session injection fingerprints: ``state/hooks/<host>-<session>.json``.

One small JSON file per host session records what the model was last shown::

    {"schemaVersion": 1, "host": "claude", "sessionId": "…",
     "fingerprint": "sha256:…", "items": {"<item key>": "sha256:…"},
     "injectedAt": "…Z", "updatedAt": "…Z", "lastEvent": "UserPromptSubmit",
     "guideVersion": 1, "basis": {…}}

``guideVersion`` is the operating guide version this session was given
(``ouro.guide``); SessionStart gives it once per session (or the first
UserPromptSubmit of a session that had no SessionStart).

``basis`` is what that packet was computed from (``ouro.hooks.basis``): a
prompt whose basis is unchanged is silent without computing the packet.

``items`` maps each orientation-packet item key to the hash of its text; the
``fingerprint`` hashes that map. ``UserPromptSubmit`` compares the packet as
of now with it and injects only the items that are new or changed. The file
is runtime machinery (``state/``), written atomically; an unreadable one is
set aside as ``<name>.unreadable`` (never silently dropped) and replaced.

``items`` is written last (the other keys sorted before it), so a prompt that
needs only the basis parses the few hundred bytes before it
(``load(path, items=False)``) instead of the ~1,000 item hashes of a packet at a
year's scale; the items are read, and checked, when the packet is computed.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import CorruptFile
from ouro.store import jsonio
from ouro.store.bounded import file_bytes

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

STATE_DIR = "state/hooks"
SCHEMA_VERSION = 1
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def session_slug(session_id: str | None) -> str:
    """A file-name-safe stand-in for the host's session id."""
    if not session_id:
        return "unknown-session"
    if _SAFE.match(session_id):
        return session_id
    import hashlib  # rare (an id unfit for a file name): OpenSSL's start-up only then

    return "h-" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]


def state_path(bundle: Bundle, host: str, session_id: str | None) -> Path:
    return bundle.root / STATE_DIR / f"{host}-{session_slug(session_id)}.json"


def item_hashes(items: list[tuple[str, str]]) -> dict[str, str]:
    from ouro.models.hashing import content_hash

    return {key: content_hash(text) for key, text in items}


def fingerprint(hashes: dict[str, str]) -> str:
    # the bytes of orjson.dumps(hashes, option=OPT_SORT_KEYS), without its import
    text = json.dumps(hashes, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    from ouro.models.hashing import content_hash

    return content_hash(text.encode("utf-8"))


#: what separates the other keys from ``items``, written last (see ``save``)
_ITEMS = b',"items":'


def load(path: Path, *, items: bool = True) -> dict[str, Any] | None:
    """The saved state, ``None`` if there is none, ``CorruptFile`` if unreadable.

    ``items=False``: without ``items`` when the file has them last (as ``save``
    writes it), parsing only what comes before them; any other layout is read whole.
    """
    try:
        raw = file_bytes(path)  # a FIFO or a file past DOC_LIMIT: refused, never read
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CorruptFile(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not items:
        head = _head(raw)
        if head is not None:
            return head
    try:
        data = jsonio.loads(raw)
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(f"{path}: not valid JSON ({exc})") from None
    if (
        not isinstance(data, dict)
        or data.get("schemaVersion") != SCHEMA_VERSION
        or not isinstance(data.get("items"), dict)
    ):
        raise CorruptFile(f"{path}: not a version-{SCHEMA_VERSION} hook state object")
    return data


def _head(raw: bytes) -> dict[str, Any] | None:
    """The keys before ``items`` when ``items`` is the object's last key, else None.

    A ``"`` inside a JSON string is always escaped, so ``,"items":`` in the bytes
    is a key; cut at one nested deeper, the head is not a balanced object and
    fails to parse (then the caller reads the file whole)."""
    at = raw.find(_ITEMS)
    if at < 0:
        return None
    try:
        head = jsonio.loads(raw[:at] + b"}")
    except jsonio.JSONDecodeError:
        return None
    if not isinstance(head, dict) or head.get("schemaVersion") != SCHEMA_VERSION:
        return None  # the keys before items are not all of them (an older layout)
    return head


def set_aside(path: Path) -> Path:
    """Move an unreadable state file out of the way (kept for inspection)."""
    target = path.with_name(path.name + ".unreadable")
    os.replace(path, target)
    return target


def save(
    path: Path,
    *,
    host: str,
    session_id: str | None,
    hashes: dict[str, str],
    event: str,
    injected: bool,
    previous: dict[str, Any] | None,
    guide: bool = False,
    basis: dict[str, Any] | None = None,
) -> None:
    """``guide``: this event gave the session the operating guide (as SessionStart does)."""
    from ouro.models.clock import utc_now_iso

    now = utc_now_iso()
    injected_at = now if injected else (previous or {}).get("injectedAt")
    # compact, keys sorted but ``items`` last (``load(items=False)`` stops before
    # them): orjson's bytes for each part, without its import (a prompt that saves
    # a new basis is a hot hook too)
    record = {
        "schemaVersion": SCHEMA_VERSION,
        "host": host,
        "sessionId": session_id,
        "fingerprint": fingerprint(hashes),
        "injectedAt": injected_at,
        "updatedAt": now,
        "lastEvent": event,
        "guideVersion": guide_version("SessionStart" if guide else event, previous),
        "basis": basis,
    }
    from ouro.store.atomic import atomic_write_bytes

    head = jsonio.dumps(record, sort_keys=True)
    atomic_write_bytes(path, head[:-1] + _ITEMS + jsonio.dumps(hashes, sort_keys=True) + b"}\n")


def guide_version(event: str, previous: dict[str, Any] | None) -> int | None:
    """The guide version this session holds: SessionStart gives the current one."""
    if event == "SessionStart":
        from ouro.guide import GUIDE_VERSION

        return GUIDE_VERSION
    value = (previous or {}).get("guideVersion")
    return value if isinstance(value, int) else None


def changed_keys(previous: dict[str, str], current: dict[str, str]) -> tuple[list[str], list[str]]:
    """(keys new or changed since ``previous``, keys gone since ``previous``)."""
    changed = [k for k, h in current.items() if previous.get(k) != h]
    gone = [k for k in previous if k not in current]
    return changed, gone
