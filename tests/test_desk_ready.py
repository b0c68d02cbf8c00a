"""Task dependencies (blockedBy, parent), cycles refused, and ready work (ouro desk ready)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ouro.bundle import Bundle
from ouro.desk import leases, tasks, tracks
from ouro.desk.ready import ready_tasks
from ouro.errors import InvalidInput
from ouro.models.clock import format_time, utc_now
from ouro.orient import build_packet
from ouro.store import frontmatter
from tests.conftest import ouro_json, record_snapshot, run_ouro


def _ids(result: dict) -> list[str]:  # type: ignore[type-arg]
    return [t["id"] for t in result["ready"]]


def test_ready_orders_by_priority_then_age_and_skips_blocked_and_held(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    tracks.add_track(bundle, "ops")
    base = tasks.add_task(bundle, "ops", "Provision db", priority=3)
    urgent = tasks.add_task(bundle, "web", "Fix login", priority=0)
    waits = ouro_json(
        "desk", "task", "add", "web", "Use db", "--blocked-by", base.id, bundle=bundle
    )["task"]
    assert waits["blockedBy"] == [base.id]
    held = tasks.add_task(bundle, "web", "Held one", priority=1)
    leases.take_task(bundle, held.id, agent="other", lease="10m")
    later = tasks.add_task(bundle, "web", "Same priority, newer", priority=3)
    before = record_snapshot(bundle.root)
    result = ouro_json("desk", "ready", bundle=bundle)
    assert record_snapshot(bundle.root) == before  # reads are pure
    assert _ids(result) == [urgent.id, base.id, later.id]
    assert result["waiting"] == {waits["id"]: [base.id]}
    assert _ids(ouro_json("desk", "ready", "--track", "ops", bundle=bundle)) == [base.id]
    text = run_ouro("desk", "ready", bundle=bundle, check=True).stdout
    assert f"{waits['id']} waits for {base.id}" in text
    # closing the blocker surfaces what it unblocked, and the task becomes ready
    done = ouro_json("desk", "task", "update", base.id, "--status", "done", bundle=bundle)
    assert [u["id"] for u in done["unblocked"]] == [waits["id"]]
    assert waits["id"] in _ids(ouro_json("desk", "ready", bundle=bundle))
    shown = run_ouro("desk", "task", "update", urgent.id, "--status", "done", bundle=bundle)
    assert "unblocked" not in shown.stdout


def test_expired_lease_does_not_hold_and_unknown_blocker_keeps_blocked(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Was held")
    leases.take_task(bundle, task.id, agent="gone", lease="1m")
    tasks.update_task(bundle, task.id, status="open", agent="gone")
    assert ready_tasks(bundle, now=utc_now()).tasks == []
    later = utc_now() + timedelta(minutes=5)
    assert [h.id for h in ready_tasks(bundle, now=later).tasks] == [task.id]
    # a blocker id written by hand that names no task: unknown, so still blocked
    path = tasks.find_task(bundle, task.id).path
    meta, body = frontmatter.parse(path.read_text())
    meta.update(heldBy=None, leaseUntil=None, blockedBy=["t-nosuch"])
    path.write_text(frontmatter.render(meta, body))
    found = ready_tasks(bundle, now=utc_now())
    assert found.tasks == [] and found.waiting == {task.id: ["t-nosuch"]}


def test_cycles_are_refused_and_named(bundle: Bundle) -> None:
    tracks.add_track(bundle, "a")
    tracks.add_track(bundle, "b")
    one = tasks.add_task(bundle, "a", "One")
    two = tasks.add_task(bundle, "b", "Two", blocked_by=[one.id])
    three = tasks.add_task(bundle, "a", "Three", blocked_by=[f"b/{two.slug}"])
    before = {
        k: v for k, v in record_snapshot(bundle.root).items() if not k.startswith("state/locks/")
    }
    with pytest.raises(InvalidInput) as err:
        tasks.update_task(bundle, one.id, blocked_by=[three.id], agent="x")
    assert f"{one.id} → {three.id} → {two.id} → {one.id}" in err.value.message
    with pytest.raises(InvalidInput, match="itself"):
        tasks.update_task(bundle, one.id, blocked_by=[one.id], agent="x")
    proc = run_ouro("desk", "task", "update", one.id, "--blocked-by", two.id, bundle=bundle)
    assert proc.returncode != 0 and f"{one.id} → {two.id} → {one.id}" in proc.stderr
    with pytest.raises(InvalidInput, match="no task 't-missing'"):
        tasks.update_task(bundle, one.id, blocked_by=["t-missing"], agent="x")
    after = {
        k: v for k, v in record_snapshot(bundle.root).items() if not k.startswith("state/locks/")
    }
    assert after == before  # nothing partial written (lock files aside)
    # parents: a chain cannot loop
    tasks.update_task(bundle, two.id, parent=one.id, agent="x")
    with pytest.raises(InvalidInput, match="parent: refused"):
        tasks.update_task(bundle, one.id, parent=two.id, agent="x")
    shown = ouro_json("desk", "task", "show", two.id, bundle=bundle)["task"]
    assert shown["parent"] == one.id and shown["blockedBy"] == [one.id]
    cleared = ouro_json("desk", "task", "update", two.id, "--clear-blocked-by", bundle=bundle)
    assert cleared["changed"] == ["blockedBy"] and cleared["task"]["blockedBy"] == []


def test_orient_keeps_ready_work_visible_while_an_ask_exists(bundle: Bundle) -> None:
    # Issue 28, measured 3: ready tasks disappeared from the packet once an ask existed.
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Pick me up", priority=1)
    packet = build_packet(bundle)
    assert "Desk: ready" in packet.text and task.id in packet.text
    ready = [i for i in packet.items if i.section == "Desk: ready"]
    assert [i.priority for i in ready] == [2]  # offered first when nothing is asked
    run_ouro("arc", "ask", "Ship the release", bundle=bundle, check=True)
    with_ask = build_packet(bundle)
    assert "Desk: ready" in with_ask.text and task.id in with_ask.text
    ready = [i for i in with_ask.items if i.section == "Desk: ready"]
    assert [i.priority for i in ready] == [5]  # still there, budgeted below the ask's work
    tight = build_packet(bundle, budget=400)
    assert task.id not in tight.text and "Ship the release" in tight.text
    assert tight.dropped.get("Desk: ready") == 1


def test_lease_in_the_past_written_by_hand_is_not_live(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Stale holder")
    path = task.path
    meta, body = frontmatter.parse(path.read_text())
    meta.update(heldBy="ghost", leaseUntil=format_time(utc_now() - timedelta(hours=1)))
    path.write_text(frontmatter.render(meta, body))
    assert [h.id for h in ready_tasks(bundle, now=utc_now()).tasks] == [task.id]


def test_packet_ready_kept_in_process_only_while_every_task_file_holds(bundle: Bundle) -> None:
    """The ready list a process derived from unchanged heads is reused by its next
    packet; a task file edited in place (its stamp moves) is seen at once."""
    import os
    import time

    from ouro.desk import heads
    from ouro.store.stamp import RACY_NS

    tracks.add_track(bundle, "web")
    first = tasks.add_task(bundle, "web", "First", priority=1)
    second = tasks.add_task(bundle, "web", "Second", priority=2)
    time.sleep(RACY_NS / 1e9 * 2)  # past the racy window: the stamps are trusted
    heads.refresh_heads(bundle)
    time.sleep(RACY_NS / 1e9 * 2)
    ids = lambda: [h.id for h in ready_tasks(bundle, now=None, limit=5).tasks]  # noqa: E731
    assert ids() == [first.id, second.id]
    assert ids() == [first.id, second.id]  # the second read: the kept list
    kept = [c.memo for _fp, c in heads._LOADED.values()]
    assert any(("ready", None, 5) in memo for memo in kept)
    path = tasks.find_task(bundle, first.id).path
    text = path.read_text(encoding="utf-8")
    with open(path, "r+", encoding="utf-8") as handle:  # in place: same inode
        handle.write(text.replace("status: open", "status: done"))
        handle.truncate()
    assert os.stat(path).st_ino == tasks.find_task(bundle, first.id).path.stat().st_ino
    assert ids() == [second.id]
    assert "First" not in build_packet(bundle).text.split("Desk: ready")[-1].split("\n\n")[0]
