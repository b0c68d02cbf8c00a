"""Demo section: Desk work (track, task, lease) and the record (facts, a note)."""

from __future__ import annotations

from ouro.api import Bundle as Library
from ouro.bundle import Bundle
from ouro.demo import Show, Step
from ouro.errors import Conflict


def run(bundle: Bundle, step: Step, show: Show) -> None:
    b = Library(bundle)
    b.desk.track.add("release-1")
    task = b.desk.task.add(
        "release-1",
        "Ship the parser",
        priority=1,
        acceptance="the parser tests pass",
        check="pytest tests/test_parser.py",
    )["task"]
    step(
        "a task is a Markdown file with front matter",
        f"{task['id']} -> {task['locator']}\n" + (bundle.root / task["locator"]).read_text(),
    )
    won = b.desk.task.take(task["id"], agent="demo", lease="30m")
    try:
        b.desk.task.take(task["id"], agent="other")
        lost = "other agent: took it too (unexpected)"
    except Conflict as exc:
        lost = f"other agent: refused: {exc.message}"
    step(
        "taking: exactly one agent holds a task's lease",
        f"demo: {won['outcome']} until {won['leaseUntil']}\n{lost}",
    )
    first = b.diary.write(
        "The release train leaves on Fridays", about=["release"], source="team chat", trust="told"
    )
    again = b.diary.write("the release train leaves on fridays.", about=["release"])
    try:
        b.diary.write("The release train leaves on Friday mornings", about=["release"])
        near = "written (unexpected)"
    except Conflict as exc:
        near = f"refused: {exc.message}"
    step(
        "the diary files facts; duplicates are caught",
        f"first:     {first['locator']}\nduplicate: returned existing "
        f"(duplicate={again['duplicate']})\nnear-duplicate: {near}",
    )
    note = b.notes.write("Release checklist", body="1. tag\n2. push\n", tags=["release"])
    step(
        "notes are reference Markdown with a manifest",
        f"{note['locator']}\n"
        f"manifest desk/_record/notes/.index.json lists it: title, tags, hash "
        f"(ouro notes rebuild-manifest regenerates it)",
    )
