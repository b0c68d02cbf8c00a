"""A minimal agent loop driven through ouro's Python API (docs/python-api.md).

Each turn: orient (read the start-of-turn packet), take the most urgent ready
task, record what happens (Arc events, a claim with its check), file what was
learnt in the diary, close the task, checkpoint. The "model" here is a stub
that does each task's work by hand; in a real harness it is your LLM call, fed
``packet["text"]``.

Run it on a scratch bundle::

    python docs/examples/agent_loop.py /tmp/demo.ouro

``tests/test_python_api.py`` runs it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import ouro


def work_on(task: dict[str, Any]) -> str:
    """The stub model: 'do' the task and say what was learnt."""
    return f"{task['title']} is done; its check is '{task['check']}'"


def turn(b: ouro.Bundle) -> dict[str, Any] | None:
    """One turn of the loop; the task it finished, or None when nothing is ready."""
    packet = b.orient(budget=1500)  # what a fresh model would read first
    ready = b.desk.ready(limit=1)["ready"]
    if not ready:
        b.arc.note(f"nothing ready (packet was {packet['chars']} characters)")
        return None
    task: dict[str, Any] = b.desk.task.show(ready[0]["id"])["task"]
    b.desk.task.take(task["id"], lease="15m")
    b.arc.ask(f"finish {task['title']}", tasks=[task["id"]])
    b.arc.next(f"run the check of {task['id']}", stop_before=["pushing to main"])

    learnt = work_on(task)
    b.desk.iteration.add(task["id"], learnt)
    claim = b.claim.add(f"{task['title']} passes its check", check=task["check"])
    b.claim.verify(claim["id"], yes=True)  # ouro runs the check itself: observed, not asserted
    b.desk.task.verify(task["id"], yes=True)
    b.desk.task.update(task["id"], status="done")
    b.diary.write(learnt, about=[task["track"]], source="agent loop", trust="verified")
    b.arc.checkpoint()
    return task


def main(path: str) -> int:
    root = Path(path)
    b = ouro.open(root) if (root / "bundle.json").exists() else ouro.init(root, agent="looper")
    b.desk.track.add("chores")
    for title in ("Tidy the README", "Pin the test runner"):
        b.desk.task.add("chores", title, check="true")
    done = []
    while (task := turn(b)) is not None:
        done.append(task["title"])
    print("done:", ", ".join(done) or "nothing")
    print(b.orient(budget=800)["text"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "agent-loop.ouro"))
