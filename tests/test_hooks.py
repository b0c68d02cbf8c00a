"""``ouro hook claude|codex EVENT`` through the real CLI, fed the fixtures in
tests/fixtures/hooks/<host>/<Event>.json: output shape per host and event,
silence when nothing changed, fail-open, and which files a hook may change."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import orjson
import pytest

from ouro.arc.claims import add_claim
from ouro.arc.obligations import add_obligation
from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.hooks.codex import HOST as CODEX
from ouro.hooks.common import run_hook
from ouro.hooks.handlers import HANDLERS
from tests.conftest import run_ouro, snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
HOSTS = ("claude", "codex")
EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd")
PROMPT_MARK = "PROMPT-TEXT-MUST-NOT-BE-STORED"


def fixture(host: str, event: str, **override: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / host / f"{event}.json").read_text())
    data.update(override)
    return data


def hook(
    host: str,
    event: str,
    bundle: Bundle | None,
    *extra: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    **override: Any,
) -> subprocess.CompletedProcess[str]:
    """Run one hook the way the host does: cwd field = the bundle (found by walking up)."""
    if stdin is None:
        if bundle is not None:
            override.setdefault("cwd", str(bundle.root / "desk"))
        stdin = json.dumps(fixture(host, event, **override))
    return run_ouro("hook", host, event, *extra, input=stdin, env=env)


def out_json(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("\n") and proc.stdout.count("\n") == 1, proc.stdout
    return json.loads(proc.stdout)


def events(bundle: Bundle) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for path in sorted((bundle.root / "arc/flight-recorder/events").glob("*.jsonl")):
        lines += [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return lines


def sentinel_history(bundle: Bundle) -> list[dict[str, Any]]:
    folder = bundle.root / "arc/flight-recorder/context-loss-sentinel/history"
    return [
        orjson.loads(line)
        for path in sorted(folder.glob("*.jsonl"))
        for line in path.read_bytes().splitlines()
        if line.strip()
    ]


def test_every_host_event_has_a_fixture_that_names_its_event() -> None:
    for host in HOSTS:
        for event in EVENTS:
            data = fixture(host, event)
            assert data["hook_event_name"] == event
            assert data["session_id"] and data["cwd"]


@pytest.mark.parametrize("host", HOSTS)
def test_session_start_records_refreshes_and_injects_the_packet(host: str, bundle: Bundle) -> None:
    proc = hook(host, "SessionStart", bundle)
    out = out_json(proc)
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "additionalContext"}
    assert spec["hookEventName"] == "SessionStart"
    context = spec["additionalContext"]
    assert context.startswith("# orient — tester\n")
    assert "## next safe action" in context and len(context) <= 2500
    session = fixture(host, "SessionStart")["session_id"]
    [started] = [e for e in events(bundle) if e["kind"] == "session_started"]
    assert started["sessionRef"] == f"{host}:{session}"
    assert started["meta"]["host"] == host and started["meta"]["source"] == "startup"
    assert [r["trigger"] for r in sentinel_history(bundle)] == ["session_start"]
    saved = orjson.loads((bundle.root / f"state/hooks/{host}-{session}.json").read_bytes())
    assert saved["lastEvent"] == "SessionStart" and saved["injectedAt"]
    assert proc.stderr == ""


@pytest.mark.parametrize("host", HOSTS)
def test_user_prompt_submit_is_silent_until_arc_changes_then_injects_only_the_change(
    host: str, bundle: Bundle
) -> None:
    out_json(hook(host, "SessionStart", bundle))
    idle = hook(host, "UserPromptSubmit", bundle)
    assert (idle.returncode, idle.stdout, idle.stderr) == (0, "", "")
    kinds = [e["kind"] for e in events(bundle)]
    assert kinds.count("turn_accepted") == 1

    record_event(bundle, "agent_note", "asked", current_ask="ship the hooks release")
    out = out_json(hook(host, "UserPromptSubmit", bundle))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert context.startswith("# ouro: changed since this session's last orientation\n")
    assert "ship the hooks release" in context
    assert "## obligations" not in context and "## claims" not in context  # unchanged parts

    again = hook(host, "UserPromptSubmit", bundle)
    assert (again.returncode, again.stdout) == (0, "")
    assert [e["kind"] for e in events(bundle)].count("turn_accepted") == 3


@pytest.mark.parametrize("host", HOSTS)
def test_prompt_text_is_never_stored(host: str, bundle: Bundle) -> None:
    hook(host, "SessionStart", bundle)
    hook(host, "UserPromptSubmit", bundle)
    for rel, (data, _) in snapshot(bundle.root).items():
        assert PROMPT_MARK.encode() not in data, rel


def test_user_prompt_submit_without_a_prior_injection_orients_in_full(bundle: Bundle) -> None:
    out = out_json(hook("codex", "UserPromptSubmit", bundle))
    assert out["hookSpecificOutput"]["additionalContext"].startswith("# orient — tester\n")
    [turn] = [e for e in events(bundle) if e["kind"] == "turn_accepted"]
    assert turn["turnId"] == fixture("codex", "UserPromptSubmit")["turn_id"]


@pytest.mark.parametrize("host", HOSTS)
def test_pre_compact_writes_checkpoint_and_receipt_and_prints_nothing(
    host: str, bundle: Bundle
) -> None:
    checkpoint = bundle.root / "arc/flight-recorder/latest.json"
    proc = hook(host, "PreCompact", bundle)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [ev] = events(bundle)
    assert ev["meta"] == {"host": host, "hostEvent": "PreCompact", "trigger": "auto"}
    assert orjson.loads(checkpoint.read_bytes())["lastEvent"]["id"] == ev["id"]
    assert len(sentinel_history(bundle)) == 1


@pytest.mark.parametrize("host", HOSTS)
def test_session_end_records_and_prints_nothing(host: str, bundle: Bundle) -> None:
    proc = hook(host, "SessionEnd", bundle)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    [ev] = events(bundle)
    reason = fixture(host, "SessionEnd")["reason"]
    assert ev["kind"] == "session_ended" and ev["meta"] == {"host": host, "reason": reason}


def _debt(bundle: Bundle) -> tuple[str, str]:
    claim = add_claim(bundle, "the login test passes", check="pytest -q tests/test_login.py")
    ob = add_obligation(
        bundle, "tell Ari the fix shipped", owed_to="ari", due=date.today().isoformat()
    )
    add_obligation(bundle, "someday", owed_to="ari", due="2999-01-01")
    return claim["id"], ob["id"]


@pytest.mark.parametrize("host", HOSTS)
def test_stop_is_silent_without_debt(host: str, bundle: Bundle) -> None:
    proc = hook(host, "Stop", bundle)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert events(bundle) == []


@pytest.mark.parametrize("host", HOSTS)
def test_stop_surfaces_unverified_claims_and_due_obligations(host: str, bundle: Bundle) -> None:
    claim_id, ob_id = _debt(bundle)
    out = out_json(hook(host, "Stop", bundle))
    assert set(out) == {"systemMessage"}
    message = out["systemMessage"]
    assert f"- {claim_id} [" in message and "the login test passes" in message
    assert f"- {ob_id} due {date.today().isoformat()}: tell Ari" in message
    assert "someday" not in message


@pytest.mark.parametrize("host", HOSTS)
def test_stop_blocks_only_with_block_on_debt_and_never_twice(host: str, bundle: Bundle) -> None:
    claim_id, _ = _debt(bundle)
    out = out_json(hook(host, "Stop", bundle, "--block-on-debt"))
    assert out["decision"] == "block" and claim_id in out["reason"]
    assert "ouro claim verify" in out["reason"] and claim_id in out["systemMessage"]
    looping = out_json(hook(host, "Stop", bundle, "--block-on-debt", stop_hook_active=True))
    assert set(looping) == {"systemMessage"}


@pytest.mark.parametrize("host", HOSTS)
def test_bundle_found_by_option_and_environment(host: str, bundle: Bundle, tmp_path: Path) -> None:
    elsewhere = str(tmp_path / "cwd")
    by_option = hook(
        host,
        "SessionEnd",
        None,
        "--bundle",
        str(bundle.root),
        stdin=json.dumps(fixture(host, "SessionEnd", cwd=elsewhere)),
    )
    by_env = hook(
        host,
        "SessionEnd",
        None,
        stdin=json.dumps(fixture(host, "SessionEnd", cwd=elsewhere)),
        env={"OURO_BUNDLE": str(bundle.root)},
    )
    assert by_option.stderr == by_env.stderr == ""
    assert [e["kind"] for e in events(bundle)] == ["session_ended", "session_ended"]


def _assert_fail_open(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    for needle in needles:
        assert needle in proc.stderr


def _assert_fails_visibly(proc: subprocess.CompletedProcess[str], event: str, *needles: str) -> str:
    """Exit 0, one stderr line, and the one-line notice for the user and the model."""
    assert proc.returncode == 0
    assert proc.stderr.count("\n") == 1, proc.stderr
    out = json.loads(proc.stdout)
    notice = out["systemMessage"]
    assert "\n" not in notice and len(notice) <= 400
    assert notice.startswith("ouro: ") and "ouro hook doctor" in notice
    if event in ("SessionStart", "UserPromptSubmit"):
        assert out["hookSpecificOutput"] == {"hookEventName": event, "additionalContext": notice}
    else:
        assert set(out) == {"systemMessage"}
    for needle in needles:
        assert needle in proc.stderr and needle in notice
    return notice


@pytest.mark.parametrize("host", HOSTS)
def test_fail_open_without_a_bundle(host: str, tmp_path: Path) -> None:
    proc = hook(
        host,
        "SessionStart",
        None,
        stdin=json.dumps(fixture(host, "SessionStart", cwd=str(tmp_path))),
    )
    assert proc.stderr.startswith(f"ouro hook {host} SessionStart: nothing injected")
    _assert_fails_visibly(proc, "SessionStart", "no ouro bundle")


def test_fail_open_on_a_legacy_bundle(bundle: Bundle) -> None:
    (bundle.root / "journal").mkdir()
    before = snapshot(bundle.root)
    _assert_fails_visibly(
        hook("claude", "SessionStart", bundle), "SessionStart", "old layout", "ouro migrate"
    )
    assert snapshot(bundle.root) == before


@pytest.mark.parametrize(
    ("stdin", "needle"),
    [
        ("", "stdin is empty"),
        ("[1, 2]", "must be a JSON object"),
        ('{"session_id": 7}', "'session_id' must be a string"),
        ('{"hook_event_name": "Stop"}', "hook_event_name='Stop'"),
    ],
)
def test_fail_open_on_bad_stdin(bundle: Bundle, stdin: str, needle: str) -> None:
    before = snapshot(bundle.root)
    out = run_hook(CODEX, "SessionStart", stdin, bundle_path=str(bundle.root), handlers=HANDLERS)
    assert len(out.stderr) == 1
    notice = json.loads(out.stdout)["systemMessage"]
    assert needle in notice
    assert out.stderr[0].startswith("ouro hook codex SessionStart: nothing injected: ")
    assert needle in out.stderr[0]
    assert snapshot(bundle.root) == before


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b'{"session_id": "big", "prompt": "' + b"x" * 8_000_001 + b'"}', "8,000,000 characters"),
        (b'\xff{"session_id": "bad"}', "not UTF-8 text"),
    ],
)
def test_fail_open_on_stdin_too_long_or_not_utf8_names_the_cause(
    bundle: Bundle, data: bytes, needle: str
) -> None:
    """The notice names why stdin could not be read, not "stdin is empty"."""
    before = snapshot(bundle.root)
    for host, event in (("claude", "UserPromptSubmit"), ("pi", "SessionStart")):
        proc = subprocess.run(
            [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "hook", host, event],
            input=data, capture_output=True, timeout=60,
        )  # fmt: skip
        text = subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
        )
        notice = _assert_fails_visibly(text, event, needle)
        assert "empty" not in notice, notice
    assert snapshot(bundle.root) == before


def test_a_field_of_the_wrong_type_is_told_once_per_session(bundle: Bundle, tmp_path: Path) -> None:
    """The session_id is valid though another field is not: the notice shows once."""
    stdin = json.dumps({"session_id": "rep1", "hook_event_name": "Stop", "stop_hook_active": "yes"})
    env = {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    first, second = (
        run_hook(CODEX, "Stop", stdin, bundle_path=str(bundle.root), env=env, handlers=HANDLERS)
        for _ in range(2)
    )
    assert "'stop_hook_active' must be true/false" in json.loads(first.stdout)["systemMessage"]
    assert second.stdout == "" and len(second.stderr) == 1
    assert "'stop_hook_active' must be true/false" in second.stderr[0]
    assert (tmp_path / "xdg/ouro/hook-notices/codex-rep1").is_file()
    # a session_id that is itself wrong: no session to mark, told every time
    bad = json.dumps({"session_id": 7})
    for _ in range(2):
        out = run_hook(CODEX, "Stop", bad, bundle_path=str(bundle.root), env=env, handlers=HANDLERS)
        assert "systemMessage" in json.loads(out.stdout)


def test_fail_open_on_stdin_that_is_not_json_through_the_cli(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    proc = hook("codex", "SessionStart", None, "--bundle", str(bundle.root), stdin="{not json")
    _assert_fails_visibly(proc, "SessionStart", "not JSON")
    assert snapshot(bundle.root) == before


def test_fail_open_on_an_unknown_event(bundle: Bundle) -> None:
    proc = run_ouro("hook", "claude", "Notification", input="{}")
    _assert_fail_open(proc, "unknown event")


def test_unreadable_state_is_set_aside_and_nothing_injected(bundle: Bundle) -> None:
    out_json(hook("claude", "SessionStart", bundle))
    session = fixture("claude", "SessionStart")["session_id"]
    path = bundle.root / f"state/hooks/claude-{session}.json"
    path.write_text("{torn")
    record_event(bundle, "agent_note", "asked", current_ask="a change the hook must not inject")
    proc = hook("claude", "UserPromptSubmit", bundle)
    _assert_fail_open(proc, "not valid JSON", "kept as")
    assert path.with_name(path.name + ".unreadable").read_text() == "{torn"
    assert orjson.loads(path.read_bytes())["schemaVersion"] == 1
    # The fresh fingerprint already covers the change: the next prompt is silent.
    assert hook("claude", "UserPromptSubmit", bundle).stdout == ""


ALLOWED = (
    "arc/flight-recorder/events/",
    "arc/flight-recorder/latest.json",
    "arc/flight-recorder/context-loss-sentinel/",
    "state/hooks/",
    "state/locks/",  # lock files the Arc and sentinel writers hold
    "state/cache/",  # machine-local caches the packet's reads heal (desk heads)
)


@pytest.mark.parametrize("host", HOSTS)
def test_hook_runs_change_only_arc_events_checkpoint_receipts_and_hook_state(
    host: str, bundle: Bundle
) -> None:
    _debt(bundle)
    before = snapshot(bundle.root)
    for event in EVENTS:
        assert hook(host, event, bundle).returncode == 0
    after = snapshot(bundle.root)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed, "hooks changed nothing"
    assert [p for p in changed if not p.startswith(ALLOWED)] == []
    assert [p for p in changed if p in before and p not in after] == []  # nothing deleted
    for prefix in ALLOWED[:4]:
        assert any(p.startswith(prefix) for p in changed), prefix


@pytest.mark.parametrize("host", ["claude", "codex", "gemini", "pi", "opencode"])
def test_hooks_inside_a_habit_session_write_nothing(host: str, bundle: Bundle) -> None:
    """A host a habit's runner started (its variables reach the hooks) that loaded ouro's
    hooks anyway -- from the user's config or a plugin -- records nothing for the run:
    no session event, sentinel receipt, hook state or notice marker."""
    _debt(bundle)
    before = snapshot(bundle.root)
    env = {"OURO_SESSION_ID": "hs-01m8yjc9y95p8scdrg", "OURO_HABIT": "ag"}
    for event in EVENTS:
        stdin = json.dumps(fixture("claude", event, cwd=str(bundle.root / "desk")))
        proc = run_ouro("hook", host, event, input=stdin, env=env)
        assert proc.returncode == 0
        assert proc.stdout == ("{}\n" if host == "gemini" else ""), proc.stdout
        assert proc.stderr == (
            f"ouro hook {host} {event}: inside habit session hs-01m8yjc9y95p8scdrg (habit ag): "
            "ouro's hooks record and inject nothing there (the habit's runner writes its receipt)\n"
        )
    assert snapshot(bundle.root) == before


def test_concurrent_hook_processes_lose_no_event(bundle: Bundle) -> None:
    """Hosts launch matching hooks concurrently, and sessions share a bundle."""
    import os
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    procs = []
    for n in range(4):
        host = HOSTS[n % 2]
        event = ("SessionStart", "UserPromptSubmit")[n // 2]
        data = fixture(host, event, session_id=f"race-{n}", cwd=str(bundle.root))
        proc = subprocess.Popen(
            [sys.executable, "-m", "ouro.cli", "hook", host, event],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        procs.append((proc, json.dumps(data)))
    for proc, stdin in procs:
        out, err = proc.communicate(stdin, timeout=120)
        assert (proc.returncode, err) == (0, "")
        assert json.loads(out)["hookSpecificOutput"]["additionalContext"].startswith("# orient")
    kinds = sorted(e["kind"] for e in events(bundle))
    assert kinds == ["session_started"] * 2 + ["turn_accepted"] * 2
    assert len(list((bundle.root / "state/hooks").glob("*.json"))) == 4
