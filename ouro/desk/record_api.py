"""Record tools (diary facts, daily reflections, notes): input models and
functions for the registry (interface edge; see ``hooks.after_write``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ouro.bundle import Bundle
from ouro.desk import daily, notes, record
from ouro.desk.hooks import after_write
from ouro.models.base import ToolInput


class DiaryWriteInput(ToolInput):
    text: str = Field(description="the fact, one atomic statement")
    about: list[str] = Field(default_factory=list, description="entities the fact is about")
    source: str | None = Field(None, description="where it came from")
    trust: str | None = Field(None, description="trust label, e.g. verified, told, inferred")
    channel: str | None = Field(None, description="channel it arrived on")
    friend: str | None = Field(None, description="friend id it came from")
    friend_name: str | None = Field(None, description="friend's display name")
    supersedes: str | None = Field(None, description="id of the fact this one corrects")
    force: bool = Field(False, description="write even if a near-duplicate exists")


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


class DiaryReflectInput(ToolInput):
    text: str = Field(description="the reflection")


def diary_reflect(bundle: Bundle, inp: DiaryReflectInput) -> dict[str, Any]:
    path, at = daily.reflect(bundle, inp.text)
    after_write(bundle, [path])
    return {"locator": bundle.locator(path), "at": at}


class NotesWriteInput(ToolInput):
    title: str = Field(description="note title (names the file)")
    body: str = Field(description="note body (Markdown)")
    tags: list[str] = Field(default_factory=list, description="a tag (repeatable)")


def notes_write(bundle: Bundle, inp: NotesWriteInput) -> dict[str, Any]:
    path, meta, created = notes.write_note(bundle, inp.title, inp.body, tags=inp.tags)
    after_write(bundle, [path, notes.manifest_path(bundle)])
    return {"note": meta, "slug": path.stem, "created": created, "locator": bundle.locator(path)}
