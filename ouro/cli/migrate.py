"""``ouro migrate``: the only command that opens a legacy bundle.

Applying needs consent: ``--yes``, or an answer on a terminal. Without a
terminal and without ``--yes`` it refuses (a usage error, exit 2) and changes nothing --
an unattended script should say explicitly that it wants the cut.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from ouro.spec import P


def _root() -> Path:
    from ouro.bundle import LEGACY_ROOTS, Bundle
    from ouro.cli.common import bundle_from, bundle_option
    from ouro.errors import BundleNotFound

    try:
        return bundle_from(allow_legacy=True).root
    except BundleNotFound:
        # An old harness may have left no bundle.json: a folder with legacy roots
        # is a bundle to migrate when it is the current directory.
        here = Path.cwd()
        if bundle_option() is None and any((here / n).exists() for n in LEGACY_ROOTS):
            return Bundle(here.absolute()).root
        raise


def migrate(
    *,
    dry_run: Annotated[bool, P("Print the full plan and write nothing.")] = False,
    yes: Annotated[bool, P("Apply without asking (needed when not on a terminal).")] = False,
    journal: Annotated[
        str | None,
        P(
            "journal/ Markdown and text: triage each entry into Desk tasks, diary facts, a "
            "note or a drop (migrate, the default), or quarantine them all.",
            choices=("migrate", "quarantine"),
        ),
    ] = None,
    plan: Annotated[
        str | None,
        P(
            "With --dry-run: write the journal entries' proposed routes to this JSON file. "
            "Without: apply, routing each journal entry as the (edited) file says."
        ),
    ] = None,
) -> dict[str, Any]:
    """Move a legacy bundle (top-level journal/, diary/, notes/) into desk/_record/.

    Backs the legacy folders (and every Desk file it will change) up first,
    merges facts without duplicates, triages each journal entry into a task,
    diary facts, a note or drop (review and edit the routes with
    --dry-run --plan FILE, apply them with --plan FILE), keeps conflicts and
    anything unreadable aside, proves every byte is accounted for, then
    removes the old folders and writes desk/_record/migration-report.jsonl.
    """
    from ouro.cli.render.migrate import plan as render_plan
    from ouro.errors import InvalidInput
    from ouro.migrate.engine import migrate as migrating

    root = _root()
    plan_file = Path(plan) if plan is not None else None
    if dry_run:
        return migrating(root, journal=journal, dry_run=True, plan_file=plan_file)
    confirm = None
    if not yes:
        if not sys.stdin.isatty():
            preview = migrating(root, journal=journal, dry_run=True)
            if preview["status"] == "nothing":
                return preview
            raise InvalidInput(
                "--yes: not applying the migration: no --yes and no terminal to ask on",
                hint="review 'ouro migrate --dry-run', then run 'ouro migrate --yes'",
            )

        def confirm(view: dict[str, Any]) -> bool:
            sys.stderr.write(render_plan(view, limit=40) + "\nApply this migration? [y/N]: ")
            sys.stderr.flush()
            return sys.stdin.readline().strip().lower() in ("y", "yes")

    from ouro import progress as shown

    progress = shown.phased("migrate")
    kwargs: dict[str, Any] = {"progress": progress} if progress else {}
    return migrating(root, journal=journal, confirm=confirm, plan_file=plan_file, **kwargs)
