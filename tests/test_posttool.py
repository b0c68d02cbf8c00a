"""Host receipts: PostToolUse / PostToolUseFailure for Claude Code and Codex.

The payloads (tests/fixtures/hooks/<host>/PostToolUse*.json) and the
transcript lines (tests/fixtures/transcripts/, written by ``HostSession``) were
captured from the real hosts (Claude Code 2.1.328, Codex 0.169.0) running
commands through their shell tool; ``tests/test_real_hosts.py`` runs the real
hosts end to end.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ouro.arc import claims
from ouro.bundle import Bundle
from ouro.desk import tasks, tracks
from ouro.hooks import receipts, transcript
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.codex import HOST as CODEX
from ouro.hooks.common import Outcome, run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.hooks.install import plan
from tests.conftest import run_ouro, snapshot
from tests.host_transcripts import HOOKS, HostSession

HOSTS = {"claude": CLAUDE, "codex": CODEX}
ID1, ID2 = "toolu_01TestCall0001abcdefghij", "toolu_01TestCall0002abcdefghij"
CALLS = {
    "claude": (ID1, ID2),
    "codex": ("call_TestCall0001abcdefghij", "call_TestCall0002abcdefghij"),
}


@pytest.fixture
def session(request: pytest.FixtureRequest, bundle: Bundle, tmp_path: Path) -> HostSession:
    host = getattr(request, "param", "claude")
    return HostSession(host, tmp_path / "home", bundle.root.parent)


def run(bundle: Bundle, s: HostSession, event: str, data: dict[str, Any]) -> Outcome:
    data = dict(data, hook_event_name=event)
    return run_hook(
        HOSTS[s.host], event, json.dumps(data), bundle_path=str(bundle.root),
        env=dict(os.environ) | s.env, handlers=HANDLERS,
    )  # fmt: skip


def report(bundle: Bundle, s: HostSession, command: str, tool_id: str, exit_code: int = 0,
           **override: Any) -> Outcome:  # fmt: skip
    event, data = s.payload(command, tool_id, exit_code)
    return run(bundle, s, event, data | override)


def later(bundle: Bundle, s: HostSession, event: str = "UserPromptSubmit") -> Outcome:
    """A later hook event of the same session (it carries no tool fields)."""
    base = json.loads(
        (HOOKS / s.host / f"{event if event != 'PreToolUse' else 'Stop'}.json").read_text()
    )
    base.update(session_id=s.session_id, transcript_path=str(s.path), cwd=str(s.cwd))
    base.pop("tool_name", None)
    if event == "PreToolUse":
        base.update(tool_name="Edit", tool_input={"file_path": str(s.cwd / "x.py")})
    return run(bundle, s, event, base)


@pytest.fixture
def claim_id(bundle: Bundle) -> str:
    (bundle.root.parent / "src").mkdir()
    (bundle.root.parent / "src" / "login.py").write_text("def login(): ...\n")
    c = claims.add_claim(bundle, "login tests pass", about=["src/login.py"], check="pytest -q")
    return str(c["id"])


def _claim(bundle: Bundle, cid: str) -> dict[str, Any]:
    return claims.describe(bundle, claims.get_claim(bundle, cid))


def _events(bundle: Bundle) -> list[dict[str, Any]]:
    out = []
    for path in sorted((bundle.root / "arc" / "flight-recorder" / "events").glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text().splitlines() if line]
    return out


def _kinds(bundle: Bundle) -> list[str]:
    return [e["kind"] for e in _events(bundle)]


def files(bundle: Bundle) -> dict[str, tuple[bytes, int]]:
    """Every bundle file but the lock files (a hook may take a lock: docs/hooks.md)
    and the machine-local caches a read heals (the desk heads the lookup reads)."""
    return {
        k: v
        for k, v in snapshot(bundle.root).items()
        if not k.startswith(("state/locks/", "state/cache/"))
    }


def _ledger(bundle: Bundle, s: HostSession) -> dict[str, Any]:
    data, problem = receipts.load(receipts.ledger_path(bundle, s.host, s.session_id))
    assert problem is None
    return data


# --- the transcript shows the call: observed-by-host ---------------------------------


@pytest.mark.parametrize("session", ["claude", "codex"], indirect=True)
def test_a_call_the_transcript_shows_verifies_and_a_failing_one_fails(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    first, second = CALLS[session.host]
    session.ran("pytest -q", first, 0, output="3 passed in 0.12s\n")
    out = report(bundle, session, "pytest -q", first, output="3 passed in 0.12s\n")
    assert out.stdout == "" and out.stderr == []
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "verified", shown["statusReason"]
    receipt = shown["evidence"][-1]
    assert receipt["provenance"] == "observed-by-host" and receipt["by"] == session.host
    assert receipt["exitCode"] == 0 and "3 passed" in receipt["tail"]
    assert receipt["outputDigest"].startswith("sha256:")
    session.ran("pytest -q", second, 1, output="1 failed\n")
    out = report(bundle, session, "pytest -q", second, 1, output="1 failed\n")
    assert out.stderr == []
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "failed" and shown["evidence"][-1]["exitCode"] == 1
    assert shown["evidence"][-1]["provenance"] == "observed-by-host"
    tool = [e for e in _events(bundle) if e["kind"] in ("tool_completed", "tool_failed")]
    assert [e["kind"] for e in tool] == ["tool_completed", "tool_failed"]
    assert tool[0]["meta"]["toolUseId"] == first and tool[0]["meta"]["checkOf"] == [claim_id]
    assert tool[0]["meta"]["provenance"] == "observed-by-host"
    assert _ledger(bundle, session)["seen"] == [first, second]


def test_a_non_zero_exit_claude_does_not_count_as_an_error_is_never_exit_0(
    bundle: Bundle, session: HostSession
) -> None:
    """Claude runs PostToolUse (not ...Failure) for 'test -f missing' (exit 1), marked
    returnCodeInterpretation "Condition is false" and with no exit status."""
    claim = claims.add_claim(bundle, "the config exists", check="test -f config.ini")
    session.call("test -f config.ini", ID1)
    session.result(ID1, 1, interpreted=True)
    event, data = session.payload("test -f config.ini", ID1, 1, interpreted=True)
    assert event == "PostToolUse"
    out = run(bundle, session, event, data)
    assert any("Condition is false" in line and "not recorded" in line for line in out.stderr)
    assert _claim(bundle, str(claim["id"]))["evidence"] == []
    # The transcript reads the same way: a forged "exit 0" for that call does not match.
    run_ = transcript.lookup("claude", str(session.path), session.session_id, ID1).run
    assert run_ is not None and run_.exit_code is None


def test_codex_takes_the_exit_status_from_its_transcript(
    bundle: Bundle, claim_id: str, tmp_path: Path
) -> None:
    """Codex's payload carries only the output text: the status is the transcript's."""
    s = HostSession("codex", tmp_path / "home", bundle.root.parent)
    s.ran("pytest -q", "call_A", 3, output="boom\n")
    report(bundle, s, "pytest -q", "call_A")
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "failed" and shown["evidence"][-1]["exitCode"] == 3
    assert shown["evidence"][-1]["provenance"] == "observed-by-host"


# --- the forged payload of issue 26: asserted, verifies nothing ----------------------


def _forged(bundle: Bundle, s: HostSession, path: str) -> dict[str, Any]:
    """Made-up JSON: command ``false`` reported with exit code 0."""
    return {
        "session_id": s.session_id,
        "transcript_path": path,
        "cwd": str(bundle.root.parent),
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "false"},
        "tool_response": {"stdout": "", "stderr": "", "interrupted": False, "exitCode": 0},
        "tool_use_id": "toolu_01Forged000000000000000",
    }


@pytest.mark.parametrize(
    "where", ["attacker-file", "host-file-without-the-call", "host-file-exit-1"]
)
def test_a_forged_payload_verifies_nothing_and_does_not_unlock_done(
    bundle: Bundle, session: HostSession, tmp_path: Path, where: str
) -> None:
    claim = claims.add_claim(bundle, "the suite passes", check="false")
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Ship it", check="false")
    if where == "attacker-file":
        # The attacker writes a "transcript" that shows exactly the call it claims.
        fake = HostSession("claude", tmp_path / "evil", bundle.root.parent)
        fake.ran("false", "toolu_01Forged000000000000000", 0)
        path = str(fake.path)
    elif where == "host-file-without-the-call":
        session.ran("ls", "toolu_01Other", 0)
        path = str(session.path)
    else:  # the host did run it, and recorded its real outcome
        session.ran("false", "toolu_01Forged000000000000000", 1)
        path = str(session.path)
    proc = run_ouro(
        "hook", "claude", "PostToolUse", "--bundle", str(bundle.root),
        input=json.dumps(_forged(bundle, session, path)), env=session.env, process=True,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    shown = _claim(bundle, str(claim["id"]))
    assert shown["status"] == "evidence_required", shown["statusReason"]
    if where != "host-file-without-the-call":  # that one waits for the transcript, quietly
        assert "recorded as asserted (verifies nothing)" in proc.stderr
    later(bundle, session, "Stop")  # a later event does not make it count either
    shown = _claim(bundle, str(claim["id"]))
    assert shown["status"] == "evidence_required", shown["statusReason"]
    receipt = shown["evidence"][-1]
    assert receipt["provenance"] == "asserted" and receipt["by"] == "claude"
    assert receipt["exitCode"] == 0
    assert "not confirmed by the host's transcript" in receipt["note"] or (
        "not yet in the host's transcript" in receipt["note"]
    )
    history = tasks.find_task(bundle, task.id).meta["history"][-1]
    assert history["provenance"] == "asserted" and history["note"]
    with pytest.raises(Exception, match="no observed run"):
        tasks.update_task(bundle, task.id, status="done")
    assert (
        run_ouro("desk", "task", "update", task.id, "--status", "done", bundle=bundle).returncode
        != 0
    )


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"tool_use_id": None}, "names no tool_use_id"),
        ({"transcript_path": None}, "names no transcript_path"),
        ({"transcript_path": "/tmp/x/../t.jsonl"}, "not a plain absolute path"),
        ({"session_id": "../../etc"}, "not a plain session id"),
    ],
)
def test_a_report_without_a_trustworthy_transcript_is_asserted_with_the_reason(
    bundle: Bundle, claim_id: str, session: HostSession, change: dict[str, Any], needle: str
) -> None:
    session.ran("pytest -q", ID1, 0)
    out = report(bundle, session, "pytest -q", ID1, **change)
    assert any(needle in line for line in out.stderr), out.stderr
    receipt = _claim(bundle, claim_id)["evidence"][-1]
    assert receipt["provenance"] == "asserted" and needle in receipt["note"]
    assert _claim(bundle, claim_id)["status"] == "evidence_required"


def test_another_sessions_transcript_does_not_count(
    bundle: Bundle, claim_id: str, tmp_path: Path
) -> None:
    other = HostSession("claude", tmp_path / "home", bundle.root.parent, session_id="aaaa-bbbb")
    other.ran("pytest -q", ID1, 0)
    mine = HostSession("claude", tmp_path / "home", bundle.root.parent)
    out = report(bundle, mine, "pytest -q", ID1, transcript_path=str(other.path))
    assert any("not claude's own transcript of session" in line for line in out.stderr)
    assert _claim(bundle, claim_id)["status"] == "evidence_required"


def test_a_symlink_or_fifo_in_the_hosts_folder_is_not_read(
    bundle: Bundle, claim_id: str, session: HostSession, tmp_path: Path
) -> None:
    evil = HostSession("claude", tmp_path / "evil", bundle.root.parent)
    evil.ran("pytest -q", ID1, 0)
    session.path.unlink()
    session.path.symlink_to(evil.path)
    out = report(bundle, session, "pytest -q", ID1)
    assert any("symbolic link" in line for line in out.stderr), out.stderr
    assert _claim(bundle, claim_id)["status"] == "evidence_required"
    session.path.unlink()
    os.mkfifo(session.path)  # opening it for reading would block forever
    assert transcript.read_tail(str(session.path)) is None
    report(bundle, session, "pytest -q", ID2)
    assert _claim(bundle, claim_id)["status"] == "evidence_required"


def test_a_result_far_from_the_report_in_time_does_not_count(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    old = datetime.now(UTC) - timedelta(hours=2)
    session.call("pytest -q", ID1, at=old)
    session.result(ID1, 0, at=old)
    out = report(bundle, session, "pytest -q", ID1)
    assert any("not around the report" in line for line in out.stderr), out.stderr
    assert _claim(bundle, claim_id)["status"] == "evidence_required"


def test_one_call_gives_one_receipt(bundle: Bundle, claim_id: str, session: HostSession) -> None:
    session.ran("pytest -q", ID1, 0)
    report(bundle, session, "pytest -q", ID1)
    before = files(bundle)
    out = report(bundle, session, "pytest -q", ID1)  # the same payload, replayed
    assert any("already gave a receipt" in line for line in out.stderr)
    assert files(bundle) == before


def test_concurrent_reports_from_real_processes_give_one_receipt_per_call(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    """Parallel tool calls fire PostToolUse hooks at once; a replay may race the host's own."""
    import subprocess
    import sys

    session.ran("pytest -q", ID1, 0)
    session.ran("pytest -q", ID2, 0)
    env = {k: v for k, v in os.environ.items() if k != "OURO_BUNDLE"} | session.env
    procs = []
    for tool_id in (ID1, ID2, ID1, ID2):
        event, data = session.payload("pytest -q", tool_id)
        proc = subprocess.Popen(
            [sys.executable, "-m", "ouro.cli", "hook", "claude", event, "--bundle", str(bundle.root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env,
        )  # fmt: skip
        procs.append((proc, json.dumps(data)))
    for proc, stdin in procs:
        out, err = proc.communicate(stdin, timeout=120)
        assert proc.returncode == 0 and out == "", err
    evidence = _claim(bundle, claim_id)["evidence"]
    assert len(evidence) == 2 and {e["provenance"] for e in evidence} == {"observed-by-host"}
    assert sorted(_ledger(bundle, session)["seen"]) == [ID1, ID2]


def test_the_transcript_is_read_from_its_end_within_the_cap(
    bundle: Bundle, claim_id: str, session: HostSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    session.ran("pytest -q", ID1, 0)
    with session.path.open("a") as f:  # later lines push the call out of the window
        f.write(('{"type":"queue-operation","content":"' + "x" * 1000 + '"}\n') * 200)
    monkeypatch.setattr(transcript, "TAIL_LIMIT", 100_000)
    report(bundle, session, "pytest -q", ID1)
    assert "shows no Bash call" in _claim(bundle, claim_id)["evidence"][-1]["note"]
    assert _claim(bundle, claim_id)["status"] == "evidence_required"


# --- the transcript lags the hook: pending, then observed at a later event -----------


@pytest.mark.parametrize("event", ["UserPromptSubmit", "Stop", "PreToolUse", "SessionEnd"])
def test_a_lagging_claude_transcript_upgrades_the_receipt_at_a_later_event(
    bundle: Bundle, claim_id: str, session: HostSession, event: str
) -> None:
    """Claude writes the tool result after its PostToolUse hook (seen in the real host)."""
    session.call("pytest -q", ID1)
    out = report(bundle, session, "pytest -q", ID1)
    assert out.stderr == []  # the usual case: quiet, settled later
    pending = _claim(bundle, claim_id)
    assert pending["status"] == "evidence_required"
    receipt = pending["evidence"][-1]
    assert (
        receipt["provenance"] == "asserted"
        and "not yet in the host's transcript" in receipt["note"]
    )
    assert [p["toolUseId"] for p in _ledger(bundle, session)["pending"]] == [ID1]
    later(bundle, session, event)  # the transcript has not caught up: still pending
    assert _claim(bundle, claim_id)["status"] == "evidence_required"
    assert len(_ledger(bundle, session)["pending"]) == 1
    session.result(ID1, 0)  # now it has
    out = later(bundle, session, event)
    assert out.stderr == [], out.stderr
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "verified", shown["statusReason"]
    upgraded = shown["evidence"][-1]
    assert len(shown["evidence"]) == 1  # the same receipt, upgraded in place
    assert upgraded["provenance"] == "observed-by-host"
    assert upgraded["recordedAt"] == receipt["recordedAt"]
    assert upgraded["sources"] == receipt["sources"]
    assert f"confirmed in the host's transcript at {event}" in upgraded["note"]
    assert _ledger(bundle, session)["pending"] == []
    assert _kinds(bundle).count("tool_completed") == 2  # reported, then confirmed


def test_a_lagging_codex_transcript_records_the_receipt_when_it_catches_up(
    bundle: Bundle, claim_id: str, tmp_path: Path
) -> None:
    """Codex states no exit status: nothing can be recorded until its transcript shows one."""
    s = HostSession("codex", tmp_path / "home", bundle.root.parent)
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q", about=["src/login.py"])
    s.call("pytest -q", "call_A")
    report(bundle, s, "pytest -q", "call_A")
    assert _claim(bundle, claim_id)["evidence"] == []
    assert [p["exitCode"] for p in _ledger(bundle, s)["pending"]] == [None]
    # An edit after the run: the late receipt keeps the hashes of the run's time.
    s.result("call_A", 0)
    (bundle.root.parent / "src" / "login.py").write_text("def login(): return 1\n")
    later(bundle, s, "Stop")
    shown = _claim(bundle, claim_id)
    assert shown["evidence"][-1]["provenance"] == "observed-by-host"
    assert shown["status"] == "stale_risky", shown["statusReason"]
    check = tasks.find_task(bundle, task.id).meta["history"][-1]
    assert check["provenance"] == "observed-by-host" and check["exitCode"] == 0
    with pytest.raises(Exception, match="changed since the check passed"):
        tasks.update_task(bundle, task.id, status="done")


@pytest.mark.parametrize("session", ["claude", "codex"], indirect=True)
def test_a_confirmation_cut_short_is_finished_without_a_second_receipt(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    """The host may kill a hook after the receipts were written but before the ledger was."""
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    tool_id = CALLS[session.host][0]
    session.call("pytest -q", tool_id)
    report(bundle, session, "pytest -q", tool_id)
    path = receipts.ledger_path(bundle, session.host, session.session_id)
    waiting = path.read_bytes()
    session.result(tool_id, 0)
    later(bundle, session)
    settled = (
        _claim(bundle, claim_id)["evidence"],
        tasks.find_task(bundle, task.id).meta["history"],
    )
    path.write_bytes(waiting)  # as if that hook had been killed before saving the ledger
    out = later(bundle, session, "Stop")
    assert out.stderr == [], out.stderr
    assert _claim(bundle, claim_id)["evidence"] == settled[0]
    checks = [
        e for e in tasks.find_task(bundle, task.id).meta["history"] if e.get("event") == "check"
    ]
    assert checks == [e for e in settled[1] if e.get("event") == "check"] and len(checks) == 1
    assert _ledger(bundle, session)["pending"] == []


def test_a_lagging_receipt_of_a_task_unlocks_done_once_confirmed(
    bundle: Bundle, session: HostSession
) -> None:
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    session.call("pytest -q", ID1)
    report(bundle, session, "pytest -q", ID1)
    with pytest.raises(Exception, match="no observed run"):
        tasks.update_task(bundle, task.id, status="done")
    session.result(ID1, 0)
    later(bundle, session)
    receipt = tasks.find_task(bundle, task.id).meta["history"][-1]
    assert receipt["event"] == "check" and receipt["provenance"] == "observed-by-host"
    assert tasks.update_task(bundle, task.id, status="done")[0].meta["status"] == "done"


def test_a_pending_receipt_the_transcript_contradicts_stays_asserted(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    session.call("pytest -q", ID1)
    report(bundle, session, "pytest -q", ID1)  # says success
    session.result(ID1, 2)  # the host recorded exit 2
    out = later(bundle, session)
    assert any("stays asserted" in line and "exit 2" in line for line in out.stderr)
    shown = _claim(bundle, claim_id)
    assert (
        shown["status"] == "evidence_required" and shown["evidence"][-1]["provenance"] == "asserted"
    )
    assert _ledger(bundle, session)["pending"] == []


def test_a_call_that_never_appears_leaves_the_ledger(
    bundle: Bundle, claim_id: str, session: HostSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(receipts, "PENDING_ATTEMPTS", 2)
    report(bundle, session, "pytest -q", ID1)
    later(bundle, session)
    later(bundle, session)
    out = later(bundle, session)
    assert any("never appeared" in line for line in out.stderr), out.stderr
    assert _ledger(bundle, session)["pending"] == []
    assert _claim(bundle, claim_id)["evidence"][-1]["provenance"] == "asserted"
    before = files(bundle)
    later(bundle, session, "Stop")  # nothing pending: a later event writes nothing
    assert files(bundle) == before


def test_a_flood_of_reports_waits_no_longer_than_the_limit(
    bundle: Bundle, claim_id: str, session: HostSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(receipts, "PENDING_LIMIT", 2)
    for n in range(3):
        out = report(bundle, session, "pytest -q", f"toolu_flood{n}")
    assert any("already waiting" in line for line in out.stderr), out.stderr
    assert len(_ledger(bundle, session)["pending"]) == 2
    assert {e["provenance"] for e in _claim(bundle, claim_id)["evidence"]} == {"asserted"}


# --- what records nothing ------------------------------------------------------------


@pytest.mark.parametrize("session", ["claude", "codex"], indirect=True)
def test_an_unrelated_command_changes_nothing(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    before = files(bundle)
    for n, command in enumerate(("ls -la", "pytest -q -k login", "pytest")):
        session.ran(command, f"call_{n}", 0)
        out = report(bundle, session, command, f"call_{n}")
        assert out.stdout == "" and out.stderr == []
    event, data = session.payload("x", "call_9")
    run(bundle, session, event, data | {"tool_name": "Read", "tool_input": {"file_path": "x"}})
    assert files(bundle) == before


def test_unknown_exit_status_interrupt_or_background_records_nothing(
    bundle: Bundle, claim_id: str, tmp_path: Path
) -> None:
    claude = HostSession("claude", tmp_path / "home", bundle.root.parent)
    before = files(bundle)
    event, data = claude.payload("pytest -q", ID1, 1)
    run(bundle, claude, event, data | {"error": "Command timed out", "is_interrupt": True})
    run(bundle, claude, event, data | {"error": "something went wrong"})
    event, data = claude.payload("pytest -q", ID2)
    data["tool_response"]["interrupted"] = True
    run(bundle, claude, event, data)
    event, data = claude.payload("pytest -q", "toolu_bg")
    data["tool_input"]["run_in_background"] = True
    run(bundle, claude, event, data)
    # Codex: no status in the payload, and its transcript shows none.
    codex = HostSession("codex", tmp_path / "home", bundle.root.parent)
    codex.call("pytest -q", "call_X")
    out = report(bundle, codex, "pytest -q", "call_X", transcript_path="/tmp/elsewhere.jsonl")
    assert any("not recorded" in line for line in out.stderr)
    assert files(bundle) == before


def test_the_check_must_run_in_its_folder(
    bundle: Bundle, claim_id: str, session: HostSession, tmp_path: Path
) -> None:
    before = files(bundle)
    session.ran("pytest -q", ID1, 0)
    out = report(bundle, session, "pytest -q", ID1, cwd=str(tmp_path / "cwd"))
    assert files(bundle) == before
    assert any("not recorded" in line for line in out.stderr)


def test_codex_records_where_it_ran_and_that_must_be_the_checks_folder(
    bundle: Bundle, claim_id: str, tmp_path: Path
) -> None:
    s = HostSession("codex", tmp_path / "home", bundle.root.parent)
    s.call("pytest -q", "call_A")
    s.result("call_A", 0, cwd=tmp_path / "elsewhere")  # a workdir the payload does not name
    out = report(bundle, s, "pytest -q", "call_A")
    assert any("ran in" in line for line in out.stderr), out.stderr
    assert _claim(bundle, claim_id)["status"] == "evidence_required"


def test_host_receipts_keep_no_output_and_redact_the_tail(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    secret = "ghp_" + "A" * 36
    session.ran("pytest -q", ID1, 0)
    report(bundle, session, "pytest -q", ID1, tool_response={
        "stdout": f"token {secret}\n3 passed\n", "stderr": "", "interrupted": False})  # fmt: skip
    raw = (bundle.root / "arc" / "claims" / f"{claim_id}.json").read_text()
    assert secret not in raw and "[redacted:" in raw
    events = "".join(
        p.read_text() for p in (bundle.root / "arc" / "flight-recorder" / "events").glob("*")
    )
    assert secret not in events and "3 passed" not in events
    ledger = receipts.ledger_path(bundle, "claude", session.session_id).read_text()
    assert secret not in ledger


@pytest.mark.parametrize("session", ["claude", "codex"], indirect=True)
def test_host_run_of_a_tasks_check_unlocks_done(bundle: Bundle, session: HostSession) -> None:
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    with pytest.raises(Exception, match="no observed run"):
        tasks.update_task(bundle, task.id, status="done")
    session.ran("pytest -q", "call_1", 0)
    report(bundle, session, "pytest -q", "call_1")
    receipt = tasks.find_task(bundle, task.id).meta["history"][-1]
    assert receipt["event"] == "check" and receipt["provenance"] == "observed-by-host"
    assert receipt["by"] == session.host and receipt["exitCode"] == 0
    assert tasks.update_task(bundle, task.id, status="done")[0].meta["status"] == "done"


def test_tool_events_stay_out_of_the_packet(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    from ouro.orient import build_packet

    session.ran("pytest -q", ID1, 0)
    report(bundle, session, "pytest -q", ID1)
    text = build_packet(bundle, budget=20_000).text
    assert "tool_completed" not in text and "ran the check" not in text


@pytest.mark.parametrize("session", ["claude", "codex"], indirect=True)
def test_real_cli_process_records_the_receipt(
    bundle: Bundle, claim_id: str, session: HostSession
) -> None:
    """The hook as the host runs it: a fresh ``python -m ouro.cli`` process."""
    session.ran("pytest -q", "call_1", 0)
    event, data = session.payload("pytest -q", "call_1")
    proc = run_ouro("hook", session.host, event, "--bundle", str(bundle.root),
                    input=json.dumps(data), env=session.env, process=True)  # fmt: skip
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert _claim(bundle, claim_id)["status"] == "verified"


def test_install_adds_the_tool_events_per_host(tmp_path: Path) -> None:
    claude = json.loads(plan(CLAUDE, tmp_path, base="ouro").after)["hooks"]
    assert claude["PostToolUse"][0]["matcher"] == "Bash"
    assert claude["PostToolUseFailure"][0]["matcher"] == "Bash"
    assert "hook claude PostToolUse" in claude["PostToolUse"][0]["hooks"][0]["command"]
    codex = json.loads(plan(CODEX, tmp_path, base="ouro").after)["hooks"]
    assert codex["PostToolUse"][0]["matcher"] == "Bash"
    assert "PostToolUseFailure" not in codex  # Codex has no such event


def test_codex_trust_keys_name_the_tool_events_as_codex_does(tmp_path: Path) -> None:
    """Codex keys and hashes hook trust by snake_case event names (seen in 0.169's hooks/list)."""
    from ouro.hooks import codex_trust

    key = codex_trust.entry_key(tmp_path / "hooks.json", "PostToolUse", 0, 0)
    assert key.endswith(":post_tool_use:0:0")
    handler = {"type": "command", "command": "ouro hook codex PostToolUse", "timeout": 10}
    # The hash Codex 0.169 reported for exactly this entry (app-server hooks/list).
    assert codex_trust.entry_hash("PostToolUse", "Bash", handler) == (
        "sha256:87054c7e3901144d752684b3f8e5d2ad19e1e1580dc6d22d5dffe24a2e8193c6"
    )


def test_an_unrelated_command_imports_neither_click_nor_pydantic_nor_yaml(
    bundle: Bundle, claim_id: str
) -> None:
    """The hook runs after every shell command: the unrelated path stays lean."""
    import subprocess
    import sys

    data = json.loads((HOOKS / "claude" / "PostToolUse.json").read_text())
    data.update(cwd=str(bundle.root.parent), tool_input={"command": "ls"})
    code = (
        "import sys\n"
        "from ouro.cli.run import run\n"
        f"run(['hook', 'claude', 'PostToolUse', '--bundle', {str(bundle.root)!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'pydantic', 'yaml'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(data), capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert "HEAVY []" in proc.stderr, proc.stderr


# --- finding the tasks a command is the check of (the desk heads) ---------------------


def _checked(bundle: Bundle, command: str) -> list[str]:
    from ouro.hooks.posttool import _matching_tasks

    return _matching_tasks(bundle, command)


def test_a_check_edited_by_hand_is_matched_on_the_next_report(bundle: Bundle) -> None:
    import time

    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    other = tasks.add_task(bundle, "web", "Ship", check="make ship")
    time.sleep(0.15)  # past the heads' racy window: their fingerprints are trusted
    tasks.update_task(bundle, other.id, title="Ship it")  # a Desk write refreshes the heads
    assert _checked(bundle, "pytest -q") == [task.id]
    path = task.path
    path.write_text(path.read_text().replace("check: pytest -q", "check: make test"))
    assert _checked(bundle, "pytest -q") == []  # the heads do not outlive the file
    assert _checked(bundle, "make test") == [task.id]
    tasks.update_task(bundle, task.id, status="dropped")
    assert _checked(bundle, "make test") == []  # closed tasks are no receipt's target


def test_a_copied_bundle_rebuilds_its_desk_heads_once(bundle: Bundle, tmp_path: Path) -> None:
    import shutil
    import time

    from ouro.desk import heads

    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    for n in range(3):
        tasks.add_task(bundle, "web", f"Other {n}")
    copy = Bundle.open(Path(shutil.copytree(bundle.root, tmp_path / "copy.ouro")))
    time.sleep(0.15)  # past the heads' racy window: the rebuilt stamps are trusted
    assert heads.freshness(copy)[0] != "fresh"  # every inode differs: no cached row holds
    before = {k: v for k, v in snapshot(copy.root).items() if not k.startswith("state/")}
    assert _checked(copy, "pytest -q") == [task.id]
    after = {k: v for k, v in snapshot(copy.root).items() if not k.startswith("state/")}
    assert after == before  # only the machine-local cache was rebuilt
    assert heads.freshness(copy) == ("fresh", None)  # the next command only stats
