"""latest-ready is checked for meaning on every read (issue 28, measured 4).

Measured: edit ``latest-ready.json`` by hand to ``resume.canContinue: false``,
``currentAsk: null``; ``sentinel refresh --signal '{"kind":"provider_lane",
"status":"down",…}'`` then answered "recovery anchor: latest-ready → <that
receipt> — resume from the last ready receipt"."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ouro.bundle import Bundle
from ouro.cli.render.ops import sentinel_status as render_status
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.common import run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.orient import build_packet
from ouro.sentinel import paths
from ouro.sentinel.receipts import refresh
from ouro.sentinel.status import sentinel_status
from tests.conftest import ouro_json, run_ouro, snapshot
from tests.sentinel_support import load, make_ready

DOWN = '{"kind": "provider_lane", "source": "anthropic", "status": "down"}'


def _edit_ready(bundle: Bundle, **resume: Any) -> str:
    """Rewrite latest-ready.json by hand (a new file: the hard link to the receipt breaks)."""
    path = paths.latest_ready_path(bundle)
    data = load(path)
    data["resume"].update(resume)
    path.unlink()
    path.write_text(json.dumps(data))
    return str(data["id"])


def test_a_hand_edited_latest_ready_is_never_the_recovery_anchor(bundle: Bundle) -> None:
    make_ready(bundle)
    ouro_json("sentinel", "refresh", bundle=bundle)
    rid = _edit_ready(bundle, canContinue=False, currentAsk=None)

    out = run_ouro("sentinel", "refresh", "--signal", DOWN, bundle=bundle)
    assert out.returncode == 1
    assert f"latest-ready → {rid}" not in out.stdout
    assert "resume from the last ready receipt" not in out.stdout
    assert f"latest-ready {rid} is unusable" in out.stdout
    assert "canContinue is not true" in out.stdout and "no current ask" in out.stdout
    got = ouro_json("sentinel", "refresh", "--signal", DOWN, bundle=bundle)
    anchor = got["recoveryAnchor"]
    assert anchor["use"] == "none" and anchor["receiptId"] is None
    assert any(i["locator"] == paths.LATEST_READY for i in got["issues"])

    before = snapshot(bundle.root)
    status = sentinel_status(bundle)
    assert snapshot(bundle.root) == before  # still a pure read
    assert status["recoveryAnchor"]["use"] == "none"
    assert status["latestReady"]["usable"] is False
    assert "cannot continue" in status["latestReady"]["unusable"]
    assert f"latest ready: {rid} UNUSABLE" in render_status(status)

    packet = build_packet(bundle).text
    assert f"latest-ready {rid} is unusable" in packet and "not a recovery anchor" in packet


def test_status_does_not_trust_the_anchor_latest_json_recorded(bundle: Bundle) -> None:
    make_ready(bundle)
    refresh(bundle)
    outside = ouro_json("sentinel", "refresh", "--signal", DOWN, bundle=bundle)
    assert outside["recoveryAnchor"]["use"] == "latest-ready"  # sound: offered
    assert sentinel_status(bundle)["recoveryAnchor"]["use"] == "latest-ready"
    rid = _edit_ready(bundle, nextSafeAction={"value": None})
    status = sentinel_status(bundle)  # latest.json still names it; the read re-checks
    assert status["recoveryAnchor"]["use"] == "none"
    assert status["recoveryAnchor"]["recorded"]["receiptId"] == rid
    assert "no next safe action" in status["recoveryAnchor"]["reason"]
    assert status["state"] == "degraded"


def test_the_hooks_never_offer_an_unusable_anchor(bundle: Bundle) -> None:
    make_ready(bundle)
    refresh(bundle)
    rid = _edit_ready(bundle, canContinue=False)
    stdin = json.dumps(
        {"session_id": "s", "cwd": str(bundle.root), "hook_event_name": "SessionStart",
         "source": "startup"}
    )  # fmt: skip
    out = run_hook(CLAUDE, "SessionStart", stdin, bundle_path=None, env={}, handlers=HANDLERS)
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"latest-ready {rid} is unusable" in context


def test_a_ready_receipt_replaces_an_unusable_latest_ready(bundle: Bundle) -> None:
    make_ready(bundle)
    refresh(bundle)
    rid = _edit_ready(bundle, canContinue=False)
    again = refresh(bundle)
    assert again["latestReadyReplaced"] is True
    assert load(paths.latest_ready_path(bundle))["id"] == again["receipt"]["id"] != rid
    assert sentinel_status(bundle)["latestReady"]["usable"] is True
    assert "is unusable" not in build_packet(bundle).text


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        ({"verdict": "watch"}, "its verdict is 'watch'"),
        ({"ready": False}, "it is marked not ready"),
        ({"gauntlet": {"verdict": "blocked"}}, "its gauntlet verdict is 'blocked'"),
        ({"signals": [{"kind": "sense", "source": "x", "verdictImpact": "watch"}]}, "sense:x"),
        ({"resume": None}, "no resume snapshot"),
        ({"resume": {"canContinue": True, "currentAsk": {"value": "a"}}}, "no next safe action"),
    ],
)
def test_every_respect_is_checked(edit: dict[str, Any], reason: str) -> None:
    from ouro.sentinel.anchor import ready_problems

    good = {
        "verdict": "ready",
        "ready": True,
        "gauntlet": {"verdict": "ready"},
        "signals": [{"kind": "bundle", "source": "sync", "verdictImpact": "none"}],
        "resume": {
            "canContinue": True,
            "currentAsk": {"value": "a"},
            "nextSafeAction": {"value": "b"},
        },
    }
    assert ready_problems(good) == []
    assert any(reason in p for p in ready_problems({**good, **edit}))
