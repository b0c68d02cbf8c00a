"""Messages to a remote peer go out with real git during 'ouro sync' (slow: real clones)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.orient import build_packet
from tests.git_env import run_git
from tests.sync_support import ouro

pytestmark = pytest.mark.slow


def _bundle_with_remote(tmp: Path, name: str) -> tuple[Bundle, Path]:
    remote = tmp / f"{name}.git"
    run_git("init", "-q", "--bare", "-b", "main", str(remote))
    b = Bundle.init(tmp / f"{name}.ouro", agent=name)
    ouro(b, "sync", "init", "--remote", str(remote))
    return b, remote


def test_a_message_to_a_remote_peer_is_delivered_by_sync_and_read_after_the_peer_syncs(
    tmp_path: Path,
) -> None:
    a, _ra = _bundle_with_remote(tmp_path, "ann")
    b, rb = _bundle_with_remote(tmp_path, "bob")
    ouro(a, "message", "peer", "bob", str(rb))

    # B's remote is empty: the message is queued, first until a sync, then with git's reason.
    sent = ouro(a, "message", "send", "bob", "can you review the parser?", "--kind", "question")
    assert not sent["delivered"] and "ouro sync" in sent["queuedReason"]
    first = ouro(a, "sync")
    assert first["messages"][0]["delivered"] is False
    assert "no commits yet" in first["messages"][0]["reason"]
    assert [q["id"] for q in ouro(a, "message", "list")["queued"]] == [sent["message"]["id"]]

    ouro(b, "sync")  # B's bundle reaches its remote
    b_local = ouro(b, "message", "list")
    assert b_local["messages"] == []
    ouro(b, "desk", "track", "add", "work")  # B writes meanwhile (merged by union on its sync)

    second = ouro(a, "sync")
    assert second["messages"] == [
        {"id": sent["message"]["id"], "to": "bob", "delivered": True, "reason": None}
    ]
    assert ouro(a, "message", "list")["queued"] == []
    assert ouro(a, "sync")["messages"] == []  # nothing pending: not pushed twice

    ouro(b, "sync")
    packet = build_packet(b).text
    assert "Messages: unread" in packet and "1 unread from ann (1 question)" in packet
    assert "can you review the parser?" not in packet  # the body only through message read
    got = ouro(b, "message", "list", "--unread")
    assert [(m["from"], m["kind"], m["text"]) for m in got["messages"]] == [
        ("ann", "question", "can you review the parser?")
    ]
    assert (b.root / "desk" / "work" / "track.md").is_file()  # B's own write survived


def test_an_unreachable_remote_peer_leaves_the_message_queued_with_the_reason(
    tmp_path: Path,
) -> None:
    a, _ra = _bundle_with_remote(tmp_path, "ann")
    ouro(a, "message", "peer", "bob", "file://" + str(tmp_path / "missing.git"))
    sent = ouro(a, "message", "send", "bob", "status: green", "--kind", "status")
    retried = ouro(a, "message", "retry")["retried"]
    assert retried[0]["delivered"] is False and "missing.git" in retried[0]["reason"]
    queued = ouro(a, "message", "list")["queued"]
    assert [q["id"] for q in queued] == [sent["message"]["id"]]
    assert "missing.git" in queued[0]["queuedReason"]
