"""Joining a second machine: 'ouro sync clone URL PATH', whatever the remote's HEAD names.

A plain ``git init --bare`` remote names ``master`` as its HEAD while ouro pushes
``main``: ``git clone`` of it checks out nothing. Real git, a path remote.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.orient import build_packet
from tests.conftest import run_ouro
from tests.sync_support import git, ouro

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ASK = "finish the migration guide"


def _machine_a(tmp: Path, head: str = "master") -> tuple[Path, Bundle]:
    remote = tmp / "r.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", head, str(remote)], check=True)
    a = Bundle.init(tmp / "a.ouro", agent="ari")
    ouro(a, "sync", "init", "--remote", str(remote))
    ouro(a, "arc", "ask", ASK)
    ouro(a, "sync")
    return remote, a


def _run(*args: str) -> tuple[int, str]:
    proc = run_ouro(*args)
    return proc.returncode, proc.stdout + proc.stderr


def test_clone_joins_a_remote_whose_head_names_master(tmp_path: Path) -> None:
    remote, a = _machine_a(tmp_path)
    assert git(remote, "symbolic-ref", "HEAD").strip() == "refs/heads/master"
    code, text = _run("sync", "clone", str(remote), str(tmp_path / "b.ouro"))
    assert code == 0, text
    assert "branch main; the remote's HEAD names master" in text
    b = Bundle.open(tmp_path / "b.ouro")
    assert ASK in build_packet(b).text
    assert git(b.root, "status", "--porcelain") == ""
    assert git(b.root, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    ouro(b, "diary", "write", "from machine b")
    assert ouro(b, "sync")["pushed"]
    ouro(a, "sync")
    assert "from machine b" in (a.root / "desk/_record/diary/facts.jsonl").read_text()


def test_sync_init_in_an_empty_git_clone_says_what_to_run(tmp_path: Path) -> None:
    remote, _ = _machine_a(tmp_path)
    clone = tmp_path / "b.ouro"
    subprocess.run(["git", "clone", "-q", str(remote), str(clone)], capture_output=True)
    assert not (clone / "bundle.json").exists()  # git checked out nothing
    code, text = _run("--bundle", str(clone), "sync", "init")
    assert code == 3
    assert "no bundle checked out" in text and "the bundle is on the branch main" in text
    assert f"git -C {clone} switch main" in text and "ouro sync clone" in text
    assert "ouro init" not in text  # that would start a second bundle
    git(clone, "switch", "-q", "main")
    assert _run("--bundle", str(clone), "sync", "init")[0] == 0


def test_clone_refuses_a_path_that_is_not_empty_and_leaves_it(tmp_path: Path) -> None:
    remote, _ = _machine_a(tmp_path, head="main")
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    code, text = _run("sync", "clone", str(remote), str(target))
    assert code == 1 and "not an empty folder" in text
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run("sync", "clone", str(remote), str(empty))[0] == 0
    assert (empty / "bundle.json").is_file()


def test_clone_of_a_remote_without_a_bundle_is_refused_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "app.py").write_text("x\n")
    git(project, "add", "app.py")
    git(project, "commit", "-qm", "code")
    remote = tmp_path / "code.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    code, text = _run("sync", "clone", str(remote), str(tmp_path / "b"))
    assert code == 1 and "no branches yet" in text
    git(project, "push", "-q", str(remote), "main")
    code, text = _run("sync", "clone", str(remote), str(tmp_path / "x" / "y" / "b"))
    assert code == 1 and "no branch of" in text and "branches: main" in text
    assert not (tmp_path / "x").exists()  # the folders git made for PATH go too


def test_clone_branch_option_picks_among_bundle_branches(tmp_path: Path) -> None:
    remote, a = _machine_a(tmp_path, head="main")
    git(a.root, "push", "-q", "origin", "main:experiment")
    subprocess.run(
        ["git", "--git-dir", str(remote), "symbolic-ref", "HEAD", "refs/heads/none"], check=True
    )
    code, text = _run("sync", "clone", str(remote), str(tmp_path / "b"))
    assert code == 1 and "several branches" in text and "--branch" in text
    code, text = _run("sync", "clone", str(remote), str(tmp_path / "b"), "--branch", "experiment")
    assert code == 0, text
    assert git(tmp_path / "b", "rev-parse", "--abbrev-ref", "HEAD").strip() == "experiment"
    code, text = _run("sync", "clone", str(remote), str(tmp_path / "c"), "--branch", "nope")
    assert code == 1 and "has no branch nope" in text


def test_clone_of_a_missing_remote_says_to_check_the_url(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent.git"
    code, text = _run("sync", "clone", str(missing), str(tmp_path / "b"))
    assert code == 1
    assert f"git clone of {missing} failed" in text
    assert "check the URL" in text and "ouro sync clone URL PATH" in text
    assert "resumes" not in text and "run 'ouro sync' again" not in text
    assert not (tmp_path / "b").exists()
