"""``ouro sync [--pull-only|--push-only]``, ``ouro sync init|clone|status|resolve|habit``.

Each command makes one call into ``ouro.sync`` and prints its result. Progress
lines (``ouro.progress.steps``) go to stderr, only when the ``progress``
setting allows (default: stderr is a terminal) and never under ``--json``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import click

from ouro.bundle import ENV_VAR, Bundle
from ouro.cli.common import bundle_from, bundle_option_value, wants_json, with_json
from ouro.cli.output import emit
from ouro.errors import BundleNotFound


def _progress() -> Callable[[str], None] | None:
    from ouro.progress import steps

    return steps("sync")


@click.group("sync", invoke_without_command=True)
@click.option(
    "--pull-only", is_flag=True, help="Commit and merge the remote's changes; do not push."
)
@click.option("--push-only", is_flag=True, help="Commit and push; do not fetch or merge.")
@with_json
@click.pass_context
def sync_cmd(ctx: click.Context, pull_only: bool, push_only: bool, json_mode: bool) -> None:
    """Commit what changed, fetch, merge (losing nothing), regenerate, push."""
    if ctx.invoked_subcommand is not None:
        return
    if pull_only and push_only:
        raise click.UsageError("--pull-only and --push-only exclude each other")
    from ouro.sync.api import render_sync, sync
    from ouro.sync.run import Mode

    mode: Mode = "pull" if pull_only else "push" if push_only else "both"
    from ouro.derived import regenerate

    result = sync(bundle_from(ctx), mode=mode, progress=_progress(), regenerate=regenerate)
    emit(result, json_mode=wants_json(ctx, json_mode), render=render_sync)


@sync_cmd.command("init")
@click.option("--remote", "remote", help="Remote URL (a path, file://, ssh or https).")
@click.option("--interval", default="30m", show_default=True, help="How often sync should run.")
@click.option("--branch", default=None, help="Branch for a new repository (default main).")
@with_json
@click.pass_context
def init_cmd(
    ctx: click.Context, remote: str | None, interval: str, branch: str | None, json_mode: bool
) -> None:
    """Give the bundle a git history of its own (<bundle>/.git), ready to sync.

    A project repository around the bundle is never used or changed.
    """
    from ouro.sync.setup import render_init, sync_init

    result = sync_init(_bundle_or_why(ctx), remote=remote, interval=interval, branch=branch)
    emit(result, json_mode=wants_json(ctx, json_mode), render=render_init)


def _bundle_or_why(ctx: click.Context) -> Bundle:
    """The bundle; for a git clone with nothing checked out, say what to run instead."""
    try:
        return bundle_from(ctx)
    except BundleNotFound as exc:
        from ouro.sync.clone import explain_unopened

        named = bundle_option_value(ctx) or os.environ.get(ENV_VAR)
        folder = Path(os.path.abspath(Path(named).expanduser())) if named else Path.cwd()
        raise explain_unopened(folder, exc) from None


@sync_cmd.command("clone")
@click.argument("url")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--branch", default=None, help="The remote branch holding the bundle.")
@click.option("--interval", default="30m", show_default=True, help="How often sync should run.")
@with_json
@click.pass_context
def clone_cmd(
    ctx: click.Context, url: str, path: Path, branch: str | None, interval: str, json_mode: bool
) -> None:
    """Join a bundle from its remote: clone it into PATH (new or empty) and set up sync.

    Checks out the branch holding bundle.json whatever the remote's HEAD names.
    """
    from ouro.derived import regenerate
    from ouro.sync.clone import clone, render_clone

    result = clone(url, path, branch=branch, interval=interval, regenerate=regenerate)
    emit(result, json_mode=wants_json(ctx, json_mode), render=render_clone)


@sync_cmd.command("status")
@with_json
@click.pass_context
def status_cmd(ctx: click.Context, json_mode: bool) -> None:
    """Say whether sync is configured, how the last one went, and open conflicts."""
    from ouro.sync.api import render_status, sync_status

    emit(sync_status(bundle_from(ctx)), json_mode=wants_json(ctx, json_mode), render=render_status)


@sync_cmd.command("resolve")
@click.argument("conflict_id")
@with_json
@click.pass_context
def resolve_cmd(ctx: click.Context, conflict_id: str, json_mode: bool) -> None:
    """Mark a kept sync conflict resolved (after reading both versions)."""
    from ouro.sync.api import render_resolved, resolve

    emit(
        resolve(bundle_from(ctx), conflict_id),
        json_mode=wants_json(ctx, json_mode),
        render=render_resolved,
    )


@sync_cmd.command("habit")
@click.option("--cadence", default=None, help="How often (default: the sync interval).")
@with_json
@click.pass_context
def habit_cmd(ctx: click.Context, cadence: str | None, json_mode: bool) -> None:
    """Write the built-in sync habit (habits/sync.yaml) so 'ouro habits' runs it."""
    from ouro.sync.api import add_sync_habit, render_habit

    result = add_sync_habit(bundle_from(ctx), cadence=cadence)
    emit(result, json_mode=wants_json(ctx, json_mode), render=render_habit)
