"""Bad input at the edges (CLI argv, MCP arguments, hook stdin) and the limits
of docs/concepts.md: refused with the field named, nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ouro import edge
from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.desk import notes
from ouro.errors import InvalidInput, OuroError
from ouro.hooks.common import parse_input
from ouro.store import frontmatter
from tests.conftest import snapshot


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("arc_ask", {"text": "fix \ud800 it"}, "text"),
        ("arc_note", {"text": "a\x00b"}, "text"),
        ("notes_write", {"title": "a\x00b", "body": "x"}, "title"),
        ("desk_task_show", {"task": "ops/a\x00b"}, "task"),
        ("diary_write", {"text": "ok", "about": ["x\udcff"]}, "about[0]"),
        ("arc_ask", {"text": "a" * (edge.ARC_TEXT + 1)}, "text"),
        ("obligation_add", {"what": "w" * 10_000_000, "to": "ari"}, "what"),
        ("notes_write", {"title": "big", "body": "b" * (edge.NOTE_BODY + 1)}, "body"),
        ("desk_tip_add", {"title": "t", "tags": ["x"] * 1000}, "tags"),
    ],
)
def test_bad_text_is_refused_naming_the_field(
    bundle: Bundle, tool: str, args: dict[str, object], field: str
) -> None:
    before = snapshot(bundle.root)
    with pytest.raises(InvalidInput) as err:
        invoke(tool, bundle, args)
    assert err.value.message.startswith(f"{tool}: {field}:")
    err.value.message.encode("utf-8")  # printable and sendable: never echoes a surrogate
    assert snapshot(bundle.root) == before


def test_a_note_body_just_under_its_limit_is_accepted(bundle: Bundle) -> None:
    invoke("notes_write", bundle, {"title": "big", "body": "b" * 200_000})


def _cli(bundle: Bundle, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "OURO_DEBUG"}
    argv: list[str | bytes] = [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root)]
    return subprocess.run([*argv, *args], capture_output=True, env=env, timeout=60)


def test_invalid_utf8_in_argv_is_a_clear_error(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    proc = _cli(bundle, "arc", "ask", b"fix \xff\xfe it")
    assert proc.returncode == 2  # a usage error (docs/cli.md exit codes)
    assert b"Traceback" not in proc.stderr
    assert b"command-line argument 5: not valid UTF-8" in proc.stderr
    proc = _cli(bundle, "--json", "desk", "search", b"\xc3(")
    assert proc.returncode == 2 and b'"invalid_input"' in proc.stdout
    assert snapshot(bundle.root) == before


def test_hook_stdin_with_nul_names_the_field() -> None:
    with pytest.raises(InvalidInput, match="'session_id'"):
        parse_input('{"session_id": "a\\u0000b", "hook_event_name": "Stop"}')


# --- notes never collide ------------------------------------------------------------


def test_titles_that_slug_alike_never_overwrite_each_other(bundle: Bundle) -> None:
    invoke("notes_write", bundle, {"title": "C tips", "body": "use -Wall\n"})
    second = invoke("notes_write", bundle, {"title": "C++ tips", "body": "use RAII\n"})
    assert second["created"] and second["slug"] == "c-tips-2"
    folder = notes.notes_dir(bundle)
    assert frontmatter.parse((folder / "c-tips.md").read_text())[1] == "use -Wall\n"
    # writing "C++ tips" again updates its own file, not the other
    again = invoke("notes_write", bundle, {"title": "C++ tips", "body": "use RAII and\n"})
    assert again["slug"] == "c-tips-2" and not again["created"]
    assert frontmatter.parse((folder / "c-tips.md").read_text())[1] == "use -Wall\n"
    titles = {e["slug"]: e["title"] for e in notes.read_manifest(bundle) or []}
    assert titles == {"c-tips": "C tips", "c-tips-2": "C++ tips"}


def test_a_full_width_title_is_normalised_and_kept(bundle: Bundle) -> None:
    invoke("notes_write", bundle, {"title": "Release Checklist", "body": "tag, push\n"})
    wide = invoke(
        "notes_write", bundle, {"title": "ＲＥＬＥＡＳＥ　ＣＨＥＣＫＬＩＳＴ", "body": "x\n"}
    )
    assert wide["slug"] == "release-checklist-2"
    folder = notes.notes_dir(bundle)
    assert "tag, push" in (folder / "release-checklist.md").read_text()
    titles = {e["slug"]: e["title"] for e in notes.read_manifest(bundle) or []}
    assert titles["release-checklist-2"] == "ＲＥＬＥＡＳＥ　ＣＨＥＣＫＬＩＳＴ"
    # the same title in NFKC-equal spelling is the same note
    same = invoke(
        "notes_write", bundle, {"title": "ＲＥＬＥＡＳＥ ＣＨＥＣＫＬＩＳＴ", "body": "y\n"}
    )
    assert same["slug"] == "release-checklist-2" and not same["created"]


# --- small refusals ----------------------------------------------------------------


def test_a_since_that_is_not_a_date_is_refused(bundle: Bundle) -> None:
    with pytest.raises(InvalidInput, match="since: 'garbage' is not a date"):
        invoke("consult_diary", bundle, {"since": "garbage"})
    with pytest.raises(InvalidInput, match="since"):
        invoke("consult_diary", bundle, {"since": "2026-02-30"})
    invoke("consult_diary", bundle, {"since": "2026-02-28"})


def test_task_references_name_one_task_exactly(bundle: Bundle) -> None:
    invoke("desk_track_add", bundle, {"name": "ops"})
    invoke("desk_task_add", bundle, {"track": "ops", "title": "fix login"})
    assert invoke("desk_task_show", bundle, {"task": "ops/fix-login"})["task"]["slug"]
    for ref in ("ops/fix\\login", "ops/Fix Login", "ops/../ops/fix-login"):
        with pytest.raises(InvalidInput, match=r"^task: "):
            invoke("desk_task_show", bundle, {"task": ref})


def test_friction_task_errors_talk_about_the_task(bundle: Bundle) -> None:
    with pytest.raises(OuroError) as err:
        invoke("desk_friction_add", bundle, {"title": "slow", "task": "../x"})
    assert err.value.message.startswith("task: ")


def test_a_string_history_is_kept_whole_on_update(bundle: Bundle) -> None:
    invoke("desk_track_add", bundle, {"name": "ops"})
    task = invoke("desk_task_add", bundle, {"track": "ops", "title": "fix login"})["task"]
    path = bundle.root / task["locator"]
    meta, body = frontmatter.parse(path.read_text())
    meta["history"] = "opened by hand"
    path.write_text(frontmatter.render(meta, body))
    invoke("desk_task_update", bundle, {"task": task["id"], "status": "done"})
    history = frontmatter.parse(path.read_text())[0]["history"]
    assert history[0] == "opened by hand" and len(history) == 2


def test_init_with_a_path_through_a_missing_folder_is_refused(tmp_path: Path) -> None:
    Bundle.init(tmp_path / "a.ouro")
    with pytest.raises(OuroError):
        Bundle.init(tmp_path / "nope" / ".." / "a.ouro")


def test_an_mcp_request_with_a_lone_surrogate_gets_an_error_reply(bundle: Bundle) -> None:
    """Raw stdio: the SDK cannot parse the line; the client must still get an answer."""
    import json
    import select

    proc = subprocess.Popen(
        [sys.executable, "-m", "ouro.cli", "mcp", "--bundle", str(bundle.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def ask(raw: bytes) -> dict[str, object]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, f"no reply to {raw!r}"
        reply: dict[str, object] = json.loads(proc.stdout.readline())
        return reply

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}  # fmt: skip
        ask(
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}).encode()
        )
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        before = snapshot(bundle.root)
        reply = ask(
            b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"arc_ask",'
            b'"arguments":{"text":"fix \\ud800 it"}}}'
        )
        assert reply["id"] == 7 and "lone surrogate" in str(reply["error"])
        assert snapshot(bundle.root) == before
        ok = ask(b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"info"}}')
        assert ok["id"] == 8 and "result" in ok  # and the server keeps serving
    finally:
        proc.stdin.close()
        proc.wait(30)


def test_limits_come_from_the_signatures() -> None:
    """The limits are declared once, on each verb's parameters (``P(limit=...)``)."""
    from ouro.registry import find
    from ouro.spec import spec_of

    def limit(tool: str, field: str) -> int:
        return next(p.limit for p in spec_of(find(tool).method()) if p.name == field)

    assert limit("diary_write", "text") == edge.FACT_TEXT
    assert limit("arc_ask", "text") == edge.ARC_TEXT
    assert limit("notes_write", "body") == edge.NOTE_BODY
    assert limit("desk_search", "query") == edge.SHORT


def test_a_repeated_fact_id_with_other_content_is_reported(bundle: Bundle) -> None:
    import orjson

    invoke("diary_write", bundle, {"text": "cats purr loudly", "about": ["cat"]})
    facts = bundle.record / "diary" / "facts.jsonl"
    twin = orjson.loads(facts.read_bytes().splitlines()[0])
    twin["text"] = "cats bark"
    with open(facts, "ab") as handle:
        handle.write(orjson.dumps(twin) + b"\n")
    warnings = invoke("diary_write", bundle, {"text": "dogs bark", "about": ["dog"]})["warnings"]
    assert any(f"repeats id {twin['id']} with other content" in w for w in warnings)
    assert b"cats bark" in facts.read_bytes()  # reported, and kept
