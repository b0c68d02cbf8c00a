"""Issue 11: the packet is never wrong — each "what was measured" bullet as a regression.

- a new ask makes the previous next action not current (packet, resume, gauntlet);
- the handoff has its own place (packet, ``arc resume``, SessionStart injection),
  above "last event", which never shows hook bookkeeping when more exists;
- a bare ``SessionStart(startup)`` asks for confirmation, never blocks;
  ``ouro arc confirm`` confirms without retyping (CLI and the registry's MCP tool);
- ``arc ask`` / ``arc next`` take ``--task`` / ``--ref`` Desk locators, validated,
  shown, and re-checked by the gauntlet's ``desk_record_ready``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ouro.arc.resume import read_resume
from ouro.bundle import Bundle
from ouro.desk.tasks import add_task
from ouro.desk.tracks import add_track
from ouro.orient import build_packet
from ouro.sentinel.gauntlet import evaluate
from tests.conftest import cli_run, record_snapshot, run_ouro, snapshot
from tests.test_hooks import hook, out_json

HANDOFF = "Decimal switch is half-done, not committed"


def cli(bundle: Bundle, *args: str) -> Any:
    """The CLI in-process (click's runner): the same generated commands, no interpreter start."""
    result = cli_run(["--bundle", str(bundle.root), *args, "--json"])
    # a negative outcome (exit 1: a blocked verdict, a failed check) still prints its result
    assert result.exit_code in (0, 1) and '"error"' not in result.output[:9], result.output
    return json.loads(result.output)


def checks(bundle: Bundle) -> dict[str, str]:
    return {c.id: c.status for c in evaluate(bundle, build_packet).gauntlet.checks}


def section(text: str, name: str) -> str:
    """The lines of one packet section."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line == f"## {name}"
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


def test_a_new_ask_makes_the_old_next_action_not_current(bundle: Bundle) -> None:
    run_ouro("arc", "ask", "A", bundle=bundle, check=True)
    run_ouro("arc", "next", "step A1", bundle=bundle, check=True)
    assert checks(bundle)["next_safe_action"] == "pass"
    out = run_ouro("arc", "ask", "totally different task C", bundle=bundle, check=True).stdout
    assert "can continue: no" in out
    r = read_resume(bundle)
    assert r["canContinue"] is False and r["continuation"] == "no"
    assert r["nextSafeAction"]["value"] is None
    assert r["nextSafeAction"]["fromPreviousAsk"]["value"] == "step A1"
    assert any("previous ask" in m for m in r["missing"])
    text = build_packet(bundle).text
    nxt = section(text, "next safe action")
    assert "from the previous ask (not current): step A1" in nxt and "unknown" in nxt
    g = checks(bundle)
    assert g["next_safe_action"] == "fail"
    assert evaluate(bundle, build_packet).gauntlet.verdict == "blocked"
    # The next recorded now serves ask C, and names it.
    written = cli(bundle, "arc", "next", "step C1")
    assert written["event"]["meta"]["askEventId"] == r["currentAsk"]["sourceEventIds"][0]
    assert written["canContinue"] is True
    assert checks(bundle)["next_safe_action"] == "pass"


def test_handoff_has_its_own_place_above_last_event(bundle: Bundle) -> None:
    cli(bundle, "arc", "ask", "switch invoices to Decimal")
    cli(bundle, "arc", "next", "finish the rounding helper")
    cli(bundle, "arc", "handoff", HANDOFF)
    reply = out_json(hook("claude", "SessionStart", bundle, source="startup"))
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert HANDOFF in section(context, "handoff")
    assert context.index("## handoff") < context.index("## last event")
    last = section(context, "last event")
    assert "session_started" not in last and "handoff" in last
    resume_text = run_ouro("arc", "resume", bundle=bundle, check=True).stdout
    assert f"): {HANDOFF}" in resume_text and "handoff (" in resume_text
    assert resume_text.index("handoff (") < resume_text.index("last event:")
    # A turn without an ask is bookkeeping too; the handoff stays until 'arc next'.
    assert hook("claude", "UserPromptSubmit", bundle).returncode == 0
    assert "turn_accepted" not in section(build_packet(bundle).text, "last event")
    cli(bundle, "arc", "confirm")
    assert read_resume(bundle)["handoff"]["value"] == HANDOFF
    cli(bundle, "arc", "next", "commit the rounding helper")
    assert read_resume(bundle)["handoff"] is None
    assert "## handoff" not in build_packet(bundle).text
    cli(bundle, "arc", "handoff", "first")
    cli(bundle, "arc", "handoff", "second")
    assert read_resume(bundle)["handoff"]["value"] == "second"


def test_bare_session_start_needs_confirmation_not_a_block(bundle: Bundle) -> None:
    cli(bundle, "arc", "ask", "port the widget parser")
    cli(bundle, "arc", "next", "run the parser tests", "--stop-before", "push")
    cli(bundle, "arc", "handoff", HANDOFF)
    reply = out_json(hook("claude", "SessionStart", bundle, source="startup"))
    context = reply["hookSpecificOutput"]["additionalContext"]
    assert "port the widget parser" in section(context, "ask")
    assert "run the parser tests" in section(context, "next safe action")
    assert HANDOFF in section(context, "handoff")
    assert "can continue: no" not in context and "## blockers" not in context
    assert "ouro arc confirm" in context
    r = read_resume(bundle)
    assert r["continuation"] == "needs_confirmation"
    assert r["currentAsk"]["confidence"] == "needs_confirmation"
    assert r["confirm"]["recordedAt"] == r["currentAsk"]["recordedAt"]
    latest = json.loads(
        (bundle.root / "arc/flight-recorder/context-loss-sentinel/latest.json").read_text()
    )
    assert latest["verdict"] == "watch"
    assert evaluate(bundle, build_packet).gauntlet.verdict == "watch"
    # One step, no retyping: ask and next are current again, the next keeps its stop list.
    confirmed = cli(bundle, "arc", "confirm")
    assert confirmed["canContinue"] is True and confirmed["confirmedNext"] is True
    r = read_resume(bundle)
    assert r["currentAsk"]["value"] == "port the widget parser"
    assert r["nextSafeAction"]["value"] == "run the parser tests"
    assert r["nextSafeAction"]["stopBefore"] == ["push"]
    assert evaluate(bundle, build_packet).gauntlet.verdict == "ready"


def test_confirm_is_a_registry_tool_and_refuses_when_nothing_to_confirm(bundle: Bundle) -> None:
    from ouro.registry import TOOLS

    tool = next(t for t in TOOLS if t.path == ("arc", "confirm"))
    assert tool.name == "arc_confirm" and not tool.read_only
    before = record_snapshot(bundle.root)
    proc = run_ouro("arc", "confirm", bundle=bundle)
    assert proc.returncode == 1 and "ouro arc ask" in proc.stderr
    # nothing of the record; the read it made may have saved a cache under state/
    assert record_snapshot(bundle.root) == before


def test_compact_session_start_keeps_the_ask_current(bundle: Bundle) -> None:
    cli(bundle, "arc", "ask", "port the widget parser")
    cli(bundle, "arc", "next", "run the parser tests")
    out_json(hook("claude", "SessionStart", bundle, source="compact"))
    assert read_resume(bundle)["canContinue"] is True


@pytest.fixture
def task_bundle(bundle: Bundle) -> tuple[Bundle, Any]:
    add_track(bundle, "dev")
    return bundle, add_task(bundle, "dev", "Switch invoices to Decimal")


def test_ask_and_next_point_into_desk(task_bundle: tuple[Bundle, Any]) -> None:
    bundle, task = task_bundle
    note = bundle.root / "desk/_record/notes/decimal.md"
    note.write_text("# Decimal\nrounding rules\n")
    cli(bundle, "arc", "ask", "switch invoices to Decimal", "--task", task.id)
    cli(
        bundle,
        "arc",
        "next",
        "write the rounding helper",
        "--ref",
        "desk/_record/notes/decimal.md",
        "--task",
        task.id,
    )
    r = read_resume(bundle)
    assert r["currentAsk"]["refs"] == [task.locator]
    assert r["nextSafeAction"]["refs"] == [task.locator, "desk/_record/notes/decimal.md"]
    text = build_packet(bundle).text
    assert f"details: {task.locator}" in section(text, "ask")
    assert "desk/_record/notes/decimal.md" in section(text, "next safe action")
    assert checks(bundle)["desk_record_ready"] == "pass"
    note.unlink()
    assert checks(bundle)["desk_record_ready"] == "fail"
    assert evaluate(bundle, build_packet).gauntlet.verdict == "blocked"


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--task", "t-doesnotexist", "no task"),
        ("--ref", "desk/nowhere.md", "does not exist"),
        ("--ref", "../outside.md", "'..'"),
        ("--ref", "desk/_record/diary/facts.jsonl#f-missing", "no record"),
    ],
)
def test_bad_desk_locators_are_refused_and_nothing_is_written(
    task_bundle: tuple[Bundle, Any], flag: str, value: str, said: str
) -> None:
    bundle, _task = task_bundle
    before = snapshot(bundle.root)
    result = cli_run(["--bundle", str(bundle.root), "arc", "ask", "x", flag, value])
    assert result.exit_code != 0 and said in result.stderr
    assert snapshot(bundle.root) == before


def test_orient_shows_open_tasks_of_the_current_track(bundle: Bundle) -> None:
    from ouro.desk.featured import feature

    add_track(bundle, "dev")
    add_track(bundle, "ops")
    dev_open = add_task(bundle, "dev", "Write the rounding helper")
    ops_open = add_task(bundle, "ops", "Rotate the backup disks")
    # with an ask recorded the ready work stays listed, below the ask (docs/desk.md)
    cli_run(["--bundle", str(bundle.root), "arc", "ask", "Keep going"])
    text = build_packet(bundle, budget=20_000).text
    assert "## Desk: open tasks (current tracks)" not in text  # no current track yet
    assert dev_open.id in section(text, "Desk: ready") and ops_open.id in text
    feature(bundle, tracks=["dev"], tasks=[])
    text = build_packet(bundle, budget=20_000).text
    assert dev_open.id in section(text, "Desk: open tasks (current tracks)")
    assert ops_open.id not in section(text, "Desk: open tasks (current tracks)")
    # Budgeted: the open tasks go before anything more important.
    small = build_packet(bundle, budget=400)
    assert len(small.text) <= 400
