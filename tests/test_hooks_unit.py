"""In-process pieces of ouro.hooks: stdin parsing, per-host output shapes,
clipping, session file names, the packet diff and the Stop debt text."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, InvalidInput
from ouro.hooks import budget, state
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.codex import HOST as CODEX
from ouro.hooks.common import (
    EVENTS,
    HookInput,
    Host,
    Options,
    Reply,
    clip,
    normalize_event,
    parse_input,
    run_hook,
    shape,
)
from ouro.hooks.handlers import HANDLERS, debt_message
from ouro.hooks.packet import changed_context, keyed_items, render_changes
from ouro.orient_types import OrientItem

FULL = Reply(context="packet", system_message="note", block_reason="owed")


def test_parse_input_keeps_only_what_ouro_needs_and_never_the_prompt() -> None:
    inp = parse_input(
        json.dumps(
            {
                "session_id": "s",
                "cwd": "/p",
                "hook_event_name": "UserPromptSubmit",
                "prompt": "secret",
                "turn_id": "t",
                "stop_hook_active": True,
                "extra": {"nested": 1},
            }
        )
    )
    assert inp == HookInput(
        event="UserPromptSubmit", session_id="s", cwd="/p", turn_id="t", stop_hook_active=True
    )
    assert "secret" not in repr(inp)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("  ", "empty"),
        ("nope", "not JSON"),
        ('"s"', "JSON object"),
        ('{"cwd": ["/p"]}', "'cwd' must be a string"),
        ('{"stop_hook_active": "yes"}', "'stop_hook_active' must be true/false"),
    ],
)
def test_parse_input_names_what_is_wrong(text: str, needle: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_input(text)
    assert needle in info.value.message


def test_normalize_event_accepts_common_spellings() -> None:
    assert normalize_event("session-start") == "SessionStart"
    assert normalize_event("user_prompt_submit") == "UserPromptSubmit"
    assert normalize_event("STOP") == "Stop"
    assert normalize_event("pre-tool-use") == "PreToolUse"
    assert normalize_event("Notification") is None


@pytest.mark.parametrize("h", [CLAUDE, CODEX], ids=["claude", "codex"])
def test_shape_keeps_only_what_each_event_accepts(h: Host) -> None:
    for event in ("SessionStart", "UserPromptSubmit"):
        assert shape(h, event, Reply(context="packet")) == {
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": "packet"}
        }
    # No additional context on PreCompact or Stop; block only on Stop; nothing on SessionEnd.
    assert shape(h, "PreCompact", FULL) == {"systemMessage": "note"}
    assert shape(h, "Stop", FULL) == {
        "decision": "block",
        "reason": "owed",
        "systemMessage": "note",
    }
    assert shape(h, "SessionEnd", FULL) is None
    assert shape(h, "UserPromptSubmit", Reply()) is None


def test_injected_context_is_clipped_to_the_host_limit() -> None:
    out = shape(CODEX, "SessionStart", Reply(context="line\n" * 2000))
    assert out is not None
    text = out["hookSpecificOutput"]["additionalContext"]
    assert budget.fits(text, budget.BUDGETS[("codex", "SessionStart")])
    assert text.endswith(budget.CUT_NOTE) and text.startswith("line\n")
    assert clip("short", 10) == "short"


def test_session_slug_is_file_safe() -> None:
    assert state.session_slug("019d036d-c7fa.72_x") == "019d036d-c7fa.72_x"
    assert state.session_slug(None) == "unknown-session"
    odd = state.session_slug("../../etc/passwd")
    assert odd.startswith("h-") and "/" not in odd
    assert state.session_slug("a" * 101).startswith("h-")


def _item(section: str, text: str, locator: str | None = None) -> OrientItem:
    return OrientItem(section, 1, text, locator)


def test_keys_ignore_the_event_count_and_the_last_event() -> None:
    one = [
        _item("status", "can continue: no (recorder ok, 3 events)", "arc/x.json"),
        _item("last event", "turn_accepted at 1"),
    ]
    two = [
        _item("status", "can continue: no (recorder ok, 4 events)", "arc/x.json"),
        _item("last event", "turn_accepted at 2"),
    ]
    from ouro.hooks.packet import hashes_of

    assert hashes_of(keyed_items(one)) == hashes_of(keyed_items(two))
    three = [_item("status", "can continue: yes (recorder ok, 4 events)", "arc/x.json")]
    assert hashes_of(keyed_items(three)) != hashes_of(keyed_items(one))


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(
    st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=30),
    st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=60),
)
def test_item_keys_are_the_json_saved_in_state_files(section: str, text: str) -> None:
    # keys are saved in the session's state file: a new spelling would report
    # every item as changed once, so they stay orjson's text of [section, id, n]
    keyed = keyed_items([_item(section, text, "desk/t.md"), _item(section, text, "desk/t.md")])
    assert [k for k, _ in keyed] == [
        orjson.dumps([section, "desk/t.md", n]).decode() for n in (0, 1)
    ]


def test_render_changes_shows_changed_items_and_what_went_away() -> None:
    from ouro.hooks.packet import hashes_of

    before = keyed_items(
        [
            _item("ask", "[current] old ask", "ev#1"),
            _item("claims", "cl-1 [asserted] a", "arc/claims/cl-1.json"),
            _item("gaps", "nextSafeAction: none recorded"),
        ]
    )
    after = keyed_items(
        [
            _item("ask", "[current] new ask", "ev#2"),
            _item("gaps", "nextSafeAction: none recorded"),
        ]
    )
    changed, gone = state.changed_keys(hashes_of(before), hashes_of(after))
    text = render_changes(after, changed, gone)
    assert text == (
        "# ouro: changed since this session's last orientation\n"
        "## ask\n"
        "- [current] new ask  [ev#2]\n"
        "## no longer listed\n"
        "- claims: arc/claims/cl-1.json\n"
    )


def test_changed_context_is_none_for_an_unchanged_bundle(bundle: Bundle) -> None:
    from ouro.hooks.packet import packet_context

    _, hashes = packet_context(bundle, budget=2500)
    assert changed_context(bundle, dict(hashes), budget=2500) == (None, hashes)


def test_debt_message_lists_due_obligations_and_names_unknown_stores() -> None:
    full = {
        "unverifiedClaimIds": [f"cl-{i}" for i in range(9)],
        "stores": {
            "claims": {
                "items": {
                    **{f"cl-{i}": {"status": "failed", "text": f"c{i}"} for i in range(7)},
                    # no check: asserted, and nothing the agent runs changes that
                    "cl-7": {"status": "asserted", "text": "c7"},
                    "cl-8": {"status": "asserted", "text": "c8"},
                }
            },
            "obligations": {
                "items": {
                    "ob-a": {"what": "late", "due": "2026-01-01"},
                    "ob-b": {"what": "today", "due": "2026-02-03"},
                    "ob-c": {"what": "later", "due": "2026-02-04"},
                    "ob-d": {"what": "undated"},
                }
            },
        },
    }
    text = debt_message(full, now="2026-02-03T10:00:00.000Z")
    assert text is not None
    assert "ouro: 7 claim(s) not verified:" in text
    assert "- cl-4 [failed] c4" in text and "cl-5 [" not in text and "cl-7" not in text
    assert "- … 2 more ('ouro claim list')" in text
    assert (
        "ouro: 2 obligation(s) due:\n- ob-a due 2026-01-01: late\n- ob-b due 2026-02-03: today"
        in text
    )
    assert "later" not in text and "undated" not in text
    unknown = {"unverifiedClaimIds": [], "stores": {"claims": {"error": "cannot list claims/"}}}
    assert debt_message(unknown, now="2026-02-03T10:00:00.000Z") == (
        "ouro: claims unknown (cannot list claims/)"
    )
    assert debt_message({"stores": {}}, now="2026-02-03T10:00:00.000Z") is None


def test_run_hook_fails_open_on_an_internal_error_and_reraises_under_debug(
    bundle: Bundle,
) -> None:
    def broken(*_: object) -> Reply:
        raise RuntimeError("boom")

    handlers = {**HANDLERS, "Stop": broken}
    stdin = json.dumps({"session_id": "s", "cwd": str(bundle.root)})
    env = {"XDG_STATE_HOME": str(bundle.root.parent / "xdg")}
    out = run_hook(CLAUDE, "Stop", stdin, bundle_path=None, env=env, handlers=handlers)
    notice = json.loads(out.stdout)["systemMessage"]
    assert "internal error RuntimeError: boom" in notice
    assert out.stderr == [
        "ouro hook claude Stop: nothing injected: internal error RuntimeError: boom "
        "(rerun with OURO_DEBUG=1 for the traceback)"
    ]
    with pytest.raises(RuntimeError):
        run_hook(
            CLAUDE, "Stop", stdin, bundle_path=None, env={"OURO_DEBUG": "1"}, handlers=handlers
        )


def test_a_failed_step_warns_but_the_packet_is_still_injected(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ouro.errors import LockTimeout
    from ouro.sentinel import receipts

    def held(*_: object, **__: object) -> None:
        raise LockTimeout("sentinel lock held by pid 42", hint="wait and retry")

    monkeypatch.setattr(receipts, "refresh", held)
    stdin = json.dumps({"session_id": "s", "cwd": str(bundle.root), "source": "resume"})
    out = run_hook(CODEX, "SessionStart", stdin, bundle_path=None, env={}, handlers=HANDLERS)
    assert out.stderr == [
        "ouro hook codex SessionStart: sentinel not refreshed: sentinel lock held by pid 42 "
        "(hint: wait and retry)"
    ]
    assert orjson.loads(out.stdout)["hookSpecificOutput"]["additionalContext"].startswith(
        "# orient"
    )


def test_every_event_has_a_handler_and_options_default_to_the_codex_budget() -> None:
    assert set(HANDLERS) == set(EVENTS) | {"PostToolUse", "PostToolUseFailure", "PreToolUse"}
    assert Options().budget <= 2500 and Options().block_on_debt is False


def test_state_save_and_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "state/hooks/claude-s.json"
    state.save(
        path,
        host="claude",
        session_id="s",
        hashes={"k": "sha256:x"},
        event="Stop",
        injected=False,
        previous={"injectedAt": "earlier"},
    )
    data = state.load(path)
    assert data is not None
    assert data["items"] == {"k": "sha256:x"} and data["injectedAt"] == "earlier"
    assert data["fingerprint"] == state.fingerprint({"k": "sha256:x"})
    assert state.load(tmp_path / "missing.json") is None


def test_state_head_is_read_without_the_items_and_the_items_are_checked_when_read(
    tmp_path: Path,
) -> None:
    """``items`` is saved last: ``load(items=False)`` is every other key, parsed
    without the item hashes; damaged items are still refused by the whole read."""
    path = tmp_path / "state/hooks/claude-s.json"
    hashes = {'["claims","cl-1",0]': "sha256:a", 'k,"items":{': "sha256:b"}
    # a name holding the separator's text before the items: escaped, never a cut
    basis = {"version": 3, "arc": "blake2b:x", "files": {'desk/a,"items":{"b': "1:2:3:4"}}
    state.save(path, host="claude", session_id="s", hashes=hashes, event="UserPromptSubmit",
               injected=True, previous=None, basis=basis)  # fmt: skip
    whole = state.load(path)
    assert whole is not None and whole["items"] == hashes
    assert json.loads(path.read_bytes()) == whole  # still one JSON object
    head = state.load(path, items=False)
    assert head == {k: v for k, v in whole.items() if k != "items"}
    path.write_bytes(path.read_bytes().replace(b'"sha256:a"', b'"sha256:a'))  # torn items
    assert state.load(path, items=False) == head
    with pytest.raises(CorruptFile):
        state.load(path)
    # the layout before items went last (keys sorted): read whole, items included
    path.write_bytes(orjson.dumps(whole, option=orjson.OPT_SORT_KEYS))
    assert state.load(path, items=False) == whole
    path.write_text("{torn")
    with pytest.raises(CorruptFile):
        state.load(path, items=False)


# --- the host's transcript: which file ouro reads -----------------------------------


@pytest.mark.parametrize(
    ("value", "kept"),
    [("/h/.claude/projects/p/s.jsonl", True), (5, False), ("a\x00b", False), ("x" * 5000, False)],
)
def test_parse_input_keeps_a_plain_transcript_path_only(value: object, kept: bool) -> None:
    inp = parse_input(json.dumps({"session_id": "s", "transcript_path": value}))
    assert inp.transcript_path == (value if kept else None)


SID = "01a23359-a0b3-7b02-a653-9eb1fc443ee7"


@pytest.mark.parametrize(
    ("host", "rel", "ok"),
    [
        ("claude", f".claude/projects/-home-dev-proj/{SID}.jsonl", True),
        ("claude", f".claude/projects/{SID}.jsonl", False),  # no project folder
        ("claude", f".claude/projects/a/b/{SID}.jsonl", False),  # one level too deep
        ("claude", ".claude/projects/-home-dev-proj/other-session.jsonl", False),
        ("claude", f".claude/projects/x/../y/{SID}.jsonl", False),  # not normalised
        ("claude", f"elsewhere/{SID}.jsonl", False),
        ("codex", f".codex/sessions/2026/12/01/rollout-2026-12-01T20-44-01-{SID}.jsonl", True),
        ("codex", f".codex/sessions/2026/12/rollout-2026-12-01T20-44-01-{SID}.jsonl", False),
        ("codex", ".codex/sessions/2026/12/01/rollout-2026-12-01T20-44-01-other.jsonl", False),
        ("codex", f".codex/sessions/2026/12/01/{SID}.jsonl", False),
        ("codex", f".codex/archived/2026/12/01/rollout-2026-12-01T20-44-01-{SID}.jsonl", False),
    ],
)
def test_only_the_hosts_own_session_file_is_trusted(
    tmp_path: Path, host: str, rel: str, ok: bool
) -> None:
    from ouro.hooks.transcript import trusted_path

    path = str(tmp_path / rel) if "/../" not in rel else f"{tmp_path}/{rel}"
    found, why = trusted_path(host, path, SID, {"HOME": str(tmp_path)})
    assert (found is not None) == ok, why
    assert ok or why
    assert trusted_path(host, "relative/path.jsonl", SID, {"HOME": str(tmp_path)})[0] is None


def test_the_hosts_folder_follows_its_environment(tmp_path: Path) -> None:
    from ouro.hooks.transcript import host_folder, trusted_path

    env = {
        "HOME": "/nowhere",
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "cx"),
    }
    assert host_folder("claude", env) == str(tmp_path / "cc" / "projects")
    assert host_folder("codex", env) == str(tmp_path / "cx" / "sessions")
    path = tmp_path / "cc" / "projects" / "p" / f"{SID}.jsonl"
    assert trusted_path("claude", str(path), SID, env)[0] == str(path)
    # a symbolic link anywhere below the host's folder is refused
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cc" / "projects").mkdir(parents=True)
    (tmp_path / "cc" / "projects" / "p").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / f"{SID}.jsonl").write_text("{}\n")
    found, why = trusted_path("claude", str(path), SID, env)
    assert found is None and "symbolic link" in why
