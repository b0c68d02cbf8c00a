"""``ouro diary write``'s CLI fast path (``ouro.cli.fast.run_write``) ≡ the click path:
same output, errors and exit codes, same lines written."""

from __future__ import annotations

import re
import shutil

import click
import pytest

from ouro import tools
from ouro.bundle import Bundle
from ouro.cli import fast
from ouro.cli.app import run
from ouro.cli.gen import tool_command
from ouro.desk.record import FactDraft, facts_path, read_entities, write_fact

SEEDED = "the staging host is web-3"


@pytest.fixture
def seeded(bundle: Bundle) -> Bundle:
    write_fact(bundle, FactDraft(SEEDED, about=["staging"]))
    return bundle


def _both(
    bundle: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[object, object]:
    full = ["--bundle", str(bundle.root), *argv]
    assert fast.parse_write(full) is not None
    fast_code = fast.try_run(full)
    fast_out = capsys.readouterr()
    click_code = run(full)
    click_out = capsys.readouterr()
    return (fast_code, fast_out.out, fast_out.err), (click_code, click_out.out, click_out.err)


REFUSED_OR_DEDUPED = [
    ["diary", "write", SEEDED, "--about", "staging"],  # exact duplicate: the existing fact
    ["diary", "write", SEEDED, "--about=staging", "--json"],
    ["diary", "write", "the staging host is web-3 today", "--about", "staging"],  # near
    ["--json", "diary", "write", "the staging host is web-3 today", "--about", "staging"],
    ["diary", "write", "x y z", "--supersedes", "f-nothere"],
    ["diary", "write", "x y z", "--supersedes", "f-01abcdefabcdefab", "--json"],
    ["diary", "write", ""],
    ["diary", "write", "a" * 4001],
    ["diary", "write", "ok", "--about", "x" * 300],
    ["diary", "write", "ok", "--source", "s" * 1001, "--json"],
]


@pytest.mark.parametrize("argv", REFUSED_OR_DEDUPED, ids=lambda a: " ".join(a)[:60])
def test_refusals_and_duplicates_print_what_the_click_path_prints(
    seeded: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = facts_path(seeded).read_bytes()
    got, want = _both(seeded, argv, capsys)
    assert got == want
    assert facts_path(seeded).read_bytes() == before  # nothing written by either


_ID = re.compile(r"f-[0-9a-z]{16,}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def _norm(text: str) -> str:
    return _TIME.sub("TIME", _ID.sub("f-ID", text))


WRITES = [
    ["diary", "write", "deploys happen on friday", "--about", "deploys", "--about", "ops"],
    ["diary", "write", "deploys happen on friday", "--json", "--source", "standup"],
    [
        "--json",
        "diary",
        "write",
        "the staging host is web-4",
        "--trust=told",
        "--channel",
        "chat",
        "--friend",
        "ari",
        "--friend-name",
        "Ari B",
        "--about",
        "staging",
        "--force",
    ],
]


@pytest.mark.parametrize("argv", WRITES, ids=lambda a: " ".join(a)[:60])
def test_a_write_prints_and_writes_what_the_click_path_does(
    seeded: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    twin = Bundle.open(shutil.copytree(seeded.root, seeded.root.with_name("twin.ouro")))
    fast_full = ["--bundle", str(seeded.root), *argv]
    assert fast.parse_write(fast_full) is not None
    fast_code = fast.try_run(fast_full)
    fast_out = capsys.readouterr()
    click_code = run(["--bundle", str(twin.root), *argv])
    click_out = capsys.readouterr()
    assert fast_code == click_code == 0
    assert fast_out.err == click_out.err
    assert _norm(fast_out.out) == _norm(click_out.out)
    assert _norm(facts_path(seeded).read_text()) == _norm(facts_path(twin).read_text())
    # (the file itself may lag by a few stamped lines: compare what ouro reads)
    assert _norm(str(read_entities(seeded))) == _norm(str(read_entities(twin)))


def test_a_supersede_through_the_fast_path(
    seeded: Bundle, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _ID.search(facts_path(seeded).read_text())
    assert old is not None
    argv = ["--bundle", str(seeded.root), "diary", "write", "the staging host is web-5"]
    assert fast.try_run([*argv, "--supersedes", old.group(), "--about", "staging"]) == 0
    assert f"(supersedes {old.group()})" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["diary", "write", "a", "b"],
        ["diary", "write"],
        ["diary", "write", "--help"],
        ["diary", "write", "x", "--source", "a", "--source", "b"],
        ["diary", "write", "--", "-x"],
        ["diary", "write", "-x"],
        ["--verbose", "diary", "write", "x"],
        ["diary", "write", "x", "--about"],
        ["diary", "write", "x", "--about", "--force"],
        ["diary", "write", "x", "--force=yes"],
        ["diary", "write", "x", "--colour", "red"],
        ["notes", "write", "x"],
        ["--config", "a=b", "diary", "write", "x"],
    ],
    ids=" ".join,
)
def test_unusual_lines_are_left_to_the_click_path(bundle: Bundle, argv: list[str]) -> None:
    assert fast.parse_write(["--bundle", str(bundle.root), *argv]) is None


def test_the_option_table_is_the_registry_command() -> None:
    command = tool_command(tools.get("diary_write"))
    options = {
        p.opts[0]: (p.name, not p.is_flag, p.multiple)
        for p in command.params
        if isinstance(p, click.Option) and p.name != "json_mode"
    }
    assert options == fast.WRITE_OPTIONS
    assert [p.name for p in command.params if isinstance(p, click.Argument)] == ["text"]
