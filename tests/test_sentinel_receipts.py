"""Refresh: receipts, latest / latest-ready, anchor, ledger, pruning, git signals."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from ouro.arc.recorder import record_event
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.models.clock import parse_time
from ouro.sentinel import paths
from ouro.sentinel.receipts import refresh
from ouro.sentinel.signals import git_signals, parse_caller_signal, parse_caller_signals
from ouro.sentinel.status import sentinel_status
from tests.conftest import ouro_json, run_ouro, snapshot
from tests.git_env import run_git
from tests.sentinel_support import checks, history, load, make_ready, receipt_ids

DOWN = parse_caller_signal(
    {"kind": "provider_lane", "source": "anthropic", "status": "down"}, index=0
)
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


def test_first_refresh_on_an_empty_bundle_is_blocked_and_visible(bundle: Bundle) -> None:
    out = refresh(bundle)
    r = out["receipt"]
    assert r["verdict"] == "blocked" and r["ready"] is False
    assert r["trigger"] == "manual_cli" and r["id"].startswith("sr-")
    assert checks(r)["current_ask"] == "fail"
    assert r["recoveryAnchor"]["use"] == "current-blocker"
    assert r["recoveryAnchor"]["receiptId"] == r["id"]
    assert load(paths.latest_path(bundle))["id"] == r["id"]
    assert not paths.latest_ready_path(bundle).exists()
    assert receipt_ids(bundle) == {r["id"]}
    [line] = history(bundle)
    assert line["id"] == r["id"] and line["verdict"] == "blocked"
    assert "current_ask:fail" in line["gauntlet"]["notPassing"]


def test_ready_receipt_becomes_latest_ready_with_snapshot(bundle: Bundle) -> None:
    make_ready(bundle)
    r = refresh(bundle, trigger="post_turn")["receipt"]
    assert r["verdict"] == "ready" and r["ready"] is True
    assert r["recoveryAnchor"]["use"] == "self"
    assert r["resume"]["canContinue"] is True
    assert r["resume"]["currentAsk"]["value"] == "ship the sentinel"
    assert r["resume"]["nextSafeAction"]["value"] == "write the tests"
    assert [s["status"] for s in r["signals"] if s["kind"] == "bundle"] == ["not-configured"]
    assert r["sources"] and all(isinstance(x, str) for x in r["sources"])
    assert load(paths.latest_ready_path(bundle)) == load(paths.latest_path(bundle))
    assert load(paths.latest_path(bundle)) == load(paths.receipts_dir(bundle) / f"{r['id']}.json")


def test_latest_ready_survives_later_blocked_receipts(bundle: Bundle) -> None:
    make_ready(bundle)
    ready = refresh(bundle)["receipt"]
    ready_bytes = paths.latest_ready_path(bundle).read_bytes()
    outside = refresh(bundle, signals=[DOWN])["receipt"]
    assert outside["verdict"] == "blocked" and outside["gauntlet"]["verdict"] == "ready"
    assert outside["recoveryAnchor"]["use"] == "latest-ready"
    assert outside["recoveryAnchor"]["receiptId"] == ready["id"]
    assert "provider_lane:anthropic=down" in outside["recoveryAnchor"]["reason"]
    assert load(paths.latest_path(bundle))["id"] == outside["id"]
    assert paths.latest_ready_path(bundle).read_bytes() == ready_bytes
    # Now the gauntlet itself fails: the blocker is the anchor, never the older ready one.
    record_event(bundle, "blocker_detected", "blocked", blocked_because="the disk is full")
    inner = refresh(bundle, signals=[DOWN])["receipt"]
    assert inner["recoveryAnchor"]["use"] == "current-blocker"
    assert inner["recoveryAnchor"]["receiptId"] == inner["id"]
    assert ready["id"] not in json.dumps(inner["recoveryAnchor"])
    assert paths.latest_ready_path(bundle).read_bytes() == ready_bytes
    status = sentinel_status(bundle)
    assert status["verdict"] == "blocked" and status["recoveryAnchor"]["use"] == "current-blocker"
    assert {f["check"] for f in status["failing"]} >= {"stale_guard"}
    assert status["latestReady"]["id"] == ready["id"]


def test_watch_without_any_ready_receipt_anchors_to_none(bundle: Bundle) -> None:
    make_ready(bundle)
    record_event(bundle, "handoff", "new session")
    r = refresh(bundle)["receipt"]
    assert r["verdict"] == "watch"
    assert r["recoveryAnchor"]["use"] == "none"
    assert not paths.latest_ready_path(bundle).exists()


def test_out_of_order_refreshes_keep_latest_monotonic(bundle: Bundle) -> None:
    make_ready(bundle)
    newer = refresh(bundle, now=T0 + timedelta(seconds=10))
    older = refresh(bundle, now=T0)
    assert newer["latestReplaced"] and newer["latestReadyReplaced"]
    assert older["latestReplaced"] is False and older["latestReadyReplaced"] is False
    assert load(paths.latest_path(bundle))["id"] == newer["receipt"]["id"]
    assert load(paths.latest_ready_path(bundle))["id"] == newer["receipt"]["id"]
    assert [h["id"] for h in history(bundle)] == [newer["receipt"]["id"], older["receipt"]["id"]]
    assert receipt_ids(bundle) == {newer["receipt"]["id"], older["receipt"]["id"]}
    # Same generatedAt: the larger id wins.
    tie = refresh(bundle, now=T0 + timedelta(seconds=10))
    assert tie["receipt"]["id"] > newer["receipt"]["id"] and tie["latestReplaced"]


def test_pruning_keeps_the_bound_plus_latest_ready(bundle: Bundle) -> None:
    make_ready(bundle)
    ready = refresh(bundle, keep=3)["receipt"]
    blocked = [refresh(bundle, signals=[DOWN], keep=3)["receipt"]["id"] for _ in range(5)]
    assert receipt_ids(bundle) == {ready["id"], *blocked[-3:]}
    assert len(history(bundle)) == 6  # the ledger is never pruned
    assert load(paths.latest_ready_path(bundle))["id"] == ready["id"]


def test_malformed_receipts_are_reported_and_left_untouched(bundle: Bundle) -> None:
    make_ready(bundle)
    refresh(bundle)
    latest = paths.latest_path(bundle)
    latest.write_bytes(b'{"id": "sr-torn", ')
    stray = paths.receipts_dir(bundle) / "sr-01aaaaaaaaaaaaaaaaaa.json"
    stray.write_bytes(b"not json")
    out = refresh(bundle, keep=1)
    assert latest.read_bytes() == b'{"id": "sr-torn", '
    assert stray.read_bytes() == b"not json"
    located = {i["locator"] for i in out["issues"]}
    assert paths.LATEST in located and f"{paths.RECEIPTS_DIR}/{stray.name}" in located
    degraded = [s for s in out["receipt"]["signals"] if s["status"] == "degraded"]
    assert degraded and degraded[0]["source"] == paths.LATEST
    assert out["receipt"]["verdict"] == "watch" and out["latestReplaced"] is False
    before = snapshot(bundle.root)
    status = sentinel_status(bundle)
    assert status["state"] == "degraded" and status["latest"] is None
    assert status["issues"][0]["locator"] == paths.LATEST
    assert snapshot(bundle.root) == before


def test_status_is_pure_and_unknown_before_any_refresh(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    status = sentinel_status(bundle)
    assert status["state"] == "missing" and status["verdict"] == "unknown"
    make_ready(bundle)
    refresh(bundle, signals=[DOWN])
    before = snapshot(bundle.root)
    status = sentinel_status(bundle)
    assert status["verdict"] == "blocked" and status["signals"][0]["source"] == "anthropic"
    cli = ouro_json("sentinel", "status", bundle=bundle)
    assert cli["latest"]["id"] == status["latest"]["id"]
    shown = run_ouro("sentinel", "status", bundle=bundle)
    assert shown.returncode == 1  # a blocked verdict is a negative outcome
    assert "BLOCKED" in shown.stdout and "provider_lane:anthropic" in shown.stdout
    assert snapshot(bundle.root) == before


def test_status_says_when_events_came_after_the_receipt(bundle: Bundle) -> None:
    make_ready(bundle)
    refresh(bundle, now=T0)
    assert sentinel_status(bundle)["behindEvents"] is True


def test_everything_written_is_redacted(bundle: Bundle) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    make_ready(bundle)
    sig = parse_caller_signal(
        {"kind": "sense", "source": "mail", "status": "down", "detail": f"token {secret}"}, index=0
    )
    refresh(bundle, signals=[sig])
    for path in paths.sentinel_dir(bundle).rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(), path
    assert "[redacted:github_token]" in paths.latest_path(bundle).read_text()


def test_caller_signals_are_validated(bundle: Bundle) -> None:
    assert parse_caller_signals(['{"kind": "sense", "status": "ok"}'])[0].verdict_impact == "none"
    assert (
        parse_caller_signal({"kind": "sense", "status": "unknown"}, index=0).verdict_impact
        == "watch"
    )
    assert (
        parse_caller_signal({"kind": "sense", "status": "stale"}, index=0).verdict_impact
        == "blocked"
    )
    with pytest.raises(InvalidInput, match=r"signal\[0\]: not valid JSON"):
        parse_caller_signal("{nope", index=0)
    with pytest.raises(InvalidInput, match="kind must be one of"):
        parse_caller_signal({"kind": "bundle", "status": "ok"}, index=0)
    with pytest.raises(InvalidInput, match=r"signal\[2\].*repairActor"):
        parse_caller_signal({"kind": "sense", "status": "x", "repairActor": "robot"}, index=2)
    with pytest.raises(InvalidInput, match="trigger"):
        refresh(bundle, trigger="whenever")


def test_cli_refresh_with_signals_and_errors(bundle: Bundle) -> None:
    make_ready(bundle)
    out = ouro_json(
        "sentinel", "refresh", "--trigger", "provider_failover",
        "--signal", '{"kind": "provider_lane", "source": "openai", "status": "down", '
        '"repairActor": "human-required", "repairCommand": "check the key"}',
        bundle=bundle,
    )  # fmt: skip
    assert out["trigger"] == "provider_failover" and out["verdict"] == "blocked"
    assert out["recoveryAnchor"]["use"] == "none"
    lane = next(s for s in out["signals"] if s["kind"] == "provider_lane")
    assert lane["repairActor"] == "human-required" and lane["verdictImpact"] == "blocked"
    bad = run_ouro("sentinel", "refresh", "--signal", "{", bundle=bundle)
    assert bad.returncode == 2 and "signal[0]" in bad.stderr
    assert len(history(bundle)) == 1  # the refused refresh wrote nothing


def test_a_blocked_receipt_does_not_poison_the_next_refresh(bundle: Bundle) -> None:
    make_ready(bundle)
    events = read_resume(bundle)["eventCount"]
    # a sense signal is this refresh's word only (a provider lane is remembered:
    # tests/test_provider_lane.py)
    silent = parse_caller_signal({"kind": "sense", "source": "mail", "status": "down"}, index=0)
    blocked = refresh(bundle, signals=[silent])["receipt"]
    assert blocked["verdict"] == "blocked"
    assert read_resume(bundle)["eventCount"] == events  # a refresh records no event
    after = refresh(bundle)["receipt"]
    assert after["verdict"] == "ready" and after["ready"]


def _configure_sync(bundle: Bundle, interval: str = "30m", **status: object) -> None:
    from ouro.sync import state

    state.write_config(
        bundle,
        {
            "remote": "origin",
            "branch": "main",
            "interval": interval,
            "configuredAt": "2026-11-30T10:00:00.000Z",
        },
    )
    if status:
        state.write_status(bundle, dict(status))


def test_without_sync_git_is_not_consulted_and_dirt_is_no_concern(bundle: Bundle) -> None:
    make_ready(bundle)
    run_git("-C", str(bundle.root), "init", "-q")
    (bundle.root / "desk" / "_meta" / "featured.md").write_text("edited, never committed\n")
    r = refresh(bundle)["receipt"]
    [sig] = [s for s in r["signals"] if s["kind"] == "bundle"]
    assert sig["status"] == "not-configured" and sig["verdictImpact"] == "none"
    assert r["ready"], r["signals"]


def test_with_sync_uncommitted_changes_between_syncs_are_normal(bundle: Bundle) -> None:
    make_ready(bundle)
    now = parse_time("2026-11-30T10:20:00Z")
    _configure_sync(bundle, lastResult="ok", lastSuccessAt="2026-11-30T10:10:00.000Z")
    (bundle.root / "desk" / "_meta" / "featured.md").write_text("edited\n")
    [sig] = git_signals(bundle, now=now)
    assert (sig.status, sig.verdict_impact) == ("synced", "none")


def test_with_sync_overdue_and_failed_are_watch(bundle: Bundle) -> None:
    _configure_sync(bundle, interval="30m", lastResult="ok", lastSuccessAt="2026-11-30T10:00:00Z")
    [late] = git_signals(bundle, now=parse_time("2026-11-30T11:00:00Z"))
    assert (late.status, late.verdict_impact) == ("sync-overdue", "watch")
    assert late.repair_command and late.repair_command.endswith("sync")
    _configure_sync(
        bundle,
        lastResult="failed",
        lastError="git push failed: remote unreachable",
        lastAttemptAt="2026-11-30T10:05:00Z",
        lastSuccessAt="2026-11-30T10:00:00Z",
    )
    [failed] = git_signals(bundle, now=parse_time("2026-11-30T10:06:00Z"))
    assert (failed.status, failed.verdict_impact) == ("sync-failed", "watch")
    assert "remote unreachable" in (failed.detail or "")
    r = refresh(bundle)["receipt"]
    assert r["verdict"] != "ready"


def test_unreadable_sync_state_is_unknown_not_clear(bundle: Bundle) -> None:
    _configure_sync(bundle)
    (bundle.state / "sync" / "status.json").write_text("{not json")
    [sig] = git_signals(bundle)
    assert (sig.status, sig.verdict_impact) == ("unknown", "watch")
