"""Claims: status is derived from evidence and the current content of sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouro.arc import claims, paths
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.errors import Conflict, InvalidInput
from ouro.orient import build_packet
from tests.conftest import ouro_json, run_ouro


@pytest.fixture
def repo_file(bundle: Bundle) -> Path:
    path = bundle.root.parent / "src" / "login.py"
    path.parent.mkdir()
    path.write_text("def login(): ...\n")
    return path


def _status(bundle: Bundle, claim_id: str) -> str:
    return claims.describe(bundle, claims.get_claim(bundle, claim_id))["status"]


def test_verified_claim_turns_stale_risky_when_its_source_changes(bundle, repo_file) -> None:
    c = claims.add_claim(
        bundle, "login rejects empty passwords", about=["src/login.py"], check="true"
    )
    assert c["status"] == "evidence_required"
    claims.verify_claim(bundle, c["id"])
    assert _status(bundle, c["id"]) == "verified"
    assert c["id"] not in read_resume(bundle)["unverifiedClaimIds"]
    assert f"{c['id']} [" not in build_packet(bundle).text
    repo_file.write_text("def login(): return True\n")
    assert _status(bundle, c["id"]) == "stale_risky"
    # The fast path (checkpoint cache) sees it too, without any new write.
    assert c["id"] in read_resume(bundle)["unverifiedClaimIds"]
    assert f"{c['id']} [stale_risky]" in build_packet(bundle).text
    listed = claims.list_claims(bundle, "stale_risky")["claims"]
    assert [x["id"] for x in listed] == [c["id"]]


def test_typed_in_evidence_never_verifies_whatever_its_authority(bundle, repo_file) -> None:
    # Measured: `claim add X --check false` then `claim evidence --command false --exit 0
    # --authority test` read verified though nothing ran.
    c = claims.add_claim(bundle, "tests pass", about=["src/login.py"], check="false")
    for authority in ("test", "ci", "human", "runtime", "command", "git"):
        out = claims.add_evidence(
            bundle, c["id"], command="false", exit_code=0, authority=authority
        )
        assert out["status"] == "evidence_required", authority
        assert out["evidence"][-1]["provenance"] == "asserted"
        assert "asserted by" in out["statusReason"]
    # The real run of the check is what counts: `false` fails.
    assert claims.verify_claim(bundle, c["id"])["status"] == "failed"


def test_evidence_with_another_command_does_not_verify(bundle, repo_file) -> None:
    c = claims.add_claim(bundle, "tests pass", about=["src/login.py"], check="true")
    out = claims.add_evidence(bundle, c["id"], command="true -k login", exit_code=0)
    assert out["status"] == "evidence_required"
    assert claims.verify_claim(bundle, c["id"])["status"] == "verified"


def test_agent_authority_never_verifies(bundle, repo_file) -> None:
    c = claims.add_claim(bundle, "it works", about=["src/login.py"])
    out = claims.add_evidence(bundle, c["id"], command="pytest", exit_code=0, authority="agent")
    assert out["status"] == "asserted"
    assert "asserted by" in out["statusReason"]
    c2 = claims.add_claim(bundle, "it works", check="pytest", authority="human")
    out = claims.add_evidence(bundle, c2["id"], command="pytest", exit_code=0, authority="agent")
    assert out["status"] == "evidence_required"


def test_failing_evidence_fails_and_newer_success_recovers(bundle, repo_file) -> None:
    check = "test -f src/login.py"
    c = claims.add_claim(bundle, "tests pass", about=["src/login.py"], check=check)
    assert claims.add_evidence(bundle, c["id"], command=check, exit_code=2)["status"] == "failed"
    assert claims.verify_claim(bundle, c["id"])["status"] == "verified"
    # A failure reported by anyone (even typed in by the agent) counts as a failure.
    out = claims.add_evidence(bundle, c["id"], command=check, exit_code=1, authority="agent")
    assert out["status"] == "failed"


def test_unresolvable_about_is_unverifiable(bundle) -> None:
    c = claims.add_claim(bundle, "x", about=["src/missing.py"])
    assert c["status"] == "unverifiable" and "no such file" in c["statusReason"]
    c = claims.add_claim(bundle, "x", about=["desk"])
    assert c["status"] == "unverifiable" and "folder" in c["statusReason"]


@pytest.mark.parametrize("bad", ["/etc/passwd", "../x", "a\x00b", "a\\b"])
def test_malformed_refs_are_refused_and_nothing_written(bundle, bad) -> None:
    before = sorted(paths.claims_dir(bundle).iterdir())
    with pytest.raises(InvalidInput):
        claims.add_claim(bundle, "x", about=[bad])
    assert sorted(paths.claims_dir(bundle).iterdir()) == before


def test_locator_refs_resolve_inside_the_bundle_and_fragments_hash_one_record(bundle) -> None:
    facts = bundle.root / "desk/_record/diary/facts.jsonl"
    facts.write_text('{"id": "f-1", "text": "a"}\n')
    c = claims.add_claim(
        bundle, "fact f-1 holds", about=["desk/_record/diary/facts.jsonl#f-1"], check="true"
    )
    claims.verify_claim(bundle, c["id"])
    assert _status(bundle, c["id"]) == "verified"
    with facts.open("a") as handle:  # another record: f-1 itself is unchanged
        handle.write('{"id": "f-2", "text": "b"}\n')
    assert _status(bundle, c["id"]) == "verified"
    facts.write_text('{"id": "f-1", "text": "changed"}\n{"id": "f-2", "text": "b"}\n')
    assert _status(bundle, c["id"]) == "stale_risky"


def test_verify_runs_the_declared_check_in_the_repo(bundle, repo_file) -> None:
    c = claims.add_claim(
        bundle,
        "login.py defines login",
        about=["src/login.py"],
        check="grep -q 'def login' src/login.py",
    )
    out = claims.verify_claim(bundle, c["id"])
    assert out["status"] == "verified"
    ev = out["evidence"][-1]
    assert ev["provenance"] == "observed-by-ouro" and ev["exitCode"] == 0
    assert ev["outputDigest"].startswith("sha256:")
    assert isinstance(ev["durationMs"], int) and ev["cwd"] == str(bundle.root.parent)
    assert ev["sources"][0]["ref"] == "src/login.py"
    repo_file.write_text("nothing here\n")
    assert claims.verify_claim(bundle, c["id"])["status"] == "failed"


def test_supersede_links_both_claims(bundle) -> None:
    old = claims.add_claim(bundle, "old")
    new = claims.add_claim(bundle, "new")
    out = claims.supersede_claim(bundle, old["id"], new["id"])
    assert out["status"] == "superseded" and out["supersededBy"] == new["id"]
    assert claims.get_claim(bundle, new["id"]).supersedes == old["id"]
    assert old["id"] not in read_resume(bundle)["unverifiedClaimIds"]
    with pytest.raises(Conflict):
        claims.add_evidence(bundle, old["id"], command="x", exit_code=0)


def test_status_is_never_stored(bundle, repo_file) -> None:
    c = claims.add_claim(bundle, "x", about=["src/login.py"])
    data = json.loads((paths.claims_dir(bundle) / f"{c['id']}.json").read_text())
    assert "status" not in data


def test_cli_claim_flow_with_output_file(bundle, repo_file, tmp_path) -> None:
    added = ouro_json(
        "claim",
        "add",
        "tests pass",
        "--about",
        "src/login.py",
        "--check",
        "true",
        "--authority",
        "human",
        bundle=bundle,
    )
    out_file = tmp_path / "out.txt"
    out_file.write_text("all good, raw output")
    ev = ouro_json(
        "claim",
        "evidence",
        added["id"],
        "--command",
        "true",
        "--exit-code",
        "0",
        "--output-file",
        str(out_file),
        bundle=bundle,
    )
    assert ev["status"] == "evidence_required"  # typed in: asserted, never verified
    raw = (paths.claims_dir(bundle) / f"{added['id']}.json").read_text()
    assert "all good" not in raw
    assert ouro_json("claim", "verify", added["id"], bundle=bundle)["status"] == "verified"
    listed = ouro_json("claim", "list", "--status", "verified", bundle=bundle)
    assert [c["id"] for c in listed["claims"]] == [added["id"]]
    proc = run_ouro(
        "claim", "evidence", "cl-nope", "--command", "x", "--exit-code", "0", bundle=bundle
    )
    assert proc.returncode == 2 and "hint:" in proc.stderr
