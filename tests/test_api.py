"""ouro.api: the one dispatcher (policy, names, errors) and the library's contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ouro
from ouro.errors import InvalidInput, NotFound, ToolDenied
from tests.conftest import snapshot


@pytest.fixture
def b(tmp_path: Path) -> ouro.Bundle:
    return ouro.init(tmp_path / "a.ouro", agent="ann")


def test_import_ouro_is_cheap_and_exposes_the_library_lazily() -> None:
    code = (
        "import sys, ouro\n"
        "before = 'ouro.api' in sys.modules\n"
        "ouro.open, ouro.init, ouro.Bundle, ouro.call\n"
        "print(before, 'ouro.api' in sys.modules, 'pydantic' in sys.modules, ouro.__version__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False", ouro.__version__]
    with pytest.raises(AttributeError):
        _ = ouro.no_such_thing  # type: ignore[attr-defined]


def test_call_enforces_the_habit_session_policy(
    b: ouro.Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OURO_GRANTED_TOOLS", "info,consult_diary")
    monkeypatch.setenv("OURO_DENIED_TOOLS", "diary_write")
    before = snapshot(b.root)
    with pytest.raises(ToolDenied, match="tool diary_write is denied"):
        ouro.call("diary_write", b, {"text": "a fact"})
    assert snapshot(b.root) == before  # refused before anything was written
    assert ouro.call("info", b, {})["agent"] == "ann"
    assert ouro.call("consult_diary", b, {})["total"] == 0


def test_call_names_the_tool_in_input_errors_and_refuses_odd_arguments(b: ouro.Bundle) -> None:
    with pytest.raises(InvalidInput) as caught:
        ouro.call("desk_task_add", b, {"track": "t"})
    assert caught.value.message == "desk_task_add: title: required"
    assert caught.value.hint == (
        "'ouro desk task add --help' lists the fields (MCP: the desk_task_add input schema)"
    )
    for odd in ({"self": 1}, ["text"], {1: "x"}):
        with pytest.raises(InvalidInput, match="arguments must be an object"):
            ouro.call("diary_write", b, odd)  # type: ignore[arg-type]
    with pytest.raises(NotFound, match="no tool named 'diary_search'"):
        ouro.call("diary_search", b, {})


def test_call_and_the_method_are_one_path(b: ouro.Bundle) -> None:
    """The same verb by name and by method: same validation, same result shape."""
    by_name = ouro.call("desk_track_add", b.folder, {"name": "t"})  # a low-level bundle works too
    by_method = b.desk.track.add("t")
    assert by_name["locator"] == by_method["locator"] and by_method["created"] is False


def test_desk_writes_keep_the_index_and_heads_current(b: ouro.Bundle) -> None:
    b.desk.search("anything")  # build the index
    task = b.desk.task.add(b.desk.track.add("t")["track"], "find me by tokenizer")["task"]
    assert [r["locator"] for r in b.desk.search("tokenizer")["results"]] == [task["locator"]]
    assert [t["id"] for t in b.desk.ready()["ready"]] == [task["id"]]


def test_a_refresh_failure_is_a_warning_and_the_write_stands(
    b: ouro.Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.index import sync

    b.desk.search("anything")

    def broken(*_args: Any, **_kw: Any) -> None:
        from ouro.notices import warn

        warn("the search index could not be refreshed (test)")

    monkeypatch.setattr(sync, "touch_paths", broken)
    written = b.diary.write("the train leaves on Fridays")
    assert "the search index could not be refreshed (test)" in written["warnings"]
    assert (b.root / written["locator"].split("#")[0]).is_file()


def test_library_calls_are_validated_like_tool_calls(b: ouro.Bundle) -> None:
    with pytest.raises(InvalidInput, match=r"^limit: must be at most 100"):
        b.desk.search("x", limit=101)
    with pytest.raises(InvalidInput, match=r"^kind\[0\]: must be one of"):
        b.desk.search("x", kind=["tasks"])
    with pytest.raises(InvalidInput, match=r"^names\[0\]: must be one of"):
        b.drill(["no-such-drill"])
    with pytest.raises(InvalidInput, match=r"^stop_before\[0\]: must not be empty"):
        b.arc.next("go", stop_before=[" "])


def test_open_finds_the_bundle_like_the_cli(tmp_path: Path) -> None:
    from ouro.errors import BundleNotFound

    made = ouro.init(tmp_path / "x.ouro")
    assert ouro.open(cwd=tmp_path, env={}).root == made.root
    assert ouro.open(env={"OURO_BUNDLE": str(made.root)}, cwd=tmp_path / "x.ouro").root == made.root
    with pytest.raises(BundleNotFound):
        ouro.open(tmp_path / "nowhere")
