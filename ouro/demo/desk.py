"""Demo section: Desk work (track, task, lease) and the record (facts, a note)."""

from __future__ import annotations

from ouro import tools
from ouro.bundle import Bundle
from ouro.demo import Step
from ouro.errors import Conflict


def run(bundle: Bundle, step: Step) -> None:
    tools.invoke("desk_track_add", bundle, {"name": "release-1"})
    task = tools.invoke(
        "desk_task_add",
        bundle,
        {
            "track": "release-1",
            "title": "Ship the parser",
            "priority": 1,
            "acceptance": "the parser tests pass",
            "check": "pytest tests/test_parser.py",
        },
    )["task"]
    step(
        "a task is a Markdown file with front matter",
        f"{task['id']} -> {task['locator']}\n" + (bundle.root / task["locator"]).read_text(),
    )
    won = tools.invoke(
        "desk_task_take", bundle, {"task": task["id"], "agent": "demo", "lease": "30m"}
    )
    try:
        tools.invoke("desk_task_take", bundle, {"task": task["id"], "agent": "other"})
        lost = "other agent: took it too (unexpected)"
    except Conflict as exc:
        lost = f"other agent: refused: {exc.message}"
    step(
        "taking: exactly one agent holds a task's lease",
        f"demo: {won['outcome']} until {won['leaseUntil']}\n{lost}",
    )
    first = tools.invoke(
        "diary_write",
        bundle,
        {
            "text": "The release train leaves on Fridays",
            "about": ["release"],
            "source": "team chat",
            "trust": "told",
        },
    )
    again = tools.invoke(
        "diary_write",
        bundle,
        {"text": "the release train leaves on fridays.", "about": ["release"]},
    )
    try:
        tools.invoke(
            "diary_write",
            bundle,
            {"text": "The release train leaves on Friday mornings", "about": ["release"]},
        )
        near = "written (unexpected)"
    except Conflict as exc:
        near = f"refused: {exc.message}"
    step(
        "the diary files facts; duplicates are caught",
        f"first:     {first['locator']}\nduplicate: returned existing "
        f"(duplicate={again['duplicate']})\nnear-duplicate: {near}",
    )
    note = tools.invoke(
        "notes_write",
        bundle,
        {"title": "Release checklist", "body": "1. tag\n2. push\n", "tags": ["release"]},
    )
    step(
        "notes are reference Markdown with a manifest",
        f"{note['locator']}\n"
        f"manifest desk/_record/notes/.index.json lists it: title, tags, hash "
        f"(ouro notes rebuild-manifest regenerates it)",
    )
