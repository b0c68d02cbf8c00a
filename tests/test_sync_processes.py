"""ouro sync against real processes: a writer racing a sync, and a sync killed mid-way.

Marked ``slow``: each test drives real git and real ``ouro`` processes for seconds.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.orient import build_packet
from tests.sync_support import git, jsonl_ids, ouro, remote_and_clones, tracked_files

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
]

WRITER = """
import sys
from ouro.bundle import Bundle
from ouro.desk.record import FactDraft, write_fact
bundle = Bundle.open(sys.argv[1])
for i in range(int(sys.argv[2])):
    write_fact(bundle, FactDraft(text=f"racing fact number {i} " + "x" * (i % 7)), force=True)
    print(i, flush=True)
"""


def _facts_at_head(bundle: Bundle) -> list[str]:
    text = git(bundle.root, "show", "HEAD:desk/_record/diary/facts.jsonl")
    return [json.loads(line)["text"] for line in text.splitlines() if line.strip()]


def test_a_write_during_sync_is_never_lost(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    for i in range(5):
        ouro(a, "diary", "write", f"from the other machine {i}")
    ouro(a, "sync")
    count = 40
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(b.root), str(count)],
        stdout=subprocess.PIPE,
        env={**os.environ},
    )
    syncs = 0
    while writer.poll() is None:
        ouro(b, "sync")
        syncs += 1
    assert writer.returncode == 0
    ouro(b, "sync")
    ouro(a, "sync")
    assert syncs >= 1
    texts = _facts_at_head(b)
    racing = [t for t in texts if t.startswith("racing fact")]
    assert len(racing) == count == len(set(racing))
    assert sum(t.startswith("from the other machine") for t in texts) == 5
    assert tracked_files(a) == tracked_files(b)


@pytest.mark.parametrize("delay", [0.25, 0.5, 0.8, 1.2, 1.6])
def test_a_killed_sync_is_completed_by_the_next(tmp_path: Path, delay: float) -> None:
    _, a, b = remote_and_clones(tmp_path)
    claim = ouro(a, "claim", "add", "it works")["id"]
    ouro(a, "sync")
    ouro(b, "sync")
    for side, tag, code in ((a, "a", "0"), (b, "b", "1")):
        for i in range(4):
            ouro(side, "diary", "write", f"{tag} fact {i}")
        ouro(side, "claim", "evidence", claim, "--command", "make", "--exit-code", code)
        ouro(side, "desk", "task", "take", "work/ship-it", "--agent", f"agent-{tag}")
    ouro(a, "sync")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ouro.cli", "--bundle", str(b.root), "sync"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(delay)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    ouro(b, "sync")
    ouro(a, "sync")
    ouro(b, "sync")
    assert git(b.root, "status", "--porcelain") == ""
    assert not (
        Path(git(b.root, "rev-parse", "--absolute-git-dir").strip()) / "MERGE_HEAD"
    ).exists()
    for path in b.root.rglob("*.md"):
        assert "<<<<<<<" not in path.read_text(), path
    assert tracked_files(a) == tracked_files(b)
    texts = _facts_at_head(b)
    for tag in "ab":
        assert sorted(t for t in texts if t.startswith(f"{tag} fact")) == [
            f"{tag} fact {i}" for i in range(4)
        ]
    events = jsonl_ids(b, "arc/flight-recorder/events")
    assert len(events) == len(set(events))
    assert build_packet(a).text == build_packet(b).text


def test_two_machines_syncing_at_the_same_moment_converge(tmp_path: Path) -> None:
    _, a, b = remote_and_clones(tmp_path)
    for round_no in range(3):
        for side, tag in ((a, "a"), (b, "b")):
            for i in range(3):
                ouro(side, "diary", "write", f"{tag} round {round_no} fact {i}")
            ouro(side, "desk", "task", "add", "work", f"{tag} task {round_no}")
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "ouro.cli", "--bundle", str(s.root), "sync"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for s in (a, b)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
    for side in (a, b, a):
        ouro(side, "sync")
    assert tracked_files(a) == tracked_files(b)
    texts = _facts_at_head(a)
    assert len(texts) == 18 == len(set(texts))
    assert git(a.root, "status", "--porcelain") == "" == git(b.root, "status", "--porcelain")
