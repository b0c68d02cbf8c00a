"""Habit reads behind ``ouro habits show|last`` (pure), the rendering of a run's
receipt, and the old CLI input models of ``b.habits`` (``ouro.api.habits``).

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, NotFound
from ouro.habits.config import read_config
from ouro.habits.definition import load_habits
from ouro.habits.policy import policy_and_envelope
from ouro.habits.receipt import latest_receipt_for, read_receipt
from ouro.habits.schedule import due_report
from ouro.habits.state import read_state, state_locator
from ouro.models.base import ToolInput


class HabitListInput(ToolInput):
    pass


class HabitRunInput(ToolInput):
    name: str = Field(min_length=1, description="the habit's name (habits/<name>.yaml)")
    trigger: Literal["manual", "poke"] = Field("manual", description="manual | poke")
    keep_session: bool = Field(
        False, description="keep the session scratch in state/sessions/ for debugging"
    )


def render_receipt(receipt: dict[str, Any]) -> str:
    lines = [
        f"habit {receipt['habitName']} ({receipt['trigger']}): {receipt['outcome']}",
        f"  run {receipt['runId']}  {receipt['startedAt']} → {receipt['endedAt']}",
        f"  receipt {receipt['receiptLocator']}",
        f"  next run {receipt['nextRunAt'] or 'none (paused)'}",
    ]
    for ref in receipt["producedRefs"]:
        if ref["kind"] != "none":
            lines.append(f"  produced {ref['kind']}: {ref['locator']}")
    for attempt in receipt["surfaceAttempts"]:
        lines.append(
            f"  surfaced to {attempt['recipient']} via {attempt['channel']}: {attempt['result']}"
        )
    for call in receipt["toolPolicy"].get("refusedCalls", []):
        lines.append(f"  refused tool {call['tool']}: {call['reason']}")
    for error in receipt["errors"]:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def habit_show(bundle: Bundle, name: str) -> dict[str, Any]:
    habit = load_habits(bundle).get(name)
    config = read_config(bundle)
    policy, reasons, envelope = policy_and_envelope(habit, config)
    state = read_state(bundle, name)
    due = next(r for r in due_report(bundle)["habits"] if r["name"] == name)
    return {
        **habit.summary(),
        "toolPolicy": policy.model_dump(mode="json", by_alias=True, exclude={"refused_calls"}),
        "deniedBecause": reasons,
        "permissionEnvelope": envelope.model_dump(mode="json", by_alias=True, exclude_none=True),
        "runtimeState": state.state.model_dump(mode="json", by_alias=True) if state.state else None,
        "runtimeStateLocator": state_locator(name),
        "runtimeStateProblem": state.problem,
        "due": due,
    }


def habit_last(bundle: Bundle, name: str) -> dict[str, Any]:
    """The latest run, from the receipt and the runtime state alone."""
    read = read_state(bundle, name)
    problems = [read.problem] if read.problem else []
    receipt = None
    if read.state is not None and read.state.last_receipt_locator:
        try:
            receipt = read_receipt(bundle, read.state.last_receipt_locator)
        except (NotFound, CorruptFile) as exc:
            problems.append(exc.message)
        # a run that wrote its receipt but died before its state is still the latest
        newer, scan_problems = latest_receipt_for(bundle, name, after=read.state.last_run_id)
        if newer is not None:
            receipt = newer
            problems += scan_problems
            problems.append(f"{state_locator(name)} is behind the newest receipt")
    if receipt is None:
        receipt, scan_problems = latest_receipt_for(bundle, name)
        problems += scan_problems
        if receipt is not None and read.state is None:
            problems.append(f"{state_locator(name)} missing; the run comes from its receipt alone")
    if receipt is None:
        raise NotFound(
            f"habit {name!r} has no recorded run",
            hint=f"run it with 'ouro habits run {name}', or wait for 'ouro habits tick'",
        )
    return {
        "habit": name,
        "receipt": receipt.to_json(),
        "runtimeState": read.state.model_dump(mode="json", by_alias=True) if read.state else None,
        "problems": problems,
    }


def render_last(result: dict[str, Any]) -> str:
    lines = [render_receipt(result["receipt"])]
    state = result["runtimeState"]
    if state:
        lines.append(
            f"  runtime state: next run {state['nextRunAt'] or 'none'}, "
            f"consecutive failures {state['consecutiveFailures']}"
        )
    else:
        lines.append("  runtime state: unknown")
    lines += [f"  problem: {p}" for p in result["problems"]]
    return "\n".join(lines)
