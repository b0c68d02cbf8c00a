"""``b.sync``: the bundle's own git history, shared with its remote.

``b.sync.run()`` is ``ouro sync`` (commit, fetch, merge losing nothing,
regenerate, push); ``ouro sync clone`` makes a bundle and is ``ouro.api``-level
(``ouro.sync.clone.clone``), not a verb of an open bundle.
"""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.errors import InvalidInput
from ouro.spec import P, verb

Interval = Annotated[str, P("how often sync should run")]


class Sync(Namespace):
    @verb
    def run(
        self,
        *,
        pull_only: Annotated[bool, P("commit and merge the remote's changes; do not push")] = False,
        push_only: Annotated[bool, P("commit and push; do not fetch or merge")] = False,
    ) -> dict[str, Any]:
        """Commit what changed, fetch, merge (losing nothing), regenerate, push."""
        from ouro.progress import steps
        from ouro.sync.api import sync
        from ouro.sync.run import Mode

        if pull_only and push_only:
            raise InvalidInput(
                "pull_only and push_only exclude each other", hint="pass at most one of them"
            )
        mode: Mode = "pull" if pull_only else "push" if push_only else "both"
        from ouro.derived import regenerate

        return sync(self.folder, mode=mode, progress=steps("sync"), regenerate=regenerate)

    @verb
    def init(
        self,
        *,
        remote: Annotated[str | None, P("remote URL (a path, file://, ssh or https)")] = None,
        interval: Interval = "30m",
        branch: Annotated[str | None, P("branch for a new repository (default main)")] = None,
    ) -> dict[str, Any]:
        """Give the bundle a git history of its own (<bundle>/.git), ready to sync. A
        project repository around the bundle is never used or changed."""
        from ouro.sync.setup import sync_init

        return sync_init(self.folder, remote=remote, interval=interval, branch=branch)

    @verb
    def status(self) -> dict[str, Any]:
        """Say whether sync is configured, how the last one went, and open conflicts."""
        from ouro.sync.api import sync_status

        return sync_status(self.folder)

    @verb
    def resolve(self, conflict_id: Annotated[str, P("the kept conflict's id")]) -> dict[str, Any]:
        """Mark a kept sync conflict resolved (after reading both versions)."""
        from ouro.sync.api import resolve

        return resolve(self.folder, conflict_id)

    @verb
    def habit(
        self, *, cadence: Annotated[str | None, P("how often (default: the sync interval)")] = None
    ) -> dict[str, Any]:
        """Write the built-in sync habit (habits/sync.yaml) so 'ouro habits' runs it."""
        from ouro.sync.api import add_sync_habit

        return add_sync_habit(self.folder, cadence=cadence)
