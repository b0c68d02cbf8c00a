"""The resume checkpoint: folds, repairs in memory, reports gaps, never raises,
never writes on read."""

from __future__ import annotations

import orjson
import pytest

from ouro.arc import paths
from ouro.arc.recorder import record_event
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.orient import build_packet
from tests.conftest import record_snapshot, snapshot


def _prime(bundle: Bundle) -> None:
    record_event(bundle, "turn_accepted", "ask", current_ask="fix the login bug")
    record_event(bundle, "agent_note", "next", next_safe_action="run tests", stop_before=["push"])


def _codes(resume: dict) -> list[str]:
    return [i["code"] for i in resume["recorder"]["issues"]]


def test_healthy_resume_can_continue(bundle: Bundle) -> None:
    _prime(bundle)
    r = read_resume(bundle)
    assert r["canContinue"] is True and r["completeState"] is True
    assert r["currentAsk"]["value"] == "fix the login bug"
    assert r["currentAsk"]["confidence"] == "current"
    nxt = r["nextSafeAction"]
    assert (nxt["value"], nxt["stopBefore"], nxt["fromPreviousAsk"]) == (
        "run tests",
        ["push"],
        None,
    )
    assert nxt["askEventId"] == r["currentAsk"]["sourceEventIds"][0]
    assert r["continuation"] == "yes" and r["confirm"] is None
    assert r["recorder"] == {"health": "ok", "issues": []}
    assert "fold" not in r and "stores" not in r


def test_fresh_bundle_is_incomplete_not_clear(bundle: Bundle) -> None:
    r = read_resume(bundle)
    assert r["canContinue"] is False and r["completeState"] is False
    assert r["currentAsk"]["confidence"] == "unknown"
    assert "currentAsk: none recorded" in r["missing"]
    assert r["recorder"]["health"] == "ok"


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (lambda p: p.write_bytes(b'{"schemaVersion": 1, "fold": {"cur'), "checkpoint_malformed"),
        (
            lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
            "checkpoint_malformed",
        ),
        (lambda p: p.write_bytes(b"[]"), "checkpoint_malformed"),
        (lambda p: p.unlink(), "checkpoint_missing"),
        (
            lambda p: p.write_bytes(
                orjson.dumps({**orjson.loads(p.read_bytes()), "fold": {"cursor": {"file": 3}}})
            ),
            "checkpoint_malformed",
        ),
    ],
)
def test_broken_checkpoint_reads_degraded_without_writing(bundle: Bundle, damage, code) -> None:
    _prime(bundle)
    damage(paths.checkpoint_path(bundle))
    before = record_snapshot(bundle.root)
    r = read_resume(bundle)
    packet = build_packet(bundle)
    assert record_snapshot(bundle.root) == before
    assert code in _codes(r)
    assert r["recorder"]["health"] == "degraded"
    assert r["canContinue"] is False
    # The state itself is rebuilt from the log.
    assert r["currentAsk"]["value"] == "fix the login bug"
    assert code in packet.text
    # The next writer repairs the file.
    record_event(bundle, "agent_note", "note")
    assert read_resume(bundle)["recorder"] == {"health": "ok", "issues": []}


def test_inconsistent_cursor_rebuilds(bundle: Bundle) -> None:
    _prime(bundle)
    day = next(paths.events_dir(bundle).glob("*.jsonl"))
    # Someone rewrote the log by hand (shorter now): the cursor no longer fits.
    lines = day.read_bytes().splitlines(keepends=True)
    day.write_bytes(lines[0])
    before = snapshot(bundle.root)
    r = read_resume(bundle)
    assert snapshot(bundle.root) == before
    assert "checkpoint_inconsistent" in _codes(r)
    assert r["nextSafeAction"]["value"] is None
    assert r["eventCount"] == 1


def test_torn_last_event_line_is_degraded_and_named(bundle: Bundle) -> None:
    _prime(bundle)
    day = next(paths.events_dir(bundle).glob("*.jsonl"))
    with day.open("ab") as handle:
        handle.write(b'{"id": "ev-torn", "kind": "turn_acc')
    before = snapshot(bundle.root)
    r = read_resume(bundle)
    assert snapshot(bundle.root) == before
    assert "event_tail_torn" in _codes(r)
    assert r["recorder"]["health"] == "degraded" and r["canContinue"] is False
    # A later append starts a fresh line; the torn one is then an unreadable line,
    # reported with its file and line number, preserved in the file.
    record_event(bundle, "turn_accepted", "ask", current_ask="after the tear")
    r = read_resume(bundle)
    bad = [i for i in r["recorder"]["issues"] if i["code"] == "event_line_unreadable"]
    assert len(bad) == 1 and f"{day.name}:3:" in bad[0]["message"]
    assert b'"ev-torn"' in day.read_bytes()
    assert r["currentAsk"]["value"] == "after the tear"


def test_checkpoint_behind_log_is_caught_up_in_memory(bundle: Bundle) -> None:
    _prime(bundle)
    old = paths.checkpoint_path(bundle).read_bytes()
    record_event(bundle, "turn_accepted", "ask", current_ask="newer ask")
    paths.checkpoint_path(bundle).write_bytes(old)
    before = snapshot(bundle.root)
    r = read_resume(bundle)
    assert snapshot(bundle.root) == before
    assert r["currentAsk"]["value"] == "newer ask"
    assert "checkpoint_behind" in _codes(r)
    assert r["recorder"]["health"] == "ok"


@pytest.mark.parametrize("boundary", ["handoff", "session_started", "session_ended"])
def test_ask_needs_confirmation_after_a_context_boundary(bundle: Bundle, boundary: str) -> None:
    _prime(bundle)
    record_event(bundle, boundary, "boundary")
    r = read_resume(bundle)
    assert r["currentAsk"]["confidence"] == "needs_confirmation"
    assert boundary in r["currentAsk"]["reason"] and "ouro arc confirm" in r["currentAsk"]["reason"]
    assert r["canContinue"] is False and r["continuation"] == "needs_confirmation"
    assert r["confirm"]["command"] == "ouro arc confirm"
    record_event(bundle, "turn_accepted", "ask", current_ask="fix the login bug")
    assert read_resume(bundle)["currentAsk"]["confidence"] == "current"


def test_blockers_block_and_clear(bundle: Bundle) -> None:
    _prime(bundle)
    a = record_event(bundle, "blocker_detected", "b", blocked_because="no creds")
    record_event(bundle, "blocker_detected", "b", blocked_because="CI down")
    r = read_resume(bundle)
    assert r["blockedBecause"] == "no creds; CI down" and r["canContinue"] is False
    record_event(bundle, "blocker_cleared", "c", meta={"blockerId": a["id"]})
    assert read_resume(bundle)["blockedBecause"] == "CI down"
    record_event(bundle, "blocker_cleared", "c")
    r = read_resume(bundle)
    assert r["blockedBecause"] is None and r["canContinue"] is True


def test_incremental_fold_equals_full_rebuild(bundle: Bundle) -> None:
    _prime(bundle)
    for n in range(20):
        record_event(bundle, "agent_note", f"n{n}")
    record_event(bundle, "post_turn_persisted", "checkpoint")
    incremental = read_resume(bundle)
    paths.checkpoint_path(bundle).unlink()
    rebuilt = read_resume(bundle)
    # Only the verdict on the (now missing) file differs.
    assert rebuilt.pop("recorder")["health"] == "degraded"
    assert rebuilt.pop("canContinue") is False
    assert rebuilt.pop("continuation") == "no"
    incremental.pop("recorder")
    assert incremental.pop("canContinue") is True
    assert incremental.pop("continuation") == "yes"
    assert rebuilt == incremental
    assert incremental["lastSafeCheckpoint"]["eventId"] == incremental["lastEvent"]["id"]


def test_unreadable_events_folder_is_unavailable(bundle: Bundle) -> None:
    folder = paths.events_dir(bundle)
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    folder.write_text("not a folder")
    r = read_resume(bundle)
    assert r["recorder"]["health"] == "unavailable"
    assert r["canContinue"] is False


def test_compaction_restart_keeps_the_ask_current_but_a_new_session_does_not(
    bundle: Bundle,
) -> None:
    record_event(bundle, "turn_accepted", "asked", current_ask="ship the parser")
    for source in ("compact", "resume"):
        record_event(bundle, "session_started", "host restarted", meta={"source": source})
        assert read_resume(bundle)["currentAsk"]["confidence"] == "current", source
    record_event(bundle, "session_started", "new conversation", meta={"source": "startup"})
    assert read_resume(bundle)["currentAsk"]["confidence"] == "needs_confirmation"
