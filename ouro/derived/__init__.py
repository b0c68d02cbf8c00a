"""Derived state: one registry of every file ouro derives from the record.

Contract (docs/concepts.md, "Derived state"):

- ``ARTIFACTS`` lists each derived file once (``ouro.derived.artifacts``): its
  path, what it is derived from, whether it is a machine-local cache under
  ``state/`` (``local``), how it is checked (``check`` -> fresh | stale |
  missing | unavailable | not installed, with the reason), how it is kept
  current after a write (``refresh``), and how it is rebuilt (``rebuild``).
  Freshness is decided with the one file stamp and the one append-log cursor
  (``ouro.store.stamp``, ``ouro.store.cursor``).
- ``after_write(bundle, touched)`` is what every write calls once its files
  are written: each artifact whose sources a touched path falls under is
  refreshed. It never raises: a derived file that cannot be refreshed is left
  for its readers to detect (they validate it) and for ``ouro index sync``.
- ``sync(bundle)`` (``ouro index sync``, and sync's regenerate step) brings
  every artifact that is not fresh up to date; ``rebuild(bundle)`` (``ouro
  index rebuild``) rebuilds every rebuildable one from the files.
- ``status(bundle)`` is one line per artifact (``ouro index status``). Pure.
- Reads never change the record. A read that finds a ``local`` cache missing
  or stale may rebuild it, atomically and under its lock (desk heads, the
  index, vectors); nothing a read does touches arc/, desk/, habits/ or
  bundle.json -- the arc checkpoint is refreshed by the recorder's writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from ouro.tuples import NamedTuple

if TYPE_CHECKING:
    from ouro.bundle import Bundle


class Check(NamedTuple):
    """What ``check`` found: ``state`` and, unless fresh, why."""

    state: str  # fresh | stale | missing | unavailable | not installed
    reason: str | None = None


class Artifact(NamedTuple):
    name: str
    #: the derived file (bundle-relative)
    path: str
    #: what it is derived from (bundle-relative paths or folders)
    sources: tuple[str, ...]
    #: a machine-local cache under state/ (a read may heal it)
    local: bool
    check: Callable[[Bundle], Check]
    #: after a write that touched these paths (None: its writer keeps it current)
    refresh: Callable[[Bundle, list[Path]], None] | None
    #: rebuild from the files (None: not rebuildable from the files alone)
    rebuild: Callable[[Bundle], Any] | None
    #: what ``ouro index sync`` does to it when it is not fresh (None: ``rebuild``)
    sync: Callable[[Bundle], Any] | None = None


def registry() -> tuple[Artifact, ...]:
    from ouro.derived.artifacts import ARTIFACTS

    return ARTIFACTS


def find(name: str) -> Artifact:
    for artifact in registry():
        if artifact.name == name:
            return artifact
    raise KeyError(name)


def _concerns(bundle: Bundle, artifact: Artifact, touched: list[Path]) -> bool:
    for raw in touched:
        path = Path(raw)
        try:
            rel = (path if path.is_absolute() else bundle.root / path).relative_to(bundle.root)
        except ValueError:
            continue
        text = rel.as_posix()
        for source in artifact.sources:
            if (
                text == source
                or text.startswith(source.rstrip("/") + "/")
                or (
                    source.startswith(text.rstrip("/") + "/")  # a folder above a source
                )
            ):
                return True
    return False


def after_write(bundle: Bundle, touched: Iterable[Path]) -> list[str]:
    """Keep every derived file current after a write that touched these paths.

    Call it once the write's files are in place. Never raises; returns
    warnings (also sent to ``ouro.notices``) for artifacts it could not refresh."""
    from ouro.errors import OuroError
    from ouro.notices import warn

    paths = [Path(p) for p in touched]
    if not paths:
        return []
    warnings: list[str] = []
    for artifact in registry():
        if artifact.refresh is None or not _concerns(bundle, artifact, paths):
            continue
        try:
            artifact.refresh(bundle, paths)
        except (OSError, OuroError) as exc:
            text = f"written; {artifact.path} was not refreshed ({exc}) -- 'ouro index sync' repairs it"
            warn(text)
            warnings.append(text)
    return warnings


def status(bundle: Bundle, *, skip: Iterable[str] = ()) -> list[dict[str, Any]]:
    """One entry per artifact: name, path, state, reason, local. Writes nothing.
    ``skip``: artifacts the caller reports itself (not checked)."""
    skipped = set(skip)
    out = []
    for artifact in registry():
        if artifact.name in skipped:
            continue
        found = artifact.check(bundle)
        entry: dict[str, Any] = {
            "name": artifact.name,
            "path": artifact.path,
            "state": found.state,
            "local": artifact.local,
        }
        if found.reason:
            entry["reason"] = found.reason
        out.append(entry)
    return out


def sync(bundle: Bundle, *, skip: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Bring every artifact that is not fresh up to date (``ouro index sync``).

    Returns what was done to each: ``{"name", "was", "action"}``. ``skip``:
    artifacts the caller brings up to date itself (the index CLI runs the
    index's own sync with progress)."""
    skipped = set(skip)
    done = []
    for artifact in registry():
        if artifact.name in skipped:
            continue
        if artifact.sync is not None:  # cheap when nothing changed: always run
            artifact.sync(bundle)
            done.append({"name": artifact.name, "action": "synced"})
            continue
        found = artifact.check(bundle)
        if found.state in ("fresh", "not installed") or artifact.rebuild is None:
            continue
        artifact.rebuild(bundle)
        done.append({"name": artifact.name, "was": found.state, "action": "rebuilt"})
    return done


def rebuild(bundle: Bundle, *, skip: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Rebuild from the files (``ouro index rebuild``): every machine-local cache,
    and each derived file of the record (entities.json, the notes manifest, the
    checkpoint) that is not fresh -- a current one is left as it is."""
    skipped = set(skip)
    done = []
    for artifact in registry():
        if artifact.name in skipped or artifact.rebuild is None:
            continue
        found = artifact.check(bundle)
        if found.state == "not installed" or (not artifact.local and found.state == "fresh"):
            continue
        artifact.rebuild(bundle)
        done.append({"name": artifact.name, "was": found.state, "action": "rebuilt"})
    return done


def regenerate(
    bundle: Bundle, progress: Callable[[str], None] | None = None
) -> list[dict[str, Any]]:
    """After a merge (``ouro sync``, ``ouro sync clone``): rebuild every derived
    file of the record whatever its check says (merged bytes are never trusted),
    then bring the machine-local caches up to date (the index only if this
    machine has built one)."""
    from ouro.index import db

    done = []
    for artifact in registry():
        if artifact.local or artifact.rebuild is None:
            continue
        artifact.rebuild(bundle)
        done.append({"name": artifact.name, "action": "rebuilt"})
    for artifact in registry():
        if not artifact.local:
            continue
        if artifact.name in ("index", "vectors") and not Path(db.db_file(bundle.root)).exists():
            continue
        if artifact.name == "index" and progress is not None:
            progress("catching the index up")
        action = artifact.sync or artifact.rebuild
        if action is None or artifact.name == "vectors":
            continue  # vectors: the next search by meaning, or 'ouro index sync'
        action(bundle)
        done.append({"name": artifact.name, "action": "synced"})
    return done


def index_status(root: str | Path) -> dict[str, Any]:
    """``ouro index status``: the index's own status plus one line per derived file."""
    from ouro.bundle import Bundle
    from ouro.index.state import index_status as of_index

    result = of_index(str(root))
    result["derived"] = status(Bundle(Path(root)), skip=("index",))  # checked once, above
    return result


__all__ = [
    "Artifact",
    "Check",
    "after_write",
    "find",
    "index_status",
    "rebuild",
    "regenerate",
    "registry",
    "status",
    "sync",
]
