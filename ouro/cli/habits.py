"""``ouro habits show|due|last|tick|install`` (non-tool commands).

``habits list`` and ``habits run`` are agent tools (``habits_list``,
``habits_run``) generated from the registry; these are the rest. Each opens the
bundle, makes one call into ``ouro.habits``, prints.
"""

from __future__ import annotations

import shlex
from typing import Annotated, Any

from ouro.spec import P


def _denied(tools: list[str], because: dict[str, str]) -> str:
    """Denied tools grouped by reason: a big group is a count, a small one its names
    (--verbose or --json list every tool)."""
    groups: dict[str, list[str]] = {}
    for tool in tools:
        groups.setdefault(because.get(tool, "denied"), []).append(tool)
    parts = [
        f"{len(names)} {reason}" if len(names) > 3 else f"{', '.join(names)}: {reason}"
        for reason, names in groups.items()
    ]
    return "; ".join(parts) or "none"


def render_show(r: dict[str, Any]) -> str:
    policy, envelope, state, due = (
        r["toolPolicy"],
        r["permissionEnvelope"],
        r["runtimeState"],
        r["due"],
    )
    requested = policy["requestedTools"]
    lines = [
        f"{r['name']}: {r['title']}  [{r['definitionLocator']}]",
        f"  cadence {r['cadence']} ({r['cadenceKind']}), {r['status']}, timeout {r['timeoutSeconds']}s",
        f"  run: {shlex.join(r['run'])}"
        if r["run"]
        else f"  agent: {r['agent'] or 'the bundle default (ouro config habits.agent)'}",
        "  tools requested: "
        + ("all (no tools: list)" if requested is None else ", ".join(requested) or "none"),
        f"  tools granted: {len(policy['grantedTools'])}; "
        f"denied: {len(policy['deniedTools'])} ({_denied(policy['deniedTools'], r['deniedBecause'])})",
        f"  can message outward: {'yes' if envelope['canMessageOutward'] else 'no'}",
    ]
    for route in envelope["returnRoutes"]:
        where = f" via {route['channel']}" if route.get("channel") else ""
        lines.append(f"    {route['kind']}: {route['recipient']}{where} ({route['status']})")
    lines += [f"  warning: {w}" for w in envelope["warnings"]]
    if state:
        lines.append(
            f"  last run {state['lastRunAt']} ({state['lastTrigger']}): {state['lastOutcome']}, "
            f"consecutive failures {state['consecutiveFailures']}"
        )
    elif r["runtimeStateProblem"]:
        lines.append(f"  runtime state unknown: {r['runtimeStateProblem']}")
    else:
        lines.append("  never ran")
    if r["status"] == "active":
        lines.append(f"  {'due now' if due['due'] else 'next due ' + due['dueAt']}")
    return "\n".join(lines)


def show(name: Annotated[str, P("The habit's name (habits/<name>.yaml).")]) -> dict[str, Any]:
    """Show one habit: definition, tool policy, permission envelope, runtime state, due."""
    from ouro.api import Bundle as Library
    from ouro.cli.common import bundle_from

    return Library(bundle_from()).habits.show(name)


def render_due(result: dict[str, Any]) -> str:
    lines = []
    for row in result["habits"]:
        if row["status"] == "paused":
            lines.append(f"{row['name']:<20} paused")
            continue
        when = "due now" if row["due"] else f"next {row['dueAt']}"
        if row["overdue"]:
            when = f"overdue since {row['dueAt']} ({row['windowsMissed']}+ windows missed)"
        lines.append(f"{row['name']:<20} {when}")
    if not lines:
        lines.append("no habits")
    lines += [f"invalid: {p['file']}: {p['field']}: {p['reason']}" for p in result["problems"]]
    return "\n".join(lines)


def due(
    *, at: Annotated[str | None, P("Check at this UTC time (ISO-8601) instead of now.")] = None
) -> dict[str, Any]:
    """Which habits are due now (or --at a time), and which missed a window."""
    from ouro.cli.common import bundle_from
    from ouro.errors import InvalidInput
    from ouro.habits.schedule import due_report
    from ouro.models.clock import parse_time

    moment = None
    if at:
        try:
            moment = parse_time(at)
        except ValueError:
            raise InvalidInput(
                f"--at {at!r} is not an ISO-8601 time", hint="e.g. --at 2026-01-31T09:00:00Z"
            ) from None
    return due_report(bundle_from(), moment)


def last(name: Annotated[str, P("The habit's name.")]) -> dict[str, Any]:
    """The latest run of a habit, from its Arc receipt and runtime state alone."""
    from ouro.api import Bundle as Library
    from ouro.cli.common import bundle_from

    return Library(bundle_from()).habits.last(name)


def render_tick(result: dict[str, Any]) -> str:
    lines = [
        f"ran {r['name']} ({r['trigger']}): {r['outcome']}  {r['receiptLocator']}"
        for r in result["ran"]
    ]
    lines += [f"skipped {s['name']}: {s['reason']}" for s in result["skipped"]]
    lines += [f"failed {f['name']}: {f['error']}" for f in result["failed"]]
    lines += [f"invalid: {p['file']}: {p['field']}: {p['reason']}" for p in result["problems"]]
    return "\n".join(lines) or "nothing due"


TRIGGERS = ("cron", "launchd", "poke", "manual")


def tick(
    *,
    trigger: Annotated[
        str,
        P(
            "What started this tick (installed scheduler entries pass cron or launchd; "
            "default manual).",
            choices=TRIGGERS,
        ),
    ] = "manual",
) -> dict[str, Any]:
    """Run every due habit once (a missed window runs once, as overdue). Safe every minute."""
    from ouro.cli.common import bundle_from
    from ouro.habits.policy import refuse_inside_habit
    from ouro.habits.schedule import tick as ticking
    from ouro.orient import build_packet

    refuse_inside_habit("ouro habits tick")
    return ticking(bundle_from(), trigger, orient=build_packet)  # type: ignore[arg-type]


def tick_exit(result: dict[str, Any]) -> int:
    """``habits tick``: 1 when a habit failed to run."""
    return 1 if result["failed"] else 0


def install(
    scheduler: Annotated[
        str, P("The scheduler: cron, launchd or systemd.", choices=("cron", "launchd", "systemd"))
    ],
    *,
    write: Annotated[bool, P("Install it for the current user (else just print).")] = False,
) -> dict[str, Any]:
    """Print (or --write) the scheduler entry that runs 'ouro habits tick' every minute."""
    from ouro.cli.common import bundle_from
    from ouro.habits.install import install_entry

    return install_entry(bundle_from(), scheduler, write=write)  # type: ignore[arg-type]


def render_install(r: dict[str, Any]) -> str:
    head = r["entry"].rstrip("\n")
    if r["written"]:
        where = ", ".join(r["files"]) or "your crontab"
        head += f"\n\n{'installed in' if r['changed'] else 'already installed in'} {where}"
    return f"{head}\nnext: {r['next']}"
