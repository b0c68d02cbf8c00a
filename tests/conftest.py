"""Shared fixtures. Every test runs in its own temp folder with no inherited
OURO_BUNDLE, so no test can touch a real bundle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ouro.bundle import Bundle

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("OURO_BUNDLE", raising=False)
    monkeypatch.delenv("OURO_DEBUG", raising=False)
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    yield


@pytest.fixture
def bundle(tmp_path: Path) -> Bundle:
    return Bundle.init(tmp_path / "test.ouro", agent="tester")


def run_ouro(
    *args: str,
    bundle: Bundle | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess (the way agents call it)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    if env:
        full_env.update(env)
    argv = [sys.executable, "-m", "ouro.cli"]
    if bundle is not None:
        argv += ["--bundle", str(bundle.root)]
    proc = subprocess.run(
        argv + list(args), capture_output=True, text=True, input=input, env=full_env, timeout=120
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"ouro {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return proc


def ouro_json(*args: str, bundle: Bundle | None = None, **kw: Any) -> Any:
    proc = run_ouro(*args, "--json", bundle=bundle, **kw)
    assert proc.stdout.strip(), f"no stdout; stderr: {proc.stderr}"
    return json.loads(proc.stdout)


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file's bytes and mtime_ns under root (to prove a read wrote nothing).
    A symlink is recorded by its target text and its own mtime (never followed)."""
    out: dict[str, tuple[bytes, int]] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            st = p.lstat()
            data = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
            out[str(p.relative_to(root))] = (data, st.st_mtime_ns)
    return out
