"""``ouro claim update``: a claim is corrected in place, its history kept (issue 28, measured 7).

Measured: a typo in a claim's check meant a new claim plus ``claim supersede``,
and ``claim list`` filled with same-text claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouro.api import call as invoke
from ouro.arc import claims
from ouro.bundle import Bundle
from ouro.errors import Conflict, InvalidInput
from tests.conftest import ouro_json, run_ouro
from tests.test_hooks import events as read_events


@pytest.fixture
def repo_file(bundle: Bundle) -> Path:
    path = bundle.root.parent / "src" / "parse.py"
    path.parent.mkdir()
    path.write_text("def parse(): ...\n")
    return path


def _updates(bundle: Bundle) -> list[dict[str, object]]:
    return [
        e["meta"]
        for e in read_events(bundle)
        if e["kind"] == "claim_recorded" and e.get("meta", {}).get("action") == "update"
    ]


def test_a_typo_in_the_check_is_corrected_in_place(bundle: Bundle, repo_file: Path) -> None:
    c = claims.add_claim(
        bundle, "parser handles empty input", about=["src/parse.py"], check="flase"
    )
    assert claims.verify_claim(bundle, c["id"])["status"] == "failed"
    fixed = claims.update_claim(bundle, c["id"], check="true")
    assert fixed["changed"] == ["check"] and fixed["check"] == "true"
    assert fixed["status"] == "evidence_required"  # the failed run was of the old check
    assert fixed["history"] == [
        {"at": fixed["checkSince"], "changed": ["check"], "before": {"check": "flase"}}
    ]
    assert len(fixed["evidence"]) == 1  # the earlier receipt is kept
    assert claims.verify_claim(bundle, c["id"])["status"] == "verified"
    listed = claims.list_claims(bundle)["claims"]
    assert [x["id"] for x in listed] == [c["id"]]  # one claim, not a second same-text one
    assert _updates(bundle) == [
        {"claimId": c["id"], "action": "update", "changed": ["check"], "statusBefore": "failed"}
    ]


def test_text_and_about_change_before_verification_only(bundle: Bundle, repo_file: Path) -> None:
    other = repo_file.parent / "lex.py"
    other.write_text("x = 1\n")
    c = claims.add_claim(bundle, "parsre is fast", about=["src/parse.py"], check="true")
    out = claims.update_claim(bundle, c["id"], text="parser is fast", about=["src/lex.py"])
    assert (out["text"], out["about"], out["changed"]) == (
        "parser is fast",
        ["src/lex.py"],
        ["text", "about"],
    )
    assert out["history"][0]["before"] == {"text": "parsre is fast", "about": ["src/parse.py"]}
    assert out["checkSince"] == out["history"][0]["at"]  # receipts about other files stop counting
    claims.verify_claim(bundle, c["id"])
    with pytest.raises(Conflict, match="is verified; its text cannot change"):
        claims.update_claim(bundle, c["id"], text="parser is very fast")
    assert claims.get_claim(bundle, c["id"]).text == "parser is fast"  # nothing written


def test_a_verified_claim_whose_check_changes_needs_evidence_again(
    bundle: Bundle, repo_file: Path
) -> None:
    c = claims.add_claim(bundle, "tests pass", about=["src/parse.py"], check="true")
    claims.verify_claim(bundle, c["id"])
    changed = claims.update_claim(bundle, c["id"], check="true ")  # stripped: no change
    assert changed["changed"] == [] and changed["status"] == "verified"
    back = claims.update_claim(bundle, c["id"], check="test -f /")
    assert back["status"] == "evidence_required"
    # changing it back to the old command does not revive the old receipt
    again = claims.update_claim(bundle, c["id"], check="true")
    assert again["status"] == "evidence_required"
    assert [h["before"] for h in again["history"]] == [{"check": "true"}, {"check": "test -f /"}]


def test_bad_updates_are_refused_and_write_nothing(bundle: Bundle, repo_file: Path) -> None:
    c = claims.add_claim(bundle, "x", about=["src/parse.py"], check="true")
    before = (bundle.root / c["locator"]).read_bytes()
    with pytest.raises(InvalidInput, match="nothing to change"):
        claims.update_claim(bundle, c["id"])
    with pytest.raises(InvalidInput, match="check: cannot be blank"):
        claims.update_claim(bundle, c["id"], check="  ")
    with pytest.raises(InvalidInput, match="about"):
        claims.update_claim(bundle, c["id"], about=["../outside"])
    with pytest.raises(InvalidInput, match="credential"):
        claims.update_claim(bundle, c["id"], check="curl -H 'sk-live-abcdefghijklmnopqrstuvwx'")
    new = claims.add_claim(bundle, "y")
    claims.supersede_claim(bundle, c["id"], new["id"])
    with pytest.raises(Conflict, match="superseded"):
        claims.update_claim(bundle, c["id"], text="z")
    assert (
        json.loads((bundle.root / c["locator"]).read_bytes())["text"] == json.loads(before)["text"]
    )


def test_claim_update_through_the_cli_and_the_tool(bundle: Bundle, repo_file: Path) -> None:
    c = ouro_json(
        "claim", "add", "docs build", "--about", "src/parse.py", "--check", "fasle", bundle=bundle
    )
    out = ouro_json(
        "claim", "update", c["id"], "--check", "true", "--text", "the docs build", bundle=bundle
    )
    assert (out["text"], out["check"], out["changed"]) == (
        "the docs build",
        "true",
        ["text", "check"],
    )
    human = run_ouro(
        "claim", "update", c["id"], "--about", "src/parse.py", "--text", "docs build", bundle=bundle
    )
    assert human.returncode == 0 and c["id"] in human.stdout
    assert run_ouro("claim", "update", c["id"], bundle=bundle).returncode == 2
    tool = invoke("claim_update", bundle, {"claim_id": c["id"], "check": "true"})
    assert tool["changed"] == [] and tool["check"] == "true"
