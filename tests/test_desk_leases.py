"""Taking a task: exactly one winner among racing processes; renew, expiry, takeover."""

from __future__ import annotations

import multiprocessing as mp
from datetime import timedelta
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.desk import leases, tasks, tracks
from ouro.errors import Conflict
from ouro.models.clock import format_time, utc_now
from ouro.store import frontmatter
from tests.conftest import ouro_json


def _task(bundle: Bundle) -> str:
    tracks.add_track(bundle, "web")
    return tasks.add_task(bundle, "web", "Contested").id


def _race(root: str, task_id: str, agent: str, start: object, out: object) -> None:
    bundle = Bundle(Path(root))
    start.wait()  # type: ignore[attr-defined]
    try:
        leases.take_task(bundle, task_id, agent=agent, lease="10m")
        out.put((agent, "won", ""))  # type: ignore[attr-defined]
    except Conflict as exc:
        out.put((agent, "lost", exc.message))  # type: ignore[attr-defined]


def test_sixteen_processes_race_exactly_one_wins(bundle: Bundle) -> None:
    task_id = _task(bundle)
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_race, args=(str(bundle.root), task_id, f"agent-{i}", start, out))
        for i in range(16)
    ]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    winners = [a for a, outcome, _ in results if outcome == "won"]
    assert len(winners) == 1
    losers = [msg for _, outcome, msg in results if outcome == "lost"]
    assert len(losers) == 15
    assert all(f"held by {winners[0]} until" in msg for msg in losers)
    meta, _ = frontmatter.parse(tasks.find_task(bundle, task_id).path.read_text())
    assert meta["heldBy"] == winners[0] and meta["status"] == "active"
    assert [h["event"] for h in meta["history"]] == ["taken"]


def _expire(bundle: Bundle, task_id: str) -> str:
    """Move the lease end into the past, as time passing would."""
    task = tasks.find_task(bundle, task_id)
    past = format_time(utc_now() - timedelta(seconds=5))
    task.meta["leaseUntil"] = past
    tasks.save_task(task)
    return past


def test_renew_conflict_expiry_takeover_release(bundle: Bundle) -> None:
    task_id = _task(bundle)
    first = leases.take_task(bundle, task_id, agent="ari", lease="1m")
    assert first.outcome == "taken" and first.previous is None
    renewed = leases.take_task(bundle, task_id, agent="ari", lease="2h")
    assert renewed.outcome == "renewed" and renewed.lease_until > first.lease_until
    with pytest.raises(Conflict) as err:
        leases.take_task(bundle, task_id, agent="bo")
    assert err.value.message == (
        f"task {task_id} is held by ari until {renewed.lease_until}; bo cannot take it"
    )
    assert "--take-over" in (err.value.hint or "")
    past = _expire(bundle, task_id)
    taken = leases.take_task(bundle, task_id, agent="bo")
    assert taken.outcome == "takeover"
    assert taken.previous == {"agent": "ari", "leaseUntil": past}
    history = tasks.find_task(bundle, task_id).meta["history"]
    assert [h["event"] for h in history] == ["taken", "takeover"]
    assert history[1]["previous"] == "ari" and history[1]["previousLeaseUntil"] == past
    with pytest.raises(Conflict, match="held by bo"):
        leases.release_task(bundle, task_id, agent="ari")
    released = leases.release_task(bundle, task_id, agent="bo")
    assert released.meta["heldBy"] is None and released.meta["leaseUntil"] is None
    assert released.meta["status"] == "open"
    with pytest.raises(Conflict, match="not held"):
        leases.release_task(bundle, task_id, agent="bo")


def test_real_short_lease_expires(bundle: Bundle) -> None:
    import time

    task_id = _task(bundle)
    leases.take_task(bundle, task_id, agent="ari", lease="1s")
    with pytest.raises(Conflict):
        leases.take_task(bundle, task_id, agent="bo")
    time.sleep(1.1)
    assert leases.take_task(bundle, task_id, agent="bo").outcome == "takeover"


def test_done_task_cannot_be_taken_and_cli_conflict(bundle: Bundle) -> None:
    task_id = _task(bundle)
    tasks.update_task(bundle, task_id, status="done")
    with pytest.raises(Conflict, match="is done"):
        leases.take_task(bundle, task_id, agent="ari")
    tasks.update_task(bundle, task_id, status="open")
    assert (
        ouro_json("desk", "task", "take", task_id, "--agent", "ari", bundle=bundle)["outcome"]
        == "taken"
    )
    lost = ouro_json("desk", "task", "take", task_id, "--agent", "bo", bundle=bundle)
    assert lost["error"]["type"] == "conflict" and "held by ari" in lost["error"]["message"]
