"""``b.habits``: the bundle's habits (``habits/<name>.yaml``); ``b.surface`` reports back."""

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

        return run_habit(self.folder, name, trigger=trigger, keep_session=keep_session)  # type: ignore[arg-type]

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
