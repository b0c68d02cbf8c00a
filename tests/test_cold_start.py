"""Cold start: each command imports only what it runs (the one CLI path).

``python -X importtime`` lists every module a real ``ouro`` process imports;
the test fails when a heavy module leaks into a read path that does not need
it. It checks module names, never times (times are for bench/, not tests).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

import ouro
from ouro.api import call
from ouro.arc.paths import claims_dir
from ouro.bundle import Bundle
from ouro.desk import tasks, tracks
from ouro.desk.record import FactDraft, write_fact
from ouro.index.sync import rebuild
from ouro.store import stamp
from tests.conftest import REPO, run_ouro

#: modules no fast read path may import (top-level package names)
HEAVY = {"yaml", "pydantic", "pydantic_core", "mcp", "watchdog", "jinja2", "importlib.metadata"}


def _imported(stderr: str) -> set[str]:
    names = set()
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s+(\S.*)$", line)
        if match:
            names.add(match.group(1).strip())
    return names


def _leaks(names: set[str]) -> set[str]:
    """The heavy packages among the imported modules (by package name)."""
    out = {n for n in names if n in HEAVY}
    return out | {n.split(".")[0] for n in names if n.split(".")[0] in HEAVY}


@pytest.fixture
def busy(bundle: Bundle) -> Bundle:
    """A bundle with tracks, tasks (active, blocked), facts and an index."""
    tracks.add_track(bundle, "web")
    first = tasks.add_task(bundle, "web", "Ship the login page", priority=1)
    tasks.add_task(bundle, "web", "Fix: the flaky test, then merge")
    tasks.update_task(bundle, first.id, status="active")
    write_fact(bundle, FactDraft("the staging host is web-3", about=["staging"]))
    call("desk_track_add", bundle, {"name": "ops"})
    call("desk_task_add", bundle, {"track": "ops", "title": "Rotate keys"})
    # claims the orient packet derives a status for (read from their files, cold)
    checked = call("claim_add", bundle, {"text": "tests pass", "check": "true"})
    call(
        "claim_evidence",
        bundle,
        {"claim_id": checked["id"], "command": "true", "exit_code": 1, "by": "ci"},
    )
    call("claim_add", bundle, {"text": "the log rotates", "about": ["bundle.json"]})
    # re-laid out by hand: the next read parses it again (the cached summary is not enough)
    path = claims_dir(bundle) / f"{checked['id']}.json"
    path.write_text(json.dumps(json.loads(path.read_text()), indent=2))
    rebuild(bundle)
    return bundle


FAST = [
    ("--version",),
    ("info",),
    ("info", "--json"),
    ("index", "status"),
    ("index", "status", "--json"),
    ("orient",),
    ("orient", "--json"),
    ("facts", "search", "staging"),
    ("diary", "consult", "staging"),
    ("desk", "search", "login"),
]


@pytest.mark.parametrize("argv", FAST, ids=" ".join)
def test_fast_commands_import_no_heavy_module(busy: Bundle, argv: tuple[str, ...]) -> None:
    leaks = _leaks(_imports_of(busy, argv))
    if leaks & PYDANTIC:  # checked below; pydantic's plugin loader imports importlib.metadata
        leaks -= PYDANTIC | {"importlib.metadata"}
    assert leaks == set(), f"ouro {' '.join(argv)} imported {sorted(leaks)}"


PYDANTIC = {"pydantic", "pydantic_core"}


@pytest.mark.parametrize("argv", FAST, ids=" ".join)
def test_fast_commands_import_no_pydantic(busy: Bundle, argv: tuple[str, ...]) -> None:
    leaks = _leaks(_imports_of(busy, argv)) & PYDANTIC
    assert leaks == set(), f"ouro {' '.join(argv)} imported {sorted(leaks)}"


#: writes: their input is validated by ``ouro.spec`` (no pydantic)
LITE_WRITES = [
    ("diary", "write", "the deploy window is friday", "--about", "deploys"),
    ("diary", "write", "the deploy window is monday", "--about", "ops", "--force", "--json"),
]


@pytest.mark.parametrize("argv", LITE_WRITES, ids=" ".join)
def test_plain_writes_import_no_pydantic(busy: Bundle, argv: tuple[str, ...]) -> None:
    leaks = _leaks(_imports_of(busy, argv))
    assert leaks == set(), f"ouro {' '.join(argv)} imported {sorted(leaks)}"


#: no command imports click (the CLI is argparse)
NO_CLICK = [
    ("--version",),
    ("info",),
    ("index", "status"),
    ("index", "status", "--json"),
    ("diary", "write", "the deploy window is sunday", "--about", "deploys"),
]


@pytest.mark.parametrize("argv", NO_CLICK, ids=" ".join)
def test_fast_path_commands_import_no_click(busy: Bundle, argv: tuple[str, ...]) -> None:
    names = _imports_of(busy, argv)
    assert "click" not in names


def _imports_of(bundle: Bundle, argv: tuple[str, ...]) -> set[str]:
    proc = run_ouro(*argv, bundle=bundle, env={"PYTHONPROFILEIMPORTTIME": "1"}, process=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = _imported(proc.stderr)
    assert "ouro.cli" in names  # the import log is really there
    return names


def test_the_check_sees_a_heavy_import() -> None:
    """The same parsing on a process that does read YAML reports it (the test can fail)."""
    code = "import ouro.store.frontmatter as f; f.load_yaml('a: 1')"
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
    )
    assert _leaks(_imported(out.stderr)) == {"yaml"}


def test_version_is_one_number() -> None:
    """``ouro --version`` reads ouro.__version__ (no importlib.metadata); pyproject agrees."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["version"] == ouro.__version__
    proc = run_ouro("--version")
    assert proc.stdout.strip() == f"ouro, version {ouro.__version__}"


#: what ``ouro orient`` reads Desk without: the task and track writers (and
#: their threading, ids, unicodedata); featured and friction import them only
#: to write. Nor orjson or dataclasses (with inspect): importing them costs more
#: than a cold orient's work (``ouro.store.jsonio`` reads its small files).
ORIENT_WITHOUT = {
    "ouro.desk.tasks",
    "ouro.desk.tracks",
    "ouro.desk.names",
    "unicodedata",
    "orjson",
    "dataclasses",
    "inspect",
}


@pytest.mark.parametrize("argv", [("orient",), ("orient", "--json")], ids=" ".join)
def test_orient_imports_no_writer_machinery(busy: Bundle, argv: tuple[str, ...]) -> None:
    names = _imports_of(busy, argv)
    assert "ouro.desk.heads" in names and "ouro.arc.fold" in names  # it did orient
    assert names & ORIENT_WITHOUT == set()


@pytest.mark.parametrize("argv", [("orient",), ("desk", "search", "login")], ids=" ".join)
def test_a_linked_project_costs_what_bundle_costs(
    busy: Bundle, argv: tuple[str, ...], tmp_path: Path
) -> None:
    """From a ``--link``ed project (a ``.ouro`` pointer) the command imports exactly
    what it imports with ``--bundle``: one discovery (``Bundle.locate``), one path."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "ouro.cli", "init", str(busy.root), "--link"],
        cwd=project, check=True, capture_output=True,
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    env["PYTHONPROFILEIMPORTTIME"] = "1"

    def imported(*line: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "ouro.cli", *line], cwd=project / "src", env=env,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
        return _imported(proc.stderr)

    # a first read may bring a derived cache up to date: not what is compared; it
    # runs once the fixture's writes are out of the racy window, or it could
    # only restamp them as racy and the next read would look at them again
    time.sleep(stamp.RACY_NS / 1e9)
    imported(*argv)
    linked = imported(*argv)
    named = imported("--bundle", str(busy.root), *argv)
    assert "ouro.cli.run" in linked and linked == named
