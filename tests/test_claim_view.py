"""Claim status without pydantic: ``claim_view`` ≡ the claim schema.

The checkpoint's claim summary (``ouro.arc.stores``) reads claim files through
``ouro.arc.claim_derive.claim_view``; whenever that accepts a claim, the
pydantic ``Claim`` must accept it too and the one ``derive_status`` must give
the same (status, reason) and watch the same refs. Anything unusual is left to
the schema (``None``), which then names the bad field.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from ouro import api as tools
from ouro.arc import stores
from ouro.arc.claim_derive import claim_view
from ouro.arc.claim_status import Claim, derive_status, memo_hasher, watched_refs
from ouro.arc.paths import claims_dir
from ouro.bundle import Bundle


def _claims(bundle: Bundle) -> list[dict[str, Any]]:
    """Claims in every status, as their files hold them."""
    (bundle.root / "desk" / "seen.txt").write_text("v1")
    ids = []
    ids.append(tools.call("claim_add", bundle, {"text": "no check"})["id"])
    ids.append(tools.call("claim_add", bundle, {"text": "needs a run", "check": "true"})["id"])
    failed = tools.call("claim_add", bundle, {"text": "fails", "check": "make t"})["id"]
    tools.call("claim_evidence", bundle, {"claim_id": failed, "command": "make t", "exit_code": 2})
    ids.append(failed)
    said = tools.call("claim_add", bundle, {"text": "said", "check": "make u"})["id"]
    tools.call("claim_evidence", bundle, {"claim_id": said, "command": "make u", "exit_code": 0})
    ids.append(said)
    verified = tools.call(
        "claim_add", bundle, {"text": "v", "check": "true", "about": ["desk/seen.txt"]}
    )["id"]
    tools.call("claim_verify", bundle, {"claim_id": verified, "yes": True})
    ids.append(verified)
    gone = tools.call("claim_add", bundle, {"text": "gone", "about": ["desk/nothing.txt"]})
    ids.append(gone["id"])
    old = tools.call("claim_add", bundle, {"text": "old"})["id"]
    new = tools.call("claim_add", bundle, {"text": "new"})["id"]
    tools.call("claim_supersede", bundle, {"claim_id": old, "by": new})
    ids += [old, new]
    folder = claims_dir(bundle)
    return [orjson.loads((folder / f"{i}.json").read_bytes()) for i in ids]


def _same(bundle: Bundle, data: dict[str, Any]) -> tuple[str, str]:
    view = claim_view(data)
    assert view is not None, data
    claim = Claim.from_json(data)
    got = derive_status(view, memo_hasher(bundle))
    assert got == derive_status(claim, memo_hasher(bundle))
    assert watched_refs(view) == watched_refs(claim)
    assert (view.id, view.text) == (claim.id, claim.text)
    return got


def test_view_and_schema_derive_the_same_status(bundle: Bundle) -> None:
    claims = _claims(bundle)
    statuses = {_same(bundle, data)[0] for data in claims}
    assert statuses == {
        "asserted",
        "evidence_required",
        "failed",
        "verified",
        "unverifiable",
        "superseded",
    }
    (bundle.root / "desk" / "seen.txt").write_text("v2")  # the verified one goes stale
    assert "stale_risky" in {_same(bundle, data)[0] for data in claims}


def _unusual(claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    with_evidence = next(c for c in claims if c.get("evidence"))
    out = []
    for change in (
        lambda c: c.update(created_at=c.pop("createdAt")),  # snake_case spelling
        lambda c: c.update(extra=1),  # unknown field
        lambda c: c.update(about=None),
        lambda c: c.update(authority="robot"),
        lambda c: c.update(schemaVersion="1"),
        lambda c: c["evidence"][0].update(exitCode="2"),  # lax int: the schema decides
        lambda c: c["evidence"][0].update(exitCode=True),
        lambda c: c["evidence"][0].update(provenance="rumour"),
        lambda c: c["evidence"][0].update(sources=[{"ref": "x"}]),
        lambda c: c.update(text=3),
        lambda c: c.pop("id"),
    ):
        data = copy.deepcopy(with_evidence)
        change(data)
        out.append(data)
    return out


def test_anything_unusual_is_left_to_the_schema(bundle: Bundle) -> None:
    for data in _unusual(_claims(bundle)):
        assert claim_view(data) is None, data


def test_summary_of_an_unusual_claim_file_matches_the_schema(bundle: Bundle) -> None:
    claims = _claims(bundle)
    folder = claims_dir(bundle)
    lax = copy.deepcopy(next(c for c in claims if c.get("evidence")))
    lax["evidence"][0]["exitCode"] = str(lax["evidence"][0]["exitCode"])  # schema accepts
    (folder / f"{lax['id']}.json").write_bytes(orjson.dumps(lax))
    bad = copy.deepcopy(claims[0])
    bad["authority"] = "robot"
    (folder / f"{bad['id']}.json").write_bytes(orjson.dumps(bad))
    summary = stores.scan_claims(bundle)
    assert "authority" in summary["errors"][bad["id"]]
    want = derive_status(Claim.from_json(lax), memo_hasher(bundle))
    item = summary["items"][lax["id"]]
    assert (item["status"], item["reason"]) == want
