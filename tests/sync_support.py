"""Real git for sync tests: a bare remote and clones, driven in-process via click.

Every git the tests run themselves carries its own identity (``IDENTITY``): the
CI machine has none and HOME may be empty. ``bare_env`` is a machine with no
git config at all (an empty HOME, no system config), for ouro processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from tests.conftest import cli_run

IDENTITY = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        env={**(env or os.environ), **IDENTITY},
    )
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


def bare_env(home: Path) -> dict[str, str]:
    """The environment of a machine with no git identity or config (HOME empty)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "OURO_"))}
    bindir = os.path.dirname(sys.executable)  # 'ouro' itself, for the sync habit
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        PATH=bindir + os.pathsep + env.get("PATH", ""),
    )
    return env


def ouro_process(
    cwd: Path, *args: str, env: dict[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """``ouro ARGS`` as a real process in ``cwd`` (the way a user runs it)."""
    proc = subprocess.run(
        [sys.executable, "-m", "ouro.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check:
        assert proc.returncode == 0, f"ouro {args} -> {proc.returncode}: {proc.stdout}{proc.stderr}"
    return proc


def ouro(bundle: Bundle, *args: str) -> Any:
    """Run one ouro command in-process with --json and return its JSON."""
    result = cli_run(["--bundle", str(bundle.root), "--json", *args])
    # a negative outcome (exit 1: a blocked verdict, a failed check) still prints its result
    assert result.exit_code in (0, 1) and '"error"' not in result.output[:9], (
        f"ouro {args} -> {result.exit_code}: {result.output}"
    )
    return json.loads(result.output) if result.output.strip() else None


def remote_and_clones(tmp: Path) -> tuple[Path, Bundle, Bundle]:
    """A bare remote, machine A's bundle pushed to it, machine B's clone of it."""
    remote = tmp / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    a = Bundle.init(tmp / "a.ouro", agent="agent")
    ouro(a, "sync", "init", "--remote", str(remote))
    ouro(a, "desk", "track", "add", "work")
    ouro(a, "desk", "task", "add", "work", "ship it")
    ouro(a, "sync")
    subprocess.run(["git", "clone", "-q", str(remote), str(tmp / "b.ouro")], check=True)
    b = Bundle.open(tmp / "b.ouro")
    ouro(b, "sync", "init")
    return remote, a, b


def tracked_files(bundle: Bundle) -> dict[str, bytes]:
    """Every file git tracks in the bundle, with its bytes in the working tree."""
    names = git(bundle.root, "ls-files", "-z").split("\0")
    return {n: (bundle.root / n).read_bytes() for n in names if n}


def jsonl_ids(bundle: Bundle, folder: str) -> list[str]:
    ids = []
    for path in sorted((bundle.root / folder).rglob("*.jsonl")):
        for line in path.read_bytes().splitlines():
            if line.strip():
                ids.append(json.loads(line)["id"])
    return ids
