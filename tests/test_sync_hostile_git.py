"""git in a bundle's repository never runs a program its config, hooks or template chose.

A hostile setup, three ways: executable hooks in ``.git/hooks``; the bundle
repository's own ``.git/config`` (``core.hooksPath`` outside, ``core.fsmonitor``,
signing through ``gpg.program``, filter and merge drivers routed to every file
by ``.git/info/attributes``, ``diff.external``, a textconv driver); the user's
global config under ``HOME`` (the same, plus ``core.attributesFile`` and an
``init.templateDir`` whose hooks and config a new repository would copy).
Every program is a spy that appends its name and folder to a marker file
OUTSIDE both bundles. Two bundles sync through a real bare remote, both writing,
so commits, a fetch, a merge (JSONL and Markdown changed on both sides), a push
and a clone all run: nothing is marked, and every record reaches both sides.
Real git, ouro in-process (the environment is the test's).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.store.git import Git, driver_overrides
from ouro.sync.clone import clone
from tests.sync_support import git, jsonl_ids, ouro

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

HOOKS = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "post-index-change",
    "fsmonitor-watchman",
]


def _spy(outside: Path) -> Path:
    """A program that marks that it ran (its name, folder and arguments), then passes
    its input through (a clean filter, a hook reading refs)."""
    outside.mkdir(parents=True, exist_ok=True)
    spy = outside / "spy"
    spy.write_text(
        f'#!/bin/sh\necho "$(basename "$0") $PWD $*" >> {outside / "MARKS"}\ncat\nexit 0\n'
    )
    spy.chmod(spy.stat().st_mode | stat.S_IXUSR)
    return spy


def _hooks(folder: Path, spy: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        (folder / name).write_text(spy.read_text())
        (folder / name).chmod(0o755)


def _hostile_config(spy: Path, hooks: Path) -> str:
    """Config that, unguarded, runs ``spy`` on commit, add, status, checkout and merge."""
    return (
        f"[core]\n\thooksPath = {hooks}\n\tfsmonitor = {spy}\n"
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {spy}\n"
        f'[filter "evil"]\n\tclean = {spy} clean %f\n\tsmudge = {spy} smudge %f\n'
        "\trequired = true\n"
        f'[filter "Proc"]\n\tprocess = {spy} process\n'
        f'[merge "evil"]\n\tdriver = {spy} %O %A %B\n'
        f'[merge "union"]\n\tdriver = {spy} union %O %A %B\n'
        f'[diff]\n\texternal = {spy}\n[diff "tc"]\n\ttextconv = {spy} textconv\n'
    )


ATTRIBUTES = "* filter=evil diff=tc\n*.md merge=evil\n*.json filter=Proc\n"


def _arm(repo: Path, where: str, spy: Path, outside: Path) -> None:
    """Make the bundle repository ``repo`` hostile the ``where`` way."""
    dot = repo / ".git"
    if where == "hooks":
        _hooks(dot / "hooks", spy)
        (dot / "hooks" / "pre-push").unlink()  # a hook linked from elsewhere: kept, not run
        (dot / "hooks" / "pre-push").symlink_to(spy)
    elif where == "local":
        with (dot / "config").open("a") as config:
            config.write(_hostile_config(spy, outside / "local-hooks"))
        (dot / "info").mkdir(exist_ok=True)
        (dot / "info" / "attributes").write_text(ATTRIBUTES)


def _global(home: Path, spy: Path, outside: Path) -> None:
    template = outside / "template"
    _hooks(template / "hooks", spy)
    (template / "config").write_text(f"[core]\n\thooksPath = {template / 'hooks'}\n")
    (outside / "attributes").write_text(ATTRIBUTES)
    (home / ".gitconfig").write_text(
        _hostile_config(spy, outside / "global-hooks")
        + f"[init]\n\ttemplateDir = {template}\n"
        + f"[core]\n\tattributesFile = {outside / 'attributes'}\n"
    )


def _marks(outside: Path, remote: Path) -> list[str]:
    """What the spies marked, but the remote's own server-side hooks: a path remote's
    receive-pack runs that repository's hooks (the global hooksPath applies to it
    too), as a server would; they are the remote's, not the bundle's."""
    path = outside / "MARKS"
    lines = path.read_text().splitlines() if path.exists() else []
    return [line for line in lines if f" {remote} " not in f"{line} "]


def _empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A new empty HOME, no GIT_* variables and no system config: only what the test
    writes configures git."""
    home = tmp_path / "home"
    home.mkdir()
    for name in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


@pytest.mark.parametrize("where", ["hooks", "local", "global"])
def test_sync_runs_no_hook_filter_driver_or_signer_and_still_pushes(
    tmp_path: Path, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _empty_home(tmp_path, monkeypatch)
    outside = tmp_path / "outside"
    spy = _spy(outside)
    if where == "global":
        _global(home, spy, outside)
    remote = tmp_path / "remote.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "--template=", "-b", "main", str(remote)], check=True
    )

    a = Bundle.init(tmp_path / "a.ouro", agent="ann")
    git(a.root, "init", "-q", "--template=", "-b", "main")
    _arm(a.root, where, spy, outside)
    ouro(a, "sync", "init", "--remote", str(remote))
    ouro(a, "desk", "track", "add", "work")
    task = ouro(a, "desk", "task", "add", "work", "ship it")["task"]["id"]
    ouro(a, "diary", "write", "ann's first fact")
    ouro(a, "sync")

    b_root = tmp_path / "b.ouro"
    from ouro.derived import regenerate

    clone(str(remote), b_root, regenerate=regenerate)
    if where == "global":  # the template was not copied in: no hooks, no hooksPath
        assert not (b_root / ".git" / "hooks").exists()
        assert "hooksPath" not in (b_root / ".git" / "config").read_text()
    b = Bundle.open(b_root)
    _arm(b.root, where, spy, outside)
    # both sides write: facts (JSONL union) and the same task's title (Markdown)
    ouro(a, "diary", "write", "ann's second fact")
    ouro(a, "desk", "task", "update", task, "--title", "ann's title")
    ouro(a, "sync")
    ouro(b, "diary", "write", "bob's fact")
    ouro(b, "desk", "task", "update", task, "--title", "bob's title")
    merged = ouro(b, "sync")
    assert merged["pulledCommits"] >= 1 and merged["pushed"], merged
    assert [c["path"] for c in merged["conflicts"]] == ["desk/work/ship-it/task.md"], merged
    ouro(a, "sync")

    assert _marks(outside, remote) == []  # before the checks' own git reads the repositories
    plain = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}  # the checks' git: no spy config
    head = git(b.root, "-c", "core.fsmonitor=false", "rev-parse", "HEAD", env=plain)
    assert head == git(remote, "rev-parse", "main", env=plain)
    facts = git(remote, "show", "main:desk/_record/diary/facts.jsonl", env=plain)
    for text in ("ann's first fact", "ann's second fact", "bob's fact"):
        assert text in facts, text
    assert sorted(jsonl_ids(a, "desk/_record/diary")) == sorted(jsonl_ids(b, "desk/_record/diary"))


def test_a_global_ignore_or_crlf_setting_never_keeps_the_record_from_the_remote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's global ``core.excludesFile`` ignoring ``*.json`` / ``*.jsonl`` /
    ``*.md`` and ``core.autocrlf=true``: every claim, fact and task still reaches the
    remote, byte for byte."""
    home = _empty_home(tmp_path, monkeypatch)
    (home / "ignore").write_text("*.json\n*.jsonl\n*.md\n")
    (home / "attributes").write_text("* text eol=crlf\n")
    (home / ".gitconfig").write_text(
        f"[core]\n\texcludesFile = {home / 'ignore'}\n\tattributesFile = {home / 'attributes'}\n"
        "\tautocrlf = true\n"
    )
    remote = tmp_path / "remote.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "--template=", "-b", "main", str(remote)], check=True
    )
    a = Bundle.init(tmp_path / "a.ouro", agent="ann")
    ouro(a, "sync", "init", "--remote", str(remote))
    ouro(a, "desk", "track", "add", "work")
    ouro(a, "desk", "task", "add", "work", "ship it")
    ouro(a, "diary", "write", "ann's fact")
    ouro(a, "claim", "add", "the parser handles tabs")
    ouro(a, "sync")
    plain = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull}
    listed = set(git(remote, "ls-tree", "-r", "--name-only", "main", env=plain).split())
    assert "desk/_record/diary/facts.jsonl" in listed and "desk/work/ship-it/task.md" in listed
    assert any(name.startswith("arc/claims/") for name in listed), listed
    committed = subprocess.run(
        ["git", "-C", str(remote), "show", "main:desk/_record/diary/facts.jsonl"],
        capture_output=True, env=plain, check=True,
    ).stdout  # fmt: skip
    assert committed == (a.root / "desk/_record/diary/facts.jsonl").read_bytes()


def _attributed_repo(tmp_path: Path, attributes: str) -> tuple[Path, Path, Path]:
    """A repository whose one commit holds ``.gitattributes`` and ``x.txt``; with the
    folder a spy leaves its marks in, and the spy."""
    repo = tmp_path / "r"
    outside = tmp_path / "outside"
    spy = _spy(outside)
    git(tmp_path, "init", "-q", "--template=", "-b", "main", str(repo))
    (repo / ".gitattributes").write_text(attributes)
    (repo / "x.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo, outside, spy


def test_a_configured_merge_driver_is_a_conflict_the_rules_finish(tmp_path: Path) -> None:
    """Unguarded, the spy driver would 'merge' by keeping ours and drop theirs silently."""
    repo, outside, spy = _attributed_repo(tmp_path, "*.txt merge=evil\n")
    git(repo, "checkout", "-qb", "other")
    (repo / "x.txt").write_text("theirs\n")
    git(repo, "commit", "-qam", "theirs")
    git(repo, "checkout", "-q", "main")
    (repo / "x.txt").write_text("ours\n")
    git(repo, "commit", "-qam", "ours")
    git(repo, "config", "merge.evil.driver", f"{spy} %O %A %B")
    proc = Git(repo).run("merge", "--no-edit", "--no-commit", "other", check=False)
    assert proc.returncode == 1 and b"CONFLICT" in proc.stdout, proc
    assert (repo / ".git" / "MERGE_HEAD").exists()
    assert not (outside / "MARKS").exists()


def test_an_external_diff_and_a_textconv_never_run(tmp_path: Path) -> None:
    repo, outside, spy = _attributed_repo(tmp_path, "*.txt diff=tc\n")
    git(repo, "config", "diff.external", str(spy))
    git(repo, "config", "diff.tc.textconv", f"{spy} textconv")
    (repo / "x.txt").write_text("b\n")
    for args in (("diff",), ("diff", "--stat"), ("log", "-p", "-1"), ("show", "HEAD")):
        assert Git(repo).run(*args).returncode == 0, args
    assert not (outside / "MARKS").exists()


def test_the_users_ssh_command_still_carries_push_and_fetch(tmp_path: Path) -> None:
    """How git reaches a remote is the user's: ``core.sshCommand`` runs as configured."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    ssh = tmp_path / "fake-ssh"
    log = tmp_path / "ssh.log"
    # ssh.variant=simple: called as 'fake-ssh HOST COMMAND'; runs COMMAND here
    ssh.write_text(f'#!/bin/sh\necho "$1" >> {log}\nshift\nexec sh -c "$1"\n')
    ssh.chmod(0o755)
    a = Bundle.init(tmp_path / "a.ouro", agent="ann")
    git(a.root, "init", "-q", "-b", "main")
    git(a.root, "config", "core.sshCommand", str(ssh))
    git(a.root, "config", "ssh.variant", "simple")
    ouro(a, "sync", "init", "--remote", f"fakehost:{remote}")
    ouro(a, "diary", "write", "over ssh")
    assert ouro(a, "sync")["pushed"]
    assert "fakehost" in log.read_text()
    assert git(remote, "rev-parse", "main") == git(a.root, "rev-parse", "HEAD")


def test_driver_overrides_switch_off_every_filter_and_merge_driver() -> None:
    keys = [
        "user.name",
        "filter.lfs.clean",
        "filter.lfs.process",
        "filter.A.b.smudge",
        "merge.union.driver",
    ]
    assert driver_overrides(keys) == [
        ("filter.lfs.clean", ""),
        ("filter.lfs.smudge", ""),
        ("filter.lfs.process", ""),
        ("filter.lfs.required", "false"),
        ("filter.A.b.clean", ""),
        ("filter.A.b.smudge", ""),
        ("filter.A.b.process", ""),
        ("filter.A.b.required", "false"),
        ("merge.union.driver", "exit 1"),
    ]
    from ouro.store.git import SyncError

    with pytest.raises(SyncError, match="cannot switch off"):
        driver_overrides(["filter.a=b.clean"])
