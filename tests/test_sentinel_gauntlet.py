"""The gauntlet: eight checks, each state reachable, verdict and score exact."""

from __future__ import annotations

import os
import shutil

from ouro.arc import paths as arc_paths
from ouro.arc.obligations import add_obligation
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.sentinel.gauntlet import Check, Gauntlet, check_provenance, evaluate
from ouro.store.atomic import atomic_write_json
from tests.conftest import record_snapshot
from tests.sentinel_support import load, make_ready


def statuses(bundle: Bundle) -> dict[str, str]:
    return {c.id: c.status for c in evaluate(bundle).gauntlet.checks}


def test_fresh_bundle_fails_ask_next_and_stale_guard(bundle: Bundle) -> None:
    g = evaluate(bundle).gauntlet
    assert {c.id: c.status for c in g.checks} == {
        "current_ask": "fail",
        "next_safe_action": "fail",
        "stale_guard": "fail",
        "obligations_visible": "not_applicable",
        "return_routes_visible": "not_applicable",
        "blockers_surfaced": "not_applicable",
        "desk_record_ready": "pass",
        "source_provenance": "pass",
    }
    assert g.verdict == "blocked"
    assert g.score() == {"earned": 20, "possible": 50, "percentage": 40.0}
    ask = g.to_json()["checks"][0]
    assert ask["repair"] == {"actor": "agent-runnable", "command": "ouro arc ask TEXT"}


def test_ready_bundle_passes_and_cites_evidence(bundle: Bundle) -> None:
    make_ready(bundle)
    g = evaluate(bundle).gauntlet
    assert g.verdict == "ready"
    assert g.score()["percentage"] == 100.0
    ask = next(c for c in g.checks if c.id == "current_ask")
    assert ask.evidence and ask.evidence[0].startswith(arc_paths.EVENTS_DIR + "/")
    assert "arc/flight-recorder/latest.json" in g.sources()


def test_stale_ask_after_handoff_is_watch(bundle: Bundle) -> None:
    make_ready(bundle)
    record_event(bundle, "handoff", "handing over")
    s = statuses(bundle)
    assert s["current_ask"] == "warn"
    assert s["stale_guard"] == "pass"
    assert evaluate(bundle).gauntlet.verdict == "watch"


def test_blocker_fails_stale_guard_but_is_surfaced(bundle: Bundle) -> None:
    make_ready(bundle)
    record_event(bundle, "blocker_detected", "blocked", blocked_because="waiting for keys")
    s = statuses(bundle)
    assert s["stale_guard"] == "fail"
    assert s["blockers_surfaced"] == "pass"


def test_blocker_hidden_from_packet_fails(bundle: Bundle, monkeypatch: object) -> None:
    import pytest

    make_ready(bundle)
    record_event(bundle, "blocker_detected", "blocked", blocked_because="waiting for keys")
    import ouro.orient as orient

    real = orient.arc_items
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(orient, "arc_items", lambda b: [i for i in real(b) if i.section != "blockers"])
        assert statuses(bundle)["blockers_surfaced"] == "fail"
    finally:
        mp.undo()


def test_obligation_with_missing_desk_locator_fails(bundle: Bundle) -> None:
    make_ready(bundle)
    target = bundle.root / "desk" / "_meta" / "plan.md"
    target.write_text("plan\n")
    add_obligation(bundle, "deliver the plan", owed_to="lead", desk_locator="desk/_meta/plan.md")
    assert statuses(bundle)["obligations_visible"] == "pass"
    target.unlink()
    check = next(c for c in evaluate(bundle).gauntlet.checks if c.id == "obligations_visible")
    assert check.status == "fail"
    assert "desk/_meta/plan.md" in check.detail


def test_return_route_must_be_complete(bundle: Bundle) -> None:
    make_ready(bundle)
    ob = add_obligation(bundle, "reply", owed_to="ari", route="slack:C01")
    assert statuses(bundle)["return_routes_visible"] == "pass"
    path = bundle.root / ob["locator"]
    data = load(path)
    data["route"]["key"] = ""
    atomic_write_json(path, data)  # replace: the folder mtime moves, the store is re-read
    assert statuses(bundle)["return_routes_visible"] == "fail"


def test_unreadable_obligations_fail_not_skip(bundle: Bundle) -> None:
    make_ready(bundle)
    folder = arc_paths.obligations_dir(bundle)
    shutil.rmtree(folder)
    folder.write_text("not a folder")
    s = statuses(bundle)
    assert s["obligations_visible"] == "fail"
    assert s["return_routes_visible"] == "fail"


def test_legacy_root_fails_desk_record(bundle: Bundle) -> None:
    make_ready(bundle)
    (bundle.root / "journal").mkdir()
    check = next(c for c in evaluate(bundle).gauntlet.checks if c.id == "desk_record_ready")
    assert check.status == "fail"
    assert "journal/" in check.detail and "ouro migrate" in (check.command or "")


def test_missing_record_scaffold_fails(bundle: Bundle) -> None:
    make_ready(bundle)
    shutil.rmtree(bundle.record / "notes")
    check = next(c for c in evaluate(bundle).gauntlet.checks if c.id == "desk_record_ready")
    assert check.status == "fail" and "desk/_record/notes" in check.detail


def test_provenance_fails_on_unresolvable_and_warns_on_degraded(bundle: Bundle) -> None:
    ok = {"recorder": {"health": "ok", "issues": []}}
    assert check_provenance(bundle, ok, ["bundle.json"]).status == "pass"
    bad = check_provenance(bundle, ok, ["desk/nowhere.md", "../escape"])
    assert bad.status == "fail" and "desk/nowhere.md" in bad.detail
    degraded = {
        "recorder": {
            "health": "degraded",
            "issues": [{"code": "x", "severity": "degraded", "message": "events torn"}],
        }
    }
    assert check_provenance(bundle, degraded, []).status == "warn"


def test_verdict_and_score_rules() -> None:
    def g(*states: str) -> Gauntlet:
        return Gauntlet([Check("current_ask", s, "d") for s in states])  # type: ignore[arg-type]

    assert g("pass", "pass").verdict == "ready"
    assert g("pass", "warn", "not_applicable").verdict == "watch"
    assert g("warn", "fail").verdict == "blocked"
    assert g("pass", "warn", "fail", "not_applicable").score() == {
        "earned": 15,
        "possible": 30,
        "percentage": 50.0,
    }
    assert g("not_applicable").score()["percentage"] == 100.0


def test_gauntlet_is_pure(bundle: Bundle) -> None:
    make_ready(bundle)
    record_event(bundle, "handoff", "x")
    os.unlink(arc_paths.checkpoint_path(bundle))  # force a rebuild from the log
    before = record_snapshot(bundle.root)
    evaluate(bundle)
    assert record_snapshot(bundle.root) == before
