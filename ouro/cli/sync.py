"""``ouro sync [--pull-only|--push-only]``, ``ouro sync init|clone|status|resolve|habit``.

Each command makes one call into ``ouro.sync`` and returns its result. Progress
lines (``ouro.progress.steps``) go to stderr, only when the ``progress``
setting allows (default: stderr is a terminal) and never under ``--json``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ouro.spec import P

if TYPE_CHECKING:
    from ouro.bundle import Bundle

_INTERVAL = "How often sync should run (default 30m)."


def sync(
    *,
    pull_only: Annotated[bool, P("Commit and merge the remote's changes; do not push.")] = False,
    push_only: Annotated[bool, P("Commit and push; do not fetch or merge.")] = False,
) -> dict[str, Any]:
    """Commit what changed, fetch, merge (losing nothing), regenerate, push."""
    from ouro.cli.common import bundle_from
    from ouro.cli.parse import UsageError
    from ouro.progress import steps
    from ouro.sync.api import sync as syncing

    if pull_only and push_only:
        raise UsageError(
            "--pull-only and --push-only exclude each other", hint="see 'ouro sync --help'"
        )
    mode: Any = "pull" if pull_only else "push" if push_only else "both"
    return syncing(bundle_from(), mode=mode, progress=steps("sync"))


def init(
    *,
    remote: Annotated[str | None, P("Remote URL (a path, file://, ssh or https).")] = None,
    interval: Annotated[str, P(_INTERVAL)] = "30m",
    branch: Annotated[str | None, P("Branch for a new repository (default main).")] = None,
) -> dict[str, Any]:
    """Give the bundle a git history of its own (<bundle>/.git), ready to sync.

    A project repository around the bundle is never used or changed.
    """
    from ouro.sync.setup import sync_init

    return sync_init(_bundle_or_why(), remote=remote, interval=interval, branch=branch)


def _bundle_or_why() -> Bundle:
    """The bundle; for a git clone with nothing checked out, say what to run instead."""
    from ouro.bundle import ENV_VAR
    from ouro.cli.common import bundle_from, bundle_option
    from ouro.errors import BundleNotFound

    try:
        return bundle_from()
    except BundleNotFound as exc:
        from ouro.sync.clone import explain_unopened

        named = bundle_option() or os.environ.get(ENV_VAR)
        folder = Path(os.path.abspath(Path(named).expanduser())) if named else Path.cwd()
        raise explain_unopened(folder, exc) from None


def clone(
    url: Annotated[str, P("The remote holding the bundle.")],
    path: Annotated[str, P("Folder to clone into (new or empty).")],
    *,
    branch: Annotated[str | None, P("The remote branch holding the bundle.")] = None,
    interval: Annotated[str, P(_INTERVAL)] = "30m",
) -> dict[str, Any]:
    """Join a bundle from its remote: clone it into PATH (new or empty) and set up sync.

    Checks out the branch holding bundle.json whatever the remote's HEAD names.
    """
    from ouro.sync.clone import clone as cloning

    return cloning(url, Path(path), branch=branch, interval=interval)


def status() -> dict[str, Any]:
    """Say whether sync is configured, how the last one went, and open conflicts."""
    from ouro.cli.common import bundle_from
    from ouro.sync.api import sync_status

    return sync_status(bundle_from())


def resolve(
    conflict_id: Annotated[str, P("The conflict's id (from 'ouro sync status').")],
) -> dict[str, Any]:
    """Mark a kept sync conflict resolved (after reading both versions)."""
    from ouro.cli.common import bundle_from
    from ouro.sync.api import resolve as resolving

    return resolving(bundle_from(), conflict_id)


def habit(
    *, cadence: Annotated[str | None, P("How often (default: the sync interval).")] = None
) -> dict[str, Any]:
    """Write the built-in sync habit (habits/sync.yaml) so 'ouro habits' runs it."""
    from ouro.cli.common import bundle_from
    from ouro.sync.api import add_sync_habit

    return add_sync_habit(bundle_from(), cadence=cadence)
