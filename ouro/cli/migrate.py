"""``ouro migrate``: the only command that opens a legacy bundle.

Applying needs consent: ``--yes``, or an answer on a terminal. Without a
terminal and without ``--yes`` it refuses (a usage error, exit 2) and changes nothing --
an unattended script should say explicitly that it wants the cut.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ouro.bundle import LEGACY_ROOTS, Bundle
from ouro.cli.common import bundle_from, bundle_option_value, wants_json, with_json
from ouro.cli.output import emit
from ouro.errors import BundleNotFound, InvalidInput


def _root(ctx: click.Context) -> Path:
    try:
        return bundle_from(ctx, allow_legacy=True).root
    except BundleNotFound:
        # An old harness may have left no bundle.json: a folder with legacy roots
        # is a bundle to migrate when it is the current directory.
        here = Path.cwd()
        if bundle_option_value(ctx) is None and any((here / n).exists() for n in LEGACY_ROOTS):
            return Bundle(here.absolute()).root
        raise


@click.command("migrate")
@click.option("--dry-run", is_flag=True, help="Print the full plan and write nothing.")
@click.option("--yes", is_flag=True, help="Apply without asking (needed when not on a terminal).")
@click.option(
    "--journal",
    type=click.Choice(["migrate", "quarantine"]),
    default=None,
    help="journal/ Markdown and text: triage each entry into Desk tasks, diary facts, a note or "
    "a drop (migrate, the default), or quarantine them all.",
)
@click.option(
    "--plan",
    "plan_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="With --dry-run: write the journal entries' proposed routes to this JSON file. "
    "Without: apply, routing each journal entry as the (edited) file says.",
)
@with_json
@click.pass_context
def migrate_cmd(
    ctx: click.Context,
    dry_run: bool,
    yes: bool,
    journal: str | None,
    plan_file: Path | None,
    json_mode: bool,
) -> None:
    """Move a legacy bundle (top-level journal/, diary/, notes/) into desk/_record/.

    Backs the legacy folders (and every Desk file it will change) up first,
    merges facts without duplicates, triages each journal entry into a task,
    diary facts, a note or drop (review and edit the routes with
    --dry-run --plan FILE, apply them with --plan FILE), keeps conflicts and
    anything unreadable aside, proves every byte is accounted for, then
    removes the old folders and writes desk/_record/migration-report.jsonl.
    """
    from ouro.migrate.engine import migrate
    from ouro.migrate.report import render_plan, render_summary

    machine = wants_json(ctx, json_mode)
    root = _root(ctx)
    if dry_run:
        result = migrate(root, journal=journal, dry_run=True, plan_file=plan_file)
        emit(result, json_mode=machine, render=render_summary)
        return
    confirm = None
    if not yes:
        if not sys.stdin.isatty():
            preview = migrate(root, journal=journal, dry_run=True)
            if preview["status"] == "nothing":
                emit(preview, json_mode=machine, render=render_summary)
                return
            raise InvalidInput(
                "--yes: not applying the migration: no --yes and no terminal to ask on",
                hint="review 'ouro migrate --dry-run', then run 'ouro migrate --yes'",
            )

        def confirm(view: dict[str, Any]) -> bool:
            click.echo(render_plan(view, limit=40), err=True)
            return click.confirm("Apply this migration?", default=False, err=True)

    from ouro import progress as shown

    progress = shown.phased("migrate")
    kwargs: dict[str, Any] = {"progress": progress} if progress else {}
    result = migrate(root, journal=journal, confirm=confirm, plan_file=plan_file, **kwargs)
    emit(result, json_mode=machine, render=render_summary)
