"""``--bundle`` and ``--json`` mean the same anywhere on the line."""

from __future__ import annotations

import json

import pytest

from ouro.bundle import Bundle
from ouro.cli.argv import hoist_globals
from ouro.cli.run import run


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
def test_globals_anywhere(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    line = [a.replace("{b}", str(bundle.root)) for a in argv]
    assert run(line) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["canContinue"] is False


def test_bundle_after_the_verb_of_a_search(
    bundle: Bundle, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["desk", "search", "x", "--bundle", str(bundle.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 0


def test_a_lone_bundle_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--json", "--bundle"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert (error["type"], error["exitCode"]) == ("usage", 2)
    assert "--bundle" in error["message"]


def test_after_the_separator_nothing_is_an_option(
    bundle: Bundle, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--bundle", str(bundle.root), "--json", "arc", "note", "--", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["event"]["summary"] == "--json"
