"""A bundle ``.git`` that leads out of the bundle is refused by every sync entry point.

A gitfile (``gitdir: <project>/.git``), a symlink to the project's ``.git``, a
symlink inside ``.git`` and a ``core.worktree`` naming the project each point
git at a repository that is not the bundle's. Each is refused before any git
command writes, and the project's repository — HEAD, refs, index bytes, config
bytes, hooks, working tree — and its remote stay byte-identical. Real git, real
``ouro`` processes on a machine with no git identity (HOME empty).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ouro.bundle import Bundle
from ouro.store.git import ForeignRepository, Git
from tests.sync_support import bare_env, git, ouro, ouro_process
from tests.test_sync_project import BUNDLE, _bare, _project, _refs, _state

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _dot_git_bytes(project: Path) -> dict[str, bytes]:
    """Every file under the project's .git, with its bytes (objects included)."""
    root = project / ".git"
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _snapshot(tmp: Path, project: Path, env: dict[str, str]) -> tuple[Any, ...]:
    dot = _dot_git_bytes(project)  # before any git of _state reads the repository
    return dot, _state(project, env), _refs(tmp / "origin.git")


def _lead_out(kind: str, project: Path) -> None:
    """Make the bundle's .git lead into the project's repository, the ``kind`` way."""
    dot = project / BUNDLE / ".git"
    if kind in ("gitfile", "symlink"):
        shutil.move(str(dot), str(project.parent / "bundle-git-aside"))
        if kind == "gitfile":
            dot.write_text(f"gitdir: {project / '.git'}\n")
        else:
            dot.symlink_to(Path("..") / ".git")
    elif kind == "config-symlink":
        (dot / "config").unlink()
        (dot / "config").symlink_to(project / ".git" / "config")
    elif kind == "refs-symlink":  # a commit would move the project's branches
        shutil.rmtree(dot / "refs" / "heads")
        (dot / "refs" / "heads").symlink_to(project / ".git" / "refs" / "heads")
    elif kind == "alternates":  # git would read (and push) the project's objects
        (dot / "objects" / "info").mkdir(exist_ok=True)
        (dot / "objects" / "info" / "alternates").write_text(f"{project / '.git' / 'objects'}\n")
    else:
        assert kind == "core.worktree"
        git(project / BUNDLE, "config", "core.worktree", str(project))


KINDS = ["gitfile", "symlink", "config-symlink", "refs-symlink", "alternates", "core.worktree"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_sync_entry_point_refuses_a_git_that_leads_out_of_the_bundle(
    tmp_path: Path, kind: str
) -> None:
    env = bare_env(tmp_path / "home")
    project = _project(tmp_path, env)
    other = _bare(tmp_path / "other.git")
    ouro_process(project, "init", BUNDLE, "--agent", "bot", "--link", env=env)
    ouro_process(project, "sync", "init", "--remote", str(other), env=env)
    ouro_process(project, "sync", env=env)
    ouro_process(project, "diary", "write", "written after the first sync", env=env)
    record = project / BUNDLE / "arc" / "sync" / "conflicts" / "cf-open.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(json.dumps({"id": "cf-open", "path": "x.json", "resolved": False}))
    other_before = _refs(other)
    _lead_out(kind, project)
    dot_git = project / BUNDLE / ".git"
    before = _snapshot(tmp_path, project, env)

    for args in (
        ("sync",),
        ("sync", "--push-only"),
        ("sync", "--pull-only"),
        ("sync", "init"),
        ("sync", "init", "--remote", str(other)),
        ("sync", "init", "--remote", str(tmp_path / "elsewhere.git")),
        ("sync", "habit"),
        ("sync", "resolve", "cf-open"),
    ):
        proc = ouro_process(project, "--json", *args, env=env, check=False)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        error = json.loads(proc.stdout)["error"]
        assert error["type"] == "foreign_repository", (args, error)
        assert f"refusing to run git in {project / BUNDLE}" in error["message"], args
        assert str(dot_git) in error["message"] and error["hint"], args
    status = json.loads(ouro_process(project, "--json", "sync", "status", env=env).stdout)
    assert any(str(dot_git) in p and "refuses" in p for p in status["problems"]), status
    assert not (project / BUNDLE / "habits" / "sync.yaml").exists()
    assert json.loads(record.read_text())["resolved"] is False

    assert _snapshot(tmp_path, project, env) == before
    assert _refs(other) == other_before  # nothing pushed anywhere
    assert "[user]" not in (project / ".git" / "config").read_text()


@pytest.mark.parametrize("kind", ["gitfile", "symlink"])
def test_sync_init_never_adopts_the_projects_repository_through_a_fresh_bundle(
    tmp_path: Path, kind: str
) -> None:
    env = bare_env(tmp_path / "home")
    project = _project(tmp_path, env)
    ouro_process(project, "init", BUNDLE, "--agent", "ari", "--link", env=env)
    dot = project / BUNDLE / ".git"
    if kind == "gitfile":
        dot.write_text(f"gitdir: {project / '.git'}\n")
    else:
        dot.symlink_to(Path("..") / ".git")
    gitfile = dot.read_bytes() if kind == "gitfile" else None
    before = _snapshot(tmp_path, project, env)

    plain = ouro_process(project, "sync", "init", env=env, check=False)
    assert plain.returncode == 1 and "adopted" not in plain.stdout
    assert f"{dot} is a {kind}" in plain.stderr
    # A run that is refused for a second reason too (the project's origin is another URL).
    refused = ouro_process(
        project, "sync", "init", "--remote", str(_bare(tmp_path / "o.git")), env=env, check=False
    )
    assert refused.returncode == 1 and "will not repoint" not in refused.stderr
    ouro_process(project, "sync", env=env, check=False)

    assert _snapshot(tmp_path, project, env) == before
    assert "[user]" not in (project / ".git" / "config").read_text()
    assert dot.is_symlink() if kind == "symlink" else dot.read_bytes() == gitfile  # left as found
    assert not (project / BUNDLE / "state" / "sync" / "config.json").exists()


def test_a_refused_repoint_leaves_the_bundle_config_as_it_was(tmp_path: Path) -> None:
    env = bare_env(tmp_path / "home")
    bundle = Bundle.init(tmp_path / BUNDLE, agent="ari")
    first, second = _bare(tmp_path / "first.git"), _bare(tmp_path / "second.git")
    subprocess.run(["git", "init", "-q", "-b", "main", str(bundle.root)], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(bundle.root), "remote", "add", "origin", str(first)], check=True, env=env
    )
    config = (bundle.root / ".git" / "config").read_bytes()
    proc = ouro_process(
        tmp_path, "--bundle", BUNDLE, "sync", "init", "--remote", str(second), env=env, check=False
    )
    assert proc.returncode == 1 and "will not repoint" in proc.stderr
    assert (bundle.root / ".git" / "config").read_bytes() == config  # no identity written


def test_a_scratch_clone_whose_git_leads_elsewhere_is_made_anew(tmp_path: Path) -> None:
    from ouro.messages.remote import scratch

    peer_remote = _bare(tmp_path / "bob.git", head="main")
    bob = Bundle.init(tmp_path / "bob.ouro", agent="bob")
    ouro(bob, "sync", "init", "--remote", str(peer_remote))
    ouro(bob, "sync")
    ann = Bundle.init(tmp_path / "ann.ouro", agent="ann")
    ouro(ann, "message", "peer", "bob", str(peer_remote))
    ouro(ann, "message", "send", "bob", "first")
    assert ouro(ann, "message", "retry")["retried"][0]["delivered"] is True
    # An outside clone of the same remote: the scratch's .git made to lead into it.
    outside = tmp_path / "outside"
    git(tmp_path, "clone", "-q", str(peer_remote), str(outside))
    work = scratch(ann, "bob")
    shutil.rmtree(work / ".git")
    (work / ".git").symlink_to(outside / ".git")
    before = _dot_git_bytes(outside)

    ouro(ann, "message", "send", "bob", "second")
    assert ouro(ann, "message", "retry")["retried"][0]["delivered"] is True
    assert _dot_git_bytes(outside) == before
    assert (work / ".git").is_dir() and not (work / ".git").is_symlink()
    inbox = git(tmp_path, "--git-dir", str(peer_remote), "show", "main:arc/messages/inbox.jsonl")
    assert [json.loads(line)["text"] for line in inbox.splitlines()] == ["first", "second"]


def test_git_refuses_before_its_first_command(tmp_path: Path) -> None:
    project = tmp_path / "project"
    git(tmp_path, "init", "-q", str(project))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / ".git").write_text(f"gitdir: {project / '.git'}\n")
    before = _dot_git_bytes(project)
    with pytest.raises(ForeignRepository, match="is a gitfile"):
        Git(folder).run("config", "--local", "user.name", "x")
    (folder / ".git").unlink()
    os.symlink(project / ".git", folder / ".git")
    with pytest.raises(ForeignRepository, match="is a symlink"):
        Git(folder).ensure_identity("x")
    assert _dot_git_bytes(project) == before


def test_sync_init_never_creates_a_repository_behind_a_dangling_git_symlink(
    tmp_path: Path,
) -> None:
    bundle = Bundle.init(tmp_path / BUNDLE, agent="ari")
    target = tmp_path / "elsewhere"
    (bundle.root / ".git").symlink_to(target)  # git init would create the repository there
    proc = ouro_process(
        tmp_path, "--bundle", BUNDLE, "sync", "init", env=bare_env(tmp_path / "home"), check=False
    )
    assert proc.returncode == 1 and f"{bundle.root / '.git'} is a symlink" in proc.stderr
    assert not os.path.lexists(target)
    assert (bundle.root / ".git").is_symlink()  # left as found
