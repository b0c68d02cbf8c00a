"""Recovery drills: each proves one recovery guarantee on a copy of the bundle.

``DRILLS`` maps a drill name to its ``"module:function"`` (``fn(copy, probe)``).
``run_drills`` runs the named drills (all when none are named), each on its own
temporary copy (``harness.drill_copy``), and returns one result per drill:
``{name, status: pass|fail, detail, checks, lookAt, durationMs}``. The real
bundle is only read. ``ouro.sentinel.api.drill`` then records one receipt
(trigger ``drill``) in the real bundle carrying these results.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.sentinel.drills.harness import Drill, run_one

DRILLS: dict[str, str] = {
    "erase": "ouro.sentinel.drills.erase:run",
    "crash-after-append": "ouro.sentinel.drills.crash:crash_after_append",
    "crash-before-index": "ouro.sentinel.drills.crash:crash_before_index",
    "truncate": "ouro.sentinel.drills.damage:truncate",
    "secrets": "ouro.sentinel.drills.secrets:run",
    "unknown-not-zero": "ouro.sentinel.drills.damage:unknown_not_zero",
    "evidence-freshness": "ouro.sentinel.drills.freshness:run",
    "edited-by-hand": "ouro.sentinel.drills.edited:run",
}


def load_drill(name: str) -> Drill:
    try:
        ref = DRILLS[name]
    except KeyError:
        raise InvalidInput(
            f"no drill named {name!r}", hint="drills: " + ", ".join(DRILLS)
        ) from None
    module, _, attr = ref.partition(":")
    fn: Drill = getattr(importlib.import_module(module), attr)
    return fn


def run_drills(
    bundle: Bundle,
    names: Sequence[str] = (),
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the named drills (all by default); ``progress(done, total)`` after each."""
    chosen = list(dict.fromkeys(names)) or list(DRILLS)
    drills = [(name, load_drill(name)) for name in chosen]
    results = []
    for name, fn in drills:
        results.append(run_one(name, fn, bundle))
        if progress:
            progress(len(results), len(drills))
    return results
