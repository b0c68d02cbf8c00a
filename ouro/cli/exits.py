"""The exit-code contract of the ``ouro`` command (documented in docs/cli.md).

====  =====================================================================
code  meaning
====  =====================================================================
0     success: the command did what was asked
1     a negative outcome you asked about: a check failed, a verdict is
      blocked or unknown, a drill or habit failed, something was not found,
      a write was refused (conflict, lease held, lock timeout, tool denied)
2     usage error, wherever it is detected: unknown command or option, a
      missing or bad argument, a value the input model refuses
3     the bundle is unusable: none found, legacy layout, a layout made by a
      newer ouro, bundle.json invalid or a contract file unreadable, the OS
      refusing a read or write
130   interrupted (Ctrl-C)
====  =====================================================================

With ``--json`` the exit code is the same, and an error object carries it as
``exitCode``. ``CODE_BY_KIND`` maps each ``OuroError.kind`` to its code (any
kind not listed is 1); the ``*_exit`` functions map a result to the code of its
outcome (named by CLI path in ``ouro.cli.render.EXITS``; ``claim verify``'s is
``verify_exit``: 1 when the check it ran failed).
"""

from __future__ import annotations

from typing import Any

OK = 0
NEGATIVE = 1
USAGE = 2
UNUSABLE = 3
INTERRUPTED = 130

CODE_BY_KIND: dict[str, int] = {
    "invalid_input": USAGE,
    "invalid_locator": USAGE,
    "usage": USAGE,
    "bundle_not_found": UNUSABLE,
    "legacy_layout": UNUSABLE,
    "newer_layout": UNUSABLE,
    "corrupt_file": UNUSABLE,
    "storage": UNUSABLE,
    "not_found": NEGATIVE,
    "conflict": NEGATIVE,
    "lock_timeout": NEGATIVE,
    "index_unavailable": NEGATIVE,
    "tool_denied": NEGATIVE,
    "bundle_exists": NEGATIVE,
}

#: rows of the table in docs/cli.md: (code, meaning, examples)
TABLE: tuple[tuple[int, str, str], ...] = (
    (OK, "success", "a write recorded, a read answered (even with no results)"),
    (
        NEGATIVE,
        "a negative outcome you asked about",
        "`claim verify` check failed; `sentinel refresh`/`status` verdict blocked or unknown; "
        "`drill` or `habits run`/`tick` failed; not found; conflict, lease held, lock timeout",
    ),
    (
        USAGE,
        "usage error, wherever it is detected",
        "unknown command or option, missing argument, `arc query bogus`, `--limit 0`",
    ),
    (
        UNUSABLE,
        "the bundle is unusable",
        "no bundle found, legacy layout (run `ouro migrate`), a newer ouro's layout (upgrade "
        "ouro), invalid bundle.json or unreadable record file",
    ),
    (INTERRUPTED, "interrupted", "Ctrl-C"),
)


def code_for(kind: str) -> int:
    return CODE_BY_KIND.get(kind, NEGATIVE)


def sentinel_exit(result: dict[str, Any]) -> int:
    """``sentinel refresh|status``: 1 when the verdict is blocked or unknown."""
    return NEGATIVE if result.get("verdict") in ("blocked", "unknown", None) else OK


def drill_exit(result: dict[str, Any]) -> int:
    """``drill``: 1 when any drill failed."""
    return OK if result.get("ok") else NEGATIVE


def habit_exit(result: dict[str, Any]) -> int:
    """``habits run``: 1 when the run was blocked or errored."""
    return NEGATIVE if result.get("outcome") in ("blocked", "error") else OK


def verify_exit(result: dict[str, Any]) -> int:
    """``claim verify``: 1 when the check it ran failed."""
    run = result.get("run") or {}
    return OK if run.get("exitCode") == 0 else NEGATIVE


def task_verify_exit(result: dict[str, Any]) -> int:
    """``desk task verify``: 1 when the check it ran failed."""
    return OK if result["run"]["exitCode"] == 0 else NEGATIVE
