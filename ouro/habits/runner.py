"""One habit run, start to receipt.

``run_habit(bundle, name, trigger=...)``:

1. takes the habit's lock ``state/locks/habit-<name>.lock`` without waiting
   (a run already in progress → ``Conflict``; ``tick`` skips instead);
2. computes the tool policy and permission envelope, opens a private session
   ``state/sessions/<sessionId>/`` with the orientation packet;
3. snapshots ``arc/`` and ``desk/``, runs the body -- an agent launched headless
   in the session folder with the prompt and ouro's MCP server
   (``ouro.habits.agents``), or the ``run:`` command (``ouro.habits.body``: no
   shell, its own process group, output bounded, killed at the timeout) --
   then snapshots again;
4. derives the outcome from the difference (``ouro.habits.outcome``);
5. writes the redacted version-2 receipt, records a ``habit_run`` flight-
   recorder event pointing at it, replaces ``state/habits/<name>.json``;
6. deletes the session scratch unless ``keep_session``; releases the lock.

A body that cannot start, crashes or times out still gets a receipt (outcome
``error`` with the reason). If this process itself is interrupted, the child
is killed and the receipt still written before the interrupt propagates.

The receipt also carries the session's own Arc lane (``lane``: its ask, next
action, handoff, blockers), which never replaces the main line's (``ouro.lane``).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from ouro.arc.recorder import record_event
from ouro.bundle import Bundle
from ouro.errors import Conflict, LockTimeout, OuroError
from ouro.habits import agents
from ouro.habits import outcome as oc
from ouro.habits.body import BodyResult, run_body
from ouro.habits.config import read_config
from ouro.habits.definition import Habit, load_habits
from ouro.habits.outbox import OUTBOX
from ouro.habits.policy import REFUSALS_FILE, policy_and_envelope
from ouro.habits.receipt import (
    AgentRun,
    HabitRunReceipt,
    LaneSummary,
    ProducedRef,
    RefusedCall,
    SurfaceAttempt,
    ToolPolicy,
    Trigger,
    receipt_locator,
    write_receipt,
)
from ouro.habits.session import SURFACE_FILE, Session, body_env, discard, open_session
from ouro.habits.state import HabitState, read_state, state_locator, write_state
from ouro.models.clock import format_time, utc_now
from ouro.orient_types import Orient
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.store.atomic import atomic_write_text
from ouro.store.jsonl import read_jsonl
from ouro.store.lock import FileLock


def habit_lock(bundle: Bundle, name: str) -> FileLock:
    # timeout=0: one attempt, never wait — a habit never runs twice at once
    return FileLock(bundle.lock_path(f"habit-{name}"), timeout=0, purpose=f"habit run {name}")


def run_habit(
    bundle: Bundle,
    name: str,
    *,
    orient: Orient,
    trigger: Trigger = "manual",
    keep_session: bool = False,
) -> dict[str, Any]:
    """Run habit ``name`` now; returns the receipt as written. ``orient`` builds
    the packet the body starts from (``ouro.orient.build_packet``)."""
    habit = load_habits(bundle).get(name)
    lock = habit_lock(bundle, name)
    try:
        lock.acquire()
    except LockTimeout as exc:
        raise Conflict(
            f"habit {name} is already running ({exc.message.split('; ', 1)[-1]})",
            hint=f"wait for it to finish; 'ouro habits last {name}' shows the latest run",
        ) from None
    try:
        return run_locked(bundle, habit, trigger=trigger, keep_session=keep_session, orient=orient)
    finally:
        lock.release()


def run_locked(
    bundle: Bundle, habit: Habit, *, trigger: Trigger, keep_session: bool, orient: Orient
) -> dict[str, Any]:
    """The run itself; the caller holds the habit's lock."""
    config = read_config(bundle)
    started = utc_now()
    started_at = format_time(started)
    policy, reasons, envelope = policy_and_envelope(habit, config)
    session = open_session(
        bundle,
        habit_name=habit.name,
        trigger=trigger,
        started_at=started_at,
        envelope=envelope,
        policy=policy,
        reasons=reasons,
        orient=orient,
    )
    before = oc.snapshot(bundle)
    interrupted: BaseException | None = None
    agent: AgentRun | None = None
    try:
        body, agent = _run_body(bundle, habit, session, trigger, policy)
    except BaseException as exc:  # KeyboardInterrupt/SystemExit: still leave a receipt
        interrupted = exc
        body = BodyResult(None, [f"the runner was interrupted ({type(exc).__name__})"])
    changes = oc.diff(bundle, before, oc.snapshot(bundle))
    refused = _refusals(session)
    attempts, surface_refs = _attempts(session)
    policy.refused_calls = refused
    outcome = oc.derive_outcome(
        failed=bool(body.errors), changes=changes, refused_calls=len(refused), attempts=attempts
    )
    ended = utc_now()
    rlocator = receipt_locator(session.run_id)
    refs = changes.refs + surface_refs
    if not refs:
        refs = [ProducedRef(kind="none", locator=rlocator)]
    next_run = None if habit.definition.status == "paused" else habit.cadence.next_after(started)
    receipt = HabitRunReceipt(
        run_id=session.run_id,
        session_id=session.session_id,
        habit_name=habit.name,
        habit_title=habit.definition.title,
        trigger=trigger,
        started_at=started_at,
        ended_at=format_time(ended),
        duration_ms=max(0, int((ended - started).total_seconds() * 1000)),
        outcome=outcome,
        exit_code=body.exit_code,
        definition_locator=habit.locator,
        session_locator=session.locator,
        session_kept=keep_session or habit.definition.keep_transcript,
        pending_locator=OUTBOX,
        runtime_state_locator=state_locator(habit.name),
        receipt_locator=rlocator,
        next_run_at=None if next_run is None else format_time(next_run),
        permission_envelope=envelope,
        tool_policy=policy,
        produced_refs=refs,
        surface_attempts=attempts,
        errors=session.notes + body.errors + body.notes,
        body="run" if habit.definition.run else "agent",
        agent=agent,
        timed_out=body.timed_out,
        output_truncated=body.output_truncated,
        lane=_lane(bundle, session.session_id),
    )
    data = _finish(bundle, habit, receipt, started)
    if not (keep_session or habit.definition.keep_transcript):
        discard(session)
    if interrupted is not None:
        raise interrupted
    return data


def _finish(
    bundle: Bundle, habit: Habit, receipt: HabitRunReceipt, started: datetime
) -> dict[str, Any]:
    """Receipt, then the flight-recorder event, then the runtime state."""
    literals = bundle_literals(bundle)
    data: dict[str, Any] = redact_obj(receipt.to_json(), literals)
    write_receipt(bundle, receipt, data)
    try:
        record_event(
            bundle,
            "habit_run",
            f"habit {habit.name} ran ({receipt.trigger}): {receipt.outcome}",
            session_ref=receipt.session_id,
            produced_refs=[{"kind": "habit_receipt", "locator": receipt.receipt_locator}],
            meta={"habit": habit.name, "runId": receipt.run_id, "outcome": receipt.outcome},
        )
    except OuroError as exc:
        # the receipt stands; say in it that the event is missing
        data["errors"] = [*data["errors"], f"habit_run event not recorded: {exc.message}"]
        write_receipt(bundle, receipt, redact_obj(data, literals))
    previous = read_state(bundle, habit.name).state
    failures = previous.consecutive_failures if previous else 0
    write_state(
        bundle,
        HabitState(
            habit_name=habit.name,
            last_run_at=receipt.started_at,
            last_run_id=receipt.run_id,
            last_trigger=receipt.trigger,
            last_outcome=receipt.outcome,
            last_receipt_locator=receipt.receipt_locator,
            next_run_at=receipt.next_run_at,
            consecutive_failures=failures + 1 if receipt.outcome == "error" else 0,
            updated_at=format_time(utc_now()),
        ),
    )
    return data


def _command(bundle: Bundle, habit: Habit) -> list[str]:
    argv = list(habit.definition.run or [])
    first = argv[0]
    if "/" in first and not os.path.isabs(first):
        argv[0] = str(bundle.root / first)
    return argv


def _run_body(
    bundle: Bundle, habit: Habit, session: Session, trigger: str, policy: ToolPolicy
) -> tuple[BodyResult, AgentRun | None]:
    env = body_env(bundle, session, habit.name, trigger, policy)
    timeout = habit.definition.timeout
    if habit.definition.run:
        argv = _command(bundle, habit)
        result = run_body(
            argv, cwd=bundle.root, env=env, timeout=timeout, folder=session.folder, what="the body"
        )
        return result, None
    name = agents.agent_for(bundle, habit)
    keep = habit.definition.keep_transcript
    exe = agents.executable(bundle, name, env)
    if exe is None:
        run = AgentRun(name=name, executable=None, mcp=False, transcript_kept=keep)
        return BodyResult(
            None,
            [
                f"cannot start the agent {name}: no {name!r} on PATH "
                f"(set one with 'ouro config set habits.command.{name} PATH')"
            ],
            started=False,
        ), run
    orient = session.orient_file.read_text(encoding="utf-8")
    mcp = name != "pi"
    prompt = agents.build_prompt(habit, session.session_id, orient, policy, mcp=mcp)
    atomic_write_text(session.folder / "prompt.md", prompt)
    launch = agents.launch(
        name,
        exe,
        prompt,
        bundle=bundle,
        folder=session.folder,
        session_id=session.session_id,
        env=env,
        keep_transcript=keep,
    )
    run = AgentRun(name=name, executable=exe, mcp=launch.mcp, transcript_kept=keep)
    result = run_body(
        launch.argv,
        cwd=session.folder,
        env=env | launch.env,
        timeout=timeout,
        folder=session.folder,
        what=f"the agent {name}",
    )
    return result, run


def _lane(bundle: Bundle, session_id: str) -> LaneSummary:
    """The session's own Arc lane, newest first (``ouro.arc.timeline``)."""
    from ouro.arc.timeline import event_page

    events = event_page(bundle, session=session_id, limit=200)["events"]
    mine = [e for e in events if e.get("kind") != "habit_run"]

    def newest(key: str, kind: str | None = None) -> str | None:
        for event in mine:
            value = event.get(key)
            if (kind is None or event.get("kind") == kind) and isinstance(value, str) and value:
                return value[:300]
        return None

    blockers = [
        str(e.get("blockedBecause") or e.get("summary"))[:300]
        for e in mine
        if e.get("kind") == "blocker_detected"
    ]
    return LaneSummary(
        events=len(mine),
        ask=newest("currentAsk"),
        next=newest("nextSafeAction"),
        handoff=newest("summary", "handoff"),
        blockers=blockers,
    )


def _refusals(session: Session) -> list[RefusedCall]:
    read = read_jsonl(session.folder / REFUSALS_FILE)
    out = []
    for record in read.records:
        try:
            out.append(RefusedCall.model_validate(record))
        except ValueError:
            continue  # written by ouro.habits.policy only; a bad line is not a refusal
    return out


def _attempts(session: Session) -> tuple[list[SurfaceAttempt], list[ProducedRef]]:
    attempts: list[SurfaceAttempt] = []
    refs: list[ProducedRef] = []
    for record in read_jsonl(session.folder / SURFACE_FILE).records:
        try:
            attempt = SurfaceAttempt.model_validate(record.get("attempt"))
        except ValueError:
            continue
        attempts.append(attempt)
        locator = record.get("locator")
        if isinstance(locator, str):
            refs.append(ProducedRef(kind="surface", locator=locator))
        elif attempt.result in ("sent", "delivered", "delivered_now"):
            refs.append(
                ProducedRef(
                    kind="surface",
                    locator=f"{receipt_locator(session.run_id)}#surface-{len(attempts) - 1}",
                )
            )
    return attempts, refs
