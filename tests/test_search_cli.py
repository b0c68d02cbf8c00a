"""The search verbs on the command line: what they print, their errors, what they import."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.cli.run import run
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


#: cases that end in an error (a usage error: exit 2, the error as JSON)
ERRORS = [["desk", "search", "*", "--json"]]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) for c in CASES])
def test_search_cases_print_their_results(
    filled: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["--bundle", str(filled.root), *argv])
    out = capsys.readouterr().out
    if argv in ERRORS:
        assert code == 2 and '"error"' in out
    else:
        assert code == 0 and out
        if "--json" in argv:
            assert '"results"' in out


@pytest.mark.parametrize(
    "argv",
    [
        ["desk", "search", "a", "b"],
        ["desk", "search", "x", "--kind", "nonsense"],
        ["desk", "search", "x", "--limit", "0"],
        ["desk", "search", "x", "--limit", "many"],
        ["desk", "search", "x", "--bogus"],
        ["facts", "search", "x", "--history"],
    ],
    ids=" ".join,
)
def test_bad_search_lines_are_usage_errors(
    filled: Bundle, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["--bundle", str(filled.root), "--json", *argv]) == 2
    assert '"exitCode":2' in capsys.readouterr().out


def test_a_missing_bundle_is_unusable(bundle: Bundle) -> None:
    missing = ["--bundle", str(bundle.root / "nope"), "--json", "desk", "search", "x"]
    proc = run_ouro(*missing)
    assert proc.returncode == 3 and "bundle_not_found" in proc.stdout


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bundle.json", b"not json"),
        ("bundle.json", b"[1, 2]"),
        ("bundle.json", b'{"layout": NaN}'),
        ("bundle.json", b"\xff\xfe{}"),
        ("journal", None),  # the legacy layout: Bundle.open refuses it
    ],
)
def test_a_bundle_that_cannot_be_opened_is_refused(
    bundle: Bundle, name: str, content: bytes | None
) -> None:
    target = bundle.root / name
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    proc = run_ouro("--json", "desk", "search", "x", bundle=bundle)
    assert proc.returncode == 3 and '"error"' in proc.stdout


def test_search_finds_the_bundle_from_a_linked_project(
    bundle: Bundle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    monkeypatch.chdir(project)
    assert run_ouro("init", str(bundle.root), "--link").returncode == 0
    monkeypatch.chdir(project / "src")
    assert ouro_json("desk", "search", "x")["total"] == 0


def test_a_habit_tool_policy_refuses_a_denied_search(filled: Bundle) -> None:
    proc = run_ouro(
        "--json",
        "desk",
        "search",
        "parser",
        bundle=filled,
        env={"OURO_DENIED_TOOLS": "desk_search"},
    )
    assert proc.returncode == 1 and "tool_denied" in proc.stdout


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_cli_search_does_not_import_click_or_pydantic(filled: Bundle, mode: str) -> None:
    from ouro.index.semantic import available

    if mode == "hybrid" and not available():
        pytest.skip("ouro-bundle[semantic] is not installed")
    time.sleep(0.12)  # let the folders age past the racy window ...
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
            "--mode",
            mode,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    modules = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    heavy: tuple[str, ...] = (
        "click",
        "pydantic",
        "yaml",
    )
    if mode == "lexical":  # the semantic model's packages, and what a cold start avoids
        heavy += ("numpy", "tokenizers", "dataclasses", "inspect", "orjson")
    assert not {m for m in modules if m.split(".")[0] in heavy}
    assert '"results"' in proc.stdout
    assert (f'"mode":"{mode}"' in proc.stdout) == (mode == "hybrid")


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
