"""Input models of the record tools (``ouro.desk.record_api``).

Kept apart from the tool functions so that a plain write validated without
pydantic (``ouro.models.lite``) does not import it with the functions.
"""

from __future__ import annotations

from pydantic import Field

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


class DiaryReflectInput(ToolInput):
    text: str = Field(description="the reflection")


class NotesWriteInput(ToolInput):
    title: str = Field(description="note title (names the file)")
    body: str = Field(description="note body (Markdown)")
    tags: list[str] = Field(default_factory=list, description="a tag (repeatable)")
