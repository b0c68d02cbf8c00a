"""``ouro orient`` on a bundle with claims in every status, through the one CLI
path (the claim reader itself: ``tests/test_arc_readers.py``)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ouro import api as tools
from ouro.arc.paths import claims_dir
from ouro.bundle import Bundle
from ouro.cli.run import run


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


ORIENT = [
    ["orient"],
    ["orient", "--json"],
    ["--json", "orient", "--budget", "400"],
    ["orient", "--budget=300", "--json"],
]


@pytest.mark.parametrize("argv", ORIENT, ids=" ".join)
def test_orient_prints_the_claims(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _claims(bundle)
    assert run(["--bundle", str(bundle.root), *argv]) == 0
    out = capsys.readouterr().out
    assert "claim" in out.lower()  # listed, or counted among what the budget dropped


@pytest.mark.parametrize(
    "argv",
    [["orient", "--budget", "100"], ["orient", "extra"], ["orient", "--budget", "x"]],
    ids=" ".join,
)
def test_bad_orient_lines_are_usage_errors(bundle: Bundle, argv: list[str]) -> None:
    assert run(["--bundle", str(bundle.root), *argv]) == 2
