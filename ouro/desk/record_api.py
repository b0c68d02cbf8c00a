"""Record tools (diary facts, daily reflections, notes): the functions for the
registry (interface edge; see ``ouro.derived.after_write``). Their input models are in
``ouro.desk.record_inputs``: this module imports no pydantic, so a plain
``diary_write`` (validated by ``ouro.models.lite``) never loads it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ouro.bundle import Bundle
from ouro.derived import after_write
from ouro.desk import record

if TYPE_CHECKING:
    from ouro.desk.record_inputs import DiaryReflectInput, DiaryWriteInput, NotesWriteInput


def diary_write(bundle: Bundle, inp: DiaryWriteInput) -> dict[str, Any]:
    draft = record.FactDraft(
        text=inp.text,
        about=inp.about,
        source=inp.source,
        trust=inp.trust,
        channel=inp.channel,
        friend_id=inp.friend,
        friend_name=inp.friend_name,
        supersedes=inp.supersedes,
    )
    written, batch = record.write_fact(bundle, draft, force=inp.force)
    after_write(bundle, batch.paths)
    return {
        **written.to_json(),
        "supersedes": written.fact.get("supersedes"),
        "warnings": batch.warnings,
    }


def diary_reflect(bundle: Bundle, inp: DiaryReflectInput) -> dict[str, Any]:
    from ouro.desk import daily

    path, at = daily.reflect(bundle, inp.text)
    after_write(bundle, [path])
    return {"locator": bundle.locator(path), "at": at}


def notes_write(bundle: Bundle, inp: NotesWriteInput) -> dict[str, Any]:
    from ouro.desk import notes

    path, meta, created = notes.write_note(bundle, inp.title, inp.body, tags=inp.tags)
    after_write(bundle, [path, notes.manifest_path(bundle)])
    return {"note": meta, "slug": path.stem, "created": created, "locator": bundle.locator(path)}
