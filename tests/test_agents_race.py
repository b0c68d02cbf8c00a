"""Many agents, one desk: racing processes take path locks and claim ready tasks.

Real processes (fork), each calling the tool registry as the CLI and MCP do.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path
from typing import Any

import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.desk import tasks, tracks
from ouro.errors import Conflict, InvalidInput
from ouro.locks import list_locks
from ouro.models.clock import utc_now

pytestmark = pytest.mark.slow

AGENTS = 8


def _agent(root: str, i: int, start: Any, out: Any) -> None:
    bundle = Bundle(Path(root))
    me = f"agent-{i}"
    start.wait()
    # half ask for the folder, half for a file inside it: every take overlaps
    paths = ["src"] if i % 2 else ["src/app.py", f"docs/agent-{i}.md"]
    try:
        tools.call("lock_take", bundle, {"paths": paths, "agent": me, "reason": f"r{i}"})
        out.put(("lock", me, "won", time.time()))
    except Conflict as exc:
        out.put(("lock", me, exc.message, time.time()))
    got: str | None = None
    while got is None:
        asked = time.time()
        offered = [t["id"] for t in tools.call("desk_ready", bundle, {})["ready"]]
        out.put(("ready", me, offered, asked))
        if not offered:
            break
        for task_id in offered:
            try:
                tools.call("desk_task_take", bundle, {"task": task_id, "agent": me})
            except Conflict:
                continue
            got = task_id
            out.put(("take", me, task_id, time.time()))
            break
    out.put(("done", me, got, time.time()))


def test_eight_agents_race_for_locks_and_ready_tasks(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    tracks.add_track(bundle, "ops")
    ready = [tasks.add_task(bundle, "web" if n % 2 else "ops", f"Job {n}").id for n in range(5)]
    blocker = tasks.add_task(bundle, "ops", "Not done yet", priority=9)
    waiting = tasks.add_task(bundle, "web", "Waits", priority=0, blocked_by=[blocker.id]).id
    ready.append(blocker.id)
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_agent, args=(str(bundle.root), i, start, out)) for i in range(AGENTS)
    ]
    for p in procs:
        p.start()
    start.set()
    events: list[tuple[str, str, Any, float]] = []
    finished = 0
    while finished < AGENTS:
        event = out.get(timeout=120)
        events.append(event)
        finished += event[0] == "done"
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    # exactly one holder of the overlapping locks; every loser was told who holds it
    lock_events = [e for e in events if e[0] == "lock"]
    winners = [e[1] for e in lock_events if e[2] == "won"]
    assert len(winners) == 1, lock_events
    losers = [e[2] for e in lock_events if e[2] != "won"]
    assert len(losers) == AGENTS - 1
    assert all(f"is locked by {winners[0]} (r" in msg and " until " in msg for msg in losers)
    live = list_locks(bundle, now=utc_now()).locks
    assert {lk.agent for lk in live} == {winners[0]}
    # exactly one holder per task: six tasks ready, eight agents, six takers
    takes = [e for e in events if e[0] == "take"]
    taken = [e[2] for e in takes]
    assert sorted(taken) == sorted(ready) and len(set(taken)) == len(taken)
    for _, agent, task_id, _ in takes:
        assert tasks.find_task(bundle, task_id).meta["heldBy"] == agent
    assert waiting not in taken  # its blocker is held, not done
    # desk ready never offered a task another agent held when it was asked
    took_at = {e[2]: (e[1], e[3]) for e in takes}
    for _, agent, offered, asked in (e for e in events if e[0] == "ready"):
        for task_id in offered:
            holder, when = took_at[task_id]
            assert not (holder != agent and when < asked), (agent, task_id, holder)
    assert tools.call("desk_ready", bundle, {})["ready"] == []


def _send(root: str, peer: str, i: int, start: Any, out: Any) -> None:
    bundle = Bundle(Path(root))
    start.wait()
    for n in range(10):
        result = tools.call(
            "message_send",
            bundle,
            {"agent": "peer", "text": f"status {i}-{n}", "sender": f"agent-{i}"},
        )
        out.put(result["delivered"])


def test_eight_senders_at_once_lose_no_message(bundle: Bundle, tmp_path: Path) -> None:
    from ouro import messages

    peer = Bundle.init(tmp_path / "peer.ouro", agent="peer")
    messages.set_peer(bundle, "peer", str(peer.root))
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_send, args=(str(bundle.root), str(peer.root), i, start, out))
        for i in range(AGENTS)
    ]
    for p in procs:
        p.start()
    start.set()
    delivered = [out.get(timeout=120) for _ in range(AGENTS * 10)]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(delivered)
    texts = sorted(m["text"] for m in messages.inbox(peer).messages)
    assert texts == sorted(f"status {i}-{n}" for i in range(AGENTS) for n in range(10))
    assert messages.outgoing(bundle) == []


def _link(root: str, task_id: str, blocker: str, start: Any, out: Any) -> None:
    bundle = Bundle(Path(root))
    start.wait()
    try:
        tasks.update_task(bundle, task_id, blocked_by=[blocker], agent="x")
        out.put("linked")
    except InvalidInput as exc:
        out.put(exc.message)


def test_racing_links_cannot_close_a_loop(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    a = tasks.add_task(bundle, "web", "A").id
    b = tasks.add_task(bundle, "web", "B").id
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_link, args=(str(bundle.root), x, y, start, out))
        for x, y in ((a, b), (b, a))
    ]
    for p in procs:
        p.start()
    start.set()
    results = sorted(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert results[1] == "linked" and "cycle" in results[0], results
