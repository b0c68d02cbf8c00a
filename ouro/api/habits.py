"""``b.habits``: the bundle's habits (``habits/<name>.yaml``); ``b.surface`` reports back.

``b.surface(text, to=..., reason=...)`` surfaces from inside a habit session;
``b.surface.list()`` and ``b.surface.ack(id)`` are the main line's side: the
messages queued to it (no sense for the channel) and acknowledging one, which
takes it out of the packet and the workbench.
"""

from __future__ import annotations

from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.spec import P, verb


class Habits(Namespace):
    @verb
    def run(
        self,
        name: Annotated[str, P("the habit's name (habits/<name>.yaml)", nonblank=True)],
        *,
        trigger: Annotated[str, P("manual | poke", choices=("manual", "poke"))] = "manual",
        keep_session: Annotated[
            bool, P("keep the session scratch in state/sessions/ for debugging")
        ] = False,
    ) -> dict[str, Any]:
        """Run a habit now in a private session (trigger manual or poke): the body gets the
        orientation packet, its outcome is derived from what it changed, and a receipt is
        written to arc/flight-recorder/habit-receipts/."""
        from ouro.habits.runner import run_habit
        from ouro.orient import build_packet

        return run_habit(
            self.folder,
            name,
            orient=build_packet,
            trigger=trigger,  # type: ignore[arg-type]
            keep_session=keep_session,
        )

    @verb
    def show(
        self, name: Annotated[str, P("the habit's name (habits/<name>.yaml)", nonblank=True)]
    ) -> dict[str, Any]:
        """Show one habit: definition, tool policy, permission envelope, runtime state, due.
        Writes nothing."""
        from ouro.habits.config import read_config
        from ouro.habits.definition import load_habits
        from ouro.habits.policy import policy_and_envelope
        from ouro.habits.schedule import due_report
        from ouro.habits.state import read_state, state_locator

        folder = self.folder
        habit = load_habits(folder).get(name)
        config = read_config(folder)
        policy, reasons, envelope = policy_and_envelope(habit, config)
        state = read_state(folder, name)
        due = next(r for r in due_report(folder)["habits"] if r["name"] == name)
        return {
            **habit.summary(),
            "toolPolicy": policy.model_dump(mode="json", by_alias=True, exclude={"refused_calls"}),
            "deniedBecause": reasons,
            "permissionEnvelope": envelope.model_dump(
                mode="json", by_alias=True, exclude_none=True
            ),
            "runtimeState": state.state.model_dump(mode="json", by_alias=True)
            if state.state
            else None,
            "runtimeStateLocator": state_locator(name),
            "runtimeStateProblem": state.problem,
            "due": due,
        }

    @verb
    def last(self, name: Annotated[str, P("the habit's name", nonblank=True)]) -> dict[str, Any]:
        """The latest run of a habit, from its Arc receipt and runtime state alone. Writes
        nothing."""
        from ouro.errors import CorruptFile, NotFound
        from ouro.habits.receipt import latest_receipt_for, read_receipt
        from ouro.habits.state import read_state, state_locator

        folder = self.folder
        read = read_state(folder, name)
        problems = [read.problem] if read.problem else []
        receipt = None
        if read.state is not None and read.state.last_receipt_locator:
            try:
                receipt = read_receipt(folder, read.state.last_receipt_locator)
            except (NotFound, CorruptFile) as exc:
                problems.append(exc.message)
            # a run that wrote its receipt but died before its state is still the latest
            newer, scan_problems = latest_receipt_for(folder, name, after=read.state.last_run_id)
            if newer is not None:
                receipt = newer
                problems += scan_problems
                problems.append(f"{state_locator(name)} is behind the newest receipt")
        if receipt is None:
            receipt, scan_problems = latest_receipt_for(folder, name)
            problems += scan_problems
            if receipt is not None and read.state is None:
                problems.append(
                    f"{state_locator(name)} missing; the run comes from its receipt alone"
                )
        if receipt is None:
            from ouro.habits.outbox import interrupted_runs

            lost = [r for r in interrupted_runs(folder) if r["habit"] == name]
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
            "runtimeState": read.state.model_dump(mode="json", by_alias=True)
            if read.state
            else None,
            "problems": problems,
        }

    @verb
    def list(self) -> dict[str, Any]:
        """List the bundle's habits (habits/<name>.yaml) with cadence, status, whether each
        is due and its last run; invalid definitions are listed with file, field and
        reason."""
        from ouro.habits.definition import load_habits
        from ouro.habits.schedule import due_report
        from ouro.habits.state import read_state

        folder = self.folder
        due = {row["name"]: row for row in due_report(folder)["habits"]}
        habits = load_habits(folder)
        rows = []
        for habit in habits.habits:
            state = read_state(folder, habit.name)
            row = habit.summary()
            row["due"] = due[habit.name]["due"]
            row["dueAt"] = due[habit.name]["dueAt"]
            row["lastRunAt"] = state.state.last_run_at if state.state else None
            row["lastOutcome"] = state.state.last_outcome if state.state else None
            if state.problem:
                row["stateProblem"] = state.problem
            rows.append(row)
        return {"habits": rows, "problems": [p.to_json() for p in habits.problems]}


class Surface(Namespace):
    """Messages a habit's private session sends out, and the main line's queue of them."""

    @verb
    def __call__(
        self,
        text: Annotated[str, P("the message", limit=4000, nonblank=True)],
        *,
        to: Annotated[
            str, P("family, originator, or an explicit recipient's friendId", nonblank=True)
        ],
        reason: Annotated[
            str,
            P(
                "needed_input | status | answer | blocked | other",
                choices=("needed_input", "status", "answer", "blocked", "other"),
            ),
        ],
    ) -> dict[str, Any]:
        """From inside a habit session, send a message to family, the habit's originator
        or an allowed recipient, for a concrete reason; checked against the session's
        permission envelope, delivered by the channel's sense, or else queued to the main
        line (shown in its packet until acknowledged), and recorded in the run's
        receipt."""
        from ouro.habits.surface import surface

        return surface(self.folder, to=to, reason=reason, text=text)

    @verb
    def list(
        self,
        *,
        all: Annotated[bool, P("include the acknowledged ones")] = False,
    ) -> dict[str, Any]:
        """List the messages habits surfaced to the main line (no sense for their
        channel): habit, reason, recipient, text, and whether acknowledged. Writes
        nothing."""
        from ouro.habits.outbox import queued

        found = queued(self.folder, include_acked=all)
        return {"messages": found.messages, "problems": found.problems}

    @verb
    def ack(
        self,
        message_id: Annotated[str, P("the surfaced message (ob-…)", nonblank=True)],
    ) -> dict[str, Any]:
        """Acknowledge a message a habit surfaced to the main line: it leaves the packet
        and the workbench (the queue keeps it, with the time it was acknowledged)."""
        from ouro.desk.tasks import acting_agent
        from ouro.habits.surface import ack

        return ack(self.folder, message_id, by=acting_agent(self.folder, None))
