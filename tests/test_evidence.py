"""Evidence nobody can fake: provenance, checks that run like CI steps, honest debt.

Each test names the measured hole it closes (issue 13, "What was measured").
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from ouro.arc import checkrun, claims, paths
from ouro.arc.claim_status import claim_from_json, derive_status
from ouro.arc.refs import memo_hasher
from ouro.arc.resume import read_resume_full
from ouro.bundle import Bundle
from ouro.cli.run import run
from ouro.hooks.handlers import debt_actions, debt_message


def ouro(bundle: Bundle, *args: str) -> tuple[int, str]:
    """The CLI in-process (its real exit status, stdout and stderr together)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = run(["--bundle", str(bundle.root), *args])
    return code, buffer.getvalue()


def ouro_json(bundle: Bundle, *args: str) -> tuple[int, dict]:
    code, out = ouro(bundle, *args, "--json")
    return code, json.loads(out)


@pytest.fixture
def repo(bundle: Bundle) -> Path:
    src = bundle.root.parent / "src"
    src.mkdir()
    (src / "a.py").write_text("A = 1\n")
    return bundle.root.parent


# --- provenance --------------------------------------------------------------


def test_measured_typed_in_evidence_with_authority_test_does_not_verify(bundle, repo) -> None:
    code, added = ouro_json(bundle, "claim", "add", "X", "--check", "false")
    assert code == 0
    code, ev = ouro_json(
        bundle, "claim", "evidence", added["id"], "--command", "false", "--exit-code", "0",
        "--authority", "test",
    )  # fmt: skip
    assert code == 0
    assert ev["status"] == "evidence_required"
    assert ev["evidence"][-1]["provenance"] == "asserted"
    assert ev["evidence"][-1]["by"] == "tester"  # who asserted it: the bundle's agent
    code, out = ouro(bundle, "claim", "list")
    row = next(line for line in out.splitlines() if line.startswith(added["id"]))
    assert row.split()[1] == "evidence_required"


def test_provenance_cannot_be_typed_in(bundle, repo) -> None:
    added = claims.add_claim(bundle, "X", check="true")
    code, out = ouro(
        bundle, "claim", "evidence", added["id"], "--command", "true", "--exit-code", "0",
        "--provenance", "observed-by-ouro",
    )  # fmt: skip
    assert code == 2 and "provenance" in out.lower()
    assert claims.get_claim(bundle, added["id"]).evidence == ()


def test_legacy_receipts_keep_their_fields_and_read_as_asserted(bundle, repo) -> None:
    added = claims.add_claim(bundle, "X", about=["src/a.py"], check="pytest -q")
    path = paths.claims_dir(bundle) / f"{added['id']}.json"
    data = json.loads(path.read_text())
    data["evidence"] = [
        {
            "command": "pytest -q",
            "exitCode": 0,
            "recordedAt": "2026-01-01T00:00:00.000Z",
            "authority": "test",
            "sources": [],
        }
    ]
    path.write_text(json.dumps(data))
    claim = claims.get_claim(bundle, added["id"])
    status, reason = derive_status(claim, memo_hasher(bundle))
    assert status == "evidence_required"
    assert "asserted by test, recorded before provenance" in reason
    shown = claims.describe(bundle, claim)
    assert shown["evidence"][0]["provenance"] == "asserted"
    assert shown["evidence"][0]["authority"] == "test"  # nothing rewritten
    assert json.loads(path.read_text())["evidence"][0].get("provenance") is None


def test_only_observed_evidence_verifies(bundle, repo) -> None:
    added = claims.add_claim(bundle, "a.py exists", about=["src/a.py"], check="test -f src/a.py")
    claim = claim_from_json(
        {
            **claims.get_claim(bundle, added["id"]).to_json(),
            "evidence": [
                {
                    "command": "test -f src/a.py",
                    "exitCode": 0,
                    "recordedAt": "2026-01-01T00:00:00.000Z",
                    "authority": "runtime",
                    "provenance": p,
                    "sources": [],
                }
                for p in ("observed-by-host",)
            ],
        }
    )
    assert derive_status(claim, memo_hasher(bundle))[0] == "verified"
    claim = claim._replace(evidence=(claim.evidence[0]._replace(provenance="asserted"),))
    assert derive_status(claim, memo_hasher(bundle))[0] == "evidence_required"


# --- checks that run like CI steps -------------------------------------------


def test_measured_verify_exits_nonzero_on_a_failing_check_and_prints_its_tail(bundle, repo) -> None:
    failing = claims.add_claim(bundle, "fails", check="echo 'line one'; echo 'E boom'; exit 3")
    code, out = ouro(bundle, "claim", "verify", failing["id"])
    assert code == 1
    assert "exit 3" in out and "E boom" in out and "output tail" in out
    passing = claims.add_claim(bundle, "passes", check="echo fine")
    code, out = ouro(bundle, "claim", "verify", passing["id"])
    assert code == 0 and "fine" in out and "[verified]" in out
    receipt = claims.get_claim(bundle, failing["id"]).evidence[-1]
    assert receipt.provenance == "observed-by-ouro" and receipt.exit_code == 3
    assert receipt.tail is not None and "E boom" in receipt.tail
    assert receipt.output_digest and receipt.duration_ms is not None


def test_check_timeout_kills_the_whole_process_group(bundle, repo, tmp_path) -> None:
    marker = tmp_path / "child-survived"
    check = f"(sleep 3; touch {marker}) & sleep 30"
    added = claims.add_claim(bundle, "slow", check=check)
    out = claims.verify_claim(bundle, added["id"], timeout=0.5)
    assert out["run"]["timedOut"] is True and out["run"]["exitCode"] == checkrun.TIMEOUT_EXIT
    assert out["status"] == "failed"
    assert out["evidence"][-1]["note"] == "timed out after 0.5s"
    import time

    time.sleep(3.5)
    assert not marker.exists()


def test_check_env_is_scrubbed_of_known_secrets(bundle, repo, monkeypatch) -> None:
    meta = json.loads(bundle.meta_path.read_text())
    meta["redact"] = {"literals": ["hunter2-literal"]}
    bundle.meta_path.write_text(json.dumps(meta))
    monkeypatch.setenv("MY_SERVICE_TOKEN", "abc")
    monkeypatch.setenv("INNOCENT_NAME", "has hunter2-literal inside")
    monkeypatch.setenv("PLAIN_VALUE", "kept")
    check = 'test -z "$MY_SERVICE_TOKEN" && test -z "$INNOCENT_NAME" && test "$PLAIN_VALUE" = kept'
    added = claims.add_claim(bundle, "env scrubbed", check=check)
    out = claims.verify_claim(bundle, added["id"])
    assert out["status"] == "verified", out["run"]
    assert {"MY_SERVICE_TOKEN", "INNOCENT_NAME"} <= set(out["run"]["envScrubbed"])


def test_receipt_tail_is_redacted_and_the_output_is_not_kept(bundle, repo) -> None:
    secret = "sk-ant-" + "a" * 30
    # the check holds no secret (one that did would be refused); its output does
    added = claims.add_claim(
        bundle, "leaky", check="echo \"token sk-ant-$(printf 'a%.0s' $(seq 30))\"; echo done"
    )
    out = claims.verify_claim(bundle, added["id"])
    raw = (paths.claims_dir(bundle) / f"{added['id']}.json").read_text()
    assert secret not in raw and secret not in out["run"]["tail"]
    assert "[redacted:anthropic_key]" in out["run"]["tail"]


def test_measured_repo_root_is_configurable_per_bundle_and_per_claim(tmp_path) -> None:
    # A bundle kept outside the repository can hold claims about the repository's files.
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "m.py").write_text("M = 1\n")
    bundle = Bundle.init(tmp_path / "elsewhere" / "agent.ouro", agent="tester")
    meta = json.loads(bundle.meta_path.read_text())
    meta["repoRoot"] = "../../project"
    bundle.meta_path.write_text(json.dumps(meta))
    c = claims.add_claim(bundle, "m exists", about=["src/m.py"], check="test -f src/m.py")
    out = claims.verify_claim(bundle, c["id"])
    assert out["status"] == "verified" and out["run"]["cwd"] == str(project)
    (project / "src" / "m.py").write_text("M = 2\n")
    assert claims.list_claims(bundle)["claims"][0]["status"] == "stale_risky"
    # Per claim: another repository, given relative to the bundle folder.
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("o\n")
    c2 = claims.add_claim(
        bundle, "o exists", about=["o.txt"], check="test -f o.txt", repo="../../other"
    )
    assert c2["repo"] == str(other)
    assert claims.verify_claim(bundle, c2["id"])["status"] == "verified"
    # The checkpoint's cheap stat cache follows the claim's own repo too.
    (other / "o.txt").write_text("changed\n")
    full = read_resume_full(bundle)
    assert c2["id"] in full["unverifiedClaimIds"]


def test_a_check_written_elsewhere_asks_before_running(bundle, repo, tmp_path) -> None:
    marker = tmp_path / "ran"
    added = claims.add_claim(bundle, "X", check=f"touch {marker}")
    # The bundle is copied elsewhere (a bundle pulled from another machine).
    copy = Bundle(tmp_path / "copy.ouro")
    shutil.copytree(bundle.root, copy.root)
    code, out = ouro(copy, "claim", "verify", added["id"])
    assert code != 0 and "touch" in out and "--yes" in out
    assert not marker.exists()
    # Interactive no: nothing runs. (the in-process run's stdin is not a terminal, so the
    # refusal above is what an agent or a pipe sees; the prompt is for people.)
    code, out = ouro(copy, "claim", "verify", added["id"], "--yes")
    assert code == 0 and marker.exists()
    marker.unlink()
    code, _ = ouro(copy, "claim", "verify", added["id"])  # confirmed once: trusted now
    assert code == 0 and marker.exists()
    # A hand-edited check in the original bundle asks again.
    path = paths.claims_dir(bundle) / f"{added['id']}.json"
    data = json.loads(path.read_text())
    data["check"] = "echo changed by hand"
    path.write_text(json.dumps(data))
    code, out = ouro(bundle, "claim", "verify", added["id"])
    assert code != 0 and "echo changed by hand" in out


def test_verify_of_a_claim_without_a_check_says_it_stays_asserted(bundle) -> None:
    added = claims.add_claim(bundle, "no check")
    code, out = ouro(bundle, "claim", "verify", added["id"])
    assert code != 0 and "stays asserted" in out


# --- debt only where the agent can act ----------------------------------------


def test_measured_claims_without_checks_are_asserted_not_debt(bundle, repo) -> None:
    claims.add_claim(bundle, "agent says so")  # default authority agent, no check
    claims.add_evidence(
        bundle, claims.list_claims(bundle)["claims"][0]["id"], command="x", exit_code=0
    )
    full = read_resume_full(bundle)
    assert debt_message(full, now="2026-01-01T00:00:00.000Z") is None
    checked = claims.add_claim(bundle, "checked", check="true")
    message = debt_message(read_resume_full(bundle), now="2026-01-01T00:00:00.000Z")
    assert message is not None and checked["id"] in message
    assert "claim verify" in debt_actions(message)
    claims.verify_claim(bundle, checked["id"])
    assert debt_message(read_resume_full(bundle), now="2026-01-01T00:00:00.000Z") is None


def test_block_on_debt_never_asks_for_claim_verify_when_no_claim_is_debt() -> None:
    message = "ouro: 1 obligation(s) due:\n- ob-1 due 2026-01-01: x"
    actions = debt_actions(message)
    assert "claim" not in actions and "obligation close" in actions


def test_stop_hook_does_not_nag_about_asserted_claims(bundle, repo) -> None:
    from ouro.hooks.claude import HOST
    from ouro.hooks.common import Options, run_hook
    from ouro.hooks.handlers import HANDLERS

    claims.add_claim(bundle, "agent-authority claim with no check")
    stdin = json.dumps({"hook_event_name": "Stop", "session_id": "s1", "cwd": str(repo)})
    out = run_hook(
        HOST, "Stop", stdin, bundle_path=str(bundle.root), env=dict(os.environ),
        options=Options(block_on_debt=True), handlers=HANDLERS,
    )  # fmt: skip
    assert out.stdout == ""  # nothing to nag about, nothing to block on


def test_on_a_terminal_the_cli_shows_the_check_and_asks(bundle, repo, tmp_path) -> None:
    """A person at a terminal is asked (a real pty); 'n' runs nothing, 'y' runs it."""
    import pty
    import subprocess
    import sys

    marker = tmp_path / "ran"
    added = claims.add_claim(bundle, "X", check=f"touch {marker}")
    copy = Bundle(tmp_path / "copy.ouro")
    shutil.copytree(bundle.root, copy.root)

    def answer(reply: str) -> subprocess.CompletedProcess[bytes]:
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [sys.executable, "-m", "ouro.cli", "--bundle", str(copy.root), "claim", "verify",
             added["id"]],
            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        os.close(slave)
        os.write(master, reply.encode() + b"\n")
        out, err = proc.communicate(timeout=60)
        os.close(master)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    refused = answer("n")
    assert refused.returncode != 0 and f"touch {marker}".encode() in refused.stderr
    assert b"Run it?" in refused.stderr and not marker.exists()
    accepted = answer("y")
    assert accepted.returncode == 0, accepted.stderr
    assert marker.exists()
