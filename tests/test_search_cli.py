"""The search verbs on the command line: fast path ≡ click path, start-up cost."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


#: cases that end in an error: the fast path steps aside and click prints it
ERRORS = [["desk", "search", "*", "--json"]]


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
    if argv in ERRORS:
        assert (fast_code, fast_out) == (None, "")
        assert click_code == 2 and '"error"' in click_out
    else:
        assert (fast_code, fast_out) == (click_code, click_out)
        assert fast_code == 0 and fast_out


@pytest.mark.parametrize(
    "argv",
    [
        ["desk", "search", "--help"],
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


def test_fast_path_steps_aside_for_bundle_errors(
    bundle: Bundle, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = ["--bundle", str(bundle.root / "nope"), "--json", "desk", "search", "x"]
    assert fast.try_run(missing) is None
    assert capsys.readouterr().out == ""
    proc = run_ouro(*missing)  # the real entry point: fast path, then click
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
def test_fast_path_steps_aside_when_the_bundle_may_be_refused(
    bundle: Bundle, name: str, content: bytes | None
) -> None:
    target = bundle.root / name
    if content is None:
        target.mkdir()
    else:
        target.write_bytes(content)
    assert fast.locate(str(bundle.root)) is None
    proc = run_ouro("--json", "desk", "search", "x", bundle=bundle)
    assert proc.returncode == 3 and '"error"' in proc.stdout


def test_fast_path_finds_the_bundle_like_bundle_locate(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.bundle import Bundle as B

    inner = bundle.root / "desk" / "_record"
    monkeypatch.chdir(inner)
    assert fast.locate(None) == str(B.locate().root)
    monkeypatch.setenv("OURO_BUNDLE", str(bundle.root))
    monkeypatch.chdir(bundle.root.parent)
    assert fast.locate(None) == str(B.locate().root)
    assert fast.locate(bundle.root.name) == str(B.locate(bundle.root.name).root)
    monkeypatch.delenv("OURO_BUNDLE")
    assert fast.locate(None) is None  # nothing upwards: click says "no bundle found"


@pytest.mark.parametrize("variable", ["OURO_GRANTED_TOOLS", "OURO_DENIED_TOOLS"])
def test_a_habit_tool_policy_sends_search_through_the_full_cli(
    filled: Bundle, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.habits import policy

    assert (policy.ENV_GRANTED, policy.ENV_DENIED) == fast.POLICY_ENV
    argv = ["--bundle", str(filled.root), "desk", "search", "parser", "--json"]
    monkeypatch.setenv(variable, "")
    assert fast.try_run(argv) is None  # ouro.tools.invoke checks the policy there


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(-1e6, 1e6, allow_nan=False).map(lambda f: round(f, 4))
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_fast_json_is_byte_identical_to_orjson(value: object) -> None:
    from ouro.cli.output import to_json_line

    try:
        expected = to_json_line(value)
    except TypeError:  # orjson refuses lone surrogates; search results never hold them
        return
    assert fast.dumps(value) == expected


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_cli_search_does_not_import_click_or_pydantic(filled: Bundle, mode: str) -> None:
    from ouro.index.semantic import available

    if mode == "hybrid" and not available():
        pytest.skip("ouro[semantic] is not installed")
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
    heavy = ("click", "pydantic", "yaml", "orjson")
    if mode == "lexical":  # numpy (hybrid) needs these; a lexical search does not
        heavy += ("pathlib", "dataclasses", "typing", "hashlib", "numpy", "tokenizers")
    assert not {m for m in modules if m.split(".")[0] in heavy}
    assert "ouro.bundle" not in modules
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
