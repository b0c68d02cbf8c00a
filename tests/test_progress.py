"""``ouro.progress``: progress on stderr only on a terminal, never under --json
or in a pipe, quiet for quick work; the ``progress`` setting can force it."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys

import pytest

from ouro import config, progress
from ouro.bundle import Bundle


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OURO_PROGRESS", raising=False)
    monkeypatch.setattr(config, "COMMAND_LINE", {})
    monkeypatch.setattr(progress, "DELAY", 0.0)
    progress.set_json(False)


def test_on_a_terminal_a_counter_redraws_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    show = progress.counter("indexing", "files")
    assert show is not None
    show(1, 4)
    show(4, 4)
    text = err.getvalue()
    assert text.startswith("\rindexing: 1/4 files (25%)")
    assert "\rindexing: 4/4 files (100%) in " in text and text.endswith("s\n")
    steps = progress.steps("sync")
    assert steps is not None
    steps("fetching")
    assert err.getvalue().endswith("sync: fetching …\n")


def test_silent_in_a_pipe_and_under_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress.counter("x") is None and progress.steps("x") is None
    monkeypatch.setattr(sys, "stderr", Tty())
    progress.set_json(True)
    assert progress.counter("x") is None and progress.phased("x") is None
    progress.set_json(False)
    monkeypatch.setenv("OURO_PROGRESS", "never")
    assert progress.counter("x") is None


def test_always_forces_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(config, "COMMAND_LINE", {"progress": "always"})
    show = progress.phased("migrate")
    assert show is not None
    show("backup", 2, 2)
    assert "migrate: backup: 2/2 (100%) in" in err.getvalue()


def test_quick_work_prints_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 60.0)
    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    show = progress.counter("indexing")
    assert show is not None
    show(3, 3)
    assert err.getvalue() == ""


def _drill_in_a_pty(bundle: Bundle, *extra: str) -> tuple[int, str, str]:
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_PROGRESS", "NO_COLOR")}
    # The CLI as a real process on a real terminal; progress's quiet start (DELAY:
    # work done within 0.5 s prints nothing) is set to 0 so how fast the drills
    # run on this machine does not decide what the test sees.
    start = "import sys, ouro.progress; ouro.progress.DELAY = 0.0; import ouro.cli; ouro.cli.main()"
    proc = subprocess.run(
        [sys.executable, "-c", start, "--bundle", str(bundle.root), *extra, "drill"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
        timeout=120,
        check=False,
    )
    os.close(follower)
    chunks = []
    os.set_blocking(leader, False)
    try:
        while True:
            chunk = os.read(leader, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    except (BlockingIOError, OSError):
        pass
    os.close(leader)
    return proc.returncode, proc.stdout.decode(), b"".join(chunks).decode()


@pytest.mark.slow
def test_drills_show_progress_on_a_real_terminal_only(bundle: Bundle) -> None:
    _code, out, err = _drill_in_a_pty(bundle)
    assert re.search(r"\rdrills: (\d+)/\1 done \(100%\) in \d+\.\ds\r?\n", err), err
    assert "drills:" not in out  # stdout carries the result only
    _code, out, err = _drill_in_a_pty(bundle, "--json")
    assert "drills:" not in err and out.startswith("{")
