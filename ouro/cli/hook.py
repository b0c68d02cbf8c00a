"""``ouro hook claude EVENT``, ``ouro hook codex EVENT``, ``ouro hook install HOST``.

The two host commands are what Claude Code and Codex run: host JSON on stdin,
host JSON (or nothing) on stdout, a one-line reason on stderr when something
failed, and exit 0 every time (see ``ouro.hooks``). ``install`` merges the
hook config into a project and checks it as the host will run it (see
``ouro.hooks.install``); ``doctor`` checks an install end to end
(``ouro.hooks.doctor``); ``ouro guide`` prints the operating guide
(``ouro.guide``).

The host commands are also answered without click by ``ouro.cli.fasthook``
(hosts kill slow hooks); both call ``ouro.hooks.stdio.run_stdio``. Keep the
two argument grammars in step: the fast path falls back to this module for
anything it does not recognise.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ouro.cli.common import bundle_option_value, wants_json, with_json
from ouro.cli.output import emit

if TYPE_CHECKING:
    from ouro.hooks.common import Host

_BUNDLE_HELP = (
    "Bundle folder, relative to the host's cwd (default: the global --bundle, "
    "$OURO_BUNDLE, a .ouro/ouro.toml pointer, bundle.json upwards, else the one "
    "*.ouro folder in the host's cwd)."
)


def _run_host(
    ctx: click.Context, host_name: str, event: str, bundle: str | None, block: bool, dry: bool
) -> None:
    from ouro.hooks.stdio import run_stdio

    run_stdio(
        host_name,
        event,
        bundle=bundle or bundle_option_value(ctx),
        block_on_debt=block,
        dry_run=dry,
    )


def _host_command(host_name: str, title: str) -> click.Command:
    @click.command(
        host_name,
        short_help=f"Run as a {title} hook: host JSON on stdin, host JSON out.",
        help=f"Run as a {title} hook for EVENT (SessionStart, UserPromptSubmit, PreCompact, "
        "Stop or SessionEnd): the host's JSON on stdin, the host's JSON (or nothing) on "
        "stdout, a one-line reason on stderr when something failed, exit 0 always.",
    )
    @click.argument("event")
    @click.option("--bundle", "bundle", type=click.Path(file_okay=False), help=_BUNDLE_HELP)
    @click.option(
        "--block-on-debt",
        is_flag=True,
        help="Stop: keep the agent working while claims are unverified or obligations due.",
    )
    @click.option(
        "--dry-run",
        is_flag=True,
        help="Answer as the hook would but write nothing; name the bundle on stderr "
        "(what 'ouro hook install' and 'ouro hook doctor' run).",
    )
    @click.pass_context
    def command(
        ctx: click.Context, event: str, bundle: str | None, block_on_debt: bool, dry_run: bool
    ) -> int:
        _run_host(ctx, host_name, event, bundle, block_on_debt, dry_run)
        return 0

    return command


claude_cmd = _host_command("claude", "Claude Code")
codex_cmd = _host_command("codex", "Codex")


@click.command("install")
@click.argument("host", type=click.Choice(["claude", "codex"]))
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Project folder whose host config to edit (the folder you start the host in).",
)
@click.option("--dry-run", is_flag=True, help="Show the change; write nothing.")
@click.option("--block-on-debt", is_flag=True, help="Install the Stop hook in blocking mode.")
@click.option(
    "--bundle",
    "bundle",
    type=click.Path(file_okay=False),
    help="Use this bundle: writes a .ouro pointer in the project naming it by a relative "
    "path (the hook commands themselves never hold a path).",
)
@click.option("--command", "base", help="How the host starts ouro (default: 'ouro' if on PATH).")
@click.option(
    "--guide/--no-guide",
    default=False,
    help="Also put the operating guide in the project's CLAUDE.md (claude) or AGENTS.md "
    "(codex) between markers ('ouro guide --remove FILE' takes it out).",
)
@with_json
@click.pass_context
def install_cmd(
    ctx: click.Context,
    host: str,
    project: Path,
    dry_run: bool,
    block_on_debt: bool,
    bundle: str | None,
    base: str | None,
    guide: bool,
    json_mode: bool,
) -> None:
    """Merge ouro's hooks into HOST's project config (.claude/settings.json or
    .codex/hooks.json), then check that the host will reach ouro and a bundle."""
    import os

    from ouro.hooks import install

    spec = host_named(host)
    project = project.absolute()
    bundle = bundle or bundle_option_value(ctx)  # --bundle anywhere on the line
    pointer = _pointer(project, bundle, dry_run)
    plan = install.plan(spec, project, base=base, block_on_debt=block_on_debt)
    lost = install.trust_changes(plan, spec, os.environ)
    backup = None if dry_run else install.apply(plan)
    guide_written = None
    if guide:
        from ouro import guide as guide_mod

        target = project / spec.guide_file
        guide_written = str(target) if not dry_run and guide_mod.write_block(target) else None
    command = install.installed_command(plan.new_doc, spec, "SessionStart") or ""
    reached = install.reach(spec, project, command, os.environ)
    result = {
        "host": host,
        "path": str(plan.path),
        "changed": plan.changed,
        "written": plan.changed and not dry_run,
        "dryRun": dry_run,
        "backup": str(backup) if backup else None,
        "diff": plan.diff,
        "pointer": pointer,
        "guideWritten": guide_written,
        "reach": {
            "ok": reached.ok,
            "command": reached.command,
            "bundle": reached.bundle,
            "how": reached.how,
            "detail": reached.detail,
        },
        "trustLost": lost,
        "next": _next_steps(host, project, reached.ok, reached.how, reached.bundle),
    }
    emit(result, json_mode=wants_json(ctx, json_mode), render=_render_install)


def _pointer(project: Path, bundle: str | None, dry_run: bool) -> dict[str, object] | None:
    """Point the project at ``bundle`` with a relative ``.ouro`` file (not in the commands)."""
    if not bundle:
        return None
    from ouro.bundle import Bundle, pointer_text, write_pointer

    target = Bundle.open(Path(bundle).expanduser().absolute())
    if dry_run:
        return {
            "path": str(project / ".ouro"),
            "written": False,
            "names": pointer_text(project, target.root).strip(),
        }
    path, written = write_pointer(project, target.root)
    return {
        "path": str(path),
        "written": written,
        "names": path.read_text(encoding="utf-8").strip(),
    }


def _next_steps(
    host: str, project: Path, reached: bool, how: str | None, bundle: str | None
) -> list[str]:
    steps = []
    if not reached:
        steps.append(f"fix what the check says, then run 'ouro hook doctor {host}'")
    elif how == "the *.ouro folder here" and bundle:
        steps.append(
            f"optional: 'ouro init {Path(bundle).name} --link' writes a .ouro pointer, so hooks "
            "and ouro commands also find the bundle when started from a subfolder"
        )
    if host == "codex":
        steps += [
            f"trust the project: start 'codex' in {project} and accept the trust prompt "
            "(Codex ignores .codex/hooks.json in an untrusted project)",
            "trust the hooks: in Codex run /hooks and trust the five ouro entries "
            "(re-do this after any re-install that changes them)",
            "hooks are on by default in current Codex; if you turned them off, set "
            "[features] hooks = true in ~/.codex/config.toml",
        ]
    else:
        steps.append(
            "start a new 'claude' session in the project (hooks load at start; /hooks shows them)"
        )
    steps.append(f"check it any time: ouro hook doctor {host}")
    return steps


def _render_install(r: dict[str, Any]) -> str:
    lines = []
    if not r["changed"]:
        lines.append(f"{r['path']}: ouro hooks already installed; nothing to change")
    else:
        lines.append(str(r["diff"]).rstrip("\n"))
    if r["changed"] and r["dryRun"]:
        lines.append(f"dry run: {r['path']} not written")
    elif r["changed"]:
        lines.append(f"wrote {r['path']}")
        if r["backup"]:
            lines.append(f"backup of the previous file: {r['backup']}")
    if r["pointer"]:
        p = r["pointer"]
        verb = "wrote" if p["written"] else ("would write" if r["dryRun"] else "kept")
        lines.append(f"{verb} the pointer {p['path']} -> {p['names']}")
    if r["guideWritten"]:
        lines.append(f"added the operating guide to {r['guideWritten']}")
    for event in r["trustLost"]:
        lines.append(
            f"warning: Codex had trusted the {event} entry; this change drops that trust and "
            "Codex skips the hook until you trust it again in /hooks"
        )
    reach = r["reach"]
    if str(reach["command"]).startswith("/"):
        lines.append(
            "note: 'ouro' is not on PATH, so the hooks start it by its full path, which is "
            "specific to this machine; put ouro on PATH and re-install for a shareable config"
        )
    if reach["ok"]:
        lines.append(
            f"checked as the host will run it (from {Path(r['path']).parent.parent}, without "
            f"OURO_* variables): bundle {reach['bundle']} (found by {reach['how']}); "
            f"{reach['detail']}"
        )
    else:
        lines.append(
            f"warning: as the host will run it (from {Path(r['path']).parent.parent}, without "
            f"OURO_* variables) the hook does not work: {reach['detail']}"
        )
    lines.append("next:")
    lines.extend(f"  - {step}" for step in r["next"])
    return "\n".join(lines)


@click.command("doctor")
@click.argument("host", required=False, type=click.Choice(["claude", "codex"]))
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Project folder the host is started in.",
)
@with_json
@click.pass_context
def doctor_cmd(ctx: click.Context, host: str | None, project: Path, json_mode: bool) -> int:
    """Check an install end to end: config, command on PATH, bundle reachable from the
    project, a dry SessionStart packet, and (Codex) project and hook trust. Exit 1 on a
    problem. Writes nothing. Without HOST: every host configured in the project."""
    import os

    from ouro.hooks import doctor

    project = project.absolute()
    names = (
        [host]
        if host
        else [h for h in ("claude", "codex") if (project / host_named(h).settings_file).exists()]
        or ["claude", "codex"]
    )
    reports = []
    for name in names:
        spec = host_named(name)
        checks = doctor.diagnose(spec, project, os.environ)
        reports.append(
            {
                "host": name,
                "checks": [c.to_json() for c in checks],
                "healthy": all(c.status != "problem" for c in checks),
            }
        )
    result = {
        "project": str(project),
        "hosts": reports,
        "healthy": all(r["healthy"] for r in reports),
    }
    emit(result, json_mode=wants_json(ctx, json_mode), render=_render_doctor)
    return 0 if result["healthy"] else 1


def _render_doctor(r: dict[str, Any]) -> str:
    from ouro.hooks import doctor

    blocks = []
    for report in r["hosts"]:
        checks = [
            doctor.Check(c["check"], c["status"], c["detail"], c["fix"]) for c in report["checks"]
        ]
        blocks.append(doctor.render(host_named(report["host"]), checks))
    return "\n".join(blocks)


@click.command("guide")
@click.option(
    "--file",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Put the guide into this file (CLAUDE.md, AGENTS.md) between markers; idempotent.",
)
@click.option("--remove", is_flag=True, help="With --file: take the guide block out again.")
@with_json
@click.pass_context
def guide_cmd(ctx: click.Context, path: Path | None, remove: bool, json_mode: bool) -> None:
    """Print the operating guide: when to record the ask, the next action, claims, diary
    entries and handoffs (the text agents get over MCP and at session start)."""
    from ouro import guide

    if remove and path is None:
        raise click.UsageError("--remove needs --file FILE")
    changed = None
    if path is not None:
        changed = guide.remove_block(path) if remove else guide.write_block(path)
    result = {
        "version": guide.GUIDE_VERSION,
        "text": guide.render(),
        "file": str(path) if path else None,
        "changed": changed,
        "removed": remove,
    }

    def render(r: dict[str, Any]) -> str:
        if r["file"] is None:
            return str(r["text"]).rstrip("\n")
        verb = (
            ("removed the guide from" if r["removed"] else "wrote the guide to")
            if r["changed"]
            else "nothing to change in"
        )
        return f"{verb} {r['file']}"

    emit(result, json_mode=wants_json(ctx, json_mode), render=render)


def host_named(name: str) -> Host:
    from ouro.hooks.stdio import host_named as named

    return named(name)
