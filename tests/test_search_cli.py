"""The search verbs on the command line: fast path ≡ click path, start-up cost."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ouro.bundle import Bundle
from ouro.cli import fast
from ouro.cli.app import run
from ouro.index.sync import sync
from tests.conftest import ouro_json, run_ouro
from tests.index_support import append_fact, write_note, write_task

CASES = [
    ["desk", "search", "parser", "--json"],
    ["--json", "desk", "search", "parser", "--kind", "task", "--kind=note", "--limit", "5"],
    ["desk", "search", "parser", "--track", "rel", "--status", "open", "--json"],
    ["desk", "search", '"release notes"', "--json"],
    ["desk", "search", "parser"],
    ["desk", "search", "*", "--json"],
    ["desk", "search", "--json", "--", "-parser"],
    ["diary", "consult", "--json"],
    ["diary", "consult", "short", "--history", "--json"],
    ["diary", "consult", "--about", "ari", "--since", "2026-01-01", "--json"],
    ["facts", "search", "ari", "--about", "ari", "--json"],
    ["notes", "consult", "deploy", "--tag", "release", "--json"],
    ["notes", "consult", "deploy"],
]


@pytest.fixture
def filled(bundle: Bundle) -> Bundle:
    write_task(bundle, "rel", "parser", "Ship the parser", "Parsers parse release notes.")
    write_note(bundle, "howto", "How the release works", "Deploy on fridays.", ["release"])
    append_fact(bundle, "f-1", "Ari prefers short replies", ["ari"])
    append_fact(bundle, "f-2", "Ari prefers very short replies", ["ari"], supersedes="f-1")
    sync(bundle)
    return bundle


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) for c in CASES])
def test_fast_path_and_click_path_print_the_same(
    filled: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    full = ["--bundle", str(filled.root), *argv]
    assert fast.parse(full) is not None
    fast_code = fast.try_run(full)
    fast_out = capsys.readouterr().out
    click_code = run(full)
    click_out = capsys.readouterr().out
    assert (fast_code, fast_out) == (click_code, click_out)
    assert fast_out


@pytest.mark.parametrize(
    "argv",
    [
        ["desk", "search", "--help"],
        ["desk", "search"],
        ["desk", "search", "a", "b"],
        ["desk", "search", "x", "--kind", "nonsense"],
        ["desk", "search", "x", "--limit", "0"],
        ["desk", "search", "x", "--track", "a", "--track", "b"],
        ["desk", "search", "x", "--bogus"],
        ["facts", "search", "x", "--history"],
        ["desk", "task", "list"],
        ["--version"],
        [],
    ],
)
def test_anything_unusual_falls_through_to_click(argv: list[str]) -> None:
    assert fast.parse(argv) is None


def test_fast_path_errors_match_click(bundle: Bundle, capsys: pytest.CaptureFixture[str]) -> None:
    missing = ["--bundle", str(bundle.root / "nope"), "--json", "desk", "search", "x"]
    assert fast.try_run(missing) == 1
    fast_out = capsys.readouterr().out
    assert run(missing) == 1
    assert capsys.readouterr().out == fast_out
    assert "bundle_not_found" in fast_out


def test_cli_search_does_not_import_click_or_pydantic(filled: Bundle) -> None:
    time.sleep(0.1)  # let the folders age past the racy window ...
    sync(filled)  # ... so this search needs no sync (which would load YAML)
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "ouro.cli",
            "--bundle",
            str(filled.root),
            "desk",
            "search",
            "x",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert not {m for m in modules if m.split(".")[0] in ("click", "pydantic", "yaml")}
    assert '"results"' in proc.stdout


def test_index_commands(filled: Bundle) -> None:
    assert ouro_json("index", "status", bundle=filled)["counts"]["task"] == 1
    rebuilt = ouro_json("index", "rebuild", bundle=filled)
    assert rebuilt["state"] == "fresh" and rebuilt["factsAdded"] == 2
    synced = ouro_json("index", "sync", bundle=filled)
    assert synced["factsAdded"] == 0
    text = run_ouro("index", "status", bundle=filled, check=True).stdout
    assert text.startswith("index: ")
    hits = ouro_json("desk", "search", "parser", bundle=filled)
    assert hits["results"][0]["locator"] == "desk/rel/parser/task.md"
