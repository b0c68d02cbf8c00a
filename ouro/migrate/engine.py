"""``migrate(root, ...)``: plan, back up, apply, account, remove, finish.

Contract: the only writer of a legacy bundle. A dry run returns the plan and
writes nothing. An applied run holds ``state/locks/migrate.lock`` throughout
and moves through the phases recorded in ``state/migration/current.json``
(see ``ouro.migrate.state``); killed at any point, the next run resumes from
the last recorded phase and every step is idempotent; what a killed write
leaves (an atomic replace's temp file, an unrecorded run folder) is cleared
(``ouro.migrate.tidy``), so the result is byte-identical to an uninterrupted
run's. "done" is recorded last, after the index rebuild. Legacy roots are
removed only after the accounting proves every byte is backed up and at its
destination (``ouro.migrate.verify``); if it does not, nothing is removed and
the error names the file.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ouro.bundle import LAYOUT_VERSION, Bundle, default_agent_name
from ouro.errors import BundleNotFound, InvalidInput, OuroError
from ouro.migrate import apply, triage, verify
from ouro.migrate.facts import encode_records
from ouro.migrate.plan import Plan, build_plan
from ouro.migrate.record import IndexRebuild
from ouro.migrate.report import plan_view, write_report
from ouro.migrate.rules import LayoutStep, load_step
from ouro.migrate.scan import legacy_roots_present
from ouro.migrate.state import RunFiles, RunState
from ouro.migrate.tidy import write_atomic
from ouro.models.clock import utc_now, utc_now_iso
from ouro.models.ids import new_id
from ouro.store.atomic import atomic_write_bytes, dump_json
from ouro.store.lock import FileLock

JOURNAL_MODES = ("migrate", "quarantine")
Confirm = Callable[[dict[str, Any]], bool]


class MigrationIncomplete(OuroError):
    """The accounting failed: nothing was removed."""

    kind = "migration_incomplete"


def _backup_name(root: Path, step: LayoutStep) -> str:
    stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
    name, n = step.backup.format(timestamp=stamp), 1
    while (root / name).exists():
        n += 1
        name = step.backup.format(timestamp=f"{stamp}-{n}")
    return name


def _discard(root: Path, files: RunFiles, state: RunState) -> None:
    """A run that never finished its backup changed nothing else: start over."""
    shutil.rmtree(root / state.backup, ignore_errors=True)
    shutil.rmtree(files.run_dir(state.run_id), ignore_errors=True)
    files.current.unlink(missing_ok=True)


def migrate(
    root: Path,
    *,
    journal: str | None = None,
    dry_run: bool = False,
    confirm: Confirm | None = None,
    progress: apply.Progress = apply._noop,
    plan_file: Path | None = None,
    rebuild_index: IndexRebuild,
) -> dict[str, Any]:
    """Dry run: the plan (and, with ``plan_file``, the journal routes written there for
    review). Applied: with ``plan_file``, its (edited) routes are validated entirely
    before anything is written and honoured entry by entry; ``rebuild_index``
    (``ouro.index.sync.rebuild``) rebuilds the index last."""
    if journal is not None and journal not in JOURNAL_MODES:
        raise InvalidInput(f"--journal: {journal!r} is not one of {JOURNAL_MODES}", hint="")
    root = root.absolute()
    step = load_step()
    files = RunFiles(root, step.state)
    state = files.load()
    legacy = legacy_roots_present(root, step.legacy_roots)
    if state is None and not legacy:
        if not (root / "bundle.json").is_file():
            raise BundleNotFound(
                f"{root} is not a bundle: no bundle.json and no legacy journal/, diary/ or notes/",
                hint="point 'ouro migrate' at the bundle folder with --bundle PATH",
            )
        return {"status": "nothing", "bundle": str(root)}
    if dry_run:
        # An existing routes file is the user's review: its routes are shown (and
        # kept when it is rewritten), never silently replaced by the proposals.
        edited = (
            triage.read_routes(plan_file) if plan_file is not None and plan_file.exists() else None
        )
        if state is not None and state.reached("backed_up"):
            plan = files.read_plan(state.run_id)
            _same_routes(plan, edited, state.run_id)
        else:
            plan, _ = build_plan(
                root,
                step,
                journal_mode=journal or "migrate",
                run_id="dry-run",
                now=utc_now_iso(),
                backup=_backup_name(root, step),
                routes=edited,
                plan_file=str(plan_file) if plan_file is not None else None,
            )
        out = {
            "status": "plan",
            "dryRun": True,
            "bundle": str(root),
            "plan": plan_view(plan),
            "resumes": state.run_id if state and state.reached("backed_up") else None,
        }
        if plan_file is not None:
            entries = (plan.triage or {}).get("entries", [])
            doc = triage.review_document(str(root), entries)
            atomic_write_bytes(plan_file, dump_json(doc))
            out["planFile"] = str(plan_file)
        return out
    routes = triage.read_routes(plan_file) if plan_file is not None else None
    if routes is not None and state is None:
        # Validate the edited routes entry by entry before anything -- even the
        # lock file -- is written (planning again under the lock repeats the checks).
        build_plan(
            root,
            step,
            journal_mode=journal or "migrate",
            run_id="check",
            now=utc_now_iso(),
            backup=_backup_name(root, step),
            routes=routes,
            plan_file=str(plan_file),
        )
    lock = root / "state" / "locks" / "migrate.lock"
    with FileLock(lock, timeout=2.0, purpose="ouro migrate"):
        return _run(root, step, files, journal, confirm, progress, rebuild_index, routes, plan_file)


def _run(
    root: Path,
    step: LayoutStep,
    files: RunFiles,
    journal: str | None,
    confirm: Confirm | None,
    progress: apply.Progress,
    rebuild_index: IndexRebuild,
    routes: dict[str, dict[str, Any]] | None = None,
    plan_file: Path | None = None,
) -> dict[str, Any]:
    state = files.load()
    if state is not None and not state.reached("backed_up"):
        _discard(root, files, state)
        state = None
    resumed = state is not None
    if state is None:
        if not legacy_roots_present(root, step.legacy_roots):
            return {"status": "nothing", "bundle": str(root)}
        files.clear_orphans()
        mode = journal or "migrate"
        run_id, now = new_id("mig"), utc_now_iso()
        plan, records = build_plan(
            root,
            step,
            journal_mode=mode,
            run_id=run_id,
            now=now,
            backup=_backup_name(root, step),
            routes=routes,
            plan_file=str(plan_file) if plan_file is not None else None,
        )
        progress("plan", 1, 1)
        if confirm is not None and not confirm(plan_view(plan)):
            return {"status": "declined", "bundle": str(root)}
        files.write_plan(plan, encode_records(records))
        state = RunState(run_id, "planned", now, plan.backup, mode)
        files.save(state)
        apply.backup(root, plan, progress)
        _advance(files, state, "backed_up")
    else:
        plan = files.read_plan(state.run_id)
        if journal is not None and journal != plan.journal_mode:
            raise InvalidInput(
                f"--journal {journal}: the interrupted run {state.run_id} was planned with "
                f"--journal {plan.journal_mode}",
                hint=f"run 'ouro migrate --journal {plan.journal_mode}' to finish it",
            )
        _same_routes(plan, routes, state.run_id)
        if confirm is not None and not confirm(plan_view(plan)):
            return {"status": "declined", "bundle": str(root)}
    if not state.reached("verified"):
        # Applying is idempotent, so a run that stopped before its accounting
        # passed (killed, or a failed check since repaired) applies again.
        apply.apply_items(root, plan, files.staged_path(state.run_id), progress)
        _advance(files, state, "applied")
        problems = verify.account(root, plan)
        if problems:
            raise MigrationIncomplete(
                f"accounting failed, nothing was removed: {problems[0]}"
                + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
                hint="fix or restore the named file, then run 'ouro migrate' again; the "
                f"backup is in {plan.backup}/",
            )
        os.sync()  # backup and destinations reach the disk before any legacy file goes
        _advance(files, state, "verified")
    if not state.reached("removed"):
        problems = verify.live_problems(root, plan, step.legacy_roots)
        if problems:
            raise MigrationIncomplete(
                f"not removing the legacy roots: {problems[0]}",
                hint="move that file out of the legacy folder (or back as it was), then run "
                "'ouro migrate' again",
            )
        apply.remove_roots(root, legacy_roots_present(root, step.legacy_roots))
        _advance(files, state, "removed")
    return _finish(root, step, files, state, plan, resumed, rebuild_index)


def _same_routes(plan: Plan, routes: dict[str, dict[str, Any]] | None, run_id: str) -> None:
    """A resumed run follows its persisted plan; an edited plan that disagrees is refused."""
    if not routes:
        return
    # the entry's route, as the run's review list has it (an entry routed to task also
    # has dropped items: its done checklist items)
    planned = {e["entry"]: e["route"] for e in (plan.triage or {}).get("entries", [])}
    for loc, chosen in sorted(routes.items()):
        if planned.get(loc) != chosen["route"]:
            raise InvalidInput(
                f"--plan: {loc}: the interrupted run {run_id} routed it to "
                f"{planned.get(loc)!r}, the plan file says {chosen['route']!r}",
                hint="run 'ouro migrate' without --plan to finish the interrupted run",
            )


def _advance(files: RunFiles, state: RunState, phase: str) -> None:
    state.phase = phase
    files.save(state)


def _bump_meta(root: Path, plan: Plan, to_version: int) -> None:
    path = root / "bundle.json"
    bundle = Bundle(root)
    data = (
        bundle.read_meta() if path.is_file() else {"schemaVersion": 1, "createdAt": plan.created_at}
    )
    # every bundle.json names its agent (open refuses one that does not); an old
    # one without it gets the name ouro init would have given
    data.setdefault("agent", default_agent_name(root))
    found = data.get("migrations")
    history: list[Any] = found if isinstance(found, list) else []
    if not any(isinstance(h, dict) and h.get("runId") == plan.run_id for h in history):
        history.append(
            {
                "runId": plan.run_id,
                "from": data.get("layoutVersion", 1),
                "to": to_version,
                "at": plan.created_at,
            }
        )
    data["layoutVersion"] = to_version
    data["migrations"] = history
    write_atomic(path, dump_json(data))


def _finish(
    root: Path,
    step: LayoutStep,
    files: RunFiles,
    state: RunState,
    plan: Plan,
    resumed: bool,
    rebuild: IndexRebuild,
) -> dict[str, Any]:
    from ouro.migrate.record import rebuild_index, regenerate_manifest

    bundle = Bundle(root)
    regenerate_manifest(bundle)
    _bump_meta(root, plan, max(step.to_version, LAYOUT_VERSION))
    lines = write_report(root, step.report, plan, utc_now_iso())
    view = plan_view(plan)
    result: dict[str, Any] = {
        "status": "migrated",
        "bundle": str(root),
        "runId": plan.run_id,
        "resumed": resumed,
        "layoutVersion": max(step.to_version, LAYOUT_VERSION),
        "counts": view["counts"],
        "backup": plan.backup,
        "report": step.report,
        "reportLines": lines,
        "quarantine": step.quarantine,
        "quarantined": [i.destination for i in plan.items if i.action == "quarantined"],
        "malformedLines": [q["line"] for q in view["facts"]["quarantined"]],
        "entityConflicts": view["entityConflicts"],
        "triage": view["triage"],
        "accounting": view["accounting"],
        "collisions": [
            f"{i.source} -> {i.destination} ({i.why})"
            for i in plan.items
            if i.detail.get("collision")
        ],
        "removedRoots": view["remove"],
    }
    # The index before "done": a run killed while rebuilding it is resumed
    # here, instead of a re-run reporting "nothing" over a half-built index.
    result["index"] = rebuild_index(bundle, rebuild)
    files.finish(state, {"counts": result["counts"]})
    return result
