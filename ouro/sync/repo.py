"""The bundle's own repository (``<bundle>/.git``) and the project around it.

Contract:
- A bundle syncs through a git repository whose work tree is the bundle root
  (``<bundle>/.git``): the shape a clone on a second machine has. ouro creates
  it when it is missing, adopts it when it is there, and never runs a git
  command that writes anywhere else (``ouro.store.git`` pins every call to it).
- A bundle inside a project's repository stays inside it: ouro never changes
  the project's remotes, branches, HEAD, index, config, hooks or files. To the
  project's git the bundle folder is then a nested repository (``?? ari.ouro/``),
  unless the project already tracks bundle files, which it keeps tracking as
  before. ``project_around`` finds out which, by read-only probes, so that
  ``ouro sync init`` can say so.
- A bundle whose sync was set up by an earlier ouro through the enclosing
  repository (``state/sync/config.json`` and no ``<bundle>/.git``) is refused by
  ``require_own_repository`` with the next step (``ouro sync init``).
- A ``<bundle>/.git`` that leads out of the bundle (a symlink, a gitfile, a
  symlink inside it, a ``core.worktree`` elsewhere) is refused by every entry
  point before any git command runs (``ouro.store.git.check_own_repository``),
  so an enclosing project's repository can never be adopted through it.
- A remote that exists is never repointed: ``add_remote`` refuses another URL,
  naming the remote and both URLs. A local path is stored absolute (taken from
  the caller's current folder), so it means the same from the bundle root.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import Conflict
from ouro.store.git import Git, SyncError, check_own_repository

REMOTE = "origin"


@dataclass(frozen=True)
class Project:
    """The repository around the bundle (read, never written)."""

    root: Path
    relative: str  # the bundle folder, relative to the project root
    tracked: int  # bundle files the project's index holds
    ignored: bool  # the project's ignore rules exclude the bundle folder

    def describe(self) -> list[str]:
        rel = self.relative
        lines = [
            f"project: {self.root} is a git repository of its own; ouro never commits, "
            "pushes or changes anything there"
        ]
        if self.tracked:
            lines.append(
                f"  it already tracks {self.tracked} file(s) of {rel}/ and keeps doing so; to stop: "
                f"git -C {self.root} rm -r -q --cached {rel} && echo '/{rel}/' >> "
                f"{self.root / '.gitignore'}"
            )
        elif self.ignored:
            lines.append(f"  it ignores {rel}/ (nothing to do)")
        else:
            lines.append(
                f"  it sees {rel}/ as a nested repository: add '/{rel}/' to "
                f"{self.root / '.gitignore'} so 'git add -A' there leaves it out"
            )
        return lines

    def to_json(self) -> dict[str, object]:
        return {
            "root": str(self.root),
            "bundlePath": self.relative,
            "tracksBundleFiles": self.tracked,
            "ignoresBundle": self.ignored,
        }


def has_own_repository(bundle: Bundle) -> bool:
    """``<bundle>/.git`` is there (a dangling symlink counts: it is refused, never replaced)."""
    return os.path.lexists(bundle.root / ".git")


def project_around(bundle: Bundle) -> Project | None:
    """The repository enclosing the bundle folder, by read-only git probes."""
    root = Path(os.path.realpath(bundle.root))
    probe = Git.outside(root.parent)
    top = probe.run("rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0 or not top.stdout.strip():
        return None
    project = Path(os.path.realpath(top.stdout.decode("utf-8", "replace").strip()))
    try:
        relative = root.relative_to(project).as_posix()
    except ValueError:
        return None
    inside = Git.outside(project)
    listed = inside.run("ls-files", "-z", "--", relative, check=False).stdout
    tracked = sum(1 for name in listed.split(b"\0") if name)
    ignored = inside.ok("check-ignore", "-q", "--", relative)
    return Project(project, relative, tracked, ignored)


def own_repository(bundle: Bundle, branch: str | None) -> bool:
    """Make sure ``<bundle>/.git`` is a repository of the bundle's own; True if created now.

    One that leads out of the bundle (a symlink, a gitfile, a ``core.worktree``
    elsewhere …) is refused before any git command runs (``check_own_repository``).
    """
    root = Path(os.path.realpath(bundle.root))
    if not has_own_repository(bundle):
        Git.outside(root, again="ouro sync init").run(
            "init", "-q", "-b", branch or "main", str(root)
        )
        try:
            check_own_repository(root)  # a git template could still make it lead elsewhere
        except SyncError:
            shutil.rmtree(root / ".git", ignore_errors=True)  # never follows a symlink
            raise
        return True
    check_own_repository(root)
    return False


def require_own_repository(bundle: Bundle) -> None:
    """Refuse to sync a bundle that has no repository of its own (set up by an older ouro),
    or whose ``.git`` leads out of the bundle (``check_own_repository``)."""
    if has_own_repository(bundle):
        check_own_repository(Path(os.path.realpath(bundle.root)))
        return
    project = project_around(bundle)
    where = (
        f"an earlier ouro set it up to sync through the enclosing repository {project.root}, "
        "and ouro no longer commits or pushes in a project's repository"
        if project
        else "its repository (.git in the bundle folder) is gone"
    )
    raise SyncError(
        f"sync is configured for {bundle.root} but the bundle has no git repository of "
        f"its own: {where}",
        hint="run 'ouro sync init --remote URL' (it gives the bundle its own history at "
        f"{bundle.root / '.git'} and leaves any project repository as it is), then 'ouro sync'",
    )


def local_url(url: str, cwd: Path | None = None) -> str:
    """``url`` with a local path made absolute (git's rule: no ``:`` before the first ``/``)."""
    if "://" in url or ":" in url.split("/", 1)[0]:
        return url
    return os.path.abspath(os.path.join(cwd or Path.cwd(), os.path.expanduser(url)))


def same_url(have: str, want: str, root: Path) -> bool:
    if have == want:
        return True
    if local_url(have, root) == local_url(want, root):
        return os.path.realpath(local_url(have, root)) == os.path.realpath(local_url(want, root))
    return False


def add_remote(git: Git, url: str) -> bool:
    """Add ``origin`` -> ``url``; True if added, False if it already names ``url``."""
    current = git.run("remote", "get-url", REMOTE, check=False)
    if current.returncode != 0:
        git.run("remote", "add", REMOTE, url)
        return True
    have = current.stdout.decode("utf-8", "replace").strip()
    if same_url(have, url, git.cwd):
        return False
    raise Conflict(
        f"the bundle's remote {REMOTE} already points at {have}; ouro will not repoint it to {url}",
        hint=f"to move the bundle to {url}: git -C {git.cwd} remote set-url {REMOTE} {url}, "
        "then run 'ouro sync init' again",
    )


def remote_url(git: Git) -> str | None:
    proc = git.run("remote", "get-url", REMOTE, check=False)
    return proc.stdout.decode("utf-8", "replace").strip() if proc.returncode == 0 else None


def remote_has_branch(git: Git, branch: str) -> bool:
    proc = git.run("ls-remote", "--heads", REMOTE, branch, check=False)
    if proc.returncode != 0:
        raise SyncError(
            f"cannot reach the remote {REMOTE}: {proc.stderr.decode(errors='replace').strip()}",
            hint="check the URL (a path, file://, ssh or https), then run 'ouro sync init' again",
        )
    return bool(proc.stdout.strip())
