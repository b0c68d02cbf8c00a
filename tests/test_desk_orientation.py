"""The Desk section of orientation: featured first, active/blocked, friction; pure."""

from __future__ import annotations

from ouro.bundle import Bundle
from ouro.desk import featured, friction, leases, tasks, tracks
from ouro.desk.orientation import desk_items
from ouro.orient import PROVIDERS
from tests.conftest import record_snapshot


def test_desk_items(bundle: Bundle) -> None:
    assert "ouro.desk.orientation:desk_items" in PROVIDERS
    tracks.add_track(bundle, "web")
    a = tasks.add_task(bundle, "web", "Alpha", priority=3)
    b = tasks.add_task(bundle, "web", "Beta", priority=1)
    c = tasks.add_task(bundle, "web", "Gamma")
    leases.take_task(bundle, a.id, agent="ari")
    leases.take_task(bundle, b.id, agent="bo")
    tasks.update_task(bundle, c.id, status="blocked")
    featured.feature(bundle, tracks=["web"], tasks=[a.id])
    friction.add_friction(bundle, "slow disk")
    before = record_snapshot(bundle.root)
    items = desk_items(bundle)
    assert record_snapshot(bundle.root) == before
    assert desk_items(bundle) == items  # deterministic
    sections = [(i.section, i.text.split(" ")[0]) for i in items]
    assert sections == [
        ("Desk: featured", "track"),
        ("Desk: featured", a.id),
        ("Desk: active tasks", b.id),
        ("Desk: blocked tasks", c.id),
        ("Desk: recent friction", items[-1].text.split(" ")[0]),
    ]
    assert items[0].text == "track web: 2 active, 1 blocked"
    assert items[1].locator == "desk/web/alpha/task.md" and "held by ari until" in items[1].text
    assert items[-1].text.endswith("slow disk")


def test_unreadable_task_is_reported_not_hidden(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    broken = bundle.desk / "web" / "broken" / "task.md"
    broken.parent.mkdir()
    broken.write_text("---\nstatus: [oops\n---\n")
    texts = [i.text for i in desk_items(bundle)]
    assert any(t.startswith("unreadable task: desk/web/broken/task.md") for t in texts)
