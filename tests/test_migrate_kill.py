"""SIGKILL a real ``ouro migrate --yes`` at random points (20 runs): re-running
completes, and the result equals an uninterrupted run's."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ouro.migrate.engine import migrate
from tests.migrate_helpers import build_legacy, normalized

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
    interrupted = 0
    for n in range(RUNS):
        root = tmp_path / f"kill-{n}.ouro"
        shutil.copytree(source, root, symlinks=True)
        proc = _start(root)
        time.sleep(rng.uniform(0.05, duration * 0.95))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            interrupted += 1
        proc.wait(timeout=60)
        result = migrate(root)
        if proc.returncode == 0:
            assert result["status"] == "nothing"
        got = normalized(root)
        assert got == expected, f"run {n}: result differs after a kill"
        shutil.rmtree(root)
    # Most kills must land inside the migration, or this test proves little.
    assert interrupted >= RUNS // 2, interrupted
