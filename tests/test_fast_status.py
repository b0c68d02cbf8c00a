"""``ouro index status`` and ``ouro info`` on the CLI fast path ≡ the click commands."""

from __future__ import annotations

import pytest

from ouro.bundle import Bundle
from ouro.cli import fast
from ouro.cli.app import run
from ouro.desk.record import FactDraft, write_fact
from ouro.index.sync import rebuild

FORMS = [
    ["index", "status"],
    ["index", "status", "--json"],
    ["--json", "index", "status"],
    ["index", "--json", "status"],
]


def _same(bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    full = ["--bundle", str(bundle.root), *argv]
    assert fast.parse_index_status(full) is not None
    fast_code = fast.try_run(full)
    fast_out = capsys.readouterr()
    click_code = run(full)
    click_out = capsys.readouterr()
    assert (fast_code, fast_out.out, fast_out.err) == (click_code, click_out.out, click_out.err)
    assert fast_code == 0
    return fast_out.out


@pytest.mark.parametrize("argv", FORMS, ids=" ".join)
def test_status_prints_what_the_click_command_prints(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert "missing" in _same(bundle, argv, capsys)
    write_fact(bundle, FactDraft("the staging host is web-3", about=["staging"]))
    rebuild(bundle)
    assert "fact 1" in _same(bundle, argv, capsys).replace('"fact":1', "fact 1")
    (bundle.root / "desk" / "_record" / "notes").mkdir(parents=True, exist_ok=True)
    (bundle.root / "desk" / "_record" / "notes" / "x.md").write_text("# x\n\nhand-written\n")
    assert "stale" in _same(bundle, argv, capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["index", "status", "extra"],
        ["index", "status", "-h"],
        ["--verbose", "index", "status"],
        ["index", "sync"],
        ["status"],
        ["--bundle", "", "index", "status"],
    ],
    ids=" ".join,
)
def test_other_lines_are_left_to_the_click_path(bundle: Bundle, argv: list[str]) -> None:
    line = argv if argv[:1] == ["--bundle"] else ["--bundle", str(bundle.root), *argv]
    assert fast.parse_index_status(line) is None


INFO = [["info"], ["info", "--json"], ["--json", "info"]]


@pytest.mark.parametrize("argv", INFO, ids=" ".join)
def test_info_prints_what_the_click_command_prints(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    full = ["--bundle", str(bundle.root), *argv]
    write_fact(bundle, FactDraft("the staging host is web-3", about=["staging"]))
    for _ in range(2):  # without and with an index
        assert fast.parse_index_status(full, ("info",)) is not None
        fast_code = fast.try_run(full)
        fast_out = capsys.readouterr()
        click_code = run(full)
        click_out = capsys.readouterr()
        assert (fast_code, fast_out.out, fast_out.err) == (click_code, click_out.out, click_out.err)
        assert fast_code == 0 and "tester" in fast_out.out
        rebuild(bundle)


@pytest.mark.parametrize(
    "argv", [["info", "x"], ["info", "--verbose"], ["--verbose", "info"], ["info", "-h"]]
)
def test_other_info_lines_are_left_to_the_click_path(bundle: Bundle, argv: list[str]) -> None:
    assert fast.parse_index_status(["--bundle", str(bundle.root), *argv], ("info",)) is None
