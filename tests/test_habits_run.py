"""Habit runs: private sessions, outcomes derived from the bundle, receipts, state."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.habits.receipt import HabitRunReceipt, receipt_schema
from ouro.habits.runner import habit_lock, run_habit
from ouro.habits.schema import PUBLISHED, schema_bytes
from ouro.orient import build_packet
from ouro.store.lock import FileLock
from tests.conftest import REPO, cli_run, ouro_json, run_ouro, snapshot

PY = shlex.quote(sys.executable)
CLI = f"{PY} -m ouro.cli"


def define(bundle: Bundle, name: str, run: str, **extra: Any) -> None:
    fields = {"title": f"{name} habit", "cadence": "30m", "run": run, **extra}
    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / f"{name}.yaml").write_text(json.dumps(fields), encoding="utf-8")


def script(bundle: Bundle, name: str, body: str) -> str:
    """Write a Python body to habits/bin/<name>.py; return its run line."""
    folder = bundle.habits / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return f"{PY} habits/bin/{name}.py"


def validate(receipt: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(receipt, receipt_schema())
    assert HabitRunReceipt.model_validate(receipt).to_json() == receipt


def cli_json(bundle: Bundle, *args: str) -> Any:
    """The CLI in-process (click's runner): same commands, no interpreter start."""
    result = cli_run(["--bundle", str(bundle.root), *args, "--json"])
    # a negative outcome (exit 1: a blocked verdict, a failed check) still prints its result
    assert result.exit_code in (0, 1) and '"error"' not in result.output[:9], result.output
    return json.loads(result.output)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper is dead: it runs nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def on_disk(bundle: Bundle, receipt: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(bundle.path(receipt["receiptLocator"]).read_text())
    return data


# --- outcome derivation ---------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "outcome", "ref_kind", "ref_prefix"),
    [
        # the body claims a write on stdout but writes nothing: its say-so is ignored
        (
            f"{PY} -c \"print('outcome: wrote_record')\"",
            "no_change",
            "none",
            "arc/flight-recorder/habit-receipts/",
        ),
        (f"{CLI} arc note 'checked the inbox'", "wrote_arc", "arc", "arc/flight-recorder/events/"),
        (f"{CLI} desk task add ops 'answer Ari'", "updated_desk", "desk_task", "desk/ops/"),
        (
            f"{CLI} diary write 'the inbox is triaged at nine'",
            "wrote_record",
            "desk_record",
            "desk/_record/diary/facts.jsonl#f-",
        ),
        (
            f"{CLI} surface --to originator --reason status 'inbox clear'",
            "surfaced",
            "surface",
            "arc/outbox/pending.jsonl#ob-",
        ),
    ],
)
def test_outcome_is_derived_from_what_the_body_changed(
    bundle: Bundle, command: str, outcome: str, ref_kind: str, ref_prefix: str
) -> None:
    if "desk task" in command:
        invoke("desk_track_add", bundle, {"name": "ops"})
    define(bundle, "triage", command, origin={"friendId": "ari", "channel": "imessage"})
    receipt = run_habit(bundle, "triage", orient=build_packet, trigger="manual")
    assert receipt["errors"] == []
    assert receipt["exitCode"] == 0
    assert receipt["outcome"] == outcome
    assert any(
        r["kind"] == ref_kind and r["locator"].startswith(ref_prefix)
        for r in receipt["producedRefs"]
    ), receipt["producedRefs"]
    assert on_disk(bundle, receipt) == receipt
    validate(receipt)


def test_receipt_event_and_runtime_state(bundle: Bundle) -> None:
    define(bundle, "ping", f"{CLI} arc note pong", origin={"friendId": "ari"})
    receipt = run_habit(bundle, "ping", orient=build_packet, trigger="poke")
    run_id = receipt["runId"]
    assert run_id.startswith("hr-") and receipt["sessionId"] == "hs-" + run_id[3:]
    assert receipt["schemaVersion"] == 2
    assert receipt["trigger"] == "poke"
    assert receipt["definitionLocator"] == "habits/ping.yaml"
    assert receipt["sessionLocator"] == f"state/sessions/{receipt['sessionId']}/"
    assert receipt["pendingLocator"] == "arc/outbox/pending.jsonl"
    assert receipt["runtimeStateLocator"] == "state/habits/ping.json"
    assert receipt["receiptLocator"] == f"arc/flight-recorder/habit-receipts/{run_id}.json"
    assert receipt["nextRunAt"] is not None
    routes = receipt["permissionEnvelope"]["returnRoutes"]
    assert [(r["kind"], r["recipient"], r["status"]) for r in routes] == [
        ("family", "family", "allowed"),
        ("originator", "ari", "allowed"),
    ]
    assert receipt["toolPolicy"]["requestedTools"] is None
    assert "habits_run" in receipt["toolPolicy"]["deniedTools"]
    # the session scratch is gone; the receipt is not
    assert not (bundle.root / receipt["sessionLocator"]).exists()
    assert receipt["sessionKept"] is False
    # a habit_run flight-recorder event points at the receipt
    events = [
        json.loads(line)
        for f in sorted((bundle.arc / "flight-recorder" / "events").glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    habit_events = [e for e in events if e["kind"] == "habit_run"]
    assert len(habit_events) == 1
    assert habit_events[0]["producedRefs"][0]["locator"] == receipt["receiptLocator"]
    assert habit_events[0]["sessionRef"] == receipt["sessionId"]
    state = json.loads((bundle.state / "habits" / "ping.json").read_text())
    assert state["lastRunId"] == run_id
    assert state["lastRunAt"] == receipt["startedAt"]
    assert state["lastOutcome"] == "wrote_arc"
    assert state["nextRunAt"] == receipt["nextRunAt"]
    assert state["consecutiveFailures"] == 0


def test_the_body_gets_its_session_environment(bundle: Bundle) -> None:
    run = script(
        bundle,
        "env",
        """
        import json, os
        keys = ["OURO_BUNDLE", "OURO_SESSION_ID", "OURO_HABIT", "OURO_ORIENT_FILE",
                "OURO_SESSION_DIR", "OURO_RUN_ID", "OURO_TRIGGER", "OURO_GRANTED_TOOLS",
                "OURO_DENIED_TOOLS"]
        seen = {k: os.environ.get(k) for k in keys}
        seen["orient"] = open(os.environ["OURO_ORIENT_FILE"]).read()
        seen["cwd"] = os.getcwd()
        with open(os.path.join(os.environ["OURO_SESSION_DIR"], "seen.json"), "w") as f:
            json.dump(seen, f)
        """,
    )
    define(bundle, "env", run, tools=["arc_note", "surface"])
    receipt = run_habit(bundle, "env", orient=build_packet, trigger="manual", keep_session=True)
    folder = bundle.root / receipt["sessionLocator"]
    seen = json.loads((folder / "seen.json").read_text())
    assert seen["OURO_BUNDLE"] == str(bundle.root)
    assert seen["OURO_SESSION_ID"] == receipt["sessionId"]
    assert seen["OURO_RUN_ID"] == receipt["runId"]
    assert seen["OURO_HABIT"] == "env"
    assert seen["OURO_TRIGGER"] == "manual"
    assert seen["OURO_ORIENT_FILE"] == str(folder / "orient.md")
    assert seen["orient"].startswith("# orient")
    assert seen["cwd"] == str(bundle.root)
    assert seen["OURO_GRANTED_TOOLS"] == "arc_note,surface"
    assert "diary_write" in seen["OURO_DENIED_TOOLS"].split(",")
    assert receipt["sessionKept"] is True
    assert receipt["outcome"] == "no_change"  # scratch in the session is not an output


# --- failures -----------------------------------------------------------------------


def test_timeout_gives_an_error_receipt_releases_the_lock_and_the_next_tick_runs(
    bundle: Bundle,
) -> None:
    flag = bundle.root / "slow.flag"
    flag.write_text("")
    run = script(
        bundle,
        "slow",
        f"""
        import os, subprocess, sys, time
        # a grandchild in the same process group must die with the body
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(os.path.join(os.environ["OURO_SESSION_DIR"], "..", "..", "..", "pids"), "w").write(
            f"{{os.getpid()}} {{child.pid}}")
        if os.path.exists({str(flag)!r}):
            time.sleep(60)
        child.kill()
        """,
    )
    define(bundle, "slow", run, timeout=1)
    receipt = run_habit(bundle, "slow", orient=build_packet, trigger="manual")
    assert receipt["outcome"] == "error"
    assert receipt["errors"] == ["the body timed out after 1s and was killed"]
    assert receipt["exitCode"] is not None and receipt["exitCode"] < 0
    validate(receipt)
    for pid in map(int, (bundle.root / "pids").read_text().split()):
        assert not alive(pid), pid
    # the lock is free again
    with FileLock(bundle.lock_path("habit-slow"), timeout=0):
        pass
    state = json.loads((bundle.state / "habits" / "slow.json").read_text())
    assert state["lastOutcome"] == "error" and state["consecutiveFailures"] == 1
    # the next tick (one window later) runs it normally
    flag.unlink()
    state["lastRunAt"] = "2026-01-01T00:00:00.000Z"
    (bundle.state / "habits" / "slow.json").write_text(json.dumps(state))
    tick = ouro_json("habits", "tick", "--trigger", "cron", bundle=bundle)
    assert [(r["name"], r["outcome"]) for r in tick["ran"]] == [("slow", "no_change")]
    state = json.loads((bundle.state / "habits" / "slow.json").read_text())
    assert state["lastOutcome"] == "no_change" and state["consecutiveFailures"] == 0


@pytest.mark.parametrize(
    ("command", "exit_code", "error"),
    [
        (
            f"{PY} -c \"import sys; sys.stderr.write('boom password=hunter22'); sys.exit(3)\"",
            3,
            "the body exited with status 3: boom password=[redacted:password]",
        ),
        (  # Claude Code says why on stdout, with nothing on stderr
            f"{PY} -c \"print('Not logged in \u00b7 Please run /login password=hunter22'); "
            'raise SystemExit(1)"',
            1,
            "the body exited with status 1: Not logged in \u00b7 Please run /login "
            "password=[redacted:password]",
        ),
        (  # only the end of a long stdout
            f"{PY} -c \"print('x' * 5000 + ' the end'); raise SystemExit(2)\"",
            2,
            "the body exited with status 2: " + "x" * 391 + " the end",
        ),
        (
            f'{PY} -c "import os; os.kill(os.getpid(), 9)"',
            -9,
            "the body was killed by signal SIGKILL",
        ),
        (
            "/no/such/body --flag",
            None,
            "cannot start the body '/no/such/body': No such file or directory",
        ),
    ],
)
def test_a_crashing_body_still_yields_a_receipt(
    bundle: Bundle, command: str, exit_code: int | None, error: str
) -> None:
    define(bundle, "crash", command)
    receipt = run_habit(bundle, "crash", orient=build_packet, trigger="manual")
    assert receipt["outcome"] == "error"
    assert receipt["exitCode"] == exit_code
    assert receipt["errors"] == [error]
    assert "hunter22" not in bundle.path(receipt["receiptLocator"]).read_text()
    validate(receipt)
    with FileLock(bundle.lock_path("habit-crash"), timeout=0):
        pass
    assert not (bundle.root / receipt["sessionLocator"]).exists()


def test_a_hosts_colour_codes_are_not_kept_nor_printed(bundle: Bundle) -> None:
    run = script(
        bundle,
        "ansi",
        r"""
        import sys
        sys.stderr.write("\x1b[91m\x1b[1mError: \x1b[0mno model\x1b]0;title\x07\rdone\x00\n")
        raise SystemExit(1)
        """,
    )
    define(bundle, "ansi", run)
    receipt = run_habit(bundle, "ansi", orient=build_packet, trigger="manual")
    assert receipt["errors"] == ["the body exited with status 1: Error: no model\ndone"]
    # a receipt written before: printed plain
    path = bundle.path(receipt["receiptLocator"])
    raw = json.loads(path.read_text())
    raw["errors"] = ["\x1b[91mError: \x1b[0mold\x1b[2K"]
    path.write_text(json.dumps(raw))
    out = run_ouro("habits", "last", "ansi", bundle=bundle, check=True).stdout
    assert "  error: Error: old\n" in out and "\x1b" not in out


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("\x1b[38;5;196mred\x1b[0m", "red"),
        ("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("tab\tnew\nline", "tab\tnew\nline"),
        ("bell\x07 del\x7f c1\x9b esc\x1b", "bell del c1 esc"),
        ("50%\r100%", "50%\n100%"),
    ],
)
def test_terminal_control_is_removed(text: str, plain: str) -> None:
    from ouro.models.terminal import plain as make_plain

    assert make_plain(text) == plain


def test_a_timed_out_body_says_what_it_printed_last(bundle: Bundle) -> None:
    """A host waiting for a login says so and hangs: its last words are the reason."""
    run = script(
        bundle,
        "hang",
        """
        import sys, time
        print("ERROR: not logged in; retrying in 60s", flush=True)
        time.sleep(60)
        """,
    )
    define(bundle, "hang", run, timeout=1)
    receipt = run_habit(bundle, "hang", orient=build_packet, trigger="manual")
    assert receipt["timedOut"] is True
    assert receipt["errors"] == [
        "the body timed out after 1s and was killed: ERROR: not logged in; retrying in 60s"
    ]


def test_a_run_while_the_habit_runs_is_refused(bundle: Bundle) -> None:
    define(bundle, "solo", f"{PY} -c pass")
    with habit_lock(bundle, "solo"):
        proc = run_ouro("habits", "run", "solo", bundle=bundle)
    assert proc.returncode == 1
    assert "habit solo is already running" in proc.stderr
    assert f"pid={os.getpid()}" in proc.stderr
    assert not list((bundle.arc / "flight-recorder" / "habit-receipts").glob("*.json"))
    # once free it runs
    assert ouro_json("habits", "run", "solo", bundle=bundle)["outcome"] == "no_change"


# --- tool policy -------------------------------------------------------------------


def test_a_denied_tool_is_refused_inside_the_session_and_shows_in_the_receipt(
    bundle: Bundle,
) -> None:
    run = script(
        bundle,
        "limited",
        f"""
        import subprocess
        cli = [{sys.executable!r}, "-m", "ouro.cli"]
        denied = subprocess.run(cli + ["diary", "write", "a fact it may not file"])
        assert denied.returncode == 1
        subprocess.run(cli + ["arc", "note", "noted instead"], check=True)
        """,
    )
    define(bundle, "limited", run, tools=["arc_note", "no_such_tool"])
    receipt = run_habit(bundle, "limited", orient=build_packet, trigger="manual", keep_session=True)
    policy = receipt["toolPolicy"]
    assert policy["requestedTools"] == ["arc_note", "no_such_tool"]
    assert policy["grantedTools"] == ["arc_note"]
    assert "diary_write" in policy["deniedTools"]
    assert [(c["tool"], c["reason"]) for c in policy["refusedCalls"]] == [
        ("diary_write", "not in the tools: list of habits/limited.yaml")
    ]
    assert policy["outwardMessagingAllowed"] is False  # surface was not requested
    assert (
        "requested tool 'no_such_tool' is not a registered tool; ignored"
        in (receipt["permissionEnvelope"]["warnings"])
    )
    # refused ranks above the Arc write (see ouro.habits.outcome)
    assert receipt["outcome"] == "blocked"
    assert receipt["exitCode"] == 0
    stderr = (bundle.root / receipt["sessionLocator"] / "stderr.log").read_text()
    assert (
        f"error: tool diary_write is denied in habit session {receipt['sessionId']} "
        "(habit limited): not in the tools: list of habits/limited.yaml"
    ) in stderr
    assert "hint: granted here: arc_note" in stderr
    assert (bundle.record / "diary" / "facts.jsonl").read_text() == ""
    validate(receipt)


def test_bundle_denied_tools_and_nested_habits_are_refused(bundle: Bundle) -> None:
    meta = json.loads(bundle.meta_path.read_text())
    meta["habits"] = {"deniedTools": ["arc_note"]}
    bundle.meta_path.write_text(json.dumps(meta))
    run = script(
        bundle,
        "nested",
        f"""
        import subprocess
        cli = [{sys.executable!r}, "-m", "ouro.cli"]
        for args in (["arc", "note", "x"], ["habits", "run", "nested"], ["habits", "tick"]):
            assert subprocess.run(cli + args).returncode == 1
        """,
    )
    define(bundle, "nested", run)
    receipt = run_habit(bundle, "nested", orient=build_packet, trigger="manual", keep_session=True)
    assert receipt["exitCode"] == 0
    refused = {c["tool"]: c["reason"] for c in receipt["toolPolicy"]["refusedCalls"]}
    assert refused == {
        "arc_note": "denied to every habit by bundle.json habits.deniedTools",
        "habits_run": "habits do not start habits",
    }
    stderr = (bundle.root / receipt["sessionLocator"] / "stderr.log").read_text()
    assert "ouro habits tick refused inside habit session" in stderr
    assert len(list((bundle.arc / "flight-recorder" / "habit-receipts").glob("*.json"))) == 1


# --- reconstruction, schema, purity ---------------------------------------------------


def test_last_reports_the_run_after_every_session_scratch_is_deleted(bundle: Bundle) -> None:
    define(bundle, "keep", f"{PY} -c pass", origin={"friendId": "ari"})
    first = run_habit(bundle, "keep", orient=build_packet, trigger="manual", keep_session=True)
    second = run_habit(bundle, "keep", orient=build_packet, trigger="poke", keep_session=True)
    sessions = bundle.state / "sessions"
    assert (bundle.root / second["sessionLocator"]).is_dir()
    for child in sessions.iterdir():
        if child.is_dir():
            shutil.rmtree(child)
    last = ouro_json("habits", "last", "keep", bundle=bundle)
    assert last["receipt"] == second and last["receipt"]["runId"] != first["runId"]
    assert last["runtimeState"]["lastRunId"] == second["runId"]
    assert last["problems"] == []
    text = cli_run(["--bundle", str(bundle.root), "habits", "last", "keep"]).output
    assert f"habit keep (poke): no_change\n  run {second['runId']}" in text
    # even without the runtime state, the receipt alone reconstructs it
    (bundle.state / "habits" / "keep.json").unlink()
    last = cli_json(bundle, "habits", "last", "keep")
    assert last["receipt"]["runId"] == second["runId"]
    assert last["runtimeState"] is None
    assert last["problems"] == [
        "state/habits/keep.json missing; the run comes from its receipt alone"
    ]


def test_last_of_a_habit_that_never_ran(bundle: Bundle) -> None:
    define(bundle, "fresh", f"{PY} -c pass")
    proc = run_ouro("habits", "last", "fresh", bundle=bundle)
    assert proc.returncode == 1
    assert "habit 'fresh' has no recorded run" in proc.stderr
    assert "ouro habits run fresh" in proc.stderr


def test_published_schema_is_the_models_schema() -> None:
    published = (REPO / PUBLISHED).read_bytes()
    assert published == schema_bytes(), (
        f"{PUBLISHED} drifted from HabitRunReceipt; regenerate it with "
        f"'python -m ouro.habits.schema {PUBLISHED}'"
    )
    schema = json.loads(published)
    assert schema["properties"]["schemaVersion"]["const"] == 2
    assert "schemaVersion" in schema["required"] and "nextRunAt" in schema["required"]


def test_schema_rejects_a_receipt_missing_a_field(bundle: Bundle) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    define(bundle, "s", f"{PY} -c pass")
    receipt = run_habit(bundle, "s", orient=build_packet, trigger="manual")
    broken = dict(receipt)
    del broken["permissionEnvelope"]
    with pytest.raises(jsonschema.ValidationError, match="permissionEnvelope"):
        jsonschema.validate(broken, receipt_schema())
    broken = {**receipt, "outcome": "did_great"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, receipt_schema())


def test_reads_are_pure(bundle: Bundle) -> None:
    define(bundle, "pure", f"{PY} -c pass")
    (bundle.habits / "broken.yaml").write_text("title: [unclosed\n")
    run_habit(bundle, "pure", orient=build_packet, trigger="manual")
    before = snapshot(bundle.root)
    assert cli_json(bundle, "habits", "list")["habits"][0]["name"] == "pure"
    assert cli_json(bundle, "habits", "show", "pure")["name"] == "pure"
    assert cli_json(bundle, "habits", "due")["due"] == []
    assert cli_json(bundle, "habits", "last", "pure")["habit"] == "pure"
    assert snapshot(bundle.root) == before


def test_paths_are_inside_the_repo() -> None:
    assert (REPO / "docs" / "habits.md").is_file()
    assert Path(REPO / PUBLISHED).is_file()


def test_show_explains_policy_and_envelope(bundle: Bundle) -> None:
    define(bundle, "shown", f"{PY} -c pass", tools=["surface"], origin={"friendId": "ari"})
    out = cli_run(["--bundle", str(bundle.root), "habits", "show", "shown"]).output
    assert "  tools requested: surface\n  tools granted: 1; denied: " in out
    assert (
        "not in the tools: list of habits/shown.yaml; habits_run: habits do not start habits)"
        in out
    )
    assert "    originator: ari (allowed)\n" in out
    assert "  never ran\n  due now" in out


def test_demo_section_shows_one_run_and_its_receipt(bundle: Bundle) -> None:
    from ouro.cli.render import text
    from ouro.demo import habits as demo

    steps: list[tuple[str, str]] = []
    demo.run(bundle, lambda title, detail: steps.append((title, detail)), text)
    titles = [title for title, _ in steps]
    assert "ouro habits run report  (private session, thrown away afterwards)" in titles
    title, receipt_step = next(s for s in steps if s[0].startswith("the receipt: "))
    receipt = json.loads(bundle.path(title.removeprefix("the receipt: ")).read_text())
    assert receipt["outcome"] == "surfaced"
    validate(receipt)
    # the demo shows a summary and where the whole receipt is, not 100 lines of JSON
    assert f"({receipt['trigger']}): surfaced" in receipt_step and "cat " in receipt_step
    assert len(receipt_step.splitlines()) <= 5
    assert "habit report (manual): surfaced" in steps[-1][1]


def test_the_search_fast_path_also_refuses_denied_tools(bundle: Bundle) -> None:
    define(bundle, "reader", f"{CLI} desk search inbox", tools=["arc_note"])
    receipt = run_habit(bundle, "reader", orient=build_packet, trigger="manual")
    assert [c["tool"] for c in receipt["toolPolicy"]["refusedCalls"]] == ["desk_search"]
