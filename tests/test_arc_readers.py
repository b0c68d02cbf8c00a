"""The one reader of each Arc record: claims (``claim_status.claim_from_json``)
and obligations (``obligations.obligation_from_json``).

The commands, their listings and the checkpoint's summary all read the files
through it: it takes exactly the form ouro writes (and gives it back
unchanged), and refuses anything else with an error naming the field.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from ouro.arc import claims, obligations, stores
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


def _obligations(bundle: Bundle) -> list[dict[str, Any]]:
    (bundle.root / "desk" / "plan.md").write_text("plan\n")
    made = [
        obligations.add_obligation(bundle, "send the report", owed_to="lead"),
        obligations.add_obligation(
            bundle, "reply", owed_to="ari", route="slack:C01", due="2026-12-24"
        ),
        obligations.add_obligation(bundle, "plan", owed_to="bo", desk_locator="desk/plan.md"),
    ]
    obligations.close_obligation(bundle, made[2]["id"])
    return [orjson.loads((bundle.root / m["locator"]).read_bytes()) for m in made]


def test_every_obligation_file_reads_back_unchanged(bundle: Bundle) -> None:
    files = _obligations(bundle)
    for data in files:
        assert obligations.obligation_from_json(data).to_json() == data
    assert [d["status"] for d in files] == ["open", "open", "done"]
    assert files[1]["route"] == {"recipient": "ari", "channel": "slack", "key": "C01"}


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("what", lambda o: o.update(what="")),
        ("owedTo", lambda o: o.pop("owedTo")),
        ("status", lambda o: o.update(status="later")),
        ("route.key", lambda o: o["route"].update(key="")),
        ("route.extra", lambda o: o["route"].update(extra=1)),
        ("owed_to", lambda o: o.update(owed_to="x")),
        ("due", lambda o: o.update(due=20261224)),
    ],
)
def test_an_obligation_in_another_form_is_refused_naming_the_field(
    bundle: Bundle, field: str, change: Callable[[dict[str, Any]], Any]
) -> None:
    data = copy.deepcopy(_obligations(bundle)[1])
    change(data)
    with pytest.raises(InvalidInput) as err:
        obligations.obligation_from_json(data, source="ob.json")
    assert err.value.message.startswith(f"ob.json.{field}: "), err.value.message


def test_every_reader_of_an_obligation_file_names_the_bad_field(bundle: Bundle) -> None:
    files = _obligations(bundle)
    route = files[1]
    route["route"]["key"] = ""
    path = bundle.root / "arc" / "obligations" / "inner" / f"{route['id']}.json"
    path.write_bytes(orjson.dumps(route))
    summary = stores.scan_obligations(bundle)
    assert "route.key: must not be empty" in summary["errors"][f"inner/{route['id']}"]
    assert set(summary["items"]) == {files[0]["id"]}  # the closed one is not open
    listed = obligations.list_obligations(bundle)
    assert [u["file"] for u in listed["unreadable"]] == [
        f"arc/obligations/inner/{route['id']}.json"
    ]
    with pytest.raises(CorruptFile, match=r"route\.key: must not be empty"):
        obligations.close_obligation(bundle, route["id"])
