"""``ouro orient``'s fast path ≡ the click path, on a bundle with claims in
every status (the claim reader itself: ``tests/test_arc_readers.py``)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from ouro import tools
from ouro.arc.paths import claims_dir
from ouro.bundle import Bundle
from ouro.cli import fast
from ouro.cli.app import run


def _claims(bundle: Bundle) -> list[dict[str, Any]]:
    """Claims in every status, as their files hold them."""
    (bundle.root / "desk" / "seen.txt").write_text("v1")
    ids = []
    ids.append(tools.invoke("claim_add", bundle, {"text": "no check"})["id"])
    ids.append(tools.invoke("claim_add", bundle, {"text": "needs a run", "check": "true"})["id"])
    failed = tools.invoke("claim_add", bundle, {"text": "fails", "check": "make t"})["id"]
    tools.invoke(
        "claim_evidence", bundle, {"claim_id": failed, "command": "make t", "exit_code": 2}
    )
    ids.append(failed)
    said = tools.invoke("claim_add", bundle, {"text": "said", "check": "make u"})["id"]
    tools.invoke("claim_evidence", bundle, {"claim_id": said, "command": "make u", "exit_code": 0})
    ids.append(said)
    verified = tools.invoke(
        "claim_add", bundle, {"text": "v", "check": "true", "about": ["desk/seen.txt"]}
    )["id"]
    tools.invoke("claim_verify", bundle, {"claim_id": verified, "yes": True})
    ids.append(verified)
    gone = tools.invoke("claim_add", bundle, {"text": "gone", "about": ["desk/nothing.txt"]})
    ids.append(gone["id"])
    old = tools.invoke("claim_add", bundle, {"text": "old"})["id"]
    new = tools.invoke("claim_add", bundle, {"text": "new"})["id"]
    tools.invoke("claim_supersede", bundle, {"claim_id": old, "by": new})
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
def test_fast_orient_prints_what_the_click_path_prints(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _claims(bundle)
    full = ["--bundle", str(bundle.root), *argv]
    assert fast.parse_orient(full) is not None
    fast_code = fast.try_run(full)
    fast_out = capsys.readouterr().out
    click_code = run(full)
    click_out = capsys.readouterr().out
    assert (fast_code, fast_out) == (click_code, click_out)
    assert fast_code == 0 and "claim" in fast_out.lower()


@pytest.mark.parametrize(
    "argv",
    [["orient", "--budget", "100"], ["orient", "--verbose"], ["orient", "extra"], ["orient", "-h"]],
    ids=" ".join,
)
def test_fast_orient_steps_aside(bundle: Bundle, argv: list[str]) -> None:
    assert fast.parse_orient(["--bundle", str(bundle.root), *argv]) is None
