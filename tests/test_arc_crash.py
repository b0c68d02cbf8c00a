"""Crash drills: a writer SIGKILLed between the event append and the checkpoint
rewrite loses nothing; the next orient reflects the last appended event."""

from __future__ import annotations

import os
import random
import signal
import time

import orjson
import pytest

from ouro.arc import paths
from ouro.arc.recorder import build_event, record_event
from ouro.bundle import Bundle
from ouro.orient import build_packet
from ouro.store.jsonl import append_jsonl
from tests.conftest import ouro_json


def _fork_append_then_hang(bundle: Bundle, ask: str) -> str:
    """A real child process appends one event with the library's append, reports
    its id, then hangs where it would rewrite the checkpoint; we SIGKILL it."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_fd)
            with paths.arc_lock(bundle, "crash drill"):
                line = build_event(bundle, "turn_accepted", f"ask: {ask}", current_ask=ask)
                append_jsonl(
                    paths.events_dir(bundle) / paths.day_file_name(line["recordedAt"]), [line]
                )
                os.write(write_fd, line["id"].encode())
                time.sleep(60)  # killed here, before write_checkpoint
        finally:
            os._exit(3)
    os.close(write_fd)
    event_id = os.read(read_fd, 100).decode()
    os.close(read_fd)
    os.kill(pid, signal.SIGKILL)
    _pid, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return event_id


@pytest.mark.slow
def test_sigkill_between_append_and_checkpoint_50_times(bundle: Bundle) -> None:
    record_event(bundle, "agent_note", "start", next_safe_action="keep going")
    for i in range(50):
        event_id = _fork_append_then_hang(bundle, f"ask number {i}")
        packet = build_packet(bundle)
        assert f"[current] ask number {i}  [" in packet.text, packet.text
        assert f"#{event_id}]" in packet.text
        checkpoint = orjson.loads(paths.checkpoint_path(bundle).read_bytes())
        # The checkpoint on disk lags by exactly the killed writer's event...
        assert checkpoint["lastEvent"]["id"] != event_id
        if i % 10 == 9:
            # ...and the next writer repairs it from the log.
            record_event(bundle, "agent_note", f"repair {i}")
            checkpoint = orjson.loads(paths.checkpoint_path(bundle).read_bytes())
            assert checkpoint["currentAsk"]["sourceEventIds"] == [event_id]
            assert checkpoint["eventCount"] == 1 + (i + 1) + (i + 1) // 10
    # The real CLI agrees after the last kill.
    event_id = _fork_append_then_hang(bundle, "final ask")
    out = ouro_json("orient", bundle=bundle)
    assert "[current] final ask" in out["text"] and event_id in out["text"]


@pytest.mark.slow
def test_sigkill_at_random_moments_never_loses_the_last_logged_event(bundle: Bundle) -> None:
    rng = random.Random(7)
    for round_no in range(8):
        pid = os.fork()
        if pid == 0:
            try:
                n = 0
                while True:
                    record_event(bundle, "turn_accepted", "ask", current_ask=f"r{round_no}-{n}")
                    n += 1
            finally:
                os._exit(3)
        time.sleep(rng.uniform(0.02, 0.25))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        logged = [
            orjson.loads(line)
            for name in sorted(os.listdir(paths.events_dir(bundle)))
            if name.endswith(".jsonl")
            for line in (paths.events_dir(bundle) / name).read_bytes().splitlines()
            if line.strip()
        ]
        last = logged[-1]
        packet = build_packet(bundle)
        assert f"[current] {last['currentAsk']}  [" in packet.text
        assert "event_line_unreadable" not in packet.text
