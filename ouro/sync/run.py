"""``ouro sync``: commit what changed, fetch, merge, regenerate, push.

One run, under ``state/locks/sync.lock`` (one sync per bundle at a time), in
the bundle's own repository only (``<bundle>/.git``; a bundle without one, set
up by an older ouro through a project's repository, is refused):

1. clear git lock files a killed git left behind (older than a few seconds);
2. ``git fetch`` the configured remote (no bundle lock held: the network is slow);
3. with every writer lock held (``ouro.sync.locks``):
   a. finish a merge an earlier, interrupted sync left stopped (``MERGE_HEAD``);
   b. stage the bundle (``git add -A``); if there is anything to push, append a
      ``sync_pushed`` event saying what (it travels inside the commit it
      announces, so syncing never needs a second commit); commit with a message
      that counts what changed (n facts, n events, claims changed …);
   c. ``git merge --no-commit`` the remote branch; finish it by the per-kind
      rules in ``ouro.sync.conflicts`` (each conflict: a record holding both
      versions + a ``sync_conflict`` event); commit the merge;
4. regenerate the derived files (resume checkpoint, entities, notes manifest)
   and let an existing index catch up incrementally, when the merge changed
   anything;
5. ``git push``; if the remote moved meanwhile, go round again (3 tries);
6. deliver queued messages (``ouro.messages.retry``: remote peers by git); the
   outcome is the result's ``messages``, a failure leaves them queued.

Outcome: ``state/sync/status.json`` always; a ``sync_failed`` event when a step
fails (committed by the next sync). A sync that only pulls, or finds nothing
on either side, records no event, so two machines that are in step stay
byte-identical. A run killed at any point leaves a bundle the next run
completes: writes are atomic, git's own lock files are cleared, and a stopped
merge is finished rather than aborted (aborting would discard writes made
since).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ouro.arc.recorder import append_locked, build_event, record_event
from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.models.clock import utc_now_iso
from ouro.store.git import Git, SyncError, first_line
from ouro.store.lock import FileLock
from ouro.sync import state
from ouro.sync.conflicts import MergeOutcome, Merger
from ouro.sync.locks import incoming_task_ids, writer_locks
from ouro.sync.repo import require_own_repository
from ouro.sync.summary import describe, staged_summary

Mode = Literal["both", "pull", "push"]
Progress = Callable[[str], None]
PUSH_TRIES = 3
STALE_GIT_LOCK = 5.0
_GIT_LOCKS = ("index.lock", "HEAD.lock", "ORIG_HEAD.lock", "MERGE_HEAD.lock", "packed-refs.lock")


@dataclass
class Run:
    bundle: Bundle
    git: Git
    remote: str | None
    branch: str
    mode: Mode
    progress: Progress
    regenerate: Regenerate
    notes: list[str] = field(default_factory=list)
    committed: dict[str, int] = field(default_factory=dict)
    pulled: int = 0
    pushed: bool = False
    merged: bool = False
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    event_id: str | None = None

    @property
    def remote_ref(self) -> str:
        return f"refs/remotes/{self.remote}/{self.branch}"

    def head(self) -> str | None:
        proc = self.git.run("rev-parse", "--verify", "-q", "HEAD", check=False)
        return proc.stdout.decode().strip() or None

    def has_remote_branch(self) -> bool:
        return self.remote is not None and self.git.ok(
            "rev-parse", "--verify", "-q", self.remote_ref
        )

    def ahead(self) -> bool:
        head = self.head()
        if head is None or self.remote is None:
            return False
        if not self.has_remote_branch():
            return True
        count = self.git.out("rev-list", "--count", f"{self.remote_ref}..HEAD")
        return int(count or "0") > 0


def clear_stale_git_locks(git: Git, *, older_than: float = STALE_GIT_LOCK) -> list[str]:
    """Remove git lock files left by a killed git (we hold the sync lock; none is ours)."""
    gdir = git.git_dir()
    candidates = [gdir / name for name in _GIT_LOCKS]
    refs = gdir / "refs"
    if refs.is_dir():
        candidates += list(refs.rglob("*.lock"))
    removed = []
    for path in candidates:
        deadline = time.monotonic() + older_than
        while path.exists() and time.monotonic() < deadline:
            try:
                if time.time() - path.stat().st_mtime >= older_than:
                    break
            except FileNotFoundError:
                break
            time.sleep(0.1)
        if path.exists():
            path.unlink(missing_ok=True)
            removed.append(str(path.relative_to(gdir)))
    return removed


def _fetch(run: Run) -> None:
    if run.remote is None or run.mode == "push":
        return
    run.progress(f"fetching {run.remote}")
    run.git.run("fetch", "--quiet", "--no-tags", run.remote)


def _pulls(run: Run) -> bool:
    return run.mode != "push" and run.has_remote_branch()


def _merging(git: Git) -> bool:
    return git.ok("rev-parse", "--verify", "-q", "MERGE_HEAD")


def _finish_merge(run: Run, message: str) -> None:
    """Finish the stopped merge by the per-kind rules, then commit it."""
    run.progress("applying the merge rules")
    outcome: MergeOutcome = Merger(run.bundle, run.git).finish()
    run.conflicts.extend(outcome.conflicts)
    run.malformed.extend(m.describe() for m in outcome.malformed)
    run.notes.extend(outcome.skipped)
    for record in outcome.conflicts:
        line = build_event(
            run.bundle,
            "sync_conflict",
            f"sync conflict in {record['path']} ({record['kind']}): kept {record['kept']}, "
            f"both versions in {record['recordPath']}",
            produced_refs=[{"kind": "sync_conflict", "locator": record["recordPath"]}],
            meta={"conflictId": record["id"], "path": record["path"], "kind": record["kind"]},
        )
        append_locked(run.bundle, line)
    run.git.run("add", "-A", "--", ".")
    left = run.git.lines("diff", "--name-only", "--diff-filter=U", "-z")
    if left:
        raise SyncError(
            f"the merge left unmerged paths outside the bundle: {', '.join(left[:5])}",
            hint="resolve them with git (git status), commit, then run 'ouro sync' again",
        )
    if outcome.conflicts:
        message += f"; {len(outcome.conflicts)} conflict(s) kept (arc/sync/conflicts/)"
    run.git.run("commit", "-q", "--no-edit", "-m", message)
    run.merged = True


def _commit_local(run: Run) -> None:
    git = run.git
    head = run.head()
    git.run("add", "-A", "--", ".")
    counts = staged_summary(git, head)
    will_push = run.mode != "pull" and run.remote is not None and (bool(counts) or run.ahead())
    if will_push:
        line = build_event(
            run.bundle,
            "sync_pushed",
            f"sync to {run.remote}/{run.branch}: {describe(counts)}",
            meta={"remote": run.remote, "branch": run.branch, "counts": counts},
        )
        append_locked(run.bundle, line)
        run.event_id = str(line["id"])
        git.run("add", "-A", "--", ".")
    if git.run("diff", "--cached", "--quiet", check=False).returncode != 0:
        run.progress("committing")
        git.run("commit", "-q", "-m", f"ouro sync: {describe(counts)}")
        run.committed = counts


def _merge_remote(run: Run) -> None:
    if run.mode == "push" or not run.has_remote_branch():
        return
    git = run.git
    if git.ok("merge-base", "--is-ancestor", run.remote_ref, "HEAD"):
        return
    before = run.head()
    incoming = int(git.out("rev-list", "--count", f"HEAD..{run.remote_ref}") or "0")
    run.progress(f"merging {incoming} commit(s) from {run.remote}/{run.branch}")
    proc = git.run("merge", "--no-edit", "--no-commit", "--no-stat", run.remote_ref, check=False)
    if not _merging(git):
        if proc.returncode != 0:
            why = first_line(proc)
            hint = "fix what git says, then run 'ouro sync' again"
            if "unrelated histories" in why:
                hint = "this bundle and the remote's were started apart; clone the remote instead"
            raise SyncError(f"git merge failed: {why}", hint=hint)
        run.pulled += incoming  # a fast-forward
        run.merged = run.head() != before
        return
    run.pulled += incoming
    _finish_merge(run, f"ouro sync: merge {run.remote}/{run.branch} ({incoming} commit(s))")


#: rebuilds the derived files after a merge: ``ouro.derived.regenerate``, which
#: the library (``ouro.api``, a layer above this domain) passes in
Regenerate = Callable[[Bundle, Progress], Any]


def _push(run: Run) -> bool:
    """Push; False when the remote moved meanwhile (fetch and merge again)."""
    if run.mode == "pull" or run.remote is None or not run.ahead():
        return True
    run.progress(f"pushing to {run.remote}/{run.branch}")
    proc = run.git.run(
        "push", "--quiet", "-u", run.remote, f"HEAD:refs/heads/{run.branch}", check=False
    )
    if proc.returncode == 0:
        run.pushed = True
        return True
    err = proc.stderr.decode("utf-8", "replace")
    # "cannot lock ref": another push updated the branch between git's check
    # and its ref update (two machines pushing at once) — the remote moved too.
    moved = any(
        sign in err
        for sign in ("fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref")
    )
    if run.mode == "both" and moved:
        return False
    hint = "run 'ouro sync' again"
    if moved:
        hint = "the remote has changes this bundle lacks: run 'ouro sync' (not --push-only)"
    raise SyncError(f"git push failed: {first_line(proc)}", hint=hint)


def _cycle(run: Run) -> None:
    _fetch(run)
    targets = [
        ref for ref, on in ((run.remote_ref, _pulls(run)), ("MERGE_HEAD", _merging(run.git))) if on
    ]
    with writer_locks(run.bundle, incoming_task_ids(run.bundle, run.git, targets)):
        if _merging(run.git):
            run.notes.append("finished a merge an interrupted sync had left stopped")
            _finish_merge(run, "ouro sync: finish an interrupted merge")
        _commit_local(run)
        _merge_remote(run)


def _sync(run: Run) -> None:
    removed = clear_stale_git_locks(run.git)
    if removed:
        run.notes.append("removed stale git lock file(s): " + ", ".join(removed))
    for _ in range(PUSH_TRIES):
        _cycle(run)
        if run.merged:
            run.progress("regenerating derived files")
            run.regenerate(run.bundle, run.progress)
        if _push(run):
            return
        run.notes.append("the remote moved during the sync; merging again")
    raise SyncError(
        f"the remote kept moving: {PUSH_TRIES} pushes were rejected",
        hint="another machine is syncing right now; run 'ouro sync' again in a moment",
    )


def sync(
    bundle: Bundle,
    *,
    regenerate: Regenerate,
    mode: Mode = "both",
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One ``ouro sync`` (see the module docstring); ``regenerate`` rebuilds the
    derived files after a merge (``ouro.derived.regenerate``)."""
    config = state.require_config(bundle)
    remote = config.get("remote")
    if remote is None and mode != "both":
        raise OuroError(
            f"--{mode}-only needs a remote; this bundle has none",
            hint="add one with 'ouro sync init --remote URL'",
        )
    run = Run(
        bundle,
        Git(bundle.root),
        remote,
        str(config.get("branch") or "main"),
        mode,
        progress or (lambda _step: None),
        regenerate,
    )
    previous = state.read_status(bundle) or {}
    started = utc_now_iso()
    with FileLock(bundle.lock_path("sync"), timeout=state.SYNC_LOCK_TIMEOUT, purpose="ouro sync"):
        try:
            require_own_repository(bundle)  # never a project's repository (docs/sync.md)
            run.git.ensure_identity(str(bundle.read_meta().get("agent") or "ouro"))
            _sync(run)
        except OuroError as exc:
            _failed(run, exc, started, previous)
            raise
        result = _result(run, started)
        state.write_status(bundle, {**result, "lastSuccessAt": result["lastAttemptAt"]})
    from ouro.messages import retry

    # Queued messages go out after the bundle's own sync (remote peers by git);
    # one that fails stays queued with the reason, the sync still succeeded.
    result["messages"] = retry(bundle)
    return result


def _result(run: Run, started: str) -> dict[str, Any]:
    return {
        "lastAttemptAt": started,
        "lastResult": "ok",
        "mode": run.mode,
        "remote": run.remote,
        "branch": run.branch,
        "head": run.head(),
        "committed": run.committed,
        "pulledCommits": run.pulled,
        "merged": run.merged,
        "pushed": run.pushed,
        "eventId": run.event_id,
        "conflicts": [
            {k: c.get(k) for k in ("id", "path", "kind", "kept", "recordPath")}
            for c in run.conflicts
        ],
        "malformed": run.malformed,
        "notes": run.notes,
    }


def _failed(run: Run, exc: OuroError, started: str, previous: dict[str, Any]) -> None:
    state.write_status(
        run.bundle,
        {
            "lastAttemptAt": started,
            "lastResult": "failed",
            "lastError": exc.message,
            "lastHint": exc.hint,
            "lastSuccessAt": previous.get("lastSuccessAt"),
            "mode": run.mode,
            "remote": run.remote,
            "branch": run.branch,
            "notes": run.notes,
        },
    )
    record_event(
        run.bundle,
        "sync_failed",
        f"sync with {run.remote or 'no remote'}/{run.branch} failed: {exc.message}",
        meta={"remote": run.remote, "branch": run.branch, "error": exc.message, "hint": exc.hint},
    )
