"""Tasks close on their checks, leases hold (issue 13 items 4 and 5)."""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing as mp
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from ouro.bundle import Bundle
from ouro.cli.run import run
from ouro.desk import leases, tasks, tracks
from ouro.desk.orientation import desk_items
from ouro.errors import Conflict, ToolDenied
from ouro.store import frontmatter


def ouro(bundle: Bundle, *args: str) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = run(["--bundle", str(bundle.root), *args])
    return code, buffer.getvalue()


@pytest.fixture
def repo(bundle: Bundle) -> Path:
    (bundle.root.parent / "src").mkdir()
    (bundle.root.parent / "src" / "p.py").write_text("P = 1\n")
    tracks.add_track(bundle, "web")
    return bundle.root.parent


def _checked(bundle: Bundle, check: str = "test -f src/p.py", **kw: Any) -> str:
    return tasks.add_task(bundle, "web", "Ship the parser", check=check, **kw).id


def _history(bundle: Bundle, task_id: str) -> list[dict[str, Any]]:
    meta, _ = frontmatter.parse(tasks.find_task(bundle, task_id).path.read_text())
    return list(meta["history"])


# --- completion gated by the check ------------------------------------------------


def test_measured_done_needs_a_passing_observed_run_of_the_check(bundle, repo) -> None:
    task_id = _checked(bundle)
    code, out = ouro(bundle, "desk", "task", "update", task_id, "--status", "done")
    assert code == 1 and "no observed run of its check" in out and "task verify" in out
    assert tasks.find_task(bundle, task_id).meta["status"] == "open"
    code, out = ouro(bundle, "desk", "task", "verify", task_id)
    assert code == 0 and "done: allowed" in out
    code, out = ouro(bundle, "desk", "task", "update", task_id, "--status", "done", "--json")
    assert code == 0 and json.loads(out)["task"]["status"] == "done"


def test_task_verify_exits_one_and_prints_the_tail_when_the_check_fails(bundle, repo) -> None:
    task_id = _checked(bundle, check="echo 'FAILED test_parse'; exit 1")
    code, out = ouro(bundle, "desk", "task", "verify", task_id)
    assert code == 1 and "FAILED test_parse" in out and "exit 1" in out
    receipt = _history(bundle, task_id)[-1]
    assert receipt["event"] == "check" and receipt["exitCode"] == 1
    assert receipt["provenance"] == "observed-by-ouro" and receipt["agent"] == "tester"
    assert receipt["outputDigest"].startswith("sha256:") and "durationMs" in receipt
    with pytest.raises(Conflict, match="last exited 1"):
        tasks.update_task(bundle, task_id, status="done")


def test_a_change_to_the_tasks_files_after_the_check_passed_blocks_done(bundle, repo) -> None:
    task_id = _checked(bundle, about=["src/p.py"])
    tasks.verify_task(bundle, task_id)
    (repo / "src" / "p.py").write_text("P = 2\n")
    with pytest.raises(Conflict, match=r"src/p\.py changed since the check passed"):
        tasks.update_task(bundle, task_id, status="done")
    tasks.verify_task(bundle, task_id)
    assert tasks.update_task(bundle, task_id, status="done")[0].meta["status"] == "done"


def test_a_changed_check_needs_its_own_run(bundle, repo) -> None:
    task_id = _checked(bundle)
    tasks.verify_task(bundle, task_id)
    tasks.update_task(bundle, task_id, check="test -d src")
    with pytest.raises(Conflict, match="no observed run"):
        tasks.update_task(bundle, task_id, status="done")


def test_unverified_completion_is_recorded_and_shown(bundle, repo) -> None:
    task_id = _checked(bundle)
    code, out = ouro(
        bundle, "desk", "task", "update", task_id, "--status", "done",
        "--unverified", "CI is down; checked by hand", "--json",
    )  # fmt: skip
    assert code == 0, out
    task = json.loads(out)["task"]
    assert task["status"] == "done" and task["unverified"] == "CI is down; checked by hand"
    status_event = _history(bundle, task_id)[-1]
    assert status_event["to"] == "done" and status_event["unverified"].startswith("CI is down")
    shown = [i for i in desk_items(bundle) if i.section == "Desk: done unverified"]
    assert len(shown) == 1 and "done unverified: CI is down" in shown[0].text
    code, out = ouro(bundle, "desk", "task", "list", "--status", "done")
    assert "done unverified: CI is down" in out
    # Reopening clears it; the history keeps it.
    tasks.update_task(bundle, task_id, status="open")
    assert tasks.find_task(bundle, task_id).meta["unverified"] is None
    assert not [i for i in desk_items(bundle) if i.section == "Desk: done unverified"]


def test_a_task_without_a_check_completes_as_before(bundle, repo) -> None:
    task_id = tasks.add_task(bundle, "web", "No check").id
    assert tasks.update_task(bundle, task_id, status="done")[0].meta["status"] == "done"


# --- leases hold -------------------------------------------------------------------


def test_measured_an_intruder_cannot_complete_a_leased_task_via_cli(bundle, repo) -> None:
    task_id = _checked(bundle)
    leases.take_task(bundle, task_id, agent="owner")
    tasks.verify_task(bundle, task_id, agent="owner")
    lease_until = tasks.find_task(bundle, task_id).meta["leaseUntil"]
    for args in (
        ("update", task_id, "--status", "done", "--agent", "intruder"),
        ("update", task_id, "--status", "done", "--agent", "intruder", "--unverified", "x"),
        ("update", task_id, "--title", "mine now", "--agent", "intruder"),
        ("release", task_id, "--agent", "intruder"),
        ("take", task_id, "--agent", "intruder"),
    ):
        code, out = ouro(bundle, "desk", "task", *args)
        assert code == 1, (args, out)
        assert f"held by owner until {lease_until}" in out and "--take-over" in out
    assert tasks.find_task(bundle, task_id).meta["status"] == "active"
    # The holder completes it (and completing ends the lease).
    done, _ = tasks.update_task(bundle, task_id, status="done", agent="owner")
    assert done.meta["status"] == "done" and done.meta["heldBy"] is None


def test_take_over_is_explicit_and_recorded(bundle, repo) -> None:
    task_id = _checked(bundle)
    leases.take_task(bundle, task_id, agent="owner")
    code, out = ouro(
        bundle, "desk", "task", "take", task_id, "--agent", "b", "--take-over", "--json"
    )
    assert code == 0 and json.loads(out)["outcome"] == "takeover"
    tasks.update_task(bundle, task_id, priority=1, agent="c", take_over=True)
    events = [(h["event"], h.get("agent"), h.get("previous")) for h in _history(bundle, task_id)]
    assert events == [("taken", "owner", None), ("takeover", "b", "owner"), ("takeover", "c", "b")]
    assert tasks.find_task(bundle, task_id).meta["heldBy"] == "c"
    with pytest.raises(Conflict, match="held by c"):  # b's lease was taken over
        leases.release_task(bundle, task_id, agent="b")


def test_agent_defaults_to_the_bundles_agent(bundle, repo) -> None:
    task_id = _checked(bundle)
    code, out = ouro(bundle, "desk", "task", "take", task_id, "--json")
    assert code == 0 and json.loads(out)["task"]["heldBy"] == "tester"
    code, out = ouro(bundle, "desk", "task", "update", task_id, "--priority", "1", "--agent", "x")
    assert code == 1 and "held by tester" in out
    code, _ = ouro(bundle, "desk", "task", "release", task_id)
    assert code == 0


def test_legacy_claimed_by_is_read_as_the_holder_and_moved(bundle, repo) -> None:
    task_id = _checked(bundle)
    path = tasks.find_task(bundle, task_id).path
    text = path.read_text().replace("heldBy: null", "claimedBy: old-agent")
    text = text.replace("leaseUntil: null", "leaseUntil: '2999-01-01T00:00:00.000Z'")
    path.write_text(text)
    with pytest.raises(Conflict, match="held by old-agent"):
        tasks.update_task(bundle, task_id, priority=1, agent="someone")
    tasks.update_task(bundle, task_id, priority=1, agent="old-agent")
    meta, _ = frontmatter.parse(path.read_text())
    assert "claimedBy" not in meta and meta["heldBy"] == "old-agent"


def test_an_intruder_cannot_complete_a_leased_task_via_the_mcp_tool(bundle, repo, tmp_path) -> None:
    import anyio

    from tests.mcp_client import session, text_of

    task_id = _checked(bundle)
    leases.take_task(bundle, task_id, agent="owner")
    tasks.verify_task(bundle, task_id, agent="owner")
    seen: list[Any] = []

    async def body(client: Any) -> None:
        for args in (
            {"task": task_id, "status": "done", "agent": "intruder"},
            {"task": task_id, "status": "done"},  # the server's default agent is not the holder
        ):
            result = await client.call_tool("desk_task_update", args)
            seen.append((result.is_error, text_of(result)))

    async def main() -> None:
        with anyio.fail_after(60), (tmp_path / "server.log").open("a") as log:
            async with session(bundle.root, errlog=log) as client:
                await body(client)

    anyio.run(main)
    assert all(is_error and "held by owner" in text for is_error, text in seen), seen
    assert tasks.find_task(bundle, task_id).meta["status"] == "active"


def test_an_intruder_cannot_complete_a_leased_task_via_a_habit_session(bundle, repo) -> None:
    from ouro.habits.runner import run_habit

    task_id = _checked(bundle)
    leases.take_task(bundle, task_id, agent="owner")
    tasks.verify_task(bundle, task_id, agent="owner")
    out = bundle.root.parent / "habit-out.txt"
    script = bundle.habits / "bin" / "sneaky.py"
    script.parent.mkdir(parents=True)
    script.write_text(
        "import subprocess, sys\n"
        f"cli = [sys.executable, '-m', 'ouro.cli', 'desk', 'task']\n"
        "runs = [\n"
        f"    ['update', {task_id!r}, '--status', 'done'],\n"
        f"    ['update', {task_id!r}, '--status', 'done', '--agent', 'owner'],\n"
        f"    ['release', {task_id!r}, '--agent', 'owner'],\n"
        "]\n"
        f"with open({str(out)!r}, 'w') as log:\n"
        "    for args in runs:\n"
        "        p = subprocess.run(cli + args, capture_output=True, text=True)\n"
        "        log.write(f'{p.returncode} {p.stdout} {p.stderr}\\n')\n"
    )
    (bundle.habits / "sneaky.yaml").write_text(
        json.dumps(
            {
                "title": "sneaky",
                "cadence": "30m",
                "run": f"{shlex.quote(sys.executable)} habits/bin/sneaky.py",
            }
        )
    )
    run_habit(bundle, "sneaky")
    text = out.read_text()
    assert "held by owner" in text and "habit:sneaky cannot complete" in text
    assert text.count("the agent is habit:sneaky") == 2  # impersonating the holder is refused
    assert all(line.startswith("1 ") for line in text.splitlines() if line[:2] in ("0 ", "1 "))
    task = tasks.find_task(bundle, task_id)
    assert task.meta["status"] == "active" and task.meta["heldBy"] == "owner"


def test_inside_a_habit_session_the_agent_is_the_habit(bundle, repo, monkeypatch) -> None:
    monkeypatch.setenv("OURO_HABIT", "h")
    monkeypatch.setenv("OURO_SESSION_ID", "hs-x")
    assert tasks.acting_agent(bundle, None) == "habit:h"
    with pytest.raises(ToolDenied):
        tasks.acting_agent(bundle, "owner")


# --- racing processes: exactly one winner per transition ------------------------------


def _racer(root: str, task_id: str, n: int, start: Any, out: Any) -> None:
    bundle = Bundle(Path(root))
    start.wait()
    try:
        if n % 3 == 0:
            _, changed = tasks.update_task(
                bundle, task_id, status="done", agent=f"p{n}", take_over=True
            )
            out.put((n, "done" if "status" in changed else "already done", ""))
        elif n % 3 == 1:
            tasks.verify_task(bundle, task_id, agent=f"p{n}")
            out.put((n, "verified", ""))
        else:
            leases.take_task(bundle, task_id, agent=f"p{n}", take_over=True)
            out.put((n, "took", ""))
    except Conflict as exc:
        out.put((n, "conflict", exc.message))


@pytest.mark.slow
def test_eight_processes_race_update_verify_and_take_over(bundle, repo) -> None:
    task_id = _checked(bundle)
    leases.take_task(bundle, task_id, agent="owner")
    tasks.verify_task(bundle, task_id, agent="owner")
    ctx = mp.get_context("fork")
    start, out = ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_racer, args=(str(bundle.root), task_id, n, start, out))
        for n in range(8)
    ]
    for p in procs:
        p.start()
    start.set()
    results = sorted(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    history = _history(bundle, task_id)
    # Exactly one completion, by one of the racers that asked for it.
    done = [h for h in history if h["event"] == "status" and h["to"] == "done"]
    done_winners = [n for n, what, _ in results if what == "done"]
    assert len(done) == 1 and len(done_winners) == 1 and done[0]["agent"] == f"p{done_winners[0]}"
    # Every take-over names the holder right before it: no lost or doubled transition.
    holder = None
    for h in history:
        if h["event"] in ("taken", "takeover"):
            if h["event"] == "takeover":
                assert h["previous"] == holder, history
            holder = h["agent"]
        elif h["event"] == "status" and h["to"] == "done":
            holder = None
    takeovers = [h["agent"] for h in history if h["event"] == "takeover"]
    assert len(takeovers) == len(set(takeovers))  # each racer took over at most once
    for n, what, _ in results:
        if what == "took":
            assert takeovers.count(f"p{n}") == 1
    # Takers after the completion were refused (a done task cannot be taken).
    for _n, what, message in results:
        if what == "conflict":
            assert "is done" in message, message
    # Each verifier's receipt is in the history exactly once.
    receipts = [h["agent"] for h in history if h["event"] == "check"]
    verified = [f"p{n}" for n, what, _ in results if what == "verified"]
    assert sorted(receipts) == sorted(["owner", *verified])
    assert tasks.find_task(bundle, task_id).meta["status"] == "done"
