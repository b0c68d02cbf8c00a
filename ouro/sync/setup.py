"""``ouro sync init``: give the bundle a git history of its own that ``ouro sync`` can move.

Contract:
- The bundle syncs through ``<bundle>/.git``, a repository whose work tree is
  the bundle root (``ouro.sync.repo``): created when missing (branch ``main``
  unless ``--branch``), adopted when there. A repository *around* the bundle
  (a project holding it in a subfolder) is never used and never changed; the
  result says what its git now sees and what to add to its ``.gitignore``.
- ``.gitignore`` and ``.gitattributes`` in the bundle root get every line of
  the bundle template's versions that they lack (lines already there, and
  lines added by hand, are kept). Derived files the repository already tracks
  are untracked (``git rm --cached``: the files themselves stay).
- ``--remote URL`` adds the remote ``origin``; one that exists with another URL
  is refused, never repointed. A repository created now next to a remote that
  already holds the branch is refused (join it with ``ouro sync clone``).
- git with no identity on this machine: the agent's name is written to the
  bundle repository's own config (never the global one).
- Writes ``state/sync/config.json`` and commits what is there, so the first
  ``ouro sync`` starts from a clean tree. Running it again changes nothing
  that is already right. A repository created by a run that then fails is
  removed again. Holds ``state/locks/sync.lock``, so no sync runs meanwhile.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.names import parse_duration
from ouro.errors import CorruptFile, InvalidInput
from ouro.models.clock import utc_now_iso
from ouro.resources import templates_dir
from ouro.store.atomic import atomic_write_text
from ouro.store.git import Git, SyncError
from ouro.store.lock import FileLock
from ouro.sync import state
from ouro.sync.repo import (
    REMOTE,
    add_remote,
    has_own_repository,
    local_url,
    own_repository,
    project_around,
    remote_has_branch,
    remote_url,
)

#: Template file -> the bundle file whose missing lines it supplies.
POLICY_FILES = {"gitignore": ".gitignore", "gitattributes": ".gitattributes"}
#: Derived files: regenerated on every machine, never committed (see .gitignore).
DERIVED = (
    "arc/flight-recorder/latest.json",
    "arc/flight-recorder/context-loss-sentinel/latest.json",
    "arc/flight-recorder/context-loss-sentinel/latest-ready.json",
    "arc/flight-recorder/context-loss-sentinel/receipts",
    "desk/_record/diary/entities.json",
    "desk/_record/notes/.index.json",
    "state",
)


def ensure_policy_files(bundle: Bundle) -> list[str]:
    """Add the template's missing lines to .gitignore/.gitattributes; names changed files."""
    changed = []
    for template, name in POLICY_FILES.items():
        wanted = (templates_dir() / "bundle" / template).read_text(encoding="utf-8")
        path = bundle.root / name
        current = _policy_text(bundle, path)
        have = {line.strip() for line in current.splitlines()}
        rules = [ln for ln in wanted.splitlines() if ln.strip() and not ln.startswith("#")]
        if all(rule.strip() in have for rule in rules):
            continue
        if not current:
            text = wanted
        else:
            missing = [ln for ln in rules if ln.strip() not in have]
            sep = "" if current.endswith("\n") else "\n"
            text = current + sep + "# added by 'ouro sync init' (docs/sync.md)\n"
            text += "".join(f"{ln}\n" for ln in missing)
        atomic_write_text(path, text)
        changed.append(name)
    return changed


def _policy_text(bundle: Bundle, path: Path) -> str:
    """The text of ``.gitignore``/``.gitattributes`` ("" when missing); one that is
    not a regular file inside the bundle (a FIFO, a symlink leading outside) or
    not UTF-8 is refused, never read or replaced."""
    try:
        return state.read_inside(bundle.root, path, state.STATE_LIMIT).decode("utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        reason = state.why(exc) if isinstance(exc, OSError) else "not UTF-8 text"
        raise CorruptFile(
            f"{path}: {reason}; 'ouro sync init' reads and completes it",
            hint=f"replace {path} with a regular file of git rules (or remove it: ouro "
            "writes the bundle template's), then run 'ouro sync init' again",
        ) from None


def _check_interval(interval: str) -> str:
    parse_duration(interval, field="interval")
    return interval


def _has_commits(git: Git) -> bool:
    return git.ok("rev-parse", "--verify", "-q", "HEAD")


def _current_branch(git: Git) -> str:
    proc = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False)
    name = proc.stdout.decode().strip()
    if proc.returncode != 0 or not name:
        raise SyncError(
            "the bundle's repository is not on a branch (detached HEAD)",
            hint="check out a branch (git switch main), then run 'ouro sync init' again",
        )
    return name


def _previous_config(bundle: Bundle) -> dict[str, Any] | None:
    try:
        return state.read_config(bundle)
    except CorruptFile:
        return None  # rewritten below: that is what its hint asks for


def sync_init(
    bundle: Bundle,
    *,
    remote: str | None = None,
    interval: str = state.DEFAULT_INTERVAL,
    branch: str | None = None,
    cwd: Path | None = None,
) -> dict[str, Any]:
    """Set the bundle up to sync (see the module docstring); a relative path remote is
    taken from ``cwd`` (default: the current folder)."""
    if remote is not None and not remote.strip():
        raise InvalidInput("remote: must not be empty", hint="pass --remote URL or leave it out")
    interval = _check_interval(interval)
    url = local_url(remote.strip(), cwd) if remote else None
    with FileLock(bundle.lock_path("sync"), timeout=state.SYNC_LOCK_TIMEOUT, purpose="sync init"):
        previous = _previous_config(bundle)
        through_project = previous is not None and not has_own_repository(bundle)
        project = project_around(bundle)
        created = own_repository(bundle, branch)
        try:
            git = Git(bundle.root, again="ouro sync init")
            result = _configure(bundle, git, url, interval, created, previous)
        except BaseException:
            if created:  # nothing half-made stays behind: the repository goes again
                shutil.rmtree(bundle.root / ".git", ignore_errors=True)
            raise
    earlier = {"project": str(project.root) if project else None} if through_project else None
    return {**result, "project": project.to_json() if project else None, "earlierSetup": earlier}


def _configure(
    bundle: Bundle,
    git: Git,
    url: str | None,
    interval: str,
    created: bool,
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    had_commits = _has_commits(git)
    current = _current_branch(git)
    added = False
    if url:
        added = add_remote(git, url)
        if created and remote_has_branch(git, current):
            raise SyncError(
                f"the remote {url} already holds a branch {current} and this bundle "
                "has no history of its own to merge with it",
                hint=f"join that bundle instead: ouro sync clone {url} PATH",
            )
    # after the refusals above: a refused run leaves no identity behind in the config
    identity = git.ensure_identity(str(bundle.read_meta().get("agent") or "ouro"))
    changed = ensure_policy_files(bundle)
    tracked = git.lines("ls-files", "-z", "--", *DERIVED)
    if tracked:
        git.run("rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", *DERIVED)
    have_url = remote_url(git)
    config = {
        "remote": REMOTE if have_url else None,
        "branch": current,
        "interval": interval,
        "configuredAt": (previous or {}).get("configuredAt") or utc_now_iso(),
    }
    state.write_config(bundle, config)
    git.run("add", "-A", "--", ".")
    committed = False
    if git.run("diff", "--cached", "--quiet", check=False).returncode != 0:
        message = "ouro sync init: " + (
            "start the bundle's history"
            if not had_commits
            else "ignore machine state and derived files"
        )
        git.run("commit", "-q", "-m", message)
        committed = True
    return {
        "bundle": str(bundle.root),
        "repository": "created" if created else "adopted",
        "root": str(bundle.root),
        "gitDir": str(bundle.root / ".git"),
        "branch": current,
        "remote": config["remote"],
        "url": have_url,
        "remoteAdded": added,
        "identity": git.out("config", "user.name") if identity else None,
        "interval": interval,
        "policyFilesChanged": changed,
        "untracked": tracked,
        "committed": committed,
    }
