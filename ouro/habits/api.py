"""Habit reads behind ``ouro habits show|last`` (pure). Their text for people is
the CLI's (``ouro.cli.habits``, ``ouro.cli.render.ops``)."""

from __future__ import annotations

from typing import Any

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, NotFound
from ouro.habits.config import read_config
from ouro.habits.definition import load_habits
from ouro.habits.policy import policy_and_envelope
from ouro.habits.receipt import latest_receipt_for, read_receipt
from ouro.habits.schedule import due_report
from ouro.habits.state import read_state, state_locator


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
        from ouro.habits.outbox import interrupted_runs

        lost = [r for r in interrupted_runs(bundle) if r["habit"] == name]
        if lost:
            raise NotFound(
                f"habit {name!r} has no receipt: run {lost[-1]['runId']} (started "
                f"{lost[-1]['startedAt']}) was stopped before it finished",
                hint=f"its scratch is at {lost[-1]['locator']}; run it again with "
                f"'ouro habits run {name}'",
            )
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
