"""A habit done by a real agent: ``ouro habits run`` launches ``claude -p`` and
``codex exec`` (marker ``host``).

The host CLIs are the pinned npm packages ``tests/test_real_hosts.py`` uses
(``OURO_HOSTS_PREFIX``); only the model is fake (``tests/fake_models.py``).
The fake model calls ouro's tools through the MCP server the runner wired into
the host (``ouro mcp --session``), so what is asserted is what really happened
inside the host: the first model request carries the habit's instructions and
the main line's ask; a granted call writes a diary fact with provenance
``habit:<name>``; a call of a denied tool is refused by the server and listed
in the receipt; the habit's own ask stays in its lane, the main line's ask and
next action are unchanged; a run past its timeout is killed and the receipt
says so; the seed's minimal habit, unchanged, is done by the default agent, and
a message it surfaces with no sense configured waits in the main packet until
acknowledged.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fake_models import FakeModels
from tests.git_env import run_git
from tests.test_real_hosts import ASK, NEXT, Codex, World, _text
from tests.test_real_hosts import hosts as hosts
from tests.test_real_hosts import models as models
from tests.test_real_hosts import world as world

pytestmark = pytest.mark.host

TITLE = "MARKER-HABIT-TITLE-3c1d triage the inbox"
PROMPT = "MARKER-HABIT-PROMPT-8e2f file one fact about what you find"
FACT = "MARKER-FACT-a41b the inbox holds three unread threads"
LANE_ASK = "MARKER-LANE-ASK-0d9e triage for the habit"


def _habit(world: World, agent: str, *, timeout: str = "150s") -> Path:
    bundle = world.project / "agent.ouro"
    (bundle / "habits" / "triage.yaml").write_text(
        f"title: {TITLE}\ncadence: 30m\nagent: {agent}\nprompt: {PROMPT}\n"
        f"timeout: {timeout}\ntools: [diary_write, arc_ask, desk_task_add]\n"
    )
    meta = json.loads((bundle / "bundle.json").read_text())
    meta["habits"] = {"deniedTools": ["desk_task_add"]}  # asked for, denied by the bundle
    (bundle / "bundle.json").write_text(json.dumps(meta))
    return bundle


def _run(world: World, env: dict[str, str]) -> dict[str, Any]:
    proc = subprocess.run(
        ["ouro", "habits", "run", "triage", "--json"], cwd=world.project, env=env,
        capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert proc.stdout.startswith("{"), proc.stderr[-3000:]
    receipt: dict[str, Any] = json.loads(proc.stdout)
    return receipt


def _queue_calls(models: FakeModels) -> None:
    models.tool("diary_write", {"text": FACT, "about": ["inbox"]})
    models.tool("desk_task_add", {"track": "inbox", "title": "reply to ari"})
    models.tool("arc_ask", {"text": LANE_ASK})


def _assert_run(world: World, bundle: Path, receipt: dict[str, Any], agent: str) -> None:
    assert receipt["body"] == "agent" and receipt["agent"]["name"] == agent, receipt
    assert receipt["agent"]["mcp"] is True
    assert receipt["timedOut"] is False, receipt["errors"]
    # the granted call: a fact that says where it came from
    facts = [
        json.loads(line)
        for line in (bundle / "desk/_record/diary/facts.jsonl").read_text().splitlines()
    ]
    [fact] = [f for f in facts if f["text"] == FACT]
    assert fact["provenance"]["origin"] == "habit:triage"
    assert fact["provenance"]["sessionRef"] == receipt["sessionId"]
    assert any(r["locator"].endswith("#" + fact["id"]) for r in receipt["producedRefs"])
    # the denied call: refused by the server, listed in the receipt, nothing written
    refused = receipt["toolPolicy"]["refusedCalls"]
    assert [c["tool"] for c in refused] == ["desk_task_add"], refused
    assert "bundle.json habits.deniedTools" in refused[0]["reason"]
    assert not (bundle / "desk" / "inbox").exists()
    assert receipt["outcome"] == "blocked"  # a refusal is what a person must see first
    # the habit's ask lives in its lane; the main line's ask and next are unchanged
    assert receipt["lane"]["ask"] == LANE_ASK
    resume = json.loads(world.ouro("arc", "resume", "--json").stdout)
    text = json.dumps(resume)
    assert ASK in text and NEXT in text and LANE_ASK not in text
    orient = world.ouro("orient").stdout
    assert ASK in orient and LANE_ASK not in orient
    assert "habit triage" in orient  # the one line the main packet shows for the run
    # the scratch is gone
    assert not (bundle / receipt["sessionLocator"]).exists()


def _first_request_with_tools(models: FakeModels, suffix: str) -> dict[str, Any]:
    requests = [r for r in models.model_requests(suffix) if r.get("tools")]
    assert requests, "the host sent no model request with tools"
    return requests[0]


def test_claude_does_a_habit_through_ouros_mcp_server(
    hosts: dict[str, Path], world: World, models: FakeModels
) -> None:
    world.readme_layout()
    bundle = _habit(world, "claude")
    world.ouro("config", "set", "habits.command.claude", str(hosts["claude"]))
    _queue_calls(models)
    env = world.env | {
        "ANTHROPIC_BASE_URL": models.url,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    receipt = _run(world, env)
    first = _first_request_with_tools(models, "/v1/messages")
    assert TITLE in _text(first) and PROMPT in _text(first) and ASK in _text(first)
    assert models.tools == [], f"calls not made: {models.tools}"
    _assert_run(world, bundle, receipt, "claude")
    # no transcript kept: nothing under the scratch HOME's projects for the session
    projects = world.home / ".claude" / "projects"
    assert not any(projects.rglob("*.jsonl")) if projects.exists() else True


def test_codex_does_a_habit_through_ouros_mcp_server(
    hosts: dict[str, Path], world: World, models: FakeModels
) -> None:
    world.readme_layout()
    bundle = _habit(world, "codex")
    world.ouro("config", "set", "habits.command.codex", str(hosts["codex"]))
    world.ouro("hook", "install", "codex")  # the Codex helper writes hook trust from it
    codex = Codex(hosts["codex"], world, models)
    _queue_calls(models)
    receipt = _run(world, codex.env)
    first = _first_request_with_tools(models, "/responses")
    assert TITLE in _text(first) and PROMPT in _text(first) and ASK in _text(first)
    assert models.tools == [], f"calls not made: {models.tools}"
    _assert_run(world, bundle, receipt, "codex")
    assert (
        not any((codex.home / "sessions").rglob("rollout-*.jsonl"))
        if (codex.home / "sessions").exists()
        else True
    )


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_habit_agent_past_its_timeout_is_killed_and_the_receipt_says_so(
    hosts: dict[str, Path], world: World, models: FakeModels, agent: str
) -> None:
    world.readme_layout()
    bundle = _habit(world, agent, timeout="4s")
    world.ouro("config", "set", f"habits.command.{agent}", str(hosts[agent]))
    if agent == "codex":
        world.ouro("hook", "install", "codex")
        env = Codex(hosts["codex"], world, models).env
    else:
        env = world.env | {"ANTHROPIC_BASE_URL": models.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}
    models.delay = 60.0  # the model never answers in time
    receipt = _run(world, env)
    assert receipt["timedOut"] is True and receipt["outcome"] == "error", receipt
    [error] = receipt["errors"]  # with whatever the host printed last, if anything
    assert error.startswith(f"the agent {agent} timed out after 4s and was killed"), error
    resume = json.loads(world.ouro("arc", "resume", "--json").stdout)
    assert ASK in json.dumps(resume)
    last = json.loads(world.ouro("habits", "last", "triage", "--json").stdout)
    assert last["receipt"]["runId"] == receipt["runId"]
    assert not (bundle / receipt["sessionLocator"]).exists()


def test_claude_does_the_seeds_minimal_habit_and_its_surfaced_message_reaches_the_main_line(
    hosts: dict[str, Path], world: World, models: FakeModels
) -> None:
    from tests.test_habits_definition import SEED_MINIMAL

    world.readme_layout()
    bundle = world.project / "agent.ouro"
    (bundle / "habits" / "inbox-triage.yaml").write_text(SEED_MINIMAL)  # as the seed has it
    world.ouro("config", "set", "habits.command.claude", str(hosts["claude"]))
    text = "MARKER-SURFACE-77aa the deploy key expired; a new one is needed"
    models.tool("surface", {"text": text, "to": "family", "reason": "needed_input"})
    env = world.env | {"ANTHROPIC_BASE_URL": models.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}
    proc = subprocess.run(
        ["ouro", "habits", "run", "inbox-triage", "--json"], cwd=world.project, env=env,
        capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    receipt = json.loads(proc.stdout)
    assert receipt["agent"]["name"] == "claude" and receipt["exitCode"] == 0, receipt["errors"]
    first = _first_request_with_tools(models, "/v1/messages")
    assert "inbox triage" in _text(first) and ASK in _text(first)
    assert models.tools == []
    [attempt] = receipt["surfaceAttempts"]
    assert (attempt["result"], receipt["outcome"]) == ("queued", "surfaced")
    orient = world.ouro("orient").stdout
    assert "Habits: surfaced to you" in orient and "MARKER-SURFACE-77aa" in orient
    [waiting] = json.loads(world.ouro("surface", "list", "--json").stdout)["messages"]
    world.ouro("surface", "ack", waiting["id"])
    assert "MARKER-SURFACE-77aa" not in world.ouro("orient").stdout


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_habit_session_does_not_run_the_projects_ouro_hooks(
    hosts: dict[str, Path], world: World, models: FakeModels, agent: str
) -> None:
    """The session folder lies inside the project (``agent.ouro/state/sessions/``), whose
    host config has ouro's hooks installed: the host loads none of the project's config,
    and ouro's hooks write nothing for the run (no session event, sentinel receipt or
    hook state on the main line); the receipt names only the habit's own fact."""
    run_git("init", "-q", str(world.project))
    world.readme_layout()
    bundle = _habit(world, agent)
    world.ouro("config", "set", f"habits.command.{agent}", str(hosts[agent]))
    world.ouro("hook", "install", agent)
    if agent == "codex":
        env = Codex(hosts["codex"], world, models).env  # trusts the project and its hooks
    else:
        env = world.env | {"ANTHROPIC_BASE_URL": models.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}
    models.tool("diary_write", {"text": FACT, "about": ["inbox"]})
    arc_before, hooks_before = _files(bundle / "arc"), _files(bundle / "state" / "hooks")
    receipt = _run(world, env)
    assert receipt["exitCode"] == 0 and models.tools == [], receipt["errors"]
    assert receipt["outcome"] == "wrote_record", receipt["producedRefs"]
    assert {r["kind"] for r in receipt["producedRefs"]} == {"desk_record"}, receipt["producedRefs"]
    assert _files(bundle / "state" / "hooks") == hooks_before
    arc_after = _files(bundle / "arc")
    changed = sorted(p for p in arc_after if arc_before.get(p) != arc_after[p])
    assert not [p for p in changed if "context-loss-sentinel" in p], changed
    new = [
        json.loads(line)
        for p in changed
        if p.startswith("flight-recorder/events/")
        for line in arc_after[p]
        .decode()
        .splitlines()[len((arc_before.get(p) or b"").decode().splitlines()) :]
    ]
    assert [e["kind"] for e in new] == ["habit_run"], new


def test_a_claude_habit_with_no_login_says_why_in_its_receipt(
    hosts: dict[str, Path], world: World
) -> None:
    """Claude Code prints "Not logged in" on stdout, nothing on stderr; the session
    folder (with stdout.log) is deleted: the receipt keeps the reason."""
    world.readme_layout()
    _habit(world, "claude")
    world.ouro("config", "set", "habits.command.claude", str(hosts["claude"]))
    receipt = _run(world, world.env)  # no ANTHROPIC_API_KEY, no login in the scratch HOME
    assert receipt["outcome"] == "error" and receipt["exitCode"] == 1, receipt
    [error] = receipt["errors"]
    assert error.startswith("the agent claude exited with status 1: Not logged in"), error
