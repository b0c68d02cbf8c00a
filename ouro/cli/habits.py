"""``ouro habits show|due|last|tick|install`` (non-tool commands).

``habits list`` and ``habits run`` are agent tools (``habits_list``,
``habits_run``) generated from the registry; these are the rest. Each opens the
bundle, makes one call into ``ouro.habits``, prints.
"""

from __future__ import annotations

import shlex
from typing import Any

import click

from ouro.cli.common import bundle_from, wants_json, wants_verbose, with_json
from ouro.cli.output import emit


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


def _render_show(r: dict[str, Any]) -> str:
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


@click.command("show")
@click.argument("name")
@with_json
@click.pass_context
def show_cmd(ctx: click.Context, name: str, json_mode: bool) -> None:
    """Show one habit: definition, tool policy, permission envelope, runtime state, due."""
    from ouro.habits.api import habit_show

    emit(
        habit_show(bundle_from(ctx), name),
        json_mode=wants_json(ctx, json_mode),
        render=None if wants_verbose(ctx) else _render_show,
    )


def _render_due(result: dict[str, Any]) -> str:
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


@click.command("due")
@click.option("--at", "at", help="Check at this UTC time (ISO-8601) instead of now.")
@with_json
@click.pass_context
def due_cmd(ctx: click.Context, at: str | None, json_mode: bool) -> None:
    """Which habits are due now (or --at a time), and which missed a window."""
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
    emit(
        due_report(bundle_from(ctx), moment),
        json_mode=wants_json(ctx, json_mode),
        render=_render_due,
    )


@click.command("last")
@click.argument("name")
@with_json
@click.pass_context
def last_cmd(ctx: click.Context, name: str, json_mode: bool) -> None:
    """The latest run of a habit, from its Arc receipt and runtime state alone."""
    from ouro.habits.api import habit_last, render_last

    emit(
        habit_last(bundle_from(ctx), name), json_mode=wants_json(ctx, json_mode), render=render_last
    )


def _render_tick(result: dict[str, Any]) -> str:
    lines = [
        f"ran {r['name']} ({r['trigger']}): {r['outcome']}  {r['receiptLocator']}"
        for r in result["ran"]
    ]
    lines += [f"skipped {s['name']}: {s['reason']}" for s in result["skipped"]]
    lines += [f"failed {f['name']}: {f['error']}" for f in result["failed"]]
    lines += [f"invalid: {p['file']}: {p['field']}: {p['reason']}" for p in result["problems"]]
    return "\n".join(lines) or "nothing due"


@click.command("tick")
@click.option(
    "--trigger",
    type=click.Choice(["cron", "launchd", "poke", "manual"]),
    default="manual",
    show_default=True,
    help="What started this tick (installed scheduler entries pass cron or launchd).",
)
@with_json
@click.pass_context
def tick_cmd(ctx: click.Context, trigger: str, json_mode: bool) -> None:
    """Run every due habit once (a missed window runs once, as overdue). Safe every minute."""
    from ouro.habits.policy import refuse_inside_habit
    from ouro.habits.schedule import tick

    refuse_inside_habit("ouro habits tick")
    result = tick(bundle_from(ctx), trigger)  # type: ignore[arg-type]
    emit(result, json_mode=wants_json(ctx, json_mode), render=_render_tick)
    if result["failed"]:
        ctx.exit(1)


@click.command("install")
@click.argument("scheduler", type=click.Choice(["cron", "launchd", "systemd"]))
@click.option("--write", is_flag=True, help="Install it for the current user (else just print).")
@with_json
@click.pass_context
def install_cmd(ctx: click.Context, scheduler: str, write: bool, json_mode: bool) -> None:
    """Print (or --write) the scheduler entry that runs 'ouro habits tick' every minute."""
    from ouro.habits.install import install_entry

    result = install_entry(bundle_from(ctx), scheduler, write=write)  # type: ignore[arg-type]

    def render(r: dict[str, Any]) -> str:
        head = r["entry"].rstrip("\n")
        if r["written"]:
            where = ", ".join(r["files"]) or "your crontab"
            head += f"\n\n{'installed in' if r['changed'] else 'already installed in'} {where}"
        return f"{head}\nnext: {r['next']}"

    emit(result, json_mode=wants_json(ctx, json_mode), render=render)
