"""The declared checks: every command a claim or a task names as its ``check``.

File: ``state/cache/declared-checks.json`` (machine-local; the derived registry
lists it as ``declared-checks``)::

    {"schemaVersion": 1, "commands": ["make test", ...],
     "sources": {"arc/claims": "size:mtime:ctime:ino", "desk": "…",
                 "desk/<track>": "…", "state/cache/desk-heads.bin": "…"}}

What it is for: the ``PostToolUse`` hook runs after every shell command a host
runs, and most are no declared check. ``commands`` (trimmed) is a superset of
the checks the hook matches (every claim's, every task's, whatever its status),
so a command not in it is no declared check and the hook is done after a few
``stat`` calls; a command in it is matched against the claim and task files
themselves, as before. The list is never what decides a receipt, only that
there is none to look for.

Fresh when every source still has the stamp (``ouro.store.stamp``, with its
racy rule) it had when the list was built: the claims folder (a claim is
written by replacing its file, which changes the folder), the desk folder and
each track folder (a task added or removed), and the desk heads file (every
Desk write refreshes it, and any read that finds a task changed by hand heals
it: ``ouro.desk.heads``). A task whose ``task.md`` is edited in place outside
ouro is therefore seen once any ouro command has read the desk (``ouro
orient``, the ``SessionStart`` hook), not at once. A stamp taken within the
racy window is not kept, so the next reader builds the list again. The list
is stamped before its sources are read: a source that changes while it is
read makes the next reader build it again.

``declared(bundle)`` is the read: the list when fresh, else built, saved
(atomically, under ``state/locks/declared-checks.lock``, skipped while another
process holds it) and returned. A read may rebuild this cache; it changes
nothing else (the heads may heal, as any heads read does).
"""

from __future__ import annotations

import os

from ouro.store import jsonio
from ouro.store import stamp as stamps
from ouro.store.bounded import open_regular
from ouro.store.guard import Inside, names_inside

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ouro.bundle import Bundle
    from ouro.derived import Check

PATH = "state/cache/declared-checks.json"
SCHEMA_VERSION = 1
CLAIMS = "arc/claims"
DESK = "desk"
HEADS = "state/cache/desk-heads.bin"
#: a claim file larger than this is not read for its check (claims are small)
CLAIM_LIMIT = 1 << 22


def _load(bundle: Bundle) -> dict[str, object] | None:
    try:
        with open(open_regular(os.path.join(bundle.root, PATH)), "rb") as handle:
            data = jsonio.loads(handle.read(1 << 24))
    except (OSError, jsonio.JSONDecodeError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("schemaVersion") != SCHEMA_VERSION
        or not isinstance(data.get("commands"), list)
        or not isinstance(data.get("sources"), dict)
    ):
        return None
    return data


def _stale(bundle: Bundle, data: dict[str, object]) -> str | None:
    """Why ``data`` is not fresh, or None when every source has its stamp."""
    sources = data["sources"]
    assert isinstance(sources, dict)
    for name in (CLAIMS, DESK, HEADS):
        if name not in sources:
            return f"{name} was not stamped"
    root = os.fspath(bundle.root)
    for name, text in sources.items():
        known = stamps.parse(text)
        if known is None:
            return f"{name} had changed within the racy window when it was built"
        if stamps.stat(os.path.join(root, name)) != known:
            return f"{name} changed since it was built"
    return None


def _stamp_sources(bundle: Bundle) -> dict[str, str]:
    """The stamp text of every source as of now (``-`` when not trusted)."""
    root = os.fspath(bundle.root)
    now = None
    names = [CLAIMS, DESK, HEADS]
    try:
        with os.scandir(os.path.join(root, DESK)) as entries:
            names += sorted(
                f"{DESK}/{e.name}"
                for e in entries
                if e.is_dir() and not e.name.startswith(("_", "."))
            )
    except OSError:
        pass
    out = {}
    for name in names:
        try:
            st = os.stat(os.path.join(root, name))
        except OSError:
            st = None
        out[name] = stamps.text(stamps.trusted(st, now))
    return out


def _claim_checks(bundle: Bundle) -> set[str]:
    folder = os.path.join(bundle.root, CLAIMS)
    try:  # none behind a symlink leading outside the bundle (claim list names them)
        if Inside(bundle.root).folder(folder) is None:
            return set()
        names = names_inside(folder, lambda n: n.endswith(".json"), None)
    except OSError:
        return set()
    out = set()
    for name in names:
        try:
            with open(open_regular(os.path.join(folder, name)), "rb") as handle:
                raw = handle.read(CLAIM_LIMIT)
        except OSError:
            continue
        if b'"check"' not in raw:
            continue
        try:
            data = jsonio.loads(raw)
        except jsonio.JSONDecodeError:
            continue  # unreadable claims are reported by claim list, not here
        check = data.get("check") if isinstance(data, dict) else None
        if isinstance(check, str) and check.strip():
            out.add(check.strip())
    return out


def _task_checks(bundle: Bundle) -> set[str]:
    from ouro.desk.heads import desk_heads

    return {
        row[13].strip()
        for row in desk_heads(bundle).rows(ordered=False)
        if isinstance(row[13], str) and row[13].strip()
    }


def build(bundle: Bundle) -> dict[str, object]:
    """The list as of now (the sources stamped first, then read)."""
    sources = _stamp_sources(bundle)
    commands = sorted(_claim_checks(bundle) | _task_checks(bundle))
    return {"schemaVersion": SCHEMA_VERSION, "commands": commands, "sources": sources}


def save(bundle: Bundle, data: dict[str, object]) -> None:
    """Write ``data`` (atomically, under its lock; skipped while another holds it)."""
    from ouro.store.atomic import atomic_write_bytes
    from ouro.store.lock import FileLock

    lock = FileLock(bundle.lock_path("declared-checks"), purpose="declared checks")
    if not lock.try_acquire():
        return
    try:
        path = bundle.root / PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, jsonio.dumps(data, sort_keys=True) + b"\n")
    finally:
        lock.release()


def declared(bundle: Bundle) -> frozenset[str]:
    """Every declared check command (trimmed): the saved list when fresh, else
    built now and saved (a failure to save is silent: the next read builds again)."""
    data = _load(bundle)
    if data is None or _stale(bundle, data) is not None:
        data = build(bundle)
        import contextlib

        from ouro.errors import OuroError

        with contextlib.suppress(OSError, OuroError):
            save(bundle, data)
    commands = data["commands"]
    assert isinstance(commands, list)
    return frozenset(c for c in commands if isinstance(c, str))


def check(bundle: Bundle) -> Check:
    """fresh | missing | stale (with why), for ``ouro index status``. Pure."""
    from ouro.derived import Check

    if not (bundle.root / PATH).exists():
        return Check("missing", "the next PostToolUse hook builds it")
    data = _load(bundle)
    if data is None:
        return Check(
            "stale", "unreadable or of another ouro; the next PostToolUse hook rebuilds it"
        )
    why = _stale(bundle, data)
    return Check("fresh") if why is None else Check("stale", why)


def rebuild(bundle: Bundle) -> None:
    save(bundle, build(bundle))
