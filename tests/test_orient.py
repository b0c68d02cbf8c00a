"""``ouro orient``: deterministic, pure, budgeted, and unknown stays unknown."""

from __future__ import annotations

import sqlite3

import pytest

from ouro import orient
from ouro.arc import claims, obligations, paths
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.orient import build_packet
from ouro.orient_types import OrientItem
from tests.conftest import ouro_json, record_snapshot, run_ouro


def _populate(bundle: Bundle, n_obligations: int = 3) -> None:
    record_event(bundle, "turn_accepted", "ask", current_ask="ship the login fix")
    record_event(bundle, "agent_note", "n", next_safe_action="run tests", stop_before=["deploy"])
    record_event(bundle, "blocker_detected", "b", blocked_because="waiting for review")
    for i in range(n_obligations):
        obligations.add_obligation(bundle, f"owed thing {i:03d}", owed_to="ari")
    claims.add_claim(bundle, "login works", check="pytest")


def test_packet_shows_every_section_with_locators(bundle: Bundle) -> None:
    _populate(bundle)
    packet = build_packet(bundle)
    text = packet.text
    assert "- [current] ship the login fix  [arc/flight-recorder/events/" in text
    assert "run tests — stop before: deploy" in text
    assert "waiting for review" in text
    assert "owed thing 000 → ari  [arc/obligations/ob-" in text
    assert "[evidence_required] login works  [arc/claims/cl-" in text
    sections = {i.section for i in packet.items}
    assert {"status", "ask", "next safe action", "blockers", "obligations", "claims"} <= sections
    assert packet.to_json()["chars"] == len(text)


def test_deterministic_and_pure(bundle: Bundle) -> None:
    _populate(bundle)
    before = record_snapshot(bundle.root)
    first = run_ouro("orient", bundle=bundle, check=True).stdout
    second = run_ouro("orient", bundle=bundle, check=True).stdout
    assert first == second == build_packet(bundle).text
    assert ouro_json("orient", bundle=bundle) == build_packet(bundle).to_json()
    assert record_snapshot(bundle.root) == before


def test_budget_drops_lowest_priority_and_says_so(bundle: Bundle) -> None:
    _populate(bundle, n_obligations=60)
    for budget in (2500, 1200, 800):
        packet = build_packet(bundle, budget=budget)
        assert len(packet.text) <= budget
        assert "ship the login fix" in packet.text and "run tests" in packet.text
        dropped = packet.dropped["obligations"]
        assert f"+{dropped} more: `ouro arc query owe`" in packet.text
        shown = sum(1 for i in packet.items if i.section == "obligations")
        assert shown + dropped == 60
    assert len(build_packet(bundle, budget=200).text) <= 200


def test_unreadable_claims_store_is_unknown_not_zero(bundle: Bundle) -> None:
    _populate(bundle)
    folder = paths.claims_dir(bundle)
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.write_text("not a folder")
    before = record_snapshot(bundle.root)
    text = build_packet(bundle).text
    assert "claims: unknown (cannot list claims/" in text
    assert "can continue: no" in text
    assert record_snapshot(bundle.root) == before
    listed = ouro_json("claim", "list", bundle=bundle)
    assert listed["claims"] is None and "cannot list" in listed["unknown"]


def test_corrupt_claim_file_is_named(bundle: Bundle) -> None:
    _populate(bundle)
    (paths.claims_dir(bundle) / "cl-00000000000000000000.json").write_text("{nope")
    text = build_packet(bundle).text
    assert "cl-00000000000000000000: unreadable" in text


def test_never_touches_the_search_index(bundle: Bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(bundle)

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("orient opened SQLite")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    assert "ship the login fix" in build_packet(bundle).text


def test_providers_add_sections(bundle: Bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    _populate(bundle)
    monkeypatch.setattr(
        orient, "PROVIDERS", (*orient.PROVIDERS, "tests.test_orient:_extra_provider")
    )
    text = build_packet(bundle).text
    assert "## desk\n- featured task  [desk/_meta/featured.md]" in text


def _extra_provider(bundle: Bundle) -> list[OrientItem]:
    return [OrientItem("desk", 2, "featured task", "desk/_meta/featured.md")]
