"""The one claim reader (``ouro.arc.claim_status.claim_from_json``).

Claim commands, ``claim list`` and the checkpoint's claim summary all read
claim files through it: it takes exactly the form ``ouro claim`` writes (and
gives it back unchanged), derives every status, and refuses anything else with
an error naming the field.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from ouro.arc import claims, stores
from ouro.arc.claim_status import claim_from_json, derive_status, watched_refs
from ouro.arc.paths import claims_dir
from ouro.arc.refs import memo_hasher
from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput


def _claims(bundle: Bundle) -> list[dict[str, Any]]:
    """Claims in every status, as their files hold them."""
    (bundle.root / "desk" / "seen.txt").write_text("v1")
    ids = [claims.add_claim(bundle, "no check")["id"]]
    ids.append(claims.add_claim(bundle, "needs a run", check="true")["id"])
    failed = claims.add_claim(bundle, "fails", check="make t")["id"]
    claims.add_evidence(bundle, failed, command="make t", exit_code=2)
    said = claims.add_claim(bundle, "said", check="make u")["id"]
    claims.add_evidence(bundle, said, command="make u", exit_code=0, output="ok")
    verified = claims.add_claim(bundle, "v", check="true", about=["desk/seen.txt"])["id"]
    claims.verify_claim(bundle, verified, yes=True)
    gone = claims.add_claim(bundle, "gone", about=["desk/nothing.txt"])["id"]
    old = claims.add_claim(bundle, "old")["id"]
    new = claims.add_claim(bundle, "new")["id"]
    claims.supersede_claim(bundle, old, new)
    folder = claims_dir(bundle)
    ids += [failed, said, verified, gone, old, new]
    return [orjson.loads((folder / f"{i}.json").read_bytes()) for i in ids]


def test_every_file_ouro_writes_reads_back_unchanged(bundle: Bundle) -> None:
    for data in _claims(bundle):
        assert claim_from_json(data).to_json() == data


def test_the_reader_derives_every_status(bundle: Bundle) -> None:
    files = _claims(bundle)

    def statuses() -> dict[str, str]:
        hasher = memo_hasher(bundle)
        return {d["text"]: derive_status(claim_from_json(d), hasher)[0] for d in files}

    assert statuses() == {
        "no check": "asserted",
        "needs a run": "evidence_required",
        "fails": "failed",
        "said": "evidence_required",  # asserted evidence never verifies
        "v": "verified",
        "gone": "unverifiable",
        "old": "superseded",
        "new": "asserted",
    }
    verified = claim_from_json(next(d for d in files if d["text"] == "v"))
    assert watched_refs(verified) == ["desk/seen.txt"]
    (bundle.root / "desk" / "seen.txt").write_text("v2")
    assert statuses()["v"] == "stale_risky"


UNUSUAL: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("created_at", lambda c: c.update(created_at=c.pop("createdAt"))),  # snake_case
    ("extra", lambda c: c.update(extra=1)),  # unknown field
    ("about", lambda c: c.update(about=None)),
    ("about.0", lambda c: c.update(about=[3])),
    ("authority", lambda c: c.update(authority="robot")),
    ("schemaVersion", lambda c: c.update(schemaVersion="1")),
    ("evidence.0.exitCode", lambda c: c["evidence"][0].update(exitCode="2")),
    ("evidence.0.exitCode", lambda c: c["evidence"][0].update(exitCode=True)),
    ("evidence.0.exitCode", lambda c: c["evidence"][0].update(exitCode=2**70)),
    ("evidence.0.provenance", lambda c: c["evidence"][0].update(provenance="rumour")),
    ("evidence.0.sources.0.hash", lambda c: c["evidence"][0].update(sources=[{"ref": "x"}])),
    ("evidence.0.recordedAt", lambda c: c["evidence"][0].pop("recordedAt")),
    ("evidence.0", lambda c: c.update(evidence=["x"])),
    ("text", lambda c: c.update(text=3)),
    ("id", lambda c: c.pop("id")),
    ("supersededBy", lambda c: c.update(supersededBy=["cl-x"])),
]


@pytest.mark.parametrize(("field", "change"), UNUSUAL, ids=[u[0] for u in UNUSUAL])
def test_anything_else_is_refused_naming_the_field(
    bundle: Bundle, field: str, change: Callable[[dict[str, Any]], Any]
) -> None:
    data = copy.deepcopy(next(c for c in _claims(bundle) if c.get("evidence")))
    change(data)
    with pytest.raises(InvalidInput) as err:
        claim_from_json(data, source="arc/claims/x.json")
    assert err.value.message.startswith(f"arc/claims/x.json.{field}: "), err.value.message


def test_every_reader_of_a_claim_file_names_the_bad_field(bundle: Bundle) -> None:
    files = _claims(bundle)
    folder = claims_dir(bundle)
    bad = copy.deepcopy(next(c for c in files if c.get("evidence")))
    bad["evidence"][0]["exitCode"] = str(bad["evidence"][0]["exitCode"])
    (folder / f"{bad['id']}.json").write_bytes(orjson.dumps(bad))
    summary = stores.scan_claims(bundle)  # the checkpoint's claim summary
    assert "evidence.0.exitCode: must be an integer" in summary["errors"][bad["id"]]
    listed = claims.list_claims(bundle)  # ouro claim list
    assert [u["file"] for u in listed["unreadable"]] == [f"arc/claims/{bad['id']}.json"]
    assert "exitCode" in listed["unreadable"][0]["reason"]
    with pytest.raises(CorruptFile, match=r"exitCode: must be an integer"):
        claims.get_claim(bundle, bad["id"])  # the claim commands
    others = {c["id"] for c in files} - {bad["id"]}
    assert set(summary["items"]) == others


def test_a_bad_authority_is_refused_at_write(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match=r"authority: 'robot' is not one of"):
        claims.add_claim(bundle, "x", authority="robot")
    added = claims.add_claim(bundle, "x")
    with pytest.raises(InvalidInput, match=r"evidence.authority") as err:
        claims.add_evidence(bundle, added["id"], command="c", exit_code=0, authority="robot")
    assert "claim evidence --help" in (err.value.hint or "")
    assert claims.get_claim(bundle, added["id"]).evidence == ()
