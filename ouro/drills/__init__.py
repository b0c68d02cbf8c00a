"""Recovery drills: each proves one recovery guarantee on a copy of the bundle.

``CATALOG`` is the one list of drills: each drill's name, its
``"module:function"`` (``fn(copy, probe)``) and the guarantee it proves in one
line. Everything that names drills reads it -- the ``drill`` tool's
description (``ouro drill --help``, the MCP tool list), ``ouro help drills``,
the input validator (CLI and MCP) and the runner -- so a drill cannot be listed
in one place and refused in another. This module imports nothing heavy, so the
registry can read the list at import time.

``run_drills`` runs the named drills (all when none are named), each on the
bundle's temporary copy as it was (``harness.Scratch``), and returns one result per drill:
``{name, status: pass|fail, detail, checks, lookAt, durationMs}``. The real
bundle is only read. ``b.drill()`` (``ouro.api``) then records one receipt
(trigger ``drill``) in the real bundle carrying these results.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ouro.bundle import Bundle
    from ouro.drills.harness import Drill


class DrillSpec(NamedTuple):
    name: str
    #: ``"module:function"`` of the drill, imported when it runs
    ref: str
    #: the guarantee it proves, one line (``ouro help drills``)
    proves: str


CATALOG: tuple[DrillSpec, ...] = (
    DrillSpec(
        "erase",
        "ouro.drills.erase:run",
        "the checkpoint can be rebuilt from the log alone",
    ),
    DrillSpec(
        "crash-after-append",
        "ouro.drills.crash:crash_after_append",
        "a kill between append and checkpoint loses nothing",
    ),
    DrillSpec(
        "crash-before-index",
        "ouro.drills.crash:crash_before_index",
        "a kill before the index write loses nothing",
    ),
    DrillSpec(
        "truncate",
        "ouro.drills.damage:truncate",
        "torn and garbage lines are reported, never hidden",
    ),
    DrillSpec("secrets", "ouro.drills.secrets:run", "credentials never reach arc/ files"),
    DrillSpec(
        "unknown-not-zero",
        "ouro.drills.damage:unknown_not_zero",
        'unreadable state reads "unknown", never zero',
    ),
    DrillSpec(
        "evidence-freshness",
        "ouro.drills.freshness:run",
        "a changed file makes its claim stale",
    ),
    DrillSpec(
        "edited-by-hand",
        "ouro.drills.edited:run",
        "Arc files edited in place are seen at once",
    ),
)

#: drill name -> ``"module:function"``, in catalog order
DRILLS: dict[str, str] = {spec.name: spec.ref for spec in CATALOG}
DRILL_NAMES: tuple[str, ...] = tuple(DRILLS)


def unknown_drill_hint() -> str:
    return "drills: " + ", ".join(DRILL_NAMES)


def check_names(names: Sequence[str]) -> list[str]:
    """``names`` unchanged when each is a drill; else ValueError naming the first
    that is not and listing the drills (the input validator's rule)."""
    for name in names:
        if name not in DRILLS:
            raise ValueError(f"no drill named {name!r}; {unknown_drill_hint()}")
    return list(names)


def help_lines() -> list[str]:
    """``  name  what it proves`` for each drill (``ouro help drills``)."""
    width = max(len(name) for name in DRILL_NAMES)
    return [f"  {spec.name:<{width}}  {spec.proves}" for spec in CATALOG]


def load_drill(name: str) -> Drill:
    from ouro.errors import InvalidInput

    try:
        ref = DRILLS[name]
    except KeyError:
        raise InvalidInput(f"no drill named {name!r}", hint=unknown_drill_hint()) from None
    module, _, attr = ref.partition(":")
    fn: Drill = getattr(importlib.import_module(module), attr)
    return fn


def run_drills(
    bundle: Bundle,
    names: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the named drills (all by default); ``progress(done, total)`` after each."""
    from ouro.drills.harness import Scratch, run_one

    chosen = list(dict.fromkeys(names)) or list(DRILLS)
    drills = [(name, load_drill(name)) for name in chosen]
    results = []
    with Scratch(bundle) as scratch:
        for name, fn in drills:
            results.append(run_one(name, fn, bundle, scratch))
            if progress:
                progress(len(results), len(drills))
    return results
