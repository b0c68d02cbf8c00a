"""``ouro watch`` as a real process: outside edits reach the index; one watcher per bundle."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

from ouro.bundle import Bundle
from ouro.index.db import db_path
from ouro.index.search import consult_notes
from tests.index_support import write_note


def _indexed(bundle: Bundle, word: str) -> int:
    """Ask the database directly (a search would sync by itself and prove nothing)."""
    conn = sqlite3.connect(f"{db_path(bundle.root).as_uri()}?mode=ro", uri=True)
    try:
        return int(
            conn.execute(
                "SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?", (word,)
            ).fetchone()[0]
        )
    finally:
        conn.close()


def _wait_for(predicate: object, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_watcher_applies_outside_edits_and_is_alone(bundle: Bundle) -> None:
    note = write_note(bundle, "guide", "Guide", "original words")
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    argv = [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "watch"]
    watcher = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert watcher.stderr is not None
        line = watcher.stderr.readline()
        assert "watching" in line and f"pid {watcher.pid}" in line
        assert _indexed(bundle, "original") == 1
        # an editor rewriting the file in place: no folder mtime moves
        with note.open("r+", encoding="utf-8") as handle:
            text = handle.read().replace("original", "zebrafish")
            handle.seek(0)
            handle.write(text)
            handle.truncate()
        assert _wait_for(lambda: _indexed(bundle, "zebrafish") == 1)
        # a new file and a delete
        other = write_note(bundle, "second", "Second", "quokka facts")
        assert _wait_for(lambda: _indexed(bundle, "quokka") == 1)
        other.unlink()
        assert _wait_for(lambda: _indexed(bundle, "quokka") == 0)
        assert consult_notes(bundle.root, "zebrafish")["total"] == 1
        # a second watcher is refused and names the holder
        second = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
        assert second.returncode == 1
        assert f"pid={watcher.pid}" in second.stderr and "already watching" in second.stderr
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=20)
    assert watcher.returncode == 0
