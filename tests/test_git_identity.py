"""Tests that run git pass on a machine with no git identity and an empty HOME.

Issue 26 #10: the README's test command failed on a machine without a global
git identity because a test ran ``git merge`` with no ``user.name``. Every test
outside the sync suite (which keeps ``tests/sync_support.py``) runs git through
``tests.git_env``, which brings its own identity and ignores the user's and the
system's git config.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from tests.git_env import git_env, run_git

TESTS = Path(__file__).resolve().parent
#: the helper itself, the sync suite's helper (it sets up git for that suite) and this
#: file, which runs plain git once on purpose to show the environment has no identity
OWN_GIT = {"git_env.py", "sync_support.py", "test_git_identity.py"}


def _git_argv_literals(path: Path) -> list[int]:
    """Line numbers of ``["git", ...]`` argument lists in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.List | ast.Tuple)
        and node.elts
        and isinstance(node.elts[0], ast.Constant)
        and node.elts[0].value == "git"
    ]


def test_every_test_that_runs_git_goes_through_the_helper_with_its_own_identity() -> None:
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in OWN_GIT or path.name.startswith("test_sync"):
            continue
        offenders += [f"{path.relative_to(TESTS)}:{line}" for line in _git_argv_literals(path)]
    assert not offenders, "run git through tests.git_env.run_git / git_env(): " + ", ".join(
        offenders
    )


def test_the_helper_commits_and_merges_with_no_identity_and_an_empty_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key, raising=False)
    repo = tmp_path / "repo"
    # plain git in this environment has no identity: a commit is refused ...
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=git_env())
    (repo / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(repo), "add", "a.txt"], check=True)
    bare = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.useConfigOnly=true", "commit", "-qm", "a"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bare.returncode != 0, "this machine leaks a git identity into an empty HOME"
    # ... and through the helper it commits, branches and merges.
    run_git("commit", "-qm", "a", cwd=repo)
    run_git("checkout", "-qb", "side", cwd=repo)
    (repo / "b.txt").write_text("b\n")
    run_git("add", "b.txt", cwd=repo)
    run_git("commit", "-qm", "b", cwd=repo)
    run_git("checkout", "-q", "-", cwd=repo)
    run_git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=repo)
    assert "ouro tests" in run_git("log", "-1", "--format=%an", cwd=repo)
