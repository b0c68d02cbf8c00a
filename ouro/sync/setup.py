"""``ouro sync init``: make the bundle a git working tree that ``ouro sync`` can move.

Contract:
- No repository around the bundle → ``git init`` in the bundle root (branch
  ``main`` unless ``--branch``). A repository already around it (the bundle
  itself, or a project that holds the bundle in a subfolder) is adopted;
  ouro only ever stages and commits paths inside the bundle.
- ``.gitignore`` and ``.gitattributes`` in the bundle root get every line of
  the bundle template's versions that they lack (lines already there, and
  lines added by hand, are kept). Derived files a repository already tracks
  are untracked (``git rm --cached``: the files themselves stay).
- ``--remote URL`` adds (or repoints) the remote ``origin``. A remote that
  already holds the branch and a repository with no commit of its own: the
  bundle was cloned, fine. A brand-new repository next to a remote that
  already holds another bundle is refused (clone that one instead).
- Writes ``state/sync/config.json`` and commits what is there, so the first
  ``ouro sync`` starts from a clean tree. Running it again changes nothing
  that is already right.
"""

from __future__ import annotations

from typing import Any

from ouro.bundle import Bundle
from ouro.desk.names import parse_duration
from ouro.errors import InvalidInput
from ouro.models.clock import utc_now_iso
from ouro.resources import templates_dir
from ouro.store.atomic import atomic_write_text
from ouro.sync import state
from ouro.sync.git import Git, SyncError

REMOTE = "origin"
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
        current = path.read_text(encoding="utf-8") if path.exists() else ""
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


def _check_interval(interval: str) -> str:
    parse_duration(interval, field="interval")
    return interval


def _has_commits(git: Git) -> bool:
    return git.ok("rev-parse", "--verify", "-q", "HEAD")


def _adopt_or_init(bundle: Bundle, git: Git, branch: str | None) -> tuple[str, bool]:
    """(how the repository came to be, whether it was created now)."""
    inside = git.run("rev-parse", "--is-inside-work-tree", check=False)
    if inside.returncode == 0 and inside.stdout.strip() == b"true":
        return "adopted", False
    git.run("init", "-q", "-b", branch or "main")
    return "created", True


def _current_branch(git: Git) -> str:
    proc = git.run("symbolic-ref", "--short", "-q", "HEAD", check=False)
    name = proc.stdout.decode().strip()
    if proc.returncode != 0 or not name:
        raise SyncError(
            "the bundle's repository is not on a branch (detached HEAD)",
            hint="check out a branch (git switch main), then run 'ouro sync init' again",
        )
    return name


def _set_remote(git: Git, url: str) -> None:
    if git.ok("remote", "get-url", REMOTE):
        git.run("remote", "set-url", REMOTE, url)
    else:
        git.run("remote", "add", REMOTE, url)


def _remote_has_branch(git: Git, branch: str) -> bool:
    proc = git.run("ls-remote", "--heads", REMOTE, branch, check=False)
    if proc.returncode != 0:
        raise SyncError(
            f"cannot reach the remote {REMOTE}: {proc.stderr.decode(errors='replace').strip()}",
            hint="check the URL (a path, file://, ssh or https), then run 'ouro sync init' again",
        )
    return bool(proc.stdout.strip())


def sync_init(
    bundle: Bundle,
    *,
    remote: str | None = None,
    interval: str = state.DEFAULT_INTERVAL,
    branch: str | None = None,
) -> dict[str, Any]:
    if remote is not None and not remote.strip():
        raise InvalidInput("remote: must not be empty", hint="pass --remote URL or leave it out")
    interval = _check_interval(interval)
    git = Git(bundle.root)
    how, created = _adopt_or_init(bundle, git, branch)
    had_commits = _has_commits(git)
    current = _current_branch(git)
    if remote:
        _set_remote(git, remote)
        if created and _remote_has_branch(git, current):
            raise SyncError(
                f"the remote {remote} already holds a branch {current} and this bundle "
                "has no history of its own to merge with it",
                hint=f"clone it instead: git clone {remote} DIR && ouro --bundle DIR sync init",
            )
    elif not git.ok("remote", "get-url", REMOTE):
        remote = None
    changed = ensure_policy_files(bundle)
    tracked = git.lines("ls-files", "-z", "--", *DERIVED)
    if tracked:
        git.run("rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", *DERIVED)
    config = {
        "remote": REMOTE if git.ok("remote", "get-url", REMOTE) else None,
        "branch": current,
        "interval": interval,
        "configuredAt": (state.read_config(bundle) or {}).get("configuredAt") or utc_now_iso(),
    }
    state.write_config(bundle, config)
    git.run("add", "-A", "--", ".")
    committed = False
    if git.run("diff", "--cached", "--quiet", "--", ".", check=False).returncode != 0:
        message = "ouro sync init: " + (
            "start the bundle's history"
            if not had_commits
            else "ignore machine state and derived files"
        )
        git.run("commit", "-q", "-m", message)
        committed = True
    return {
        "bundle": str(bundle.root),
        "repository": how,
        "root": git.out("rev-parse", "--show-toplevel"),
        "branch": current,
        "remote": config["remote"],
        "url": git.out("remote", "get-url", REMOTE) if config["remote"] else None,
        "interval": interval,
        "policyFilesChanged": changed,
        "untracked": tracked,
        "committed": committed,
    }


def render_init(result: dict[str, Any]) -> str:
    lines = [
        f"sync configured: {result['repository']} git repository {result['root']} "
        f"(branch {result['branch']}, every {result['interval']})",
        f"remote: {result['url'] or 'none (add one with: ouro sync init --remote URL)'}",
    ]
    if result["policyFilesChanged"]:
        lines.append("updated: " + ", ".join(result["policyFilesChanged"]))
    if result["untracked"]:
        lines.append(
            f"no longer tracked (derived, regenerated): {len(result['untracked'])} file(s)"
        )
    lines.append("next: ouro sync")
    return "\n".join(lines)
