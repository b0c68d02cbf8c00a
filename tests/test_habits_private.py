"""Private stays private; surfacing reaches the main line; an agent is launched.

Default-run tests (no real host): a ``run:`` body or a stand-in agent
executable writes through ouro inside a habit session, and the main line's
packet, resume and queue are read afterwards.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any

import ouro
from ouro.bundle import Bundle
from ouro.habits.runner import run_habit
from ouro.orient import build_packet
from tests.conftest import ouro_json, run_ouro

PY = shlex.quote(sys.executable)


def define(bundle: Bundle, name: str, **fields: Any) -> None:
    bundle.habits.mkdir(exist_ok=True)
    doc = {"title": f"{name} habit", "cadence": "30m", **fields}
    (bundle.habits / f"{name}.yaml").write_text(json.dumps(doc), encoding="utf-8")


def script(bundle: Bundle, name: str, calls: list[list[str]]) -> str:
    """A body that runs ``ouro <args>`` once per call (exit codes ignored)."""
    folder = bundle.habits / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(
        textwrap.dedent(
            f"""
            import subprocess, sys
            for args in {calls!r}:
                subprocess.run([sys.executable, "-m", "ouro.cli", *args])
            """
        )
    )
    return f"{PY} habits/bin/{name}.py"


def main_line(bundle: Bundle) -> None:
    run_ouro("arc", "ask", "MAIN-ASK fix the parser", bundle=bundle, check=True)
    run_ouro("arc", "next", "MAIN-NEXT run its tests", bundle=bundle, check=True)
    run_ouro("arc", "handoff", "MAIN-HANDOFF stopped at the lexer", bundle=bundle, check=True)


def test_a_habit_sessions_arc_writes_stay_in_its_lane(bundle: Bundle) -> None:
    main_line(bundle)
    calls = [
        ["arc", "ask", "LANE-ASK triage the inbox", "--session", "main-session-forged"],
        ["arc", "next", "LANE-NEXT read thread 1"],
        ["arc", "handoff", "LANE-HANDOFF two threads need a reply"],
        ["diary", "write", "LANE-FACT the inbox holds two threads", "--about", "inbox"],
        ["claim", "add", "LANE-CLAIM the inbox is triaged"],
        ["obligation", "add", "LANE-OWED reply to ari", "--to", "ari"],
    ]
    define(bundle, "triage", run=script(bundle, "lane", calls))
    receipt = run_habit(bundle, "triage", orient=build_packet)
    assert receipt["errors"] == [], receipt["errors"]
    # the receipt summarises the lane
    assert receipt["lane"]["ask"] == "LANE-ASK triage the inbox"
    assert receipt["lane"]["next"] == "LANE-NEXT read thread 1"
    assert receipt["lane"]["handoff"] == "LANE-HANDOFF two threads need a reply"
    # every event the session wrote carries the session and the habit, even a forged one
    events = [
        json.loads(line)
        for path in sorted((bundle.root / "arc/flight-recorder/events").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    lane = [e for e in events if "LANE-" in e.get("summary", "") + str(e.get("currentAsk"))]
    assert len(lane) >= 3
    assert {e["sessionRef"] for e in lane} == {receipt["sessionId"]}
    assert {e["meta"]["habit"] for e in lane} == {"triage"}
    # the main line is untouched: resume, packet
    resume = ouro_json("arc", "resume", bundle=bundle)
    text = json.dumps(resume)
    assert "MAIN-ASK" in text and "MAIN-NEXT" in text and "MAIN-HANDOFF" in text
    assert "LANE-" not in text
    packet = ouro.open(bundle.root).orient()["text"]
    assert "MAIN-ASK" in packet and "LANE-ASK" not in packet and "LANE-NEXT" not in packet
    # ... except the one line about the run
    [line] = [ln for ln in packet.splitlines() if ln.startswith("- habit triage:")]
    assert "wrote_record" in line and "1 desk_record" not in line  # facts + entities
    # the fact is an ordinary record with its provenance
    facts = [
        json.loads(x)
        for x in (bundle.root / "desk/_record/diary/facts.jsonl").read_text().splitlines()
    ]
    [fact] = [f for f in facts if f["text"].startswith("LANE-FACT")]
    assert fact["provenance"]["origin"] == "habit:triage"
    assert fact["provenance"]["sessionRef"] == receipt["sessionId"]
    # claims and obligations say where they came from too
    [claim] = [json.loads(p.read_text()) for p in (bundle.root / "arc/claims").glob("cl-*.json")]
    assert (claim["origin"], claim["originSession"]) == ("habit:triage", receipt["sessionId"])
    [owed] = [
        json.loads(p.read_text()) for p in (bundle.root / "arc/obligations").glob("ob-*.json")
    ]
    assert (owed["origin"], owed["originSession"]) == ("habit:triage", receipt["sessionId"])
    # ... and the main line's do not
    run_ouro("claim", "add", "MAIN-CLAIM", bundle=bundle, check=True)
    main_claims = [json.loads(p.read_text()) for p in (bundle.root / "arc/claims").glob("*.json")]
    assert [c.get("origin") for c in main_claims if c["text"] == "MAIN-CLAIM"] == [None]


def test_outside_a_live_session_a_forged_session_id_is_the_main_line(bundle: Bundle) -> None:
    env = {"OURO_SESSION_ID": "hs-01aaaaaaaaaaaaaaaaaaaaaaaa"}
    run_ouro("arc", "ask", "ASK-WITH-FORGED-ENV", bundle=bundle, env=env, check=True)
    resume = ouro_json("arc", "resume", bundle=bundle)
    assert "ASK-WITH-FORGED-ENV" in json.dumps(resume)


def test_with_no_sense_a_surfaced_message_waits_in_the_main_packet_until_acked(
    bundle: Bundle, tmp_path: Path
) -> None:
    main_line(bundle)
    calls = [["surface", "the deploy key expired", "--to", "family", "--reason", "needed_input"]]
    define(bundle, "keys", run=script(bundle, "say", calls))
    receipt = run_habit(bundle, "keys", orient=build_packet)
    [attempt] = receipt["surfaceAttempts"]
    assert attempt["result"] == "queued" and receipt["outcome"] == "surfaced"
    assert "queued to the main line" in attempt["rawStatus"]
    b = ouro.open(bundle.root)
    [waiting] = b.surface.list()["messages"]
    assert waiting["habitName"] == "keys" and waiting["reason"] == "needed_input"
    packet = b.orient()["text"]
    assert "## Habits: surfaced to you" in packet
    assert f"[{waiting['id']}] habit keys (needed_input) to family: the deploy key expired" in (
        packet
    )
    # the workbench shows it too (its Now page)
    from ouro.workbench.site import build_site

    build_site(bundle, tmp_path / "site")
    now = (tmp_path / "site" / "index.html").read_text()
    assert "Surfaced by habits" in now and "the deploy key expired" in now
    assert f"ouro surface ack {waiting['id']}" in now
    # acknowledged (over the CLI): it leaves the packet; the queue keeps it
    out = ouro_json("surface", "ack", waiting["id"], bundle=bundle)
    assert out["acked"] is True and out["already"] is False
    assert "the deploy key expired" not in ouro.open(bundle.root).orient()["text"]
    assert b.surface.list()["messages"] == []
    build_site(bundle, tmp_path / "site2")
    assert "the deploy key expired" not in (tmp_path / "site2" / "index.html").read_text()
    [kept] = b.surface.list(all=True)["messages"]
    assert kept["ackedAt"] == out["ackedAt"]
    # again: idempotent; an unknown id is refused naming the waiting ones
    assert b.surface.ack(waiting["id"])["already"] is True
    missing = run_ouro("surface", "ack", "ob-01nosuchmessage0000000000", bundle=bundle)
    assert missing.returncode != 0 and "waiting: none" in missing.stderr


def _stand_in(tmp_path: Path, name: str) -> Path:
    """An executable that records its argv, cwd and what the host would see."""
    exe = tmp_path / name
    exe.write_text(
        "#!/bin/sh\n"
        f'{PY} -c "import json, os, sys; '
        "json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd(), "
        "'session': os.environ.get('OURO_SESSION_ID'), "
        "'files': sorted(os.listdir('.'))}, open(os.environ['LOG'], 'w'))\" \"$@\"\n"
    )
    exe.chmod(0o755)
    return exe


def test_a_habit_without_run_launches_the_default_agent_headless(
    bundle: Bundle, tmp_path: Path, monkeypatch: Any
) -> None:
    main_line(bundle)
    define(bundle, "triage", prompt="PROMPT-TEXT file what matters", tools=["diary_write"])
    log = tmp_path / "argv.json"
    monkeypatch.setenv("LOG", str(log))
    exe = _stand_in(tmp_path, "claude")
    run_ouro("config", "set", "habits.command.claude", str(exe), bundle=bundle, check=True)
    receipt = run_habit(bundle, "triage", orient=build_packet)
    seen = json.loads(log.read_text())
    assert receipt["body"] == "agent" and receipt["agent"]["name"] == "claude"
    assert receipt["agent"]["executable"] == str(exe) and receipt["exitCode"] == 0
    argv = seen["argv"]
    assert argv[0] == "-p"
    prompt = argv[1]
    assert "triage habit" in prompt and "PROMPT-TEXT file what matters" in prompt
    assert "MAIN-ASK fix the parser" in prompt and "ouro operating guide" in prompt
    assert "--strict-mcp-config" in argv and "--no-session-persistence" in argv
    # none of the project's settings (its hooks: ouro's own) reach the session
    assert argv[argv.index("--setting-sources") + 1] == "user"
    assert seen["cwd"].endswith(receipt["sessionLocator"].rstrip("/"))
    assert seen["session"] == receipt["sessionId"] and "mcp.json" in seen["files"]
    # the session folder (with the prompt and the MCP config) is gone
    assert not (bundle.root / receipt["sessionLocator"]).exists()


def test_the_seeds_minimal_habit_runs_with_the_default_agent(
    bundle: Bundle, tmp_path: Path, monkeypatch: Any
) -> None:
    from tests.test_habits_definition import SEED_MINIMAL

    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / "inbox-triage.yaml").write_text(SEED_MINIMAL)
    log = tmp_path / "argv.json"
    monkeypatch.setenv("LOG", str(log))
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    _stand_in(tmp_path, "claude")  # the default agent, found on PATH
    receipt = run_habit(bundle, "inbox-triage", orient=build_packet)
    assert receipt["agent"]["name"] == "claude" and receipt["exitCode"] == 0, receipt["errors"]
    assert "inbox triage" in json.loads(log.read_text())["argv"][1]
    routes = receipt["permissionEnvelope"]["returnRoutes"]
    assert [(r["kind"], r["recipient"]) for r in routes] == [
        ("family", "family"),
        ("originator", "ari"),
    ]


def test_codex_gets_the_server_on_its_command_line(
    bundle: Bundle, tmp_path: Path, monkeypatch: Any
) -> None:
    define(bundle, "triage", agent="codex", keepTranscript=True)
    log = tmp_path / "argv.json"
    monkeypatch.setenv("LOG", str(log))
    exe = _stand_in(tmp_path, "codex")
    run_ouro("config", "set", "habits.command.codex", str(exe), bundle=bundle, check=True)
    receipt = run_habit(bundle, "triage", orient=build_packet)
    argv = json.loads(log.read_text())["argv"]
    assert argv[:2] == ["exec", "--skip-git-repo-check"]
    config = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert any(c.startswith("mcp_servers.ouro.command=") for c in config)
    assert any("--session" in c and receipt["sessionId"] in c for c in config)
    assert "project_root_markers=[]" in config  # the project's .codex/ is not loaded
    assert "--ephemeral" not in argv  # keepTranscript
    assert receipt["sessionKept"] is True and (bundle.root / receipt["sessionLocator"]).is_dir()


def test_an_agent_that_is_not_installed_is_an_error_receipt(bundle: Bundle) -> None:
    define(bundle, "triage", agent="opencode")
    run_ouro(
        "config", "set", "habits.command.opencode", "no-such-opencode-xyz", bundle=bundle,
        check=True,
    )  # fmt: skip
    receipt = run_habit(bundle, "triage", orient=build_packet)
    assert receipt["outcome"] == "error"
    assert "cannot start the agent opencode" in receipt["errors"][0]
    assert receipt["agent"]["executable"] is None


def test_the_session_mcp_server_lists_granted_and_asked_for_denied_tools(bundle: Bundle) -> None:
    from ouro.habits.policy import session_policy
    from ouro.mcp import session_definitions

    meta = json.loads(bundle.meta_path.read_text())
    meta["habits"] = {"deniedTools": ["arc_note"]}
    bundle.meta_path.write_text(json.dumps(meta))
    body = (
        "import json, os, pathlib; from ouro.bundle import Bundle as F;"
        "from ouro.mcp import session_definitions as s;"
        "d, n = s(F(pathlib.Path(os.environ['OURO_BUNDLE'])), os.environ['OURO_SESSION_ID']);"
        "json.dump({t['name']: t['description'] for t in d}, open(os.environ['OURO_SESSION_DIR'] + "
        "'/../../../listed.json', 'w'))"
    )
    define(bundle, "p", run=[sys.executable, "-c", body], tools=["diary_write", "arc_note"])
    receipt = run_habit(bundle, "p", orient=build_packet)
    assert receipt["errors"] == []
    listed = json.loads((bundle.root / "listed.json").read_text())
    assert set(listed) == {"diary_write", "arc_note", "habits_run"}
    assert listed["arc_note"].startswith("DENIED in this habit session (denied to every habit")
    assert not listed["diary_write"].startswith("DENIED")
    # no live session: the server refuses to start
    import pytest

    from ouro.errors import NotFound

    with pytest.raises(NotFound):
        session_policy(bundle, receipt["sessionId"])
    with pytest.raises(NotFound):
        session_definitions(bundle, receipt["sessionId"])


def test_a_run_killed_midway_leaves_the_main_line_and_says_its_receipt_is_missing(
    bundle: Bundle, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import time

    main_line(bundle)
    body = bundle.habits / "bin" / "slow.py"
    body.parent.mkdir(parents=True, exist_ok=True)
    body.write_text(
        "import os, subprocess, sys, time\n"
        "open(os.environ['OURO_SESSION_DIR'] + '/body.pid', 'w').write(str(os.getpid()))\n"
        "subprocess.run([sys.executable, '-m', 'ouro.cli', 'arc', 'ask', 'SLOW-LANE-ASK'])\n"
        "open(os.environ['OURO_SESSION_DIR'] + '/asked', 'w').write('1')\n"
        "time.sleep(120)\n"
    )
    define(bundle, "slow", run=f"{PY} habits/bin/slow.py")
    env = dict(os.environ, OURO_BUNDLE=str(bundle.root))
    runner = subprocess.Popen(
        [sys.executable, "-m", "ouro.cli", "habits", "run", "slow"], env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    asked: list[Path] = []
    while time.monotonic() < deadline and not asked:
        asked = list((bundle.root / "state/sessions").glob("hs-*/asked"))
        time.sleep(0.2)
    assert asked, "the body never got going"
    runner.kill()  # the wipe: the runner dies, no receipt is written
    runner.wait(timeout=30)
    body_pid = int((asked[0].parent / "body.pid").read_text())
    os.killpg(body_pid, signal.SIGKILL)  # the orphaned body's group (a test's tidy-up)
    packet = ouro.open(bundle.root).orient()["text"]
    assert "MAIN-ASK fix the parser" in packet and "SLOW-LANE-ASK" not in packet
    [line] = [ln for ln in packet.splitlines() if ln.startswith("- habit slow: run hr-")]
    assert "left no receipt" in line
    assert not list((bundle.root / "arc/flight-recorder/habit-receipts").glob("*.json"))
    last = run_ouro("habits", "last", "slow", bundle=bundle)
    assert last.returncode != 0 and "was stopped before it finished" in last.stderr


def test_a_chatty_body_is_cut_at_the_output_limit_and_the_receipt_says_so(
    bundle: Bundle, monkeypatch: Any
) -> None:
    from ouro.habits import body

    monkeypatch.setattr(body, "OUTPUT_LIMIT", 1000)
    define(bundle, "chatty", run=[sys.executable, "-c", "print('x' * 50000)"])
    receipt = run_habit(bundle, "chatty", orient=build_packet, keep_session=True)
    assert receipt["outputTruncated"] is True and receipt["exitCode"] == 0
    assert "output of the body cut at 1,000 bytes per stream" in receipt["errors"]
    kept = bundle.root / receipt["sessionLocator"] / "stdout.log"
    assert kept.stat().st_size == 1000
