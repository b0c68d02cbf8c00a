"""``ouro habits tick``: due habits run once, concurrent ticks never double-run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections import Counter
from typing import Any

from ouro.bundle import Bundle
from ouro.habits.runner import run_habit
from ouro.habits.schedule import due_report, tick
from ouro.orient import build_packet
from tests.conftest import ouro_json

PY = shlex.quote(sys.executable)


def define(bundle: Bundle, name: str, run: str, **extra: Any) -> None:
    fields = {"title": f"{name} habit", "cadence": "30m", "run": run, **extra}
    bundle.habits.mkdir(exist_ok=True)
    (bundle.habits / f"{name}.yaml").write_text(json.dumps(fields), encoding="utf-8")


def receipts(bundle: Bundle) -> list[dict[str, Any]]:
    folder = bundle.arc / "flight-recorder" / "habit-receipts"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def set_last_run(bundle: Bundle, name: str, when: str) -> None:
    path = bundle.state / "habits" / f"{name}.json"
    state = json.loads(path.read_text())
    state["lastRunAt"] = when
    path.write_text(json.dumps(state))


def test_two_ticks_at_once_run_each_due_habit_exactly_once(bundle: Bundle) -> None:
    slow = f'{PY} -c "import time; time.sleep(0.4)"'
    for name in ("alpha", "beta", "gamma"):
        define(bundle, name, slow)
    env = {k: v for k, v in os.environ.items() if k not in ("OURO_BUNDLE", "OURO_DEBUG")}
    argv = [sys.executable, "-m", "ouro.cli", "--bundle", str(bundle.root), "habits", "tick"]
    procs = [
        subprocess.Popen(
            [*argv, "--trigger", "cron", "--json"], stdout=subprocess.PIPE, text=True, env=env
        )
        for _ in range(2)
    ]
    results = [json.loads(p.communicate(timeout=60)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    ran = Counter(r["name"] for result in results for r in result["ran"])
    assert ran == {"alpha": 1, "beta": 1, "gamma": 1}
    assert Counter(r["habitName"] for r in receipts(bundle)) == ran
    for result in results:
        for skip in result["skipped"]:
            assert skip["reason"] in ("already running", "already ran (another tick)")
    # a third tick right after finds nothing due
    again = ouro_json("habits", "tick", "--trigger", "cron", bundle=bundle)
    assert again["ran"] == [] and again["skipped"] == []


def test_missed_windows_run_once_as_overdue(bundle: Bundle) -> None:
    define(bundle, "late", f"{PY} -c pass", cadence="*/5 * * * *")
    define(bundle, "ontime", f"{PY} -c pass", cadence="1m")
    first = tick(bundle, "cron", orient=build_packet)
    # "late" never ran and its first window is still ahead (anchored at the file's mtime);
    # "ontime" (an interval) is due at once
    assert [r["name"] for r in first["ran"]] == ["ontime"]
    assert first["ran"][0]["trigger"] == "cron"
    # pretend both last ran hours ago: many windows missed → one overdue run each
    run_habit(bundle, "late", orient=build_packet)
    set_last_run(bundle, "late", "2026-01-01T00:00:00.000Z")
    set_last_run(bundle, "ontime", "2026-01-01T00:00:00.000Z")
    rows = {r["name"]: r for r in due_report(bundle)["habits"]}
    assert rows["late"]["overdue"] and rows["late"]["windowsMissed"] >= 1
    second = ouro_json("habits", "tick", "--trigger", "launchd", bundle=bundle)
    assert sorted((r["name"], r["trigger"]) for r in second["ran"]) == [
        ("late", "overdue"),
        ("ontime", "overdue"),
    ]
    third = tick(bundle, "cron", orient=build_packet)
    assert third["ran"] == []
    triggers = Counter((r["habitName"], r["trigger"]) for r in receipts(bundle))
    assert triggers == {
        ("ontime", "cron"): 1,
        ("late", "manual"): 1,
        ("late", "overdue"): 1,
        ("ontime", "overdue"): 1,
    }


def test_paused_and_invalid_habits_do_not_stop_the_others(bundle: Bundle) -> None:
    define(bundle, "good", f"{PY} -c pass")
    define(bundle, "resting", f"{PY} -c pass", status="paused")
    (bundle.habits / "broken.yaml").write_text("title: broken\ncadence: every tuesday\nrun: x\n")
    result = tick(bundle, "cron", orient=build_packet)
    assert [r["name"] for r in result["ran"]] == ["good"]
    assert result["problems"] == [
        {
            "file": "habits/broken.yaml",
            "field": "cadence",
            "reason": "'every tuesday' is not a cadence; use an interval like 30m, 2h, 1d, 1w, "
            "a 5-field cron expression like '*/15 * * * *', or a macro like @daily",
        }
    ]
    due = {r["name"]: r for r in due_report(bundle)["habits"]}
    assert due["resting"]["status"] == "paused" and due["resting"]["due"] is False
    # a paused habit still runs when asked by name
    assert run_habit(bundle, "resting", orient=build_packet)["nextRunAt"] is None


def test_due_at_a_given_time(bundle: Bundle) -> None:
    define(bundle, "nine", f"{PY} -c pass", cadence="0 9 * * *")
    os.utime(bundle.habits / "nine.yaml", (1767225600, 1767225600))  # 2026-01-01T00:00Z
    early = ouro_json("habits", "due", "--at", "2026-01-01T08:59:00Z", bundle=bundle)
    assert early["due"] == [] and early["habits"][0]["dueAt"] == "2026-01-01T09:00:00.000Z"
    late = ouro_json("habits", "due", "--at", "2026-01-01T09:01:00Z", bundle=bundle)
    assert late["due"] == ["nine"] and late["habits"][0]["overdue"] is False


def test_a_malformed_state_file_is_reported_then_kept_aside(bundle: Bundle) -> None:
    define(bundle, "h", f"{PY} -c pass")
    first = run_habit(bundle, "h", orient=build_packet)
    path = bundle.state / "habits" / "h.json"
    path.write_text("{not json")
    [row] = due_report(bundle)["habits"]
    # unknown stays unknown: the last run comes from the receipt, and the problem is named
    assert row["due"] is False
    assert row["problem"].startswith("state/habits/h.json: unreadable")
    assert row["problem"].endswith("; last run taken from its receipt")
    second = run_habit(bundle, "h", orient=build_packet)
    assert json.loads(path.read_text())["lastRunId"] == second["runId"] != first["runId"]
    [kept] = (bundle.state / "habits").glob("h.json.corrupt-*")
    assert kept.read_text() == "{not json"
