"""``--bundle`` and ``--json`` mean the same anywhere on the line."""

from __future__ import annotations

import json

import pytest

from ouro.bundle import Bundle
from ouro.cli import fast
from ouro.cli.app import run
from ouro.cli.argv import hoist_globals


def test_hoist_moves_globals_to_the_front_and_stops_at_the_separator() -> None:
    assert hoist_globals(["arc", "note", "x", "--json", "--bundle", "b"]) == [
        "--json",
        "--bundle",
        "b",
        "arc",
        "note",
        "x",
    ]
    assert hoist_globals(["arc", "note", "--bundle=b"]) == ["--bundle=b", "arc", "note"]
    assert hoist_globals(["arc", "note", "--", "--json"]) == ["arc", "note", "--", "--json"]
    assert hoist_globals(["info", "--bundle"]) == ["--bundle", "info"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--bundle", "{b}", "--json", "arc", "resume"],
        ["arc", "resume", "--bundle", "{b}", "--json"],
        ["arc", "--json", "resume", "--bundle={b}"],
        ["--json", "arc", "resume", "--bundle", "{b}"],
    ],
)
def test_click_path_accepts_globals_anywhere(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    line = [a.replace("{b}", str(bundle.root)) for a in argv]
    assert run(line) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["canContinue"] is False


def test_fast_path_accepts_bundle_after_the_verb(
    bundle: Bundle, capsys: pytest.CaptureFixture[str]
) -> None:
    line = ["desk", "search", "x", "--bundle", str(bundle.root), "--json"]
    parsed = fast.parse(line)
    assert parsed is not None and parsed[0] == str(bundle.root) and parsed[1] is True
    assert fast.try_run(line) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0
