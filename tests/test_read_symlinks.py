"""Readers never open a record file or folder behind a symlink leading outside the bundle.

A hostile bundle (a cloned repository) can hold symlinks. Each reader skips a
path that resolves outside, reports it naming the bundle-relative path, and
still answers for everything else; nothing of the outside file (not even a
field name) reaches its output. A symlink that stays inside is read as before.
Every symlink here is a real ``os.symlink``; every outside file lies in
``tmp_path``, outside the bundle.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ouro.arc import stores
from ouro.arc.claims import add_claim
from ouro.arc.obligations import add_obligation
from ouro.arc.resume import read_resume
from ouro.bundle import Bundle

SECRET = "s3cr3tfield"


def _outside_json(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir(exist_ok=True)
    target = folder / name
    target.write_text(json.dumps({SECRET: "outside-value"}))
    return target


def _said(value: object) -> str:
    return json.dumps(value, default=str)


# --- claims and obligations (ouro.arc.stores) --------------------------------


def test_a_claim_symlink_to_an_outside_file_is_never_opened(bundle: Bundle, tmp_path: Path) -> None:
    kept = add_claim(bundle, "kept claim")["id"]
    read_resume(bundle)  # a cached summary exists before the symlink appears
    link = bundle.arc / "claims" / "cl-evil.json"
    os.symlink(_outside_json(tmp_path, "cl-evil.json"), link)
    for _ in range(2):  # the scan, then the cached summary's fast path
        answer = read_resume(bundle)
        text = _said(answer)
        assert SECRET not in text and "outside-value" not in text
        assert answer["unreadableClaimIds"] == ["cl-evil"]
        assert kept in answer["recentClaimIds"]
        assert (
            "claims: cl-evil unknown (arc/claims/cl-evil.json resolves outside the bundle "
            "through a symlink; it was not read)"
        ) in answer["missing"]
    summary = stores.scan_claims(bundle)
    assert SECRET not in _said(summary)
    assert summary["errors"]["cl-evil"].startswith("arc/claims/cl-evil.json resolves outside")


def test_a_claim_file_swapped_for_an_outside_symlink_drops_its_cached_entry(
    bundle: Bundle, tmp_path: Path
) -> None:
    claim = add_claim(bundle, "moved out")["id"]
    path = bundle.arc / "claims" / f"{claim}.json"
    cached = stores.scan_claims(bundle)
    assert claim in cached["items"]
    # the very same file, moved out and linked back: same stamp, now outside
    target = tmp_path / "outside.json"
    os.replace(path, target)
    os.symlink(target, path)
    summary = stores.refresh_claims(bundle, cached)
    assert claim not in summary["items"]
    assert "resolves outside the bundle through a symlink" in summary["errors"][claim]


def test_a_claims_folder_symlinked_outside_is_unknown(bundle: Bundle, tmp_path: Path) -> None:
    add_claim(bundle, "inside claim")
    outside = tmp_path / "outside-claims"
    os.replace(bundle.arc / "claims", outside)
    (outside / "cl-evil.json").write_text(json.dumps({SECRET: 1}))
    os.symlink(outside, bundle.arc / "claims")
    answer = read_resume(bundle)
    assert SECRET not in _said(answer)
    assert answer["recentClaimIds"] is None  # unknown, never "none"
    assert (
        "claims: unknown (arc/claims resolves outside the bundle through a symlink; "
        "it was not read)"
    ) in answer["missing"]


def test_claim_symlinks_inside_the_bundle_keep_working(bundle: Bundle) -> None:
    claim = add_claim(bundle, "linked inside")["id"]
    path = bundle.arc / "claims" / f"{claim}.json"
    elsewhere = bundle.root / "desk" / "kept.json"
    os.replace(path, elsewhere)
    os.symlink(elsewhere, path)
    answer = read_resume(bundle)
    assert claim in answer["recentClaimIds"]
    assert answer["unreadableClaimIds"] == []


def test_an_obligation_symlink_to_an_outside_file_is_never_opened(
    bundle: Bundle, tmp_path: Path
) -> None:
    kept = add_obligation(bundle, "reply", owed_to="user")["id"]
    folder = bundle.arc / "obligations"
    os.symlink(_outside_json(tmp_path, "ob-evil.json"), folder / "ob-evil.json")
    (folder / "inner").mkdir(exist_ok=True)
    os.symlink(_outside_json(tmp_path, "ob-inner.json"), folder / "inner" / "ob-inner.json")
    summary = stores.scan_obligations(bundle)
    assert SECRET not in _said(summary)
    assert kept in summary["items"]
    assert summary["errors"] == {
        "ob-evil": "arc/obligations/ob-evil.json resolves outside the bundle through a "
        "symlink; it was not read",
        "inner/ob-inner": "arc/obligations/inner/ob-inner.json resolves outside the bundle "
        "through a symlink; it was not read",
    }
    answer = read_resume(bundle)
    assert SECRET not in _said(answer)
    assert sorted(answer["unreadableObligationIds"]) == ["inner/ob-inner", "ob-evil"]


@pytest.mark.parametrize("sub", ["", "inner"])
def test_an_obligations_folder_symlinked_outside_is_unknown(
    bundle: Bundle, tmp_path: Path, sub: str
) -> None:
    outside = tmp_path / "outside-obligations"
    outside.mkdir()
    (outside / "ob-evil.json").write_text(json.dumps({SECRET: 1}))
    folder = bundle.arc / "obligations" / sub if sub else bundle.arc / "obligations"
    if folder.exists():
        os.replace(folder, tmp_path / "aside")
    os.symlink(outside, folder)
    summary = stores.scan_obligations(bundle)
    rel = "arc/obligations" + (f"/{sub}" if sub else "")
    assert summary == {
        "error": f"{rel} resolves outside the bundle through a symlink; it was not read"
    }
