"""Every benchmark still runs (bench/run_all.py --smoke): a bench that breaks fails CI.

Figures at smoke scale mean nothing and are not checked (speed is measured by
the benches themselves, never asserted in tests).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_every_bench_runs_at_smoke_scale(tmp_path: Path) -> None:
    out = tmp_path / "table.md"
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "run_all.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    table = out.read_text()
    benches = sorted(p.stem for p in (REPO / "bench").glob("*.py"))
    # corpus.py builds the corpus; soak.py is the soak suite's runner (tests/soak/)
    for name in set(benches) - {"corpus", "run_all", "soak"}:
        assert f"| {name} |" in table, f"bench/{name}.py is not in run_all's table"
    assert "FAILED" not in table
    assert "| diary_write via the tool registry p50 |" in table  # year.py's own table
