"""The library: ``import ouro; b = ouro.open()``; every front end calls it.

``ouro.open(path=None)`` finds a bundle the way the CLI does (``--bundle``,
``$OURO_BUNDLE``, a ``.ouro`` pointer, a ``bundle.json`` above, the one
``*.ouro`` folder here) and returns a ``Bundle`` whose namespaces follow the
CLI paths: ``ouro diary write`` is ``b.diary.write(text, about=[...])``,
``ouro desk task add`` is ``b.desk.task.add(track, title, ...)``. Keyword
arguments are the CLI options in snake_case; a result is the dict ``--json``
prints. Each method is the verb's one home: it validates its inputs (``ouro.spec``),
writes, keeps the derived files current and returns its warnings under
``"warnings"``.

``call(name, bundle, args)`` is the one dispatcher by tool name (the MCP
server, the hooks and the workbench use it): it finds the tool in the registry
(``ouro.registry``), enforces a habit session's tool policy, and calls the method.

See docs/python-api.md.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path

from ouro.spec import P, verb

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Annotated, Any

    from ouro.api.arc import Arc, Claim, Obligation
    from ouro.api.config import Config
    from ouro.api.desk import Desk
    from ouro.api.habits import Habits, Surface
    from ouro.api.index import Index
    from ouro.api.record import Diary, Facts, Notes, Record
    from ouro.api.sentinel import Sentinel
    from ouro.api.sync import Sync
    from ouro.api.talk import Lock, Message
    from ouro.bundle import Bundle as Folder

__all__ = ["Bundle", "call", "init", "open"]

DEFAULT_BUDGET = 2500


def _drill_names() -> tuple[str, ...]:
    from ouro.drills import DRILL_NAMES

    return tuple(DRILL_NAMES)


class Bundle:
    """One open bundle. ``folder`` is the low-level ``ouro.bundle.Bundle``
    (paths and locators); the namespaces are created on first use."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder

    def __repr__(self) -> str:
        return f"ouro.Bundle({str(self.folder.root)!r})"

    @property
    def root(self) -> Path:
        return self.folder.root

    # --- namespaces (the CLI's command groups) ---------------------------------
    @functools.cached_property
    def arc(self) -> Arc:
        from ouro.api.arc import Arc

        return Arc(self)

    @functools.cached_property
    def claim(self) -> Claim:
        from ouro.api.arc import Claim

        return Claim(self)

    @functools.cached_property
    def obligation(self) -> Obligation:
        from ouro.api.arc import Obligation

        return Obligation(self)

    @functools.cached_property
    def desk(self) -> Desk:
        from ouro.api.desk import Desk

        return Desk(self)

    @functools.cached_property
    def diary(self) -> Diary:
        from ouro.api.record import Diary

        return Diary(self)

    @functools.cached_property
    def facts(self) -> Facts:
        from ouro.api.record import Facts

        return Facts(self)

    @functools.cached_property
    def notes(self) -> Notes:
        from ouro.api.record import Notes

        return Notes(self)

    @functools.cached_property
    def record(self) -> Record:
        from ouro.api.record import Record

        return Record(self)

    @functools.cached_property
    def lock(self) -> Lock:
        from ouro.api.talk import Lock

        return Lock(self)

    @functools.cached_property
    def message(self) -> Message:
        from ouro.api.talk import Message

        return Message(self)

    @functools.cached_property
    def sentinel(self) -> Sentinel:
        from ouro.api.sentinel import Sentinel

        return Sentinel(self)

    @functools.cached_property
    def habits(self) -> Habits:
        from ouro.api.habits import Habits

        return Habits(self)

    @functools.cached_property
    def surface(self) -> Surface:
        from ouro.api.habits import Surface

        return Surface(self)

    @functools.cached_property
    def index(self) -> Index:
        from ouro.api.index import Index

        return Index(self)

    @functools.cached_property
    def sync(self) -> Sync:
        from ouro.api.sync import Sync

        return Sync(self)

    @functools.cached_property
    def config(self) -> Config:
        from ouro.api.config import Config

        return Config(self)

    # --- top-level verbs -------------------------------------------------------
    @verb
    def info(self) -> dict[str, Any]:
        """Describe the bundle: its path, agent, layout version, how many files each
        area holds, and the state of the search index."""
        from ouro.info import AREAS, count_files, index_state

        folder = self.folder
        meta = folder.read_meta()
        return {
            "bundle": str(folder.root),
            "agent": meta.get("agent"),
            "layoutVersion": meta.get("layoutVersion"),
            "createdAt": meta.get("createdAt"),
            "files": {area: count_files(folder.root / area) for area in AREAS},
            "index": index_state(folder),
        }

    @verb
    def orient(
        self,
        *,
        budget: Annotated[int, P("Most characters the packet may take.", min=200)] = (
            DEFAULT_BUDGET
        ),
    ) -> dict[str, Any]:
        """The start-of-turn packet: ask, next safe action, the facts, notes and lessons
        they point at, blockers, gaps, obligations, unverified claims, Desk work and
        lessons, unread message counts (bodies: message_read), each with its locator,
        within a character budget. Writes nothing."""
        from ouro.orient import build_packet

        return build_packet(self.folder, budget=budget).to_json()

    @verb
    def drill(
        self,
        names: Annotated[
            list[str],
            P("a drill to run (default: all of them)", choices=_drill_names),
        ] = [],
    ) -> dict[str, Any]:
        """Run recovery drills (erase, crash-after-append, crash-before-index, truncate,
        secrets, unknown-not-zero, evidence-freshness, edited-by-hand), each on a
        temporary copy of the bundle, then record one sentinel receipt with the
        results. Fails (exit 1) naming each broken guarantee and where to look."""
        from ouro import progress
        from ouro.api.sentinel import summary
        from ouro.drills import run_drills
        from ouro.orient import build_packet
        from ouro.sentinel.receipts import refresh

        folder = self.folder
        results = run_drills(folder, names, progress.counter("drills", "done"))
        written = refresh(folder, orient=build_packet, trigger="drill", drills=results)
        failed = [r["name"] for r in results if r["status"] != "pass"]
        return {
            "ok": not failed,
            "passed": [r["name"] for r in results if r["status"] == "pass"],
            "failed": failed,
            "drills": results,
            "receipt": summary(written),
        }


def open(
    path: str | os.PathLike[str] | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Bundle:
    """The bundle at ``path``, or (``path`` None) the one the CLI would find from
    ``cwd`` (default: the current folder) and ``env`` (default: ``os.environ``)."""
    from ouro.bundle import Bundle as Folder

    here = Path(cwd) if cwd is not None else None
    return Bundle(Folder.locate(None if path is None else os.fspath(path), env=env, cwd=here))


def init(path: str | os.PathLike[str], *, agent: str | None = None, repair: bool = False) -> Bundle:
    """Create a new bundle at ``path`` (a new or empty folder) and open it; with
    ``repair``, mend the bundle.json of the bundle there instead (``ouro init
    --repair``: only missing or invalid fields change) and open it."""
    from ouro.bundle import Bundle as Folder

    if repair:
        Folder.repair(os.fspath(path), agent=agent)
        return open(path)
    return Bundle(Folder.init(os.fspath(path), agent=agent))


def call(
    name: str, bundle: Bundle | Folder, args: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Run the tool ``name`` (its MCP name, ``"diary_write"``) on ``bundle`` with
    ``args`` by name: the one dispatcher of the front ends. Inside a habit
    session the session's tool policy decides first (``ouro.habits.policy``)."""
    from ouro.bundle import Bundle as Folder
    from ouro.registry import find, name_of

    tool = find(name)
    opened = Bundle(bundle) if isinstance(bundle, Folder) else bundle
    if "OURO_DENIED_TOOLS" in os.environ or "OURO_GRANTED_TOOLS" in os.environ:
        from ouro.habits.policy import enforce

        enforce(name_of(tool), opened.folder)
    target: Any = opened
    for part in tool.path:
        target = getattr(target, part.replace("-", "_"))
    if args is None:
        args = {}
    if not isinstance(args, Mapping) or any(not isinstance(k, str) or k == "self" for k in args):
        from ouro.errors import InvalidInput

        raise InvalidInput(
            f"{name}: arguments must be an object of named fields",
            hint=f"the {name_of(tool)} input schema lists the fields",
        )
    from ouro.spec import BadInput

    try:
        result: dict[str, Any] = target(**args)
    except BadInput as exc:
        usage = (
            f"'ouro {' '.join(tool.path)} --help' lists the fields "
            f"(MCP: the {name_of(tool)} input schema)"
        )
        raise exc.within(name_of(tool), usage) from None
    return result
