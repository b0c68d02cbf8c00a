"""``b.sync``: the bundle's own git history, shared with its remote.

``b.sync.run()`` is ``ouro sync`` (commit, fetch, merge losing nothing,
regenerate, push); ``ouro sync clone`` makes a bundle and is ``ouro.api``-level
(``ouro.sync.clone.clone``), not a verb of an open bundle.

``b.sync.status()`` is a pure read (config, last outcome, open conflicts, a
bundle set up by an older ouro without a repository of its own, and a
``.git`` that leads out of the bundle, which every other verb refuses:
``run``, ``init``, ``habit`` and ``resolve`` before anything is written). The
built-in sync habit is ``habits/sync.yaml`` running ``ouro sync`` on the
configured interval; ``ouro habits list|due|tick|run`` treat it like any other.
"""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.errors import InvalidInput
from ouro.spec import P, verb

Interval = Annotated[str, P("how often sync should run")]

SYNC_HABIT = "sync"
SYNC_HABIT_TEMPLATE = """\
# Built-in habit written by 'ouro sync habit': keeps this bundle in step with
# its git remote. Safe to run from any machine that has run 'ouro sync init'.
title: sync the bundle with its git remote
cadence: {cadence}
run: ouro sync
timeout: 10m
"""


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
        from ouro.sync.run import Mode, sync

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
        from ouro.errors import OuroError
        from ouro.store.git import own_repository_problem
        from ouro.sync import state
        from ouro.sync.repo import has_own_repository

        bundle = self.folder
        config = state.read_config(bundle)
        conflicts, problems = state.open_conflicts(bundle)
        if config is not None and not has_own_repository(bundle):
            problems = [
                "the bundle has no git repository of its own (an older ouro synced it through "
                "the repository around it); 'ouro sync' refuses until 'ouro sync init' sets one "
                "up",
                *problems,
            ]
        elif config is not None:
            try:  # read-only: the file system and one 'git rev-parse'
                foreign = own_repository_problem(bundle.root)
            except OuroError as exc:  # git missing: say so, the rest still answers
                foreign = exc.message
            if foreign:
                problems = [f"{foreign}; 'ouro sync' refuses to run git there", *problems]
        return {
            "configured": config is not None,
            "config": config,
            "last": state.read_status(bundle),
            "openConflicts": [
                {k: c.get(k) for k in ("id", "path", "kind", "kept", "detectedAt", "recordPath")}
                for c in conflicts
            ],
            "problems": problems,
        }

    @verb
    def resolve(self, conflict_id: Annotated[str, P("the kept conflict's id")]) -> dict[str, Any]:
        """Mark a kept sync conflict resolved (after reading both versions)."""
        from ouro.arc.paths import arc_lock
        from ouro.errors import Conflict, CorruptFile, NotFound
        from ouro.models.clock import utc_now_iso
        from ouro.store import jsonio
        from ouro.store.atomic import atomic_write_json
        from ouro.store.git import check_own_repository
        from ouro.sync.repo import has_own_repository
        from ouro.sync.state import CONFLICTS_DIR, RECORD_LIMIT, conflicts_dir, read_inside, why

        if not conflict_id.startswith("cf-") or "/" in conflict_id or "\0" in conflict_id:
            raise InvalidInput(
                f"conflict id {conflict_id!r} is not a sync conflict id (cf-…)",
                hint="list open conflicts with 'ouro sync status'",
            )
        bundle = self.folder
        if has_own_repository(bundle):  # the record travels with the next sync: same refusal
            check_own_repository(bundle.root)
        path = conflicts_dir(bundle) / f"{conflict_id}.json"
        with arc_lock(bundle, "sync resolve"):  # an arc/ file: serialized with sync's merge
            try:
                record = jsonio.loads(read_inside(bundle.root, path, RECORD_LIMIT))
            except FileNotFoundError:
                raise NotFound(
                    f"no sync conflict {conflict_id} in {CONFLICTS_DIR}/",
                    hint="list open conflicts with 'ouro sync status'",
                ) from None
            except (OSError, jsonio.JSONDecodeError) as exc:
                reason = why(exc) if isinstance(exc, OSError) else f"not JSON ({exc})"
                raise CorruptFile(
                    f"{CONFLICTS_DIR}/{conflict_id}.json: unreadable ({reason})",
                    hint=f"check {path} (a conflict record is a JSON file ouro sync wrote); "
                    "nothing was changed",
                ) from None
            if not isinstance(record, dict):
                raise CorruptFile(
                    f"{CONFLICTS_DIR}/{conflict_id}.json: not a JSON object",
                    hint=f"check {path}; nothing was changed",
                )
            if record.get("resolved"):
                raise Conflict(
                    f"sync conflict {conflict_id} is already resolved", hint="nothing to do"
                )
            record["resolved"] = True
            record["resolvedAt"] = utc_now_iso()
            atomic_write_json(path, record)
        return {"id": conflict_id, "path": record.get("path"), "resolved": True}

    @verb
    def habit(
        self, *, cadence: Annotated[str | None, P("how often (default: the sync interval)")] = None
    ) -> dict[str, Any]:
        """Write the built-in sync habit (habits/sync.yaml) so 'ouro habits' runs it."""
        from ouro.errors import Conflict
        from ouro.habits.cadence import CadenceError, parse_cadence
        from ouro.store.atomic import atomic_write_text
        from ouro.sync import state
        from ouro.sync.repo import require_own_repository

        bundle = self.folder
        config = state.require_config(bundle)
        require_own_repository(bundle)
        chosen = cadence or str(config.get("interval") or state.DEFAULT_INTERVAL)
        try:
            parse_cadence(chosen)
        except CadenceError as exc:  # a ValueError of the habits domain: a usage error here
            if cadence:
                raise InvalidInput(
                    f"cadence: {exc}", hint="pass --cadence 30m (or 2h, @daily, '*/15 * * * *')"
                ) from None
            raise InvalidInput(
                f"cadence: the sync interval {chosen!r} is not a habit cadence (habits run at "
                "minute precision: an interval in m, h, d or w, a cron expression or a macro)",
                hint="pass one with --cadence, e.g. 'ouro sync habit --cadence 30m'",
            ) from None
        path = bundle.habits / f"{SYNC_HABIT}.yaml"
        if path.exists():
            raise Conflict(
                f"habits/{SYNC_HABIT}.yaml already exists",
                hint="edit it by hand, or delete it and run 'ouro sync habit' again",
            )
        atomic_write_text(path, SYNC_HABIT_TEMPLATE.format(cadence=chosen))
        return {"habit": SYNC_HABIT, "locator": f"habits/{SYNC_HABIT}.yaml", "cadence": chosen}
