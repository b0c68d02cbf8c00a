"""The wheel carries templates/ and migrations/, installs into a fresh venv,
and `ouro demo` runs from it; lint and types are part of the suite."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_wheel_installs_into_fresh_venv_and_demo_runs(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv*",
            "__pycache__",
            "*.egg-info",
            "dist",
            "build",
            ".*_cache",
            ".hypothesis",
        ),
    )
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("ouro-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ouro/_data/templates/bundle/desk/_meta/featured.md" in names
    assert any(n.startswith("ouro/_data/migrations/") for n in names)
    assert "ouro/py.typed" in names

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True
    )
    # run away from the checkout so only the installed package can be found
    run_dir = tmp_path / "elsewhere"
    run_dir.mkdir()
    demo = subprocess.run(
        [str(env_dir / "bin" / "ouro"), "demo", str(run_dir / "d.ouro")],
        cwd=run_dir,
        capture_output=True,
        text=True,
    )
    assert demo.returncode == 0, demo.stderr
    assert (run_dir / "d.ouro" / "desk" / "_meta" / "featured.md").exists()
    where = subprocess.run(
        [str(py), "-c", "import ouro.resources as r; print(r.templates_dir())"],
        cwd=run_dir,
        capture_output=True,
        text=True,
        check=True,
    )
    assert str(env_dir) in where.stdout and "_data" in where.stdout


def _tool(name: str) -> list[str]:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", name]


def test_ruff_format_and_check() -> None:
    fmt = subprocess.run(
        [*_tool("ruff"), "format", "--check", "ouro", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    chk = subprocess.run(
        [*_tool("ruff"), "check", "ouro", "tests", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert chk.returncode == 0, chk.stdout + chk.stderr


def test_mypy_strict_on_package() -> None:
    proc = subprocess.run([*_tool("mypy")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
