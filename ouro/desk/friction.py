"""Friction: ``desk/_friction/<fr-id>.md``, one file per thing that got in the way.

Front matter: id, title, created, severity (low|medium|high), track, task.
Files are only ever created (the id is new), so no lock is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import read_doc, write_doc
from ouro.errors import CorruptFile, InvalidInput
from ouro.store.guard import Inside

SEVERITIES = ("low", "medium", "high")


def friction_dir(bundle: Bundle) -> Path:
    return bundle.desk / "_friction"


def add_friction(
    bundle: Bundle,
    title: str,
    *,
    body: str = "",
    severity: str = "medium",
    track: str | None = None,
    task: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    # writer-only imports: orient lists friction without the task machinery
    from ouro.desk.tasks import check_title, linked_task
    from ouro.desk.tracks import require_track
    from ouro.models.clock import utc_now_iso
    from ouro.models.ids import new_id

    clean = check_title(title)
    if severity not in SEVERITIES:
        raise InvalidInput(
            f"severity: {severity!r} is not one of {', '.join(SEVERITIES)}",
            hint="use low, medium or high",
        )
    task_id = linked_task(bundle, task)
    track_name = require_track(bundle, track).name if track else None
    fid = new_id("fr")
    meta = {
        "id": fid,
        "title": clean,
        "created": utc_now_iso(),
        "severity": severity,
        "track": track_name,
        "task": task_id,
    }
    path = friction_dir(bundle) / f"{fid}.md"
    write_doc(path, meta, body)
    return path, meta


def list_friction(
    bundle: Bundle, *, limit: int | None = None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Friction entries, newest first, and problems with unreadable files. Pure."""
    folder = friction_dir(bundle)
    problems: list[str] = []
    try:  # scandir, not Path.glob: no pattern to compile on orient's cold path
        # none behind a symlink leading outside the bundle: reported, never opened
        entries = Inside(bundle.root).entries(folder, problems, lambda n: n.endswith(".md"))
    except FileNotFoundError:
        return [], []
    paths = [folder / name for name in sorted((e.name for e in entries), reverse=True)]
    items: list[dict[str, Any]] = []
    for path in paths:
        if limit is not None and len(items) >= limit:
            break
        locator = bundle.locator(path)
        try:
            meta, _body = read_doc(path, source=locator)
        except CorruptFile as exc:
            problems.append(exc.message)
            continue
        items.append({**meta, "locator": locator})
    return items, problems
