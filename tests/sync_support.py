"""Real git for sync tests: a bare remote and clones, driven in-process via click."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from ouro.bundle import Bundle
from ouro.cli.app import cli


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert proc.returncode == 0, f"git {args}: {proc.stderr}"
    return proc.stdout


def ouro(bundle: Bundle, *args: str) -> Any:
    """Run one ouro command in-process with --json and return its JSON."""
    result = CliRunner().invoke(cli, ["--bundle", str(bundle.root), "--json", *args])
    assert result.exit_code == 0, f"ouro {args} -> {result.exit_code}: {result.output}"
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
