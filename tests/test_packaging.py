"""The wheel is ``ouro-bundle`` with complete metadata and carries templates/
and migrations/; the README's install line works from it with pip, pipx and
``uv tool install`` (each in a fresh venv and home: ``ouro --version`` and
``ouro demo`` run from the installed command); lint and types are part of the
suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

import ouro as ouro_pkg
from tests.conftest import REPO

#: The installers the README names, pinned (installed from the package index
#: into a scratch venv by the test, never into the default install).
PIPX = "pipx==1.18.4"
UV = "uv==0.13.9"
DIST = "ouro-bundle"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel . --no-deps`` from a copy of the checkout."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    src = tmp_path / "src"
    shutil.copytree(
        REPO,
        src,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv*",
            ".hosts",
            "node_modules",
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
    (built,) = dist.glob("ouro_bundle-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_is_ouro_bundle_with_complete_metadata(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    assert "ouro/_data/templates/bundle/desk/_meta/featured.md" in names
    assert any(n.startswith("ouro/_data/migrations/") for n in names)
    assert "ouro/py.typed" in names
    (meta_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    meta = archive.read(meta_name).decode()
    head = meta.split("\n\n", 1)[0].splitlines()
    fields = [line.split(": ", 1) for line in head if ": " in line]
    get = {k: v for k, v in fields}
    assert get["Name"] == DIST and get["License-Expression"] == "MIT"
    assert get["Requires-Python"] == ">=3.11"
    assert any(k == "License-File" and v == "LICENSE" for k, v in fields)
    assert any(k == "Project-URL" for k, _ in fields)
    assert any(k == "Classifier" and v.startswith("License") is False for k, v in fields)
    assert any(k == "Author" or k == "Author-email" for k, _ in fields)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    entry = archive.read(meta_name.replace("METADATA", "entry_points.txt")).decode()
    assert "ouro = ouro.cli:main" in entry
    # the README's install section is the description the index shows
    assert "pipx install ouro-bundle" in meta and "uv tool install ouro-bundle" in meta


def _fresh_home(root: Path) -> dict[str, str]:
    home = root / "home"
    home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OURO_", "PIPX_", "UV_"))}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    return env | {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                  "XDG_STATE_HOME": str(home / ".state"), "XDG_DATA_HOME": str(home / ".data")}  # fmt: skip


def _check_installed(ouro: Path, env: dict[str, str], where: Path) -> None:
    """``ouro --version`` and ``ouro demo`` from the installed command, away from the checkout."""
    where.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(
        [str(ouro), "--version"], cwd=where, env=env, capture_output=True, text=True, timeout=120
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == f"ouro, version {ouro_pkg.__version__}"
    demo = subprocess.run(
        [str(ouro), "demo", str(where / "d.ouro")], cwd=where, env=env, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stderr
    assert (where / "d.ouro" / "desk" / "_meta" / "featured.md").exists()


@pytest.mark.slow
def test_pip_installs_the_wheel_into_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    env = _fresh_home(tmp_path)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    proc = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", str(wheel)], env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    _check_installed(env_dir / "bin" / "ouro", env, tmp_path / "elsewhere")
    where = subprocess.run(
        [str(py), "-c", "import ouro.resources as r; print(r.templates_dir())"],
        cwd=tmp_path / "elsewhere", env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert str(env_dir) in where.stdout and "_data" in where.stdout
    show = subprocess.run(
        [str(py), "-m", "pip", "show", DIST], env=env, capture_output=True, text=True
    )
    assert show.returncode == 0 and f"Name: {DIST}" in show.stdout, show.stdout


@pytest.fixture(scope="module")
def installers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch venv holding the pinned pipx and uv, from the package index."""
    tools = tmp_path_factory.mktemp("installers") / "venv"
    venv.create(tools, with_pip=True)
    proc = subprocess.run(
        [str(tools / "bin" / "python"), "-m", "pip", "install", "-q", PIPX, UV],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"cannot install {PIPX} and {UV} from the package index: {proc.stderr[-300:]}")
    return tools / "bin"


@pytest.mark.slow
def test_pipx_installs_the_wheel(wheel: Path, installers: Path, tmp_path: Path) -> None:
    env = _fresh_home(tmp_path)
    env |= {"PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
            "PIPX_MAN_DIR": str(tmp_path / "man"), "PIPX_DEFAULT_PYTHON": sys.executable}  # fmt: skip
    proc = subprocess.run(
        [str(installers / "pipx"), "install", str(wheel)], env=env, capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _check_installed(tmp_path / "bin" / "ouro", env, tmp_path / "elsewhere")


@pytest.mark.slow
def test_uv_tool_installs_the_wheel(wheel: Path, installers: Path, tmp_path: Path) -> None:
    env = _fresh_home(tmp_path)
    env |= {"UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin"),
            "UV_CACHE_DIR": str(tmp_path / "cache"), "UV_PYTHON_DOWNLOADS": "never"}  # fmt: skip
    proc = subprocess.run(
        [str(installers / "uv"), "tool", "install", "--python", sys.executable, str(wheel)],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    _check_installed(tmp_path / "bin" / "ouro", env, tmp_path / "elsewhere")


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
