"""The provider lane checks and remembers (issue 28, measured 5).

Measured: ouro ran no readiness check of its own, and provider state came only
from ``--signal`` and was not kept: right after a refresh with a provider
``down``, a plain ``sentinel refresh`` said "READY … ready in every respect"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.sentinel.receipts import refresh
from ouro.sentinel.signals import parse_caller_signal
from tests.conftest import ouro_json, run_ouro
from tests.sentinel_support import make_ready

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
DOWN = '{"kind": "provider_lane", "source": "anthropic", "status": "down"}'


def _lane(receipt: dict[str, object], source: str) -> dict[str, object]:
    signals = receipt["signals"]
    assert isinstance(signals, list)
    return next(s for s in signals if s["kind"] == "provider_lane" and s["source"] == source)


def test_down_then_a_plain_refresh_is_not_ready_and_shows_the_lanes_age(bundle: Bundle) -> None:
    make_ready(bundle)
    down = parse_caller_signal(json.loads(DOWN), index=0)
    assert refresh(bundle, now=T0 - timedelta(minutes=1))["receipt"]["ready"]
    first = refresh(bundle, signals=[down], now=T0)["receipt"]
    assert first["verdict"] == "blocked" and _lane(first, "anthropic")["fresh"] is True
    later = refresh(bundle, now=T0 + timedelta(minutes=5))["receipt"]
    lane = _lane(later, "anthropic")
    assert later["verdict"] == "blocked" and later["ready"] is False
    assert (lane["status"], lane["fresh"], lane["checkedAt"]) == (
        "down",
        False,
        "2026-03-01T12:00:00.000Z",
    )
    assert "last known down at 2026-03-01T12:00:00.000Z (5 min ago)" in str(lane["detail"])
    assert later["recoveryAnchor"]["use"] == "latest-ready"  # outside signal only

    # through the CLI: the remembered lane is in the output, with its age
    out = run_ouro("sentinel", "refresh", bundle=bundle)
    assert out.returncode == 1 and "READY" not in out.stdout
    assert "provider_lane:anthropic down" in out.stdout and "ago" in out.stdout
    assert "no fresh evidence" in out.stdout
    # a fresh word from the lane's source clears it
    ok = ouro_json(
        "sentinel", "refresh", "--signal",
        '{"kind": "provider_lane", "source": "anthropic", "status": "ok"}', bundle=bundle,
    )  # fmt: skip
    assert ok["verdict"] == "ready"
    assert ouro_json("sentinel", "refresh", bundle=bundle)["verdict"] == "ready"
    lane_file = json.loads((bundle.root / "state/sentinel/lane.json").read_text())
    assert lane_file["sources"]["anthropic"]["status"] == "ok"


def test_a_configured_check_that_fails_then_passes(bundle: Bundle) -> None:
    make_ready(bundle)
    flag = bundle.root / "provider-up"
    ouro_json("config", "set", "readiness.api.command", f"test -f {flag}", bundle=bundle)
    ouro_json("config", "set", "readiness.api.timeout", "20", bundle=bundle)
    # not confirmed in this bundle yet: not run, and not ready either
    unconfirmed = ouro_json("sentinel", "refresh", bundle=bundle)
    lane = _lane(unconfirmed, "api")
    assert (unconfirmed["verdict"], lane["status"]) == ("watch", "unknown")
    assert "--yes" in str(lane["repairCommand"])
    failed = run_ouro("sentinel", "refresh", "--yes", "--json", bundle=bundle)
    receipt = json.loads(failed.stdout)
    lane = _lane(receipt, "api")
    assert failed.returncode == 1 and receipt["verdict"] == "blocked"
    assert (lane["status"], lane["verdictImpact"], lane["repairActor"]) == (
        "down",
        "blocked",
        "human-required",
    )
    assert "exited 1" in str(lane["detail"]) and "test -f" in str(lane["repairCommand"])
    flag.write_text("")
    passed = ouro_json("sentinel", "refresh", bundle=bundle)  # trusted now: runs again
    assert passed["verdict"] == "ready" and _lane(passed, "api")["status"] == "ok"
    remembered = json.loads((bundle.root / "state/sentinel/lane.json").read_text())["sources"][
        "api"
    ]
    assert remembered["status"] == "ok" and remembered["checkedAt"]


def test_a_hook_refresh_runs_no_command_and_reports_the_last_known_state(bundle: Bundle) -> None:
    make_ready(bundle)
    marker = bundle.root / "ran"
    ouro_json("config", "set", "readiness.api.command", f"touch {marker}; false", bundle=bundle)
    never = refresh(bundle, trigger="session_start")["receipt"]
    assert not marker.exists()
    lane = _lane(never, "api")
    assert (lane["status"], lane["verdictImpact"]) == ("unknown", "watch")
    assert never["ready"] is False  # unknown stays unknown: never ready
    refresh(bundle, yes=True)  # manual_cli: the commands run
    assert marker.exists()
    marker.unlink()
    hook = refresh(bundle, trigger="session_start")["receipt"]
    assert not marker.exists() and _lane(hook, "api")["status"] == "down"
    assert hook["verdict"] == "blocked"


def test_missing_credentials_are_a_lane_signal(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_ready(bundle)
    monkeypatch.delenv("OURO_TEST_PROVIDER_KEY", raising=False)
    ouro_json("config", "set", "readiness.model.env", "OURO_TEST_PROVIDER_KEY", bundle=bundle)
    ouro_json("config", "set", "readiness.model.files", "creds/key.json", bundle=bundle)
    r = refresh(bundle)["receipt"]
    lane = _lane(r, "model")
    assert (lane["status"], lane["verdictImpact"], lane["repairActor"]) == (
        "missing-credential",
        "blocked",
        "human-required",
    )
    assert str(lane["detail"]) == (
        "missing OURO_TEST_PROVIDER_KEY (environment variable not set), "
        "creds/key.json (file not found)"
    )
    monkeypatch.setenv("OURO_TEST_PROVIDER_KEY", "sk-ant-not-shown-anywhere-1234567890")
    (bundle.root / "creds").mkdir()
    (bundle.root / "creds/key.json").write_text("{}")
    ok = refresh(bundle)["receipt"]
    assert _lane(ok, "model")["status"] == "ok" and ok["verdict"] == "ready"
    assert "sk-ant-not-shown" not in json.dumps(ok)


def test_a_check_is_bounded_by_its_timeout(bundle: Bundle) -> None:
    make_ready(bundle)
    ouro_json("config", "set", "readiness.slow.command", "sleep 30", bundle=bundle)
    ouro_json("config", "set", "readiness.slow.timeout", "0.5", bundle=bundle)
    r = refresh(bundle, run_checks=True, yes=True)["receipt"]
    lane = _lane(r, "slow")
    assert lane["status"] == "down" and "timed out after 0.5s" in str(lane["detail"])


def test_readiness_keys_are_checked_and_live_in_bundle_json(bundle: Bundle) -> None:
    from ouro import config

    for key, value, what in (
        ("readiness.api.timeout", "0", "above 0"),
        ("readiness.api.timeout", "9999", "at most 600"),
        ("readiness.api.env", "NOT-A-NAME", "not an environment variable name"),
        ("readiness.API!.command", "true", "no setting named"),
    ):
        with pytest.raises(InvalidInput, match=what):
            config.set_value(key, value, "bundle", bundle.root)
    with pytest.raises(InvalidInput, match=r"declared in bundle\.json"):
        config.set_value("readiness.api.command", "true", "global", bundle.root)
    listed = ouro_json("config", "set", "readiness.api.command", "true", bundle=bundle)
    assert listed["scope"] == "bundle"
    rows = {r["key"]: r for r in ouro_json("config", "list", bundle=bundle)["settings"]}
    assert rows["readiness.api.command"]["value"] == "true"
    assert "readiness check for api" in rows["readiness.api.command"]["description"]
