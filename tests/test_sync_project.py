"""ouro sync inside a project's own git repository: the project is never touched.

Real git and real ``ouro`` processes run from the project root on a machine with
no git identity (HOME empty, no system config), the README's layout:
``ouro init bot.ouro --link`` at the root of a project that is a repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ouro.bundle import Bundle
from tests.conftest import run_ouro
from tests.sync_support import IDENTITY, bare_env, git, ouro, ouro_process

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BUNDLE = "bot.ouro"
PROJECT_FILES = {"app.py", "staged.py", "scratch.txt", ".ouro"}


def _bare(path: Path, head: str = "master") -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", head, str(path)], check=True)
    return path


def _project(tmp: Path, env: dict[str, str]) -> Path:
    """A project with an origin, an unpushed commit, staged changes and a loose file."""
    origin = _bare(tmp / "origin.git")
    project = tmp / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "master", env=env)
    (project / "app.py").write_text("print('v1')\n")
    git(project, "add", "app.py", env=env)
    git(project, "commit", "-qm", "first", env=env)
    git(project, "remote", "add", "origin", str(origin), env=env)
    git(project, "push", "-q", "origin", "master", env=env)
    (project / "app.py").write_text("print('v2, not ready')\n")
    git(project, "commit", "-qam", "WIP not ready", env=env)  # unpushed
    (project / "staged.py").write_text("half done\n")
    (project / "app.py").write_text("print('v3, staged')\n")
    git(project, "add", "staged.py", "app.py", env=env)
    (project / "scratch.txt").write_text("not even staged\n")
    return project


def _state(project: Path, env: dict[str, str]) -> dict[str, Any]:
    """Everything of the project's that ouro must leave alone (the bundle folder aside)."""
    index = (project / ".git" / "index").read_bytes()  # before any git reads it
    files = {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and p.relative_to(project).parts[0] not in (".git", BUNDLE)
    }
    return {
        "index": index,
        "config": (project / ".git" / "config").read_bytes(),
        "HEAD": (project / ".git" / "HEAD").read_text(),
        "hooks": sorted(p.name for p in (project / ".git" / "hooks").iterdir()),
        "remotes": git(project, "remote", "-v", env=env),
        "refs": git(project, "for-each-ref", "--format=%(refname) %(objectname)", env=env),
        "staged": git(project, "diff", "--cached", "--name-status", env=env),
        "files": files,
    }


def _refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def _paths_in_every_commit(remote: Path) -> list[set[str]]:
    commits = git(remote, "rev-list", "--all").split()
    assert commits, f"nothing was pushed to {remote}"
    return [
        {n for n in git(remote, "ls-tree", "-r", "-z", "--name-only", c).split("\0") if n}
        for c in commits
    ]


def test_sync_in_a_project_never_touches_the_project_repository(tmp_path: Path) -> None:
    env = bare_env(tmp_path / "home")
    project = _project(tmp_path, env)
    other = _bare(tmp_path / "other.git")
    origin_before = _refs(tmp_path / "origin.git")
    ouro_process(project, "init", BUNDLE, "--agent", "bot", "--link", env=env)
    before = _state(project, env)

    init = ouro_process(project, "sync", "init", "--remote", "../other.git", env=env).stdout
    ouro_process(project, "arc", "ask", "ship the parser behind a flag", env=env)
    ouro_process(project, "sync", env=env)
    ouro_process(project, "sync", "habit", "--cadence", "1m", env=env)
    ran = json.loads(ouro_process(project, "--json", "habits", "run", "sync", env=env).stdout)
    assert ran["outcome"] not in ("error", "blocked"), ran
    ouro_process(project, "diary", "write", "written in the project", env=env)
    # As from inside one of the project's own git hooks: git's variables point at the project.
    hook_env = {
        **env,
        "GIT_DIR": str(project / ".git"),
        "GIT_WORK_TREE": str(project),
        "GIT_INDEX_FILE": str(project / ".git" / "index"),
        "GIT_PREFIX": "",
    }
    ouro_process(project, "sync", env=hook_env)
    ouro_process(project, "sync", "status", env=env)

    assert _state(project, env) == before
    assert _refs(tmp_path / "origin.git") == origin_before
    assert f"{project / BUNDLE / '.git'}" in init  # it says plainly what it set up
    assert f"add '/{BUNDLE}/' to {project / '.gitignore'}" in init
    for names in _paths_in_every_commit(other):
        assert "bundle.json" in names
        assert not names & PROJECT_FILES
        assert not any(n.startswith(f"{BUNDLE}/") for n in names)
    log = git(other, "log", "--all", "--format=%an %s")
    assert "written in the project" not in log and "ouro sync" in log
    assert {line.split(" ", 1)[0] for line in log.splitlines()} == {"bot"}
    bundle_git = Bundle.open(project / BUNDLE).root
    assert git(bundle_git, "config", "--local", "user.name", env=env).strip() == "bot"
    assert list((tmp_path / "home").iterdir()) == []  # nothing global was written

    # A second machine joins from that remote, whose HEAD names master (ouro pushed main).
    second = tmp_path / "machine-b"
    second.mkdir()
    ouro_process(second, "sync", "clone", str(other), "b.ouro", env=env)
    packet = ouro_process(second, "--bundle", "b.ouro", "orient", env=env).stdout
    assert "ship the parser behind a flag" in packet


def _legacy(tmp: Path) -> tuple[Path, Bundle]:
    """What an older ouro left: the bundle adopted into the project's repository."""
    project = tmp / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "master")
    (project / "app.py").write_text("print('v1')\n")
    bundle = Bundle.init(project / BUNDLE, agent="bot")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "project and bundle")
    git(project, "remote", "add", "origin", str(_bare(tmp / "origin.git")))
    (project / "staged.py").write_text("half done\n")
    git(project, "add", "staged.py")
    config = bundle.root / "state" / "sync" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(
        json.dumps({"remote": "origin", "branch": "master", "interval": "30m", "configuredAt": "x"})
    )
    return project, bundle


def _cli(bundle: Bundle, *args: str) -> tuple[int, str]:
    """``ouro --bundle B ARGS`` in-process: the exit code and stdout + stderr."""
    proc = run_ouro(*args, bundle=bundle)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_bundle_an_older_ouro_adopted_into_a_project_is_refused_then_set_up(
    tmp_path: Path,
) -> None:
    project, bundle = _legacy(tmp_path)
    env = bare_env(tmp_path / "home")
    before = _state(project, env)
    code, refused = _cli(bundle, "sync")
    assert code == 1
    assert "no git repository of its own" in refused
    assert f"enclosing repository {project}" in refused
    assert "ouro sync init" in refused
    assert "no git repository of its own" in ouro(bundle, "sync", "status")["problems"][0]
    assert _cli(bundle, "sync", "habit")[0] == 1
    assert _state(project, env) == before
    assert _refs(tmp_path / "origin.git") == ""

    other = _bare(tmp_path / "other.git")
    result = ouro(bundle, "sync", "init", "--remote", str(other))
    assert result["repository"] == "created" and result["earlierSetup"]["project"] == str(project)
    assert result["project"]["tracksBundleFiles"] > 0
    text = _cli(bundle, "sync", "init")[1]
    assert "earlier setup" not in text  # told once: the bundle has its own repository now
    assert "already tracks" in text and f"rm -r -q --cached {BUNDLE}" in text
    ouro(bundle, "sync")
    after = _state(project, env)
    for key in ("index", "config", "HEAD", "hooks", "remotes", "refs", "staged", "files"):
        assert after[key] == before[key], key
    assert _refs(tmp_path / "origin.git") == ""
    for names in _paths_in_every_commit(other):
        assert "app.py" not in names and "staged.py" not in names


def test_an_existing_remote_is_never_repointed(tmp_path: Path) -> None:
    bundle = Bundle.init(tmp_path / "a.ouro", agent="agent")
    first, second = _bare(tmp_path / "first.git"), _bare(tmp_path / "second.git")
    ouro(bundle, "sync", "init", "--remote", str(first))
    code, refused = _cli(bundle, "sync", "init", "--remote", str(second))
    assert code == 1
    assert "remote origin" in refused
    assert str(first) in refused and str(second) in refused
    assert git(bundle.root, "remote", "get-url", "origin").strip() == str(first)
    # The same remote spelt another way is the same remote.
    (tmp_path / "x").mkdir()
    again = ouro(bundle, "sync", "init", "--remote", str(tmp_path / "x" / ".." / "first.git"))
    assert again["url"] == str(first) and again["remoteAdded"] is False


def test_a_relative_remote_is_taken_from_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    bundle = Bundle.init(project / BUNDLE, agent="bot")
    remote = _bare(tmp_path / "r.git")
    monkeypatch.chdir(project)
    result = ouro(bundle, "sync", "init", "--remote", "../r.git")
    assert result["url"] == str(remote)
    ouro(bundle, "sync")
    assert _refs(remote)


def test_init_refusing_a_remote_that_holds_another_bundle_leaves_no_repository(
    tmp_path: Path,
) -> None:
    remote = _bare(tmp_path / "r.git", head="main")
    a = Bundle.init(tmp_path / "a.ouro", agent="agent")
    ouro(a, "sync", "init", "--remote", str(remote))
    ouro(a, "sync")
    other = Bundle.init(tmp_path / "c.ouro", agent="agent")
    code, refused = _cli(other, "sync", "init", "--remote", str(remote))
    assert code == 1 and f"ouro sync clone {remote}" in refused
    assert not (other.root / ".git").exists()


def test_ouro_never_inherits_the_callers_git_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.store.git import Git

    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    for name, value in {
        "GIT_DIR": str(project / ".git"),
        "GIT_WORK_TREE": str(project),
        "GIT_INDEX_FILE": str(project / ".git" / "index"),
        "GIT_CONFIG_PARAMETERS": "'core.worktree'='/'",
        "GIT_OBJECT_DIRECTORY": str(project / ".git" / "objects"),
        **IDENTITY,
    }.items():
        monkeypatch.setenv(name, value)
    bundle = Bundle.init(project / BUNDLE, agent="bot")
    ouro(bundle, "sync", "init")
    top = Git(bundle.root).out("rev-parse", "--show-toplevel")
    assert Path(top) == bundle.root
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"):
        monkeypatch.delenv(name)
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS")
    assert git(bundle.root, "log", "--format=%an").split() == ["test"]  # identity kept
    assert git(project, "rev-list", "--all") == ""
    assert git(project, "ls-files") == ""
