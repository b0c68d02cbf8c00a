"""The generated Arc CLI: every verb, --json, and pure reads."""

from __future__ import annotations

from ouro.bundle import Bundle
from tests.conftest import ouro_json, run_ouro, snapshot


def test_arc_verbs_and_queries(bundle: Bundle) -> None:
    assert ouro_json("arc", "ask", "fix login", bundle=bundle)["event"]["kind"] == "turn_accepted"
    nxt = ouro_json(
        "arc",
        "next",
        "run tests",
        "--stop-before",
        "push",
        "--stop-before",
        "deploy",
        bundle=bundle,
    )
    assert nxt["event"]["stopBefore"] == ["push", "deploy"] and nxt["canContinue"] is True
    blocked = ouro_json("arc", "blocker", "no creds", bundle=bundle)
    assert blocked["blockedBecause"] == "no creds" and blocked["canContinue"] is False
    assert ouro_json("arc", "query", "blocked", bundle=bundle)["blockers"][0]["text"] == "no creds"
    bad = run_ouro("arc", "unblock", "ev-doesnotexist", bundle=bundle)
    assert bad.returncode == 1 and "arc query blocked" in bad.stderr
    assert ouro_json("arc", "unblock", bundle=bundle)["blockedBecause"] is None
    assert ouro_json("arc", "unblock", bundle=bundle)["cleared"] == []
    assert ouro_json("arc", "note", "slow tests", bundle=bundle)["event"]["kind"] == "agent_note"
    ouro_json("arc", "checkpoint", bundle=bundle)
    ouro_json("arc", "handoff", "over to you", bundle=bundle)
    since = ouro_json("arc", "query", "since-checkpoint", bundle=bundle)
    assert [e["kind"] for e in since["events"]] == ["handoff"]
    ob = ouro_json(
        "obligation",
        "add",
        "reply",
        "--to",
        "ari",
        "--route",
        "slack:C1",
        "--due",
        "2026-12-01",
        bundle=bundle,
    )
    assert ob["inner"] is True and ob["route"] == {
        "recipient": "ari",
        "channel": "slack",
        "key": "C1",
    }
    owe = ouro_json("arc", "query", "owe", bundle=bundle)
    assert [o["id"] for o in owe["returns"]] == [ob["id"]]
    before = snapshot(bundle.root)
    doing = ouro_json("arc", "query", "doing", bundle=bundle)
    assert doing["currentAsk"]["confidence"] == "needs_confirmation"
    resume = ouro_json("arc", "resume", bundle=bundle)
    assert resume["returnObligationIds"] == [ob["id"]]
    ouro_json("obligation", "list", bundle=bundle)
    ouro_json("arc", "query", "unverified", bundle=bundle)
    assert snapshot(bundle.root) == before
    closed = ouro_json("obligation", "close", ob["id"], "--dropped", bundle=bundle)
    assert closed["status"] == "dropped"
    assert ouro_json("arc", "resume", bundle=bundle)["returnObligationIds"] == []
    bad = run_ouro("obligation", "add", "x", "--to", "y", "--due", "tomorrow", bundle=bundle)
    assert bad.returncode == 2 and "due" in bad.stderr
    text = run_ouro("arc", "resume", bundle=bundle, check=True).stdout
    assert "current ask [needs_confirmation]: fix login" in text
    assert "handoff (" in text and "over to you" in text
