"""Host-observed receipts: PostToolUse / PostToolUseFailure for Claude Code and Codex.

Fixtures are the documented payload shapes (tests/fixtures/hooks/<host>/
PostToolUse*.json): no real capture of these events was available here (the
captures in /work/shared/hosts/ cover the session events only).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ouro.arc import claims
from ouro.bundle import Bundle
from ouro.desk import tasks, tracks
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.codex import HOST as CODEX
from ouro.hooks.common import run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.hooks.install import plan
from tests.conftest import run_ouro, snapshot

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
HOSTS = {"claude": CLAUDE, "codex": CODEX}


def payload(host: str, event: str, **override: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / host / f"{event}.json").read_text())
    data.update(override)
    return data


def fire(bundle: Bundle, host: str, event: str, **override: Any) -> Any:
    override.setdefault("cwd", str(bundle.root.parent))
    stdin = json.dumps(payload(host, event, **override))
    return run_hook(
        HOSTS[host], event, stdin, bundle_path=str(bundle.root), env=dict(os.environ),
        handlers=HANDLERS,
    )  # fmt: skip


def codex_failure(bundle: Bundle, command: str = "pytest -q") -> Any:
    return fire(
        bundle, "codex", "PostToolUse",
        tool_input={"command": command},
        tool_response="Exit code: 1\nWall time: 0.5 seconds\nOutput:\n1 failed, 2 passed\n",
    )  # fmt: skip


@pytest.fixture
def claim_id(bundle: Bundle) -> str:
    (bundle.root.parent / "src").mkdir()
    (bundle.root.parent / "src" / "login.py").write_text("def login(): ...\n")
    c = claims.add_claim(bundle, "login tests pass", about=["src/login.py"], check="pytest -q")
    return str(c["id"])


def _claim(bundle: Bundle, cid: str) -> dict[str, Any]:
    return claims.describe(bundle, claims.get_claim(bundle, cid))


def _kinds(bundle: Bundle) -> list[str]:
    out = []
    for path in sorted((bundle.root / "arc" / "flight-recorder" / "events").glob("*.jsonl")):
        out += [json.loads(line)["kind"] for line in path.read_text().splitlines() if line]
    return out


def test_claude_pytest_exit_0_verifies_and_exit_1_fails(bundle, claim_id) -> None:
    out = fire(bundle, "claude", "PostToolUse")
    assert out.stdout == "" and out.stderr == []
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "verified"
    receipt = shown["evidence"][-1]
    assert receipt["provenance"] == "observed-by-host" and receipt["by"] == "claude"
    assert receipt["exitCode"] == 0 and "3 passed" in receipt["tail"]
    assert receipt["outputDigest"].startswith("sha256:")
    fire(bundle, "claude", "PostToolUseFailure")
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "failed" and shown["evidence"][-1]["exitCode"] == 1
    assert _kinds(bundle).count("tool_completed") == 1
    assert _kinds(bundle).count("tool_failed") == 1
    day = sorted((bundle.root / "arc" / "flight-recorder" / "events").glob("*.jsonl"))[-1]
    tool = [json.loads(x) for x in day.read_text().splitlines() if '"tool_completed"' in x]
    assert tool[0]["meta"]["toolUseId"] == "toolu_01ABCDEFabcdef0123456789"
    assert tool[0]["meta"]["checkOf"] == [claim_id]


def test_codex_pytest_exit_0_verifies_and_exit_1_fails(bundle, claim_id) -> None:
    fire(bundle, "codex", "PostToolUse")
    shown = _claim(bundle, claim_id)
    assert shown["status"] == "verified" and shown["evidence"][-1]["by"] == "codex"
    codex_failure(bundle)
    assert _claim(bundle, claim_id)["status"] == "failed"


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_an_unrelated_command_changes_nothing(bundle, claim_id, host) -> None:
    before = snapshot(bundle.root)
    for command in ("ls -la", "pytest -q -k login", "pytest"):
        out = fire(bundle, host, "PostToolUse", tool_input={"command": command})
        assert out.stdout == "" and out.stderr == []
    fire(bundle, host, "PostToolUse", tool_name="Read", tool_input={"file_path": "x"})
    assert snapshot(bundle.root) == before


def test_unknown_exit_status_or_interrupt_records_nothing(bundle, claim_id) -> None:
    before = snapshot(bundle.root)
    # Codex exec_command output without an exit status line: unknown stays unknown.
    fire(bundle, "codex", "PostToolUse", tool_response="3 passed in 0.1s\n")
    fire(bundle, "claude", "PostToolUseFailure", error="Command timed out", is_interrupt=True)
    fire(bundle, "claude", "PostToolUseFailure", error="something went wrong")
    response = {"stdout": "", "stderr": "", "interrupted": True, "isImage": False}
    fire(bundle, "claude", "PostToolUse", tool_response=response)
    assert snapshot(bundle.root) == before


def test_the_check_must_run_in_its_folder(bundle, claim_id, tmp_path) -> None:
    before = snapshot(bundle.root)
    out = fire(bundle, "claude", "PostToolUse", cwd=str(tmp_path / "cwd"))
    assert snapshot(bundle.root) == before
    assert any("not recorded" in line for line in out.stderr)


def test_host_receipts_keep_no_output_and_redact_the_tail(bundle, claim_id) -> None:
    secret = "ghp_" + "A" * 36
    response = {"stdout": f"token {secret}\n3 passed\n", "stderr": "", "interrupted": False}
    fire(bundle, "claude", "PostToolUse", tool_response=response)
    raw = (bundle.root / "arc" / "claims" / f"{claim_id}.json").read_text()
    assert secret not in raw and "[redacted:" in raw
    events = "".join(
        p.read_text() for p in (bundle.root / "arc" / "flight-recorder" / "events").glob("*")
    )
    assert secret not in events and "3 passed" not in events


def test_host_run_of_a_tasks_check_unlocks_done(bundle) -> None:
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Fix login", check="pytest -q")
    with pytest.raises(Exception, match="no observed run"):
        tasks.update_task(bundle, task.id, status="done")
    fire(bundle, "codex", "PostToolUse")
    receipt = tasks.find_task(bundle, task.id).meta["history"][-1]
    assert receipt["event"] == "check" and receipt["provenance"] == "observed-by-host"
    assert receipt["by"] == "codex" and receipt["exitCode"] == 0
    assert tasks.update_task(bundle, task.id, status="done")[0].meta["status"] == "done"


def test_tool_events_stay_out_of_the_packet(bundle, claim_id) -> None:
    from ouro.orient import build_packet

    fire(bundle, "claude", "PostToolUse")
    text = build_packet(bundle, budget=20_000).text
    assert "tool_completed" not in text and "ran the check" not in text


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_real_cli_process_records_the_receipt(bundle, claim_id, host) -> None:
    """The hook as the host runs it: a fresh ``python -m ouro.cli`` process."""
    stdin = json.dumps(payload(host, "PostToolUse", cwd=str(bundle.root.parent)))
    proc = run_ouro("hook", host, "PostToolUse", "--bundle", str(bundle.root), input=stdin)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    assert _claim(bundle, claim_id)["status"] == "verified"


def test_install_adds_the_tool_events_per_host(tmp_path) -> None:
    claude = json.loads(plan(CLAUDE, tmp_path, base="ouro").after)["hooks"]
    assert claude["PostToolUse"][0]["matcher"] == "Bash"
    assert claude["PostToolUseFailure"][0]["matcher"] == "Bash"
    assert "hook claude PostToolUse" in claude["PostToolUse"][0]["hooks"][0]["command"]
    codex = json.loads(plan(CODEX, tmp_path, base="ouro").after)["hooks"]
    assert codex["PostToolUse"][0]["matcher"] == "Bash"
    assert "PostToolUseFailure" not in codex  # Codex has no such event


def test_an_unrelated_command_imports_neither_click_nor_pydantic_nor_yaml(bundle, claim_id) -> None:
    """The hook runs after every shell command: the unrelated path stays lean."""
    import subprocess
    import sys

    stdin = json.dumps(
        payload("claude", "PostToolUse", cwd=str(bundle.root.parent), tool_input={"command": "ls"})
    )
    code = (
        "import sys\n"
        "from ouro.cli.fasthook import try_run\n"
        f"try_run(['hook', 'claude', 'PostToolUse', '--bundle', {str(bundle.root)!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('click', 'pydantic', 'yaml'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, timeout=60
    )
    assert "HEAVY []" in proc.stderr, proc.stderr
