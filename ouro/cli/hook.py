"""``ouro hook claude EVENT``, ``ouro hook codex EVENT``, ``ouro hook install HOST``.

The two host commands are what Claude Code and Codex run: host JSON on stdin,
host JSON (or nothing) on stdout, a one-line reason on stderr when something
failed, and exit 0 every time (see ``ouro.hooks``). ``install`` merges the
hook config into a project (see ``ouro.hooks.install``).

The host commands are also answered without click by ``ouro.cli.fasthook``
(hosts kill slow hooks); both call ``ouro.hooks.stdio.run_stdio``. Keep the
two argument grammars in step: the fast path falls back to this module for
anything it does not recognise.
"""

from __future__ import annotations

from pathlib import Path

import click

from ouro.cli.common import bundle_option_value, wants_json, with_json
from ouro.cli.output import emit

_BUNDLE_HELP = (
    "Bundle folder, relative to the host's cwd (default: the global --bundle, "
    "$OURO_BUNDLE, a .ouro/ouro.toml pointer, bundle.json upwards, else the one "
    "*.ouro folder in the host's cwd)."
)


def _run_host(
    ctx: click.Context, host_name: str, event: str, bundle: str | None, block: bool
) -> None:
    from ouro.hooks.stdio import run_stdio

    run_stdio(host_name, event, bundle=bundle or bundle_option_value(ctx), block_on_debt=block)


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
    @click.pass_context
    def command(ctx: click.Context, event: str, bundle: str | None, block_on_debt: bool) -> int:
        _run_host(ctx, host_name, event, bundle, block_on_debt)
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
    help="Project folder whose host config to edit.",
)
@click.option("--dry-run", is_flag=True, help="Show the change; write nothing.")
@click.option("--block-on-debt", is_flag=True, help="Install the Stop hook in blocking mode.")
@click.option(
    "--bundle",
    "bundle",
    type=click.Path(file_okay=False),
    help="Pin the hooks to this bundle (default: found from the host's cwd at run time).",
)
@click.option("--command", "base", help="How the host starts ouro (default: 'ouro' if on PATH).")
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
    json_mode: bool,
) -> None:
    """Merge ouro's hooks into HOST's project config (.claude/settings.json or .codex/hooks.json)."""
    from ouro.hooks import install
    from ouro.hooks.claude import HOST as CLAUDE
    from ouro.hooks.codex import HOST as CODEX

    spec = CLAUDE if host == "claude" else CODEX
    bundle = bundle or bundle_option_value(ctx)  # --bundle anywhere on the line pins
    pinned = str(Path(bundle).expanduser().absolute()) if bundle else None
    plan = install.plan(
        spec, project.absolute(), base=base, bundle=pinned, block_on_debt=block_on_debt
    )
    backup = None if dry_run else install.apply(plan)
    result = {
        "host": host,
        "path": str(plan.path),
        "changed": plan.changed,
        "written": plan.changed and not dry_run,
        "dryRun": dry_run,
        "backup": str(backup) if backup else None,
        "diff": plan.diff,
        "bundle": pinned or _discoverable(project.absolute()),
    }
    emit(result, json_mode=wants_json(ctx, json_mode), render=_render_install)


def _discoverable(project: Path) -> str | None:
    """The bundle a hook started in ``project`` would find, if any (never raises)."""
    from ouro.bundle import Bundle
    from ouro.errors import OuroError

    try:
        return str(Bundle.locate(None, cwd=project).root)
    except OuroError:
        return None


def _render_install(r: dict[str, object]) -> str:
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
        if r["host"] == "codex":
            lines.append("Codex runs project hooks only after you review and trust them (/hooks).")
    if r["bundle"]:
        lines.append(f"hooks will use the bundle {r['bundle']}")
    else:
        lines.append(
            "note: no bundle is reachable from this project; the hooks will need OURO_BUNDLE "
            "in the host's environment, or rerun with --bundle PATH"
        )
    return "\n".join(lines)
