"""``ouro sync clone URL PATH``: join a second machine to a bundle from its remote.

Contract:
- PATH must not exist, or be an empty folder; anything else is refused and
  left as it is.
- ``git clone --no-checkout``, then the bundle's branch is checked out,
  whatever the remote's HEAD names (a plain ``git init --bare`` names
  ``master``, where ouro pushes ``main``): ``--branch`` when given, else the
  branch the remote's HEAD names if it holds ``bundle.json`` at its root, else
  the one branch that does. None, or several with no way to choose, is refused
  with the branches named.
- Then what ``ouro sync init`` does (``ouro.sync.setup``), and the derived
  files (resume checkpoint, entities, notes manifest), which never travel, are
  built. Any failure removes what the clone made, so PATH is as it was.
- ``explain_unopened``: a folder that is a git clone with no ``bundle.json``
  (what a bare ``git clone`` of such a remote leaves) gets an error saying
  which branch holds the bundle and what to run, instead of discovery's
  "run ouro init" (which would start a second bundle).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import BundleExists, BundleNotFound, InvalidInput, OuroError
from ouro.store.git import Git, SyncError, first_line
from ouro.sync import state
from ouro.sync.repo import REMOTE, local_url
from ouro.sync.run import Regenerate
from ouro.sync.setup import sync_init

CLONE_TIMEOUT = 600.0


def _remote_branches(git: Git) -> list[str]:
    prefix = f"refs/remotes/{REMOTE}/"
    names = git.out("for-each-ref", "--format=%(refname)", prefix).splitlines()
    return sorted(n[len(prefix) :] for n in names if n != f"{prefix}HEAD")


def _holds_bundle(git: Git, ref: str) -> bool:
    return git.ok("cat-file", "-e", f"{ref}:bundle.json")


def _head_name(git: Git) -> str | None:
    proc = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False)
    return proc.stdout.decode().strip() or None


def bundle_branch(git: Git, url: str, wanted: str | None) -> str:
    """The remote branch that holds the bundle (see the module docstring)."""
    branches = _remote_branches(git)
    holders = [b for b in branches if _holds_bundle(git, f"refs/remotes/{REMOTE}/{b}")]
    listed = ", ".join(branches) or "none"
    if wanted is not None:
        if wanted not in branches:
            raise SyncError(
                f"{url} has no branch {wanted} (branches: {listed})",
                hint="pick one of its branches with --branch",
            )
        if wanted not in holders:
            raise SyncError(
                f"the branch {wanted} of {url} holds no bundle (no bundle.json at its root)",
                hint=f"branches that hold one: {', '.join(holders) or 'none'}",
            )
        return wanted
    head = _head_name(git)
    if head in holders:
        return str(head)
    if len(holders) == 1:
        return holders[0]
    if not branches:
        raise SyncError(
            f"{url} has no branches yet: there is no bundle to join",
            hint="on the first machine run 'ouro sync init --remote URL' and 'ouro sync' first",
        )
    if not holders:
        raise SyncError(
            f"no branch of {url} holds a bundle (bundle.json at its root; branches: {listed})",
            hint="check the URL: a bundle's remote is the one 'ouro sync init --remote URL' "
            "was given on the first machine",
        )
    raise SyncError(
        f"several branches of {url} hold a bundle ({', '.join(holders)}) and its HEAD "
        f"names {head or 'none'}",
        hint="choose one with --branch",
    )


def _empty_target(path: Path) -> bool:
    """True when PATH exists (an empty folder); refuses anything else that exists."""
    if not path.exists() and not path.is_symlink():
        return False
    if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
        return True
    raise BundleExists(
        f"{path} exists and is not an empty folder; ouro sync clone will not write into it",
        hint="choose a new or empty folder for PATH",
    )


def _undo(path: Path, existed: bool) -> None:
    """Remove what the clone made: PATH's contents, PATH, and folders git made above it."""
    if not existed:
        shutil.rmtree(path, ignore_errors=True)
        return
    for child in list(path.iterdir()):  # the folder was empty: everything here is ours
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


#: what a failed clone's hints say to run again (it removed what it made: no resuming)
AGAIN = "ouro sync clone URL PATH"


def _clone(parent: Path, url: str, target: Path) -> None:
    """``git clone --no-checkout``; a failure says to check the URL."""
    args = ("clone", "--quiet", "--no-checkout", "--origin", REMOTE, "--", url, str(target))
    proc = Git.outside(parent, timeout=CLONE_TIMEOUT, again=AGAIN).run(*args, check=False)
    if proc.returncode != 0:
        raise SyncError(
            f"git clone of {url} failed: {first_line(proc)}",
            hint="check the URL (a path to a bundle's repository, file://, ssh or https) and "
            f"that this machine can reach it, then run '{AGAIN}' again",
        )


def clone(
    url: str,
    path: Path | str,
    *,
    branch: str | None = None,
    interval: str = state.DEFAULT_INTERVAL,
    cwd: Path | None = None,
    regenerate: Regenerate,
) -> dict[str, Any]:
    """Clone the bundle at ``url`` into ``path`` and set it up to sync;
    ``regenerate`` builds its derived files (``ouro.derived.regenerate``)."""
    if not url.strip():
        raise InvalidInput("url: must not be empty", hint="pass the bundle's remote URL")
    here = cwd or Path.cwd()
    url = local_url(url.strip(), here)
    target = Path(os.path.abspath(here / Path(path).expanduser()))
    existed = _empty_target(target)
    parent = next(p for p in target.parents if p.is_dir())
    made = target if existed else next(p for p in (*target.parents[::-1], target) if not p.exists())
    try:
        _clone(parent, url, target)
        git = Git(target, again=AGAIN)
        head = _head_name(git)
        chosen = bundle_branch(git, url, branch)
        git.run("checkout", "--quiet", "--force", "-B", chosen, "--track", f"{REMOTE}/{chosen}")
        bundle = Bundle.open(target)
        result = sync_init(bundle, interval=interval)
        regenerate(bundle, lambda _step: None)  # derived files never travel
    except BaseException:
        _undo(made, existed)
        raise
    return {**result, "clonedFrom": url, "remoteHead": head}


def explain_unopened(folder: Path, exc: BundleNotFound) -> OuroError:
    """A clearer error than ``exc`` for a git clone with no bundle checked out."""
    if (folder / "bundle.json").exists() or not (folder / ".git").exists():
        return exc
    git = Git(folder)
    try:
        url = git.out("remote", "get-url", REMOTE)
        chosen = bundle_branch(git, url, None)
    except OuroError:
        return BundleNotFound(
            f"{folder} is a git repository with no bundle.json, and none of the branches it "
            "knows holds a bundle",
            hint="to join a bundle from its remote: ouro sync clone URL PATH (a new PATH); "
            "to start a new bundle: ouro init PATH",
        )
    return BundleNotFound(
        f"{folder} is a clone of {url} with no bundle checked out: its HEAD names "
        f"{_head_name(git) or 'nothing'}, the bundle is on the branch {chosen}",
        hint=f"check it out with 'git -C {folder} switch {chosen}', then run 'ouro --bundle "
        f"{folder} sync init' again ('ouro sync clone {url} PATH' does both in one step)",
    )
