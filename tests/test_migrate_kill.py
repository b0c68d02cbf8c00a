"""SIGKILL the migration and re-run it: the result equals an uninterrupted run's.

Two ways: a real ``ouro migrate --yes`` killed at random moments (20 runs), and
a forked ``migrate`` killed just before its N-th filesystem mutation, for
chosen N (deterministic: no timing)."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ouro.index.sync import rebuild
from ouro.migrate import engine as migrate_engine
from tests.migrate_helpers import build_legacy, normalized


def migrate(root: Path, **kwargs: Any) -> dict[str, Any]:
    """The engine as ``ouro migrate`` drives it: the index's rebuild passed in."""
    return migrate_engine.migrate(root, rebuild_index=rebuild, **kwargs)


RUNS = 20


def _start(root: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    return subprocess.Popen(
        [sys.executable, "-m", "ouro.cli", "--bundle", str(root), "migrate", "--yes"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )


@pytest.mark.slow
def test_sigkill_at_random_points_then_rerun_equals_uninterrupted(tmp_path: Path) -> None:
    # Big enough that the run takes a while, so kills land inside it.
    source = build_legacy(tmp_path / "source.ouro", facts=1000, notes=80, journal=20)
    reference = tmp_path / "reference.ouro"
    shutil.copytree(source, reference, symlinks=True)
    began = time.monotonic()
    proc = _start(reference)
    assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
    duration = time.monotonic() - began
    expected = normalized(reference)
    assert expected["roots"] == []

    rng = random.Random(20260301)
    # Kill until RUNS kills have landed inside a running migration. The
    # reference run's time is only an estimate (a loaded machine makes it
    # vary), so a run that finished before its kill narrows the window
    # instead of counting -- it is still checked to equal the reference.
    latest, interrupted, attempts = duration * 0.95, 0, 0
    while interrupted < RUNS:
        attempts += 1
        assert attempts <= RUNS * 3, f"only {interrupted} of {attempts} kills landed in a run"
        root = tmp_path / f"kill-{attempts}.ouro"
        shutil.copytree(source, root, symlinks=True)
        proc = _start(root)
        delay = rng.uniform(0.05, latest)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            interrupted += 1
        else:
            latest = max(0.1, delay * 0.9)
        proc.wait(timeout=60)
        result = migrate(root)
        if proc.returncode == 0:
            assert result["status"] == "nothing"
        else:
            assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
        diff = _diff(normalized(root), expected)
        assert not diff, f"run {attempts} (killed after {delay:.2f}s): differs in {diff}"
        shutil.rmtree(root)


# --- deterministic kill points -------------------------------------------------
# A forked child runs ``migrate`` with the filesystem calls that change anything
# counted, and SIGKILLs itself just before call number N: the same N stops the
# run at the same instruction every time, no timing involved.

_CREATE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _count_mutations(kill_at: int, log: list[str]) -> None:
    """Wrap os/io writers in this (child) process: log each, die before ``kill_at``."""
    import builtins
    import io

    def tick(what: str) -> None:
        log.append(what)
        if len(log) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def wrap(mod: Any, name: str, pred: Callable[..., bool] | None = None) -> None:
        real = getattr(mod, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            if pred is None or pred(*args, **kwargs):
                tick(f"{name} {args[0]}")
            return real(*args, **kwargs)

        setattr(mod, name, counted)

    for name in ("replace", "rename", "unlink", "remove", "rmdir", "symlink", "mkdir"):
        wrap(os, name)
    for name in ("write", "truncate", "ftruncate"):
        wrap(os, name)
    wrap(os, "open", lambda path, flags, *a, **k: bool(flags & _CREATE))
    wrap(io, "open", lambda file, mode="r", *a, **k: any(c in mode for c in "wax+"))
    builtins.open = io.open  # type: ignore[assignment]


def _migrate_killed(root: Path, kill_at: int) -> list[str]:
    """Fork; the child migrates ``root`` and dies before mutation ``kill_at``
    (0: runs to the end). Returns the child's mutation log."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never returns into pytest
        code = 1
        try:
            os.close(read_end)
            log: list[str] = []
            _count_mutations(kill_at, log)
            migrate(root)
            code = 0
            os.write(write_end, "\n".join(log).encode())
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if kill_at:
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
        return []
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    return data.decode().split("\n")


def _diff(got: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    files = sorted(
        k
        for k in set(got["files"]) | set(expected["files"])
        if got["files"].get(k) != expected["files"].get(k)
    )
    return files + [k for k in ("report", "layout", "roots") if got[k] != expected[k]]


@pytest.mark.slow
def test_kill_right_after_each_temp_file_then_rerun_equals_uninterrupted(tmp_path: Path) -> None:
    """Regression: a kill between an atomic write's temp file and its rename left
    ``.<name>.<random>.tmp`` beside the target (the notes manifest, entities.json,
    a daily file, the conflicts file, the report); the re-run wrote a fresh temp
    under a new name and never removed the old one, so the tree differed from an
    uninterrupted run's. Kill just after every temp file is created, and at
    every 25th mutation besides, then re-run."""
    source = build_legacy(tmp_path / "source.ouro", facts=24, notes=6, journal=4)
    reference = tmp_path / "reference.ouro"
    shutil.copytree(source, reference, symlinks=True)
    log = _migrate_killed(reference, 0)
    expected = normalized(reference)
    assert expected["roots"] == []
    after_temp = {n + 2 for n, op in enumerate(log) if op.endswith(".tmp") and "open" in op}
    points = sorted(after_temp | set(range(1, len(log) + 1, 25)))
    # Every kind of atomic writer the migration drives is among the kill points.
    temps = {op.rsplit("/", 1)[-1][1:].rsplit(".", 2)[0] for op in log if op.endswith(".tmp")}
    assert {".index.json", "entities.json", "migration-report.jsonl"} <= temps, temps
    failures = []
    for kill_at in points:
        root = tmp_path / f"kill-{kill_at}.ouro"
        shutil.copytree(source, root, symlinks=True)
        _migrate_killed(root, kill_at)
        assert migrate(root)["status"] in ("migrated", "nothing")
        diff = _diff(normalized(root), expected)
        if diff:
            failures.append(f"killed before mutation {kill_at} ({log[kill_at - 1]}): {diff}")
        shutil.rmtree(root)
    assert not failures, "\n".join(failures)
